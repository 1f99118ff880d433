#include "search/factory.h"

#include <limits>

#include "search/fifo_scheduler.h"
#include "search/plateau_scheduler.h"
#include "search/random_searcher.h"

namespace sift::search {
namespace {

constexpr int64_t kMaxInt = std::numeric_limits<int32_t>::max();

PlateauOptions ReadPlateau(OptionReader& r, const std::string& prefix) {
  PlateauOptions o;
  o.patience = r.Int(prefix + "patience", o.patience, 1, kMaxInt);
  o.min_delta = r.Double(prefix + "min_delta", o.min_delta, 0.0, 1e300);
  o.smoothing = r.Double(prefix + "smoothing", o.smoothing, 0.0, 0.999);
  o.min_resource = r.Int(prefix + "min_resource", o.min_resource, 1, kMaxInt);
  return o;
}

}  // namespace

std::vector<std::string> SearcherTypes() { return {"random"}; }
std::vector<std::string> SchedulerTypes() { return {"fifo", "plateau"}; }

std::unique_ptr<Searcher> MakeSearcher(const std::string& type, const Options& options,
                                       const SearchSpace& space, std::vector<std::string>* errors) {
  OptionReader r(options);
  std::unique_ptr<Searcher> out;
  if (type == "random") {
    out = std::make_unique<RandomSearcher>();
  } else {
    std::string list;
    for (const auto& t : SearcherTypes()) list += (list.empty() ? "" : ", ") + t;
    errors->push_back("type: unknown searcher '" + type + "' (known: " + list + ")");
    return nullptr;
  }
  r.RejectUnknown();
  if (!r.errors().empty()) {
    errors->insert(errors->end(), r.errors().begin(), r.errors().end());
    return nullptr;
  }
  return out;
}

std::unique_ptr<Scheduler> MakeScheduler(const std::string& type, const Options& options,
                                         const SchedulerContext& context,
                                         std::vector<std::string>* errors) {
  OptionReader r(options);
  std::unique_ptr<Scheduler> out;
  if (type == "fifo") {
    out = std::make_unique<FifoScheduler>();
  } else if (type == "plateau") {
    out = std::make_unique<PlateauScheduler>(ReadPlateau(r, ""));
  } else {
    std::string list;
    for (const auto& t : SchedulerTypes()) list += (list.empty() ? "" : ", ") + t;
    errors->push_back("type: unknown scheduler '" + type + "' (known: " + list + ")");
    return nullptr;
  }
  r.RejectUnknown();
  if (!r.errors().empty()) {
    errors->insert(errors->end(), r.errors().begin(), r.errors().end());
    return nullptr;
  }
  return out;
}

}  // namespace sift::search
