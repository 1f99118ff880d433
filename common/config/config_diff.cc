#include "common/config/config_diff.h"

#include <yaml-cpp/yaml.h>

#include <cstdlib>
#include <set>
#include <vector>

#include "common/config/config_yaml.h"

namespace sift::common {
namespace {

// A value as the message shows it: the scalar itself, else its flow form, shortened.
std::string Show(const YAML::Node& node) {
  if (!node.IsDefined() || node.IsNull()) return "absent";
  if (node.IsScalar()) return node.Scalar();
  YAML::Emitter out;
  out << YAML::Flow << node;
  std::string text = out.c_str();
  return text.size() > 60 ? text.substr(0, 57) + "..." : text;
}

bool AsNumber(const std::string& text, double* out) {
  if (text.empty()) return false;
  char* end = nullptr;
  *out = std::strtod(text.c_str(), &end);
  return end == text.c_str() + text.size();
}

bool SameScalar(const YAML::Node& a, const YAML::Node& b) {
  if (a.Scalar() == b.Scalar()) return true;
  double x = 0, y = 0;
  return AsNumber(a.Scalar(), &x) && AsNumber(b.Scalar(), &y) && x == y;
}

bool Absent(const YAML::Node& n) { return !n.IsDefined() || n.IsNull(); }

// The path of the first difference under `path`, with both values; false when there is none.
bool Diff(const YAML::Node& a, const YAML::Node& b, const std::string& path, std::string* where,
          std::string* va, std::string* vb) {
  auto differ = [&](const std::string& at, const YAML::Node& x, const YAML::Node& y) {
    *where = at.empty() ? "(the whole config)" : at;
    *va = Show(x);
    *vb = Show(y);
    return true;
  };
  if (Absent(a) || Absent(b)) return Absent(a) != Absent(b) && differ(path, a, b);
  if (a.Type() != b.Type()) return differ(path, a, b);
  if (a.IsScalar()) return !SameScalar(a, b) && differ(path, a, b);
  if (a.IsSequence()) {
    const size_t n = std::max(a.size(), b.size());
    for (size_t i = 0; i < n; ++i) {
      const std::string at = path + "[" + std::to_string(i) + "]";
      if (i >= a.size() || i >= b.size()) {
        return differ(at, i < a.size() ? a[i] : YAML::Node(), i < b.size() ? b[i] : YAML::Node());
      }
      if (Diff(a[i], b[i], at, where, va, vb)) return true;
    }
    return false;
  }
  // Maps: keys in a's order, then the ones only b has.
  std::vector<std::string> keys;
  std::set<std::string> seen;
  for (const auto* m : {&a, &b}) {
    for (const auto& kv : *m) {
      const std::string key = kv.first.as<std::string>();
      if (seen.insert(key).second) keys.push_back(key);
    }
  }
  for (const auto& key : keys) {
    if (Diff(a[key], b[key], yamlcfg::Join(path, key), where, va, vb)) return true;
  }
  return false;
}

}  // namespace

std::string FirstConfigDifference(const std::string& a, const std::string& b,
                                  const std::string& a_name, const std::string& b_name) {
  YAML::Node na, nb;
  try {
    na = YAML::Load(a);
  } catch (const YAML::Exception& e) {
    return a_name + " cannot be read: " + e.what();
  }
  try {
    nb = YAML::Load(b);
  } catch (const YAML::Exception& e) {
    return b_name + " cannot be read: " + e.what();
  }
  std::string where, va, vb;
  if (!Diff(na, nb, "", &where, &va, &vb)) return "";
  return where + ": " + va + " in " + a_name + ", " + vb + " in " + b_name;
}

}  // namespace sift::common
