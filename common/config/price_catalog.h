// Instance prices in dollars per hour, by instance type and market, from an editable JSON file.
#pragma once

#include <map>
#include <string>
#include <vector>

namespace sift::common {

struct InstancePrice {
  double on_demand = 0.0;
  double spot = 0.0;
  std::string note;  // e.g. "eu-west-1, 2026-11"
};

class PriceCatalog {
 public:
  // Parses the catalog JSON; returns "" or a problem naming the entry ("c6i.large.spot: must be
  // >= 0"). Format: {"as_of": "2026-11-01", "currency": "USD",
  //                  "instances": {"c6i.large": {"on_demand": 0.085, "spot": 0.034, "note": ".."}}}
  std::string Parse(const std::string& json_text);
  std::string Load(const std::string& path);
  // The catalog built into the binary (examples/prices.json at build time).
  static PriceCatalog BuiltIn();

  // Price for (type, market in {"on-demand", "spot"}); "" on success, else what is missing.
  std::string Lookup(const std::string& type, const std::string& market, double* out) const;

  const std::string& as_of() const { return as_of_; }
  bool empty() const { return prices_.empty(); }
  std::vector<std::string> Types() const;

 private:
  std::map<std::string, InstancePrice> prices_;
  std::string as_of_;
};

// The text of examples/prices.json, compiled in (default_prices.cc.in).
const char* BuiltInPricesJson();

}  // namespace sift::common
