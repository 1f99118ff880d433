#include "common/config/config_startup.h"

#include <algorithm>
#include <string>

namespace sift::common {
namespace {

constexpr int64_t kTpeStartup = 10;  // TpeOptions' default, Optuna's

std::optional<int64_t> IntOption(const search::Options& options, const std::string& key) {
  auto it = options.find(key);
  if (it == options.end()) return std::nullopt;
  if (const auto* v = std::get_if<int64_t>(&it->second)) return *v;
  return std::nullopt;
}

std::string AllRandom(const std::string& what, int64_t startup, int64_t trials) {
  return what + " (" + std::to_string(startup) + ") >= budget.max_trials (" +
         std::to_string(trials) +
         "): every trial is drawn at random and the model never proposes one; lower "
         "searcher.n_startup or raise budget.max_trials";
}

}  // namespace

void FitRandomStartToBudget(StudyConfig* config) {
  const int64_t trials = config->budget.max_trials;
  if (trials <= 0) return;  // no trial limit: the start is a small part of the study
  search::Options& options = config->searcher.options;
  const std::string& type = config->searcher.type;
  const auto set = IntOption(options, "n_startup");
  if (type == "tpe") {
    if (!set && trials < 3 * kTpeStartup) {
      const int64_t startup = std::clamp<int64_t>(trials / 3, 3, kTpeStartup);
      options["n_startup"] = startup;
      // No fmt here: common/ links none (the config fuzzer builds it alone).
      config->notes.push_back(
          "searcher.n_startup: " + std::to_string(startup) +
          " random trials before TPE's model (a third of budget.max_trials " +
          std::to_string(trials) + ", at least 3; the default of " + std::to_string(kTpeStartup) +
          " is for " + std::to_string(3 * kTpeStartup) + " trials or more)" +
          (startup >= trials ? "; with so few trials every one is random" : ""));
    } else if (set && *set >= trials) {
      config->notes.push_back(AllRandom("searcher.n_startup", *set, trials));
    }
  } else if (type == "gp") {
    const auto dims = static_cast<int64_t>(config->space.size());
    const int64_t startup = set && *set > 0 ? *set : std::max<int64_t>(5, dims + 1);
    if (startup >= trials) {
      config->notes.push_back(
          AllRandom(set && *set > 0 ? "searcher.n_startup" : "searcher.n_startup (default)",
                    startup, trials));
    }
  }
}

}  // namespace sift::common
