#include "common/config/config_algorithm.h"

namespace sift::common {

using yamlcfg::Diagnostics;
using yamlcfg::MapReader;

namespace {

// Nested maps flatten with dots: {tpe: {gamma: 0.2}} -> "tpe.gamma".
void FlattenOption(const YAML::Node& node, const std::string& section, const std::string& key,
                   Diagnostics* d, search::Options* out) {
  const std::string path = section + "." + key;
  if (node.IsMap()) {
    MapReader r(node, path, d);
    for (const auto& [sub, value] : r.Entries()) {
      FlattenOption(value, section, key + "." + sub, d, out);
    }
  } else if (node.IsScalar()) {
    (*out)[key] = yamlcfg::InferOptionValue(node);
  } else if (node.IsSequence()) {  // [0.8, 1.2] -> key.0, key.1 (search::OptionReader::List)
    for (size_t i = 0; i < node.size(); ++i) {
      const std::string item = key + "." + std::to_string(i);
      d->NoteLine(section + "." + item, node[i]);
      if (node[i].IsScalar()) {
        (*out)[item] = yamlcfg::InferOptionValue(node[i]);
      } else {
        d->Error(section + "." + item, "must be a single value, got " + yamlcfg::Describe(node[i]));
      }
    }
  } else {
    d->Error(path, "must be a single value, a list or a map, got " + yamlcfg::Describe(node));
  }
}

}  // namespace

void ParseAlgorithm(MapReader& top, const std::string& section, Diagnostics* d,
                    AlgorithmConfig* out) {
  const YAML::Node node = top.Get(section);
  if (!node.IsDefined() || node.IsNull()) return;
  if (node.IsScalar()) {
    out->type = node.Scalar();
    return;
  }
  MapReader r(node, section, d);
  for (const auto& [key, value] : r.Entries()) {
    if (key != "type") {
      FlattenOption(value, section, key, d, &out->options);
    } else if (value.IsScalar()) {
      out->type = value.Scalar();
    } else {
      d->Error(section + ".type", "must be a name, got " + yamlcfg::Describe(value));
    }
  }
}

}  // namespace sift::common
