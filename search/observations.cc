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

bool TrialCursor::Advance(const StudyView& study, std::vector<int64_t>& look) {
  const bool restart = space_ != study.space || seed_ != study.seed ||
                       maximize_ != study.objective.maximize || study.trials.size() < seen_;
  if (restart) {
    space_ = study.space;
    seed_ = study.seed;
    maximize_ = study.objective.maximize;
    seen_ = 0;
    open_.clear();
  }
  look.swap(open_);
  for (size_t n = seen_; n < study.trials.size(); ++n) look.push_back(static_cast<int64_t>(n));
  seen_ = study.trials.size();
  open_.clear();
  for (int64_t n : look) {
    if (!IsTerminal(study.trials[static_cast<size_t>(n)].state)) open_.push_back(n);
  }
  return restart;
}

void ObservationIndex::Update(const StudyView& study, int64_t number) {
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
  const bool same =
      in == static_cast<bool>(in_[n]) &&
      (!in || (old.score == o.score && old.resource == o.resource && old.completed == o.completed));
  if (same) return;
  if (in_[n]) {
    ranked_.erase(old);
    by_score_.erase({-old.score, number});
    if (std::isfinite(old.score)) finite_.erase(finite_.find(old.score));
  }
  if (in) {
    ranked_.insert(o);
    by_score_.insert({-o.score, number});
    if (std::isfinite(o.score)) finite_.insert(o.score);
    if (numbers_.insert(number).second) Count(n, +1);
  } else if (numbers_.erase(number) > 0) {
    Count(n, -1);
    dense_ = std::min(dense_, n);
  }
  entry_[n] = o;
  in_[n] = in;
}

void ObservationIndex::Sync(const StudyView& study) {
  if (cursor_.Advance(study, look_)) {
    ranked_.clear();
    numbers_.clear();
    by_score_.clear();
    finite_.clear();
    fenwick_.clear();
    entry_.clear();
    in_.clear();
    dense_ = 0;
  }
  entry_.resize(study.trials.size());
  in_.resize(study.trials.size(), 0);
  if (fenwick_.size() <= study.trials.size()) {
    // Grown to the next power of two and rebuilt from the members: O(n) once per doubling.
    size_t size = 1024;
    while (size <= study.trials.size()) size *= 2;
    fenwick_.assign(size + 1, 0);
    for (int64_t number : numbers_) {
      for (size_t i = static_cast<size_t>(number) + 1; i <= size; i += i & (~i + 1)) ++fenwick_[i];
    }
  }
  for (int64_t number : look_) Update(study, number);
  while (dense_ < in_.size() && in_[dense_]) ++dense_;
}

void ObservationIndex::Count(size_t number, int delta) {
  for (size_t i = number + 1; i < fenwick_.size(); i += i & (~i + 1)) fenwick_[i] += delta;
}

size_t ObservationIndex::CountBefore(int64_t number) const {
  if (number >= 0 && static_cast<size_t>(number) <= dense_) return static_cast<size_t>(number);
  int64_t sum = 0;
  for (size_t i = std::min(static_cast<size_t>(std::max<int64_t>(number, 0)), fenwick_.size() - 1);
       i > 0; i -= i & (~i + 1)) {
    sum += fenwick_[i];
  }
  return static_cast<size_t>(sum);
}

int64_t ObservationIndex::Kth(size_t k) const {
  if (k < dense_) return static_cast<int64_t>(k);  // trials 0..k are all observations
  // Descend the implicit tree: the largest prefix holding at most k observations.
  size_t pos = 0;
  auto left = static_cast<int64_t>(k);
  for (size_t step = (fenwick_.size() - 1) / 2 * 2; step > 0; step /= 2) {
    if (pos + step < fenwick_.size() && fenwick_[pos + step] <= left) {
      pos += step;
      left -= fenwick_[pos];
    }
  }
  return static_cast<int64_t>(pos);  // prefix [1, pos] holds k: the next is trial number pos
}

void LevelIndex::Sync(const StudyView& study) {
  if (cursor_.Advance(study, look_)) {
    levels_.clear();
    counted_.clear();
  }
  counted_.resize(study.trials.size());
  std::vector<std::pair<int64_t, double>> now;
  for (int64_t number : look_) {
    const TrialView& t = study.trials[static_cast<size_t>(number)];
    now.clear();
    if (t.state != TrialState::kFailed) {
      for (const auto& [resource, value] : t.values) {
        if (std::isfinite(value)) now.push_back({resource, study.Score(value)});
      }
    }
    auto& old = counted_[static_cast<size_t>(number)];
    if (now == old) continue;
    for (const auto& [resource, score] : old) {
      Level& level = levels_[resource];
      level.ranked.erase({score, number});
      level.scores.erase(number);
      if (level.scores.empty()) levels_.erase(resource);
    }
    for (const auto& [resource, score] : now) {
      Level& level = levels_[resource];
      level.ranked.insert({score, number});
      level.scores[number] = score;
    }
    old = now;
  }
}

void UnitCache::Reset(const StudyView& study) {
  space_ = study.space;
  seed_ = study.seed;
  dims_ = study.space->size();
  data_.clear();
  have_.clear();
  ++generation_;
}

void UnitCache::Sync(const StudyView& study) {
  if (space_ != study.space || seed_ != study.seed || have_.size() > study.trials.size()) {
    Reset(study);
  }
  if (have_.size() < study.trials.size()) {
    have_.resize(study.trials.size(), 0);
    data_.resize(study.trials.size() * dims_);
  }
}

const double* UnitCache::Row(const StudyView& study, int64_t number) {
  Sync(study);
  const auto n = static_cast<size_t>(number);
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
