#include "search/observations.h"

#include <algorithm>
#include <cmath>

namespace sift::search {

std::vector<Observation> CollectObservations(const StudyView& study) {
  std::vector<Observation> out;
  std::vector<const TrialView*> diverged;
  for (const auto& t : study.trials) {
    if (t.state == TrialState::kDiverged) {
      diverged.push_back(&t);
      continue;
    }
    if (t.values.empty()) continue;
    if (t.state != TrialState::kCompleted && t.state != TrialState::kStopped &&
        t.state != TrialState::kPaused) {
      continue;
    }
    const double v = t.values.rbegin()->second;
    if (!std::isfinite(v)) continue;
    const bool completed = t.state == TrialState::kCompleted;
    out.push_back({t.number, study.Score(v), t.LastResource(), completed});
  }
  if (diverged.empty()) return out;
  // A diverged trial has no value to learn from, yet its region is bad: it gets the worst score
  // seen (0 when nothing else has one), never counts as completed, and ranks by the epochs it
  // reached, so it lands in the bad set of every split.
  double worst = out.empty() ? 0.0 : out.front().score;
  for (const auto& o : out) worst = std::min(worst, o.score);
  for (const TrialView* t : diverged) {
    out.push_back({t->number, worst, t->LastResource(), false});
  }
  // Trial order, as documented.
  std::sort(out.begin(), out.end(),
            [](const Observation& a, const Observation& b) { return a.number < b.number; });
  return out;
}

bool BetterObservation(const Observation& a, const Observation& b) {
  if (a.completed != b.completed) return a.completed;
  if (!a.completed && a.resource != b.resource) return a.resource > b.resource;
  if (a.score != b.score) return a.score > b.score;
  return a.number < b.number;
}

void UnitCache::Reset(const StudyView& study) {
  space_ = study.space;
  seed_ = study.seed;
  dims_ = study.space->size();
  data_.clear();
  have_.clear();
  ++generation_;
}

const double* UnitCache::Row(const StudyView& study, int64_t number) {
  if (space_ != study.space || seed_ != study.seed || have_.size() > study.trials.size()) {
    Reset(study);
  }
  const auto n = static_cast<size_t>(number);
  if (have_.size() < study.trials.size()) {
    have_.resize(study.trials.size(), 0);
    data_.resize(study.trials.size() * dims_);
  }
  double* row = data_.data() + n * dims_;
  if (!have_[n]) {
    const Params& p = study.trials[n].params;
    for (size_t d = 0; d < dims_; ++d) {
      const ParamSpec& spec = space_->params()[d];
      auto it = p.find(spec.name);
      row[d] = it == p.end() ? kInactive : space_->ToUnit(spec, it->second);
    }
    have_[n] = 1;
  }
  return row;
}

}  // namespace sift::search
