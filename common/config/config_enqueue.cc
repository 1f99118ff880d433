#include "common/config/config_enqueue.h"

#include "search/enqueued_searcher.h"

namespace sift::common {
namespace {

constexpr size_t kMaxEnqueued = 1000;

// A float parameter written as a whole number (dropout: 0) is the float, as the space means it.
search::ParamValue AsSpaceType(const search::SearchSpace& space, const std::string& name,
                               search::ParamValue v) {
  const search::ParamSpec* spec = space.Find(name);
  const auto* i = std::get_if<int64_t>(&v);
  if (spec != nullptr && spec->type == search::ParamType::kFloat && i != nullptr) {
    return static_cast<double>(*i);
  }
  return v;
}

}  // namespace

void ParseEnqueue(yamlcfg::MapReader& top, yamlcfg::Diagnostics* d, StudyConfig* config) {
  const YAML::Node list = top.Get("enqueue");
  if (!list.IsDefined() || list.IsNull()) return;
  if (!list.IsSequence()) {
    d->Error("enqueue", "must be a list of configurations to try first, e.g. [{lr: 0.01}], got " +
                            yamlcfg::Describe(list));
    return;
  }
  if (list.size() > kMaxEnqueued) {
    d->Error("enqueue", "more than " + std::to_string(kMaxEnqueued) + " configurations");
    return;
  }
  for (size_t i = 0; i < list.size(); ++i) {
    const std::string path = "enqueue[" + std::to_string(i) + "]";
    d->NoteLine(path, list[i]);
    yamlcfg::MapReader r(list[i], path, d);
    if (!r.ok()) continue;
    search::Params params;
    bool ok = true;
    for (const auto& [name, value] : r.Entries()) {
      if (!value.IsScalar()) {
        d->Error(path + "." + name, "must be a single value, got " + yamlcfg::Describe(value));
        ok = false;
        continue;
      }
      params[name] = AsSpaceType(config->space, name, yamlcfg::InferParamValue(value));
    }
    if (!ok) continue;
    if (std::string p = search::CheckEnqueued(config->space, params); !p.empty()) {
      d->ErrorUnder(path, p);
      continue;
    }
    config->enqueue.push_back(std::move(params));
  }
  if (static_cast<int64_t>(config->enqueue.size()) > config->budget.max_trials &&
      config->budget.max_trials > 0) {
    d->Error("enqueue", std::to_string(config->enqueue.size()) +
                            " configurations, more than budget.max_trials (" +
                            std::to_string(config->budget.max_trials) + ")");
  }
}

}  // namespace sift::common
