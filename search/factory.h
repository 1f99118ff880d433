// Builds searchers and schedulers by name from validated options: the one place the coordinator
// and the config validator ask, so `sift validate` and a running study agree.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "search/options.h"
#include "search/pbt_scheduler.h"
#include "search/scheduler.h"
#include "search/searcher.h"
#include "search/space.h"

namespace sift::search {

struct SchedulerContext {
  int64_t max_resource = 1;  // epochs per trial at most
  bool maximize = true;
  size_t objectives = 1;  // several: only the multi-objective schedulers are accepted
};

// Returns nullptr and appends "key: problem" messages to `errors` when the type or an option is
// invalid. The space must already be valid.
// `objectives` above 1 accepts only the searchers that support several objectives.
std::unique_ptr<Searcher> MakeSearcher(const std::string& type, const Options& options,
                                       const SearchSpace& space, std::vector<std::string>* errors,
                                       size_t objectives = 1);
std::unique_ptr<Scheduler> MakeScheduler(const std::string& type, const Options& options,
                                         const SchedulerContext& context,
                                         std::vector<std::string>* errors);

// Population-based training's options as MakeScheduler reads them (defaults where missing or
// invalid), for the config's checks against the search space and the budget.
PbtOptions ReadPbtOptions(const Options& options);

std::vector<std::string> SearcherTypes();
std::vector<std::string> SchedulerTypes();
// The types that accept several objectives (the others are refused, naming these); with one
// objective they build their single-objective versions.
std::vector<std::string> MultiObjectiveSearcherTypes();
std::vector<std::string> MultiObjectiveSchedulerTypes();

}  // namespace sift::search
