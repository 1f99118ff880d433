#include "search/enqueued_searcher.h"

#include "search/rng.h"

namespace sift::search {
namespace {

constexpr uint64_t kEnqueueStream = 0x656e7175;  // "enqu": its own stream of the study's seed

}  // namespace

EnqueuedSearcher::EnqueuedSearcher(std::vector<Params> enqueued, std::unique_ptr<Searcher> inner)
    : enqueued_(std::move(enqueued)), inner_(std::move(inner)) {}

Params EnqueuedSearcher::Completed(const SearchSpace& space, const Params& partial, uint64_t seed,
                                   int64_t number) {
  Rng rng(DeriveSeed(seed, {kEnqueueStream, static_cast<uint64_t>(number)}));
  return space.Complete(partial, rng);
}

std::vector<Params> EnqueuedSearcher::Suggest(const StudyView& study, int count) {
  std::vector<Params> out;
  auto next = static_cast<int64_t>(study.trials.size());
  while (static_cast<int>(out.size()) < count && next < static_cast<int64_t>(enqueued_.size())) {
    out.push_back(Completed(*study.space, enqueued_[static_cast<size_t>(next)], study.seed, next));
    ++next;
  }
  if (static_cast<int>(out.size()) == count) return out;
  if (out.empty()) return inner_->Suggest(study, count);
  // The rest come after the enqueued ones just handed out: the inner searcher sees them as
  // running trials, so that it numbers its own from theirs and spreads around them.
  StudyView with = study;
  for (const auto& params : out) {
    TrialView t;
    t.number = static_cast<int64_t>(with.trials.size());
    t.params = params;
    t.state = TrialState::kRunning;
    with.trials.push_back(std::move(t));
  }
  for (auto& params : inner_->Suggest(with, count - static_cast<int>(out.size()))) {
    out.push_back(std::move(params));
  }
  return out;
}

std::string CheckEnqueued(const SearchSpace& space, const Params& partial) {
  Rng rng(0);
  const Params whole = space.Complete(partial, rng);
  for (const auto& [name, value] : partial) {
    if (space.Find(name) == nullptr) return name + ": not a parameter of the search space";
    if (whole.count(name) == 0) return name + ": set but inactive under its condition";
  }
  return space.Check(whole);
}

}  // namespace sift::search
