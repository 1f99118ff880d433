// The cost controls of a study config: `tags:` (cost allocation labels) and `alerts:` (budget
// thresholds, the forecast alert, a command to run). Internal to the config parser.
#pragma once

#include <string>

#include "common/config/config.h"
#include "common/config/config_yaml.h"

namespace sift::common {

// Tag keys: a letter, then letters, digits, _ . - (at most kMaxTagKey). Values: letters, digits,
// _ . - / @ + (1 to kMaxTagValue). Both as cloud cost allocation labels take them, so the same
// names work there; = and : never appear, so `--quota team=vision:100` reads one way only.
inline constexpr size_t kMaxTags = 32;
inline constexpr size_t kMaxTagKey = 63;
inline constexpr size_t kMaxTagValue = 128;

// "" or what is wrong with the key (or value), e.g. "has ' ' (a space) at 6; use letters, ...".
std::string CheckTagKey(const std::string& key);
std::string CheckTagValue(const std::string& value);

void ParseTags(yamlcfg::MapReader& top, yamlcfg::Diagnostics* d, Tags* out);
void ParseAlerts(yamlcfg::MapReader& top, yamlcfg::Diagnostics* d, AlertConfig* out);

}  // namespace sift::common
