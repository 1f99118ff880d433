#include "common/config/config_warm_start.h"

#include <algorithm>
#include <filesystem>

#include "search/number_text.h"

namespace sift::common {
namespace {

constexpr size_t kMaxWarmStudies = 100;

bool IsPostgresUrl(const std::string& db) {
  return db.rfind("postgresql://", 0) == 0 || db.rfind("postgres://", 0) == 0;
}

void ParseStudies(yamlcfg::MapReader& r, yamlcfg::Diagnostics* d, std::vector<int64_t>* out) {
  const YAML::Node list = r.Get("studies");
  if (!list.IsDefined() || !list.IsSequence() || list.size() == 0) {
    d->Error("warm_start.studies",
             "must be a list of earlier study ids, e.g. [1, 2], got " + yamlcfg::Describe(list));
    return;
  }
  if (list.size() > kMaxWarmStudies) {
    d->Error("warm_start.studies", "more than " + std::to_string(kMaxWarmStudies) + " studies");
    return;
  }
  for (size_t i = 0; i < list.size(); ++i) {
    const std::string path = "warm_start.studies[" + std::to_string(i) + "]";
    d->NoteLine(path, list[i]);
    const search::ParamValue v =
        list[i].IsScalar() ? yamlcfg::InferParamValue(list[i]) : search::ParamValue{};
    const auto* id = std::get_if<int64_t>(&v);
    if (!list[i].IsScalar() || id == nullptr || *id < 1) {
      d->Error(path, "must be a study id (an integer >= 1), got " + yamlcfg::Describe(list[i]));
    } else if (std::find(out->begin(), out->end(), *id) != out->end()) {
      d->Error(path, "study " + std::to_string(*id) + " is listed twice");
    } else {
      out->push_back(*id);
    }
  }
}

}  // namespace

void ParseWarmStart(yamlcfg::MapReader& top, yamlcfg::Diagnostics* d, const std::string& base_dir,
                    StudyConfig* config) {
  if (!top.Has("warm_start")) return;
  yamlcfg::MapReader r(top.Get("warm_start"), "warm_start", d);
  if (!r.ok()) return;
  WarmStartConfig w;
  ParseStudies(r, d, &w.studies);
  if (r.String("database", &w.database)) {
    namespace fs = std::filesystem;
    if (w.database.empty()) {
      d->Error("warm_start.database", "must not be empty; leave it out to use this study's own");
    } else if (!IsPostgresUrl(w.database)) {
      if (!base_dir.empty() && fs::path(w.database).is_relative()) {
        w.database = (fs::path(base_dir) / w.database).lexically_normal().string();
      }
      std::error_code ec;
      if (!fs::is_regular_file(w.database, ec)) {
        d->Error("warm_start.database", "no such database file: " + w.database);
      }
    }
  }
  if (r.Double("weight", &w.weight) && !(w.weight > 0 && w.weight <= 1)) {
    d->Error("warm_start.weight", "must be in (0, 1], got " + search::G6(w.weight));
  }
  r.RejectUnknown();
  config->warm_start = std::move(w);
}

}  // namespace sift::common
