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

void ObservationIndex::Update(const StudyView& study, int64_t number,
                              std::vector<int64_t>& open) {
  const auto n = static_cast<size_t>(number);
  const TrialView& t = study.trials[n];
  Observation o{number, 0.0, t.LastResource(), false};
  bool in = false;
  if (t.state == TrialState::kDiverged) {
    o.score = -std::numeric_limits<double>::infinity();
    in = true;
  } else if (!t.values.empty() &&
             (t.state == TrialState::kCompleted || t.state == TrialState::kStopped ||
              t.state == TrialState::kPaused)) {
    const double v = t.values.rbegin()->second;
    if (std::isfinite(v)) {
      o.score = study.Score(v);
      o.completed = t.state == TrialState::kCompleted;
      in = true;
    }
  }
  const Observation& old = entry_[n];
  const bool same = in == static_cast<bool>(in_[n]) &&
                    (!in || (old.score == o.score && old.resource == o.resource &&
                             old.completed == o.completed));
  if (!same) {
    if (in_[n]) ranked_.erase(old);
    if (in) {
      ranked_.insert(o);
      numbers_.insert(number);
    } else {
      numbers_.erase(number);
    }
    entry_[n] = o;
    in_[n] = in;
  }
  if (!IsTerminal(t.state)) open.push_back(number);
}

void ObservationIndex::Sync(const StudyView& study) {
  if (space_ != study.space || seed_ != study.seed || maximize_ != study.objective.maximize ||
      study.trials.size() < seen_) {
    *this = ObservationIndex();
    space_ = study.space;
    seed_ = study.seed;
    maximize_ = study.objective.maximize;
  }
  entry_.resize(study.trials.size());
  in_.resize(study.trials.size(), 0);
  std::vector<int64_t> open;
  open.reserve(open_.size() + study.trials.size() - seen_);
  for (int64_t number : open_) Update(study, number, open);
  for (size_t n = seen_; n < study.trials.size(); ++n) Update(study, static_cast<int64_t>(n), open);
  seen_ = study.trials.size();
  open_.swap(open);
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
