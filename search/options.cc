#include "search/options.h"

#include <cmath>
#include <map>

#include "search/space.h"
#include "search/spelling.h"

namespace sift::search {

int64_t OptionReader::Int(const std::string& key, int64_t def, int64_t min, int64_t max) {
  read_.insert(key);
  auto it = options_.find(key);
  if (it == options_.end()) return def;
  int64_t v;
  if (const auto* i = std::get_if<int64_t>(&it->second)) {
    v = *i;
  } else if (const auto* d = std::get_if<double>(&it->second);
             d && *d == std::floor(*d) && IntBoundInRange(*d)) {
    v = static_cast<int64_t>(*d);
  } else {
    AddError(key, "must be an integer");
    return def;
  }
  if (v < min || v > max) {
    AddError(key, "must be in [" + std::to_string(min) + ", " + std::to_string(max) + "], got " +
                      std::to_string(v));
    return def;
  }
  return v;
}

double OptionReader::Double(const std::string& key, double def, double min, double max) {
  read_.insert(key);
  auto it = options_.find(key);
  if (it == options_.end()) return def;
  double v;
  if (const auto* d = std::get_if<double>(&it->second)) {
    v = *d;
  } else if (const auto* i = std::get_if<int64_t>(&it->second)) {
    v = static_cast<double>(*i);
  } else {
    AddError(key, "must be a number");
    return def;
  }
  if (!(v >= min && v <= max)) {
    AddError(key, "must be in [" + std::to_string(min) + ", " + std::to_string(max) + "], got " +
                      std::to_string(v));
    return def;
  }
  return v;
}

bool OptionReader::Bool(const std::string& key, bool def) {
  read_.insert(key);
  auto it = options_.find(key);
  if (it == options_.end()) return def;
  if (const auto* b = std::get_if<bool>(&it->second)) return *b;
  AddError(key, "must be true or false");
  return def;
}

std::string OptionReader::String(const std::string& key, const std::string& def,
                                 const std::vector<std::string>& allowed) {
  read_.insert(key);
  auto it = options_.find(key);
  if (it == options_.end()) return def;
  const auto* s = std::get_if<std::string>(&it->second);
  if (s == nullptr) {
    AddError(key, "must be a string");
    return def;
  }
  if (allowed.empty()) return *s;
  for (const auto& a : allowed) {
    if (a == *s) return *s;
  }
  std::string list;
  for (const auto& a : allowed) list += (list.empty() ? "" : ", ") + a;
  AddError(key, "'" + *s + "' is not one of: " + list);
  return def;
}

std::vector<OptionValue> OptionReader::List(const std::string& key) {
  read_.insert(key);
  if (auto it = options_.find(key); it != options_.end()) return {it->second};
  std::vector<OptionValue> out;
  for (size_t i = 0;; ++i) {
    const std::string item = key + "." + std::to_string(i);
    auto it = options_.find(item);
    if (it == options_.end()) return out;
    read_.insert(item);
    out.push_back(it->second);
  }
}

namespace {

// Names users bring from the peers' APIs (Ray Tune's ASHA, Optuna's samplers and pruners), and
// Sift's option for each.
const std::map<std::string, std::string>& PeerNames() {
  static const std::map<std::string, std::string> names = {
      {"grace_period", "min_resource"},
      {"reduction_factor", "eta"},
      {"max_t", "max_resource"},
      {"n_startup_trials", "n_startup"},
      {"n_warmup_steps", "min_resource"},
      {"n_min_trials", "min_trials"},
      {"min_early_stopping_rate", "min_resource"},
      {"perturbation_interval", "interval_epochs"},
      {"quantile_fraction", "quantile"},
      {"perturbation_factors", "perturb"},
      {"hyperparam_mutations", "mutable"}};
  return names;
}

}  // namespace

void OptionReader::RejectUnknown() {
  // A list's items (key.0, key.1) are named by their list, once.
  const auto list_of = [](const std::string& key) {
    const size_t dot = key.rfind('.');
    if (dot == std::string::npos || dot + 1 == key.size()) return key;
    for (size_t i = dot + 1; i < key.size(); ++i) {
      if (key[i] < '0' || key[i] > '9') return key;
    }
    return key.substr(0, dot);
  };
  std::set<std::string> names;
  for (const auto& k : read_) names.insert(list_of(k));
  std::string known;
  for (const auto& k : names) known += (known.empty() ? "" : ", ") + k;
  std::set<std::string> reported;
  for (const auto& [item, value] : options_) {
    if (read_.count(item)) continue;
    const std::string key = list_of(item);
    if (!reported.insert(key).second) continue;
    if (read_.count(key)) {  // read as one value, but given as a list
      AddError(key, "must be a single value, not a list");
      continue;
    }
    std::string problem = "unknown option";
    const auto peer = PeerNames().find(key);
    if (peer != PeerNames().end() && names.count(peer->second)) {
      problem += "; did you mean '" + peer->second + "'? (Sift's name for it)";
    } else if (std::string s = ClosestName(key, {names.begin(), names.end()}); !s.empty()) {
      problem += "; did you mean '" + s + "'?";
    }
    AddError(key, problem + " (known: " + (known.empty() ? "none" : known) + ")");
  }
}

}  // namespace sift::search
