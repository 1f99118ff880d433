#include "common/config/price_catalog.h"

#include <cerrno>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <nlohmann/json.hpp>
#include <stdexcept>

namespace sift::common {
namespace {

using nlohmann::json;

std::string JoinProblems(const std::vector<std::string>& problems) {
  std::string out;
  for (const auto& p : problems) out += (out.empty() ? "" : "; ") + p;
  return out;
}

// Reads one entry of "instances"; appends problems naming "instances.<type>.<field>".
InstancePrice ParseEntry(const std::string& type, const json& entry,
                         std::vector<std::string>* problems) {
  const std::string path = "instances." + type;
  InstancePrice price;
  if (!entry.is_object()) {
    problems->push_back(path + ": must be an object {\"on_demand\": .., \"spot\": ..}");
    return price;
  }
  for (const auto& [field, out] :
       {std::pair{"on_demand", &price.on_demand}, std::pair{"spot", &price.spot}}) {
    auto it = entry.find(field);
    if (it == entry.end()) {
      problems->push_back(path + "." + field + ": missing (dollars per hour)");
    } else if (!it->is_number() || !std::isfinite(it->get<double>()) || it->get<double>() < 0) {
      problems->push_back(path + "." + field + ": must be a number >= 0, got " + it->dump());
    } else {
      *out = it->get<double>();
    }
  }
  for (const auto& [key, value] : entry.items()) {
    if (key == "on_demand" || key == "spot") continue;
    if (key != "note") {
      problems->push_back(path + "." + key + ": unknown key (expected on_demand, spot, note)");
    } else if (!value.is_string()) {
      problems->push_back(path + ".note: must be a string");
    } else {
      price.note = value.get<std::string>();
    }
  }
  return price;
}

}  // namespace

std::string PriceCatalog::Parse(const std::string& json_text) {
  json doc;
  try {
    doc = json::parse(json_text, /*cb=*/nullptr, /*allow_exceptions=*/true,
                      /*ignore_comments=*/true);
  } catch (const json::exception& e) {
    // parse_error, and out_of_range for a number no double holds (1e999): found by fuzzing.
    return std::string("syntax error: ") + e.what();
  }
  if (!doc.is_object()) return "the catalog must be a JSON object";
  std::vector<std::string> problems;
  std::string as_of;
  if (auto it = doc.find("as_of");
      it == doc.end() || !it->is_string() || it->get<std::string>().empty()) {
    problems.push_back("as_of: must be the date the prices were read, e.g. \"2026-11-01\"");
  } else {
    as_of = it->get<std::string>();
  }
  if (auto it = doc.find("currency"); it != doc.end() && *it != "USD") {
    problems.push_back("currency: must be \"USD\" (the ledger counts dollars), got " + it->dump());
  }
  for (const auto& [key, value] : doc.items()) {
    if (key != "as_of" && key != "currency" && key != "source" && key != "instances") {
      problems.push_back(key + ": unknown key (expected as_of, currency, source, instances)");
    }
  }
  std::map<std::string, InstancePrice> prices;
  const auto instances = doc.find("instances");
  if (instances == doc.end() || !instances->is_object() || instances->empty()) {
    problems.push_back("instances: must be a non-empty object of instance type -> prices");
  } else {
    for (const auto& [type, entry] : instances->items()) {
      if (type.empty()) {
        problems.push_back("instances: an instance type has an empty name");
        continue;
      }
      prices[type] = ParseEntry(type, entry, &problems);
    }
  }
  if (!problems.empty()) return JoinProblems(problems);
  prices_ = std::move(prices);
  as_of_ = std::move(as_of);
  return "";
}

std::string PriceCatalog::Load(const std::string& path) {
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec)) return path + ": cannot read (is a directory)";
  std::ifstream in(path, std::ios::binary);
  if (!in) return path + ": cannot read (" + std::strerror(errno) + ")";
  const std::string text{std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
  if (in.bad()) return path + ": cannot read (" + std::strerror(errno) + ")";
  std::string problem = Parse(text);
  return problem.empty() ? "" : path + ": " + problem;
}

PriceCatalog PriceCatalog::BuiltIn() {
  PriceCatalog catalog;
  // Checked by a unit test; a broken examples/prices.json cannot ship.
  if (std::string problem = catalog.Parse(BuiltInPricesJson()); !problem.empty()) {
    throw std::logic_error("built-in price catalog: " + problem);
  }
  return catalog;
}

std::string PriceCatalog::Lookup(const std::string& type, const std::string& market,
                                 double* out) const {
  if (market != "on-demand" && market != "spot") {
    return "market '" + market + "' must be on-demand or spot";
  }
  auto it = prices_.find(type);
  if (prices_.empty()) {
    return "instance type '" + type + "' cannot be priced: the price catalog is empty";
  }
  if (it == prices_.end()) {
    std::string known;
    for (const auto& t : Types()) known += (known.empty() ? "" : ", ") + t;
    return "instance type '" + type + "' is not in the price catalog (as of " + as_of_ +
           "; known: " + known + "); add it or set worker.price_per_hour";
  }
  *out = market == "spot" ? it->second.spot : it->second.on_demand;
  return "";
}

std::vector<std::string> PriceCatalog::Types() const {
  std::vector<std::string> types;
  types.reserve(prices_.size());
  for (const auto& [type, price] : prices_) types.push_back(type);
  return types;
}

}  // namespace sift::common
