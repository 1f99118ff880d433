// What model-based searchers learn from: finished (or parked) trials with a value, and each
// trial's parameters in unit space.
#pragma once

#include <cstdint>
#include <limits>
#include <vector>

#include "search/study_view.h"

namespace sift::search {

struct Observation {
  int64_t number;
  double score;      // oriented: larger is better
  int64_t resource;  // epochs reached; COMPLETED trials count as fully trained
  bool completed;
};

// COMPLETED, STOPPED and PAUSED trials with at least one value, in trial order, each with its last
// value, and DIVERGED trials with the worst score among those (they count as the worst result).
// Stopped and paused trials stand for what they reached: an early-stopped trial's last value
// is the best evidence we have of it, and leaving them out would hide exactly the bad regions.
std::vector<Observation> CollectObservations(const StudyView& study);

// Ordering used to split good from bad (TPE, BOHB): completed trials first, then trials that got
// further, then by score, ties by trial number (Optuna ranks pruned trials the same way).
bool BetterObservation(const Observation& a, const Observation& b);

// Each trial's parameters in unit space (NaN where inactive), computed once per trial number.
// Parameters of a trial never change, so the cache never changes an answer; it starts over when the
// space or seed differs or the history shrinks (another study).
class UnitCache {
 public:
  static constexpr double kInactive = std::numeric_limits<double>::quiet_NaN();
  // Row of trial `number`: space->size() values.
  const double* Row(const StudyView& study, int64_t number);
  // Changes whenever the cache starts over, so that what is derived from its rows can follow.
  uint64_t generation() const { return generation_; }

 private:
  void Reset(const StudyView& study);
  const SearchSpace* space_ = nullptr;
  uint64_t seed_ = 0;
  size_t dims_ = 0;
  std::vector<double> data_;
  std::vector<char> have_;
  uint64_t generation_ = 0;
};

}  // namespace sift::search
