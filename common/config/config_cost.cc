#include "common/config/config_cost.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

namespace sift::common {
namespace {

using yamlcfg::Describe;

bool IsAlnum(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9');
}

std::string Shown(char c) {
  if (c == ' ') return "' ' (a space)";
  if (static_cast<unsigned char>(c) < 0x20 || static_cast<unsigned char>(c) >= 0x7f) {
    char buf[8];
    std::snprintf(buf, sizeof buf, "0x%02x", static_cast<unsigned char>(c));
    return buf;
  }
  return std::string("'") + c + "'";
}

// "" when every character of `s` is allowed, else which one is not, and where.
std::string CheckChars(const std::string& s, bool (*allowed)(char), const char* charset) {
  for (size_t i = 0; i < s.size(); ++i) {
    if (!allowed(s[i])) {
      return "has " + Shown(s[i]) + " at " + std::to_string(i + 1) + "; use " + charset;
    }
  }
  return "";
}

}  // namespace

std::string CheckTagKey(const std::string& key) {
  if (key.empty()) return "a tag key must not be empty";
  if (key.size() > kMaxTagKey) {
    return std::to_string(key.size()) + " characters, over the limit of " +
           std::to_string(kMaxTagKey) + " for a tag key";
  }
  if (!((key[0] >= 'a' && key[0] <= 'z') || (key[0] >= 'A' && key[0] <= 'Z'))) {
    return "a tag key starts with a letter, got " + Shown(key[0]);
  }
  return CheckChars(
      key, [](char c) { return IsAlnum(c) || c == '_' || c == '.' || c == '-'; },
      "letters, digits and _ . - in a tag key");
}

std::string CheckTagValue(const std::string& value) {
  if (value.empty()) return "must not be empty";
  if (value.size() > kMaxTagValue) {
    return std::to_string(value.size()) + " characters, over the limit of " +
           std::to_string(kMaxTagValue) + " for a tag value";
  }
  return CheckChars(
      value,
      [](char c) {
        return IsAlnum(c) || c == '_' || c == '.' || c == '-' || c == '/' || c == '@' || c == '+';
      },
      "letters, digits and _ . - / @ + in a tag value");
}

void ParseTags(yamlcfg::MapReader& top, yamlcfg::Diagnostics* d, Tags* out) {
  const YAML::Node node = top.Get("tags");
  if (!node.IsDefined() || node.IsNull()) return;
  yamlcfg::MapReader r(node, "tags", d);
  if (!r.ok()) return;
  const auto entries = r.Entries();
  if (entries.size() > kMaxTags) {
    d->Error("tags", OverLimit(entries.size(), "tags", kMaxTags, "max_tags"));
    return;
  }
  for (const auto& [key, value] : entries) {
    const std::string path = "tags." + key;
    if (std::string p = CheckTagKey(key); !p.empty()) {
      d->Error(path, "bad tag key '" + key + "': " + p);
      continue;
    }
    if (!value.IsScalar()) {
      d->Error(path, "must be a single value (team: vision), got " + Describe(value));
      continue;
    }
    if (std::string p = CheckTagValue(value.Scalar()); !p.empty()) {
      d->Error(path, "value '" + value.Scalar() + "' " + p);
      continue;
    }
    (*out)[key] = value.Scalar();
  }
}

void ParseAlerts(yamlcfg::MapReader& top, yamlcfg::Diagnostics* d, AlertConfig* out) {
  const YAML::Node node = top.Get("alerts");
  if (!node.IsDefined() || node.IsNull()) return;
  yamlcfg::MapReader r(node, "alerts", d);
  if (!r.ok()) return;
  if (const YAML::Node t = r.Get("thresholds"); t.IsDefined() && !t.IsNull()) {
    out->thresholds.clear();
    if (!t.IsSequence()) {
      d->Error("alerts.thresholds",
               "must be a list of percents of budget.max_dollars, e.g. "
               "[50, 80, 100]; got " +
                   Describe(t));
    } else if (t.size() > 20) {
      d->Error("alerts.thresholds", OverLimit(t.size(), "thresholds", 20, "max_thresholds"));
    } else {
      for (size_t i = 0; i < t.size(); ++i) {
        const std::string path = "alerts.thresholds[" + std::to_string(i) + "]";
        const auto v = t[i].IsScalar() ? yamlcfg::InferParamValue(t[i]) : search::ParamValue("");
        const double* as_double = std::get_if<double>(&v);
        const int64_t* as_int = std::get_if<int64_t>(&v);
        const double pct = as_double ? *as_double : as_int ? static_cast<double>(*as_int) : NAN;
        if (!std::isfinite(pct) || pct <= 0 || pct > 1000) {
          d->Error(path, "must be a percent of budget.max_dollars in (0, 1000], got " +
                             (t[i].IsScalar() ? "'" + t[i].Scalar() + "'" : Describe(t[i])));
        } else if (std::find(out->thresholds.begin(), out->thresholds.end(), pct) !=
                   out->thresholds.end()) {
          d->Error(path, "is listed twice");
        } else {
          out->thresholds.push_back(pct);
        }
      }
      std::sort(out->thresholds.begin(), out->thresholds.end());
    }
  }
  std::string forecast;
  if (r.Enum("forecast", {"true", "false"}, &forecast)) out->forecast = forecast == "true";
  if (const YAML::Node c = r.Get("command"); c.IsDefined() && !c.IsNull()) {
    if (c.IsScalar()) {
      if (c.Scalar().empty()) {
        d->Error("alerts.command", "must not be empty (leave it out to run none)");
      } else {
        out->command = {"/bin/sh", "-c", c.Scalar()};
      }
    } else if (c.IsSequence() && c.size() > 0) {
      for (size_t i = 0; i < c.size(); ++i) {
        const std::string path = "alerts.command[" + std::to_string(i) + "]";
        if (!c[i].IsScalar() || (i == 0 && c[i].Scalar().empty())) {
          d->Error(path, i == 0 ? "the program must be a non-empty string"
                                : "must be a single string, got " + Describe(c[i]));
        } else {
          out->command.push_back(c[i].Scalar());
        }
      }
    } else {
      d->Error("alerts.command",
               "must be a shell command (a string) or a list (program, then "
               "arguments), got " +
                   Describe(c));
    }
  }
  if (r.Double("timeout", &out->timeout_seconds) &&
      !(out->timeout_seconds > 0 && out->timeout_seconds <= 3600)) {
    d->Error("alerts.timeout", "must be a number of seconds in (0, 3600]");
  }
  r.RejectUnknown();
}

}  // namespace sift::common
