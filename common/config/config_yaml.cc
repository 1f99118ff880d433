#include "common/config/config_yaml.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <limits>
#include <map>

#include "search/spelling.h"

namespace sift::common::yamlcfg {
namespace {

bool IsDigit(char c) { return c >= '0' && c <= '9'; }

// Strict: the whole string must be the number ("12", "-3"; "1e-4", "0.5", ".inf" for doubles).
bool ParseInt64(const std::string& s, int64_t* out) {
  const char* begin = s.data();
  const char* end = s.data() + s.size();
  if (begin != end && *begin == '+') ++begin;
  if (begin == end || !(IsDigit(*begin) || (*begin == '-' && begin + 1 != end))) return false;
  auto [ptr, ec] = std::from_chars(begin, end, *out);
  return ec == std::errc() && ptr == end;
}

bool ParseUInt64(const std::string& s, uint64_t* out) {
  const char* begin = s.data();
  const char* end = s.data() + s.size();
  if (begin != end && *begin == '+') ++begin;
  if (begin == end || !IsDigit(*begin)) return false;
  auto [ptr, ec] = std::from_chars(begin, end, *out);
  return ec == std::errc() && ptr == end;
}

bool ParseDouble(const std::string& s, double* out) {
  std::string body = s;
  bool negative = false;
  if (!body.empty() && (body[0] == '+' || body[0] == '-')) {
    negative = body[0] == '-';
    body.erase(0, 1);
  }
  // YAML spells the special values .inf and .nan; plain "inf" and "nan" stay strings.
  if (body == ".inf" || body == ".Inf" || body == ".INF") {
    *out = negative ? -std::numeric_limits<double>::infinity()
                    : std::numeric_limits<double>::infinity();
    return true;
  }
  if (body == ".nan" || body == ".NaN" || body == ".NAN") {
    *out = std::numeric_limits<double>::quiet_NaN();
    return true;
  }
  const bool starts_numeric =
      !body.empty() &&
      (IsDigit(body[0]) || (body[0] == '.' && body.size() > 1 && IsDigit(body[1])));
  if (!starts_numeric) return false;
  double v = 0;
  auto [ptr, ec] = std::from_chars(body.data(), body.data() + body.size(), v);
  if (ec != std::errc() || ptr != body.data() + body.size()) return false;
  *out = negative ? -v : v;
  return true;
}

// True when the scalar was written quoted (or tagged !!str): a string whatever it reads as.
bool IsQuoted(const YAML::Node& node) {
  // Plain scalars carry the non-specific tag "?"; quoted ones "!"; explicit tags (!!str) their own.
  return node.IsScalar() && node.Tag() != "?";
}

}  // namespace

search::ParamValue InferParamValue(const YAML::Node& scalar) {
  const std::string& s = scalar.Scalar();
  if (!IsQuoted(scalar)) {
    int64_t i;
    if (ParseInt64(s, &i)) return i;
    double d;
    if (ParseDouble(s, &d)) return d;
  }
  return s;
}

search::OptionValue InferOptionValue(const YAML::Node& scalar) {
  const std::string& s = scalar.Scalar();
  if (!IsQuoted(scalar)) {
    if (s == "true" || s == "True" || s == "TRUE") return true;
    if (s == "false" || s == "False" || s == "FALSE") return false;
  }
  search::ParamValue v = InferParamValue(scalar);
  if (const auto* i = std::get_if<int64_t>(&v)) return *i;
  if (const auto* d = std::get_if<double>(&v)) return *d;
  return std::get<std::string>(v);
}

std::string Describe(const YAML::Node& node) {
  if (!node.IsDefined() || node.IsNull()) return "nothing";
  if (node.IsMap()) return "a map";
  if (node.IsSequence()) return "a list";
  if (IsQuoted(node)) return "\"" + node.Scalar() + "\" (a quoted string)";
  return "'" + node.Scalar() + "'";
}

std::string Suggest(const std::string& word, const std::vector<std::string>& candidates) {
  return search::ClosestName(word, candidates);
}

std::string CheckShape(const YAML::Node& root, const ConfigLimits& limits, int* line) {
  // Depth counts maps and lists: the top-level map is level 1.
  std::vector<std::pair<YAML::Node, size_t>> stack{{root, 1}};
  size_t nodes = 0;
  while (!stack.empty()) {
    auto [node, depth] = stack.back();
    stack.pop_back();
    *line = node.Mark().line + 1;
    if (++nodes > limits.max_nodes) {
      return "more than " + std::to_string(limits.max_nodes) +
             " YAML nodes (an alias counts each time it is used), over the limit (max_nodes)";
    }
    if (!node.IsMap() && !node.IsSequence()) continue;
    if (depth > limits.max_depth) {
      return OverLimit(depth, "levels of nested maps and lists", limits.max_depth, "max_depth");
    }
    for (auto it = node.begin(); it != node.end(); ++it) {
      if (node.IsMap()) {
        stack.emplace_back(it->first, depth + 1);
        stack.emplace_back(it->second, depth + 1);
      } else {
        stack.emplace_back(*it, depth + 1);
      }
    }
  }
  return "";
}

void Diagnostics::NoteLine(const std::string& path, const YAML::Node& node) {
  const int line = node.Mark().line;
  if (line >= 0) lines_.emplace(path, line + 1);  // the first occurrence wins
}

void Diagnostics::Error(const std::string& path, const std::string& problem, int line) {
  errors_.push_back({path, problem, line});
}

void Diagnostics::ErrorUnder(const std::string& prefix, const std::string& message) {
  const size_t colon = message.find(": ");
  if (colon == std::string::npos) {
    Error(prefix, message);
    return;
  }
  const std::string sub = message.substr(0, colon);
  const std::string problem = message.substr(colon + 2);
  Error(sub == prefix ? prefix : Join(prefix, sub), problem);
}

int Diagnostics::LineOf(const std::string& path) const {
  std::string p = path;
  while (true) {
    if (auto it = lines_.find(p); it != lines_.end()) return it->second;
    const size_t dot = p.rfind('.');
    if (dot == std::string::npos) return 0;
    p.resize(dot);
  }
}

std::vector<std::string> Diagnostics::Format(size_t max) const {
  // In reading order: problems without a line (missing fields) first, then by line.
  std::vector<std::pair<int, std::string>> lined;
  lined.reserve(errors_.size());
  for (const auto& e : errors_) {
    std::string text = e.path + ": " + e.problem;
    const int n = e.line > 0 ? e.line : LineOf(e.path);
    if (n > 0) text += " (line " + std::to_string(n) + ")";
    lined.emplace_back(n, std::move(text));
  }
  std::stable_sort(lined.begin(), lined.end(),
                   [](const auto& a, const auto& b) { return a.first < b.first; });
  std::vector<std::string> out;
  out.reserve(std::min(lined.size(), max) + 1);
  for (auto& [n, text] : lined) {
    if (out.size() == max) break;
    out.push_back(std::move(text));
  }
  if (lined.size() > max) {
    out.push_back("... and " + std::to_string(lined.size() - max) + " more errors not shown");
  }
  return out;
}

void AtLeast(Diagnostics* d, const std::string& path, int64_t value, int64_t min) {
  if (value < min) {
    d->Error(path, "must be >= " + std::to_string(min) + ", got " + std::to_string(value));
  }
}
void AtLeast(Diagnostics* d, const std::string& path, double value, double min) {
  const auto num = [](double v) { return search::ToString(search::ParamValue(v)); };
  if (value < min) d->Error(path, "must be >= " + num(min) + ", got " + num(value));
}

MapReader::MapReader(const YAML::Node& node, std::string path, Diagnostics* diag)
    : path_(std::move(path)), diag_(diag) {
  if (!node.IsDefined() || node.IsNull()) return;
  if (!node.IsMap()) {
    diag_->Error(path_.empty() ? "config" : path_, "must be a map, got " + Describe(node));
    ok_ = false;
    return;
  }
  for (auto it = node.begin(); it != node.end(); ++it) {
    if (!it->first.IsScalar()) {
      diag_->Error(path_.empty() ? "config" : path_,
                   "keys must be plain names, got " + Describe(it->first));
      continue;
    }
    const std::string key = it->first.Scalar();
    const std::string key_path = PathOf(key);
    if (index_.count(key)) {
      diag_->Error(key_path, "defined twice", it->first.Mark().line + 1);
      continue;
    }
    diag_->NoteLine(key_path, it->first);
    index_[key] = entries_.size();
    entries_.emplace_back(key, it->second);
  }
}

std::vector<std::pair<std::string, YAML::Node>> MapReader::Entries() {
  for (const auto& [key, value] : entries_) read_.insert(key);
  return entries_;
}

YAML::Node MapReader::Get(const std::string& key) {
  read_.insert(key);
  auto it = index_.find(key);
  if (it == index_.end()) return YAML::Node(YAML::NodeType::Undefined);
  return entries_[it->second].second;
}

bool MapReader::Int(const std::string& key, int64_t* out) {
  const YAML::Node node = Get(key);
  if (!node.IsDefined()) return false;
  if (node.IsScalar() && !IsQuoted(node)) {
    if (ParseInt64(node.Scalar(), out)) return true;
    // 1e3 and 10.0 are whole numbers too.
    double d;
    if (ParseDouble(node.Scalar(), &d) && std::isfinite(d) && d == std::floor(d) &&
        std::fabs(d) < 9.0e18) {
      *out = static_cast<int64_t>(d);
      return true;
    }
  }
  diag_->Error(PathOf(key), "must be an integer, got " + Describe(node));
  return false;
}

bool MapReader::UInt64(const std::string& key, uint64_t* out) {
  const YAML::Node node = Get(key);
  if (!node.IsDefined()) return false;
  if (node.IsScalar() && !IsQuoted(node) && ParseUInt64(node.Scalar(), out)) return true;
  diag_->Error(PathOf(key), "must be an integer >= 0, got " + Describe(node));
  return false;
}

bool MapReader::Double(const std::string& key, double* out) {
  const YAML::Node node = Get(key);
  if (!node.IsDefined()) return false;
  double d;
  if (node.IsScalar() && !IsQuoted(node) && ParseDouble(node.Scalar(), &d) && std::isfinite(d)) {
    *out = d;
    return true;
  }
  diag_->Error(PathOf(key), "must be a number, got " + Describe(node));
  return false;
}

bool MapReader::String(const std::string& key, std::string* out) {
  const YAML::Node node = Get(key);
  if (!node.IsDefined()) return false;
  if (node.IsScalar()) {
    *out = node.Scalar();
    return true;
  }
  diag_->Error(PathOf(key), "must be a string, got " + Describe(node));
  return false;
}

bool MapReader::Enum(const std::string& key, const std::vector<std::string>& allowed,
                     std::string* out) {
  std::string s;
  if (!String(key, &s)) return false;
  if (std::find(allowed.begin(), allowed.end(), s) != allowed.end()) {
    *out = s;
    return true;
  }
  std::string list;
  for (const auto& a : allowed) list += (list.empty() ? "" : ", ") + a;
  diag_->Error(PathOf(key), "must be one of " + list + ", got '" + s + "'");
  return false;
}

namespace {

// Words users write for a key Sift names otherwise (sklearn's, PyTorch's, the peers'), too far
// apart in spelling for Suggest to find.
const std::map<std::string, std::string>& Synonyms() {
  static const std::map<std::string, std::string> words = {
      {"normalize", "standardize"}, {"normalise", "standardize"},
      {"scale", "standardize"},     {"target", "label"},
      {"target_column", "label"},   {"y", "label"},
      {"validation", "val"},        {"valid", "val"},
      {"epochs", "max_epochs"},     {"n_trials", "max_trials"},
      {"num_trials", "max_trials"}, {"sampler", "searcher"},
      {"pruner", "scheduler"}};
  return words;
}

}  // namespace

void MapReader::RejectUnknown() {
  const std::vector<std::string> known(read_.begin(), read_.end());
  for (const auto& [key, value] : entries_) {
    if (read_.count(key)) continue;
    std::string problem = "unknown key";
    const auto synonym = Synonyms().find(key);
    if (synonym != Synonyms().end() && read_.count(synonym->second)) {
      problem += "; did you mean '" + synonym->second + "'?";
    } else if (std::string s = Suggest(key, known); !s.empty()) {
      problem += "; did you mean '" + s + "'?";
    }
    diag_->Error(PathOf(key), problem);
  }
}

}  // namespace sift::common::yamlcfg
