// What model-based searchers learn from: finished (or parked) trials with a value, and each
// trial's parameters in unit space.
#pragma once

#include <cstdint>
#include <limits>
#include <map>
#include <set>
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

// Which trials of a study an index kept across asks must look at again: those new since the last
// call and those that were not terminal then (a terminal trial never changes). Advance returns
// true when the history is another one (space, seed or direction differ, or it shrank): the index
// starts over, and `look` then lists every trial.
class TrialCursor {
 public:
  bool Advance(const StudyView& study, std::vector<int64_t>& look);
  // Trials that were not terminal at the last Advance (pending, running, paused), in trial order.
  const std::vector<int64_t>& open() const { return open_; }

 private:
  const SearchSpace* space_ = nullptr;
  uint64_t seed_ = 0;
  bool maximize_ = true;
  size_t seen_ = 0;
  std::vector<int64_t> open_;
};

// CollectObservations and its ranking by BetterObservation, kept up to date across asks instead of
// recomputed: Sync looks only at trials new since the last call and at those that were not yet
// terminal then (a terminal trial never changes), so an ask after 10,000 trials costs what one
// after 100 does. One difference: a diverged trial ranks with score -infinity, after every other
// trial that reached as many epochs (CollectObservations gives it the worst score seen, so only an
// exact tie with that score can order differently), which keeps its rank fixed when the worst
// score moves. A cache of the view: it starts over when the space, seed or direction differs or
// the history shrinks, so a searcher built fresh on the same view sees the same index.
class ObservationIndex {
 public:
  struct Better {
    bool operator()(const Observation& a, const Observation& b) const {
      return BetterObservation(a, b);
    }
  };
  void Sync(const StudyView& study);
  size_t size() const { return ranked_.size(); }
  // Every observation, best first.
  const std::set<Observation, Better>& ranked() const { return ranked_; }
  // Their trial numbers, in trial order.
  const std::set<int64_t>& numbers() const { return numbers_; }
  // Trials that were not terminal at the last Sync (pending, running, paused), in trial order.
  const std::vector<int64_t>& open() const { return cursor_.open(); }
  // Observations with a trial number below `number`, and the trial number of the k-th observation
  // in trial order (0-based, k < size()): O(log n) each, through a Fenwick tree of counts.
  size_t CountBefore(int64_t number) const;
  int64_t Kth(size_t k) const;
  // Every observation by score alone, best first: (-score, trial number), diverged trials last.
  const std::set<std::pair<double, int64_t>>& by_score() const { return by_score_; }
  // The worst score of a trial that did not diverge (0 when there is none): what
  // CollectObservations gives diverged trials.
  double WorstScore() const { return finite_.empty() ? 0.0 : *finite_.begin(); }
  // The observation of trial `number`, which must be one.
  const Observation& Get(int64_t number) const { return entry_[static_cast<size_t>(number)]; }

 private:
  void Update(const StudyView& study, int64_t number);
  void Count(size_t number, int delta);
  TrialCursor cursor_;
  std::vector<int64_t> fenwick_;  // 1-based over trial numbers; sized to a power of two
  std::vector<int64_t> look_;
  std::set<Observation, Better> ranked_;
  std::set<int64_t> numbers_;
  std::set<std::pair<double, int64_t>> by_score_;
  std::multiset<double> finite_;    // scores of the trials that did not diverge
  std::vector<Observation> entry_;  // by trial number, valid where in_
  std::vector<char> in_;
  // Every trial below it is an observation (a running study's older trials have all ended), so
  // there CountBefore(t) is t and Kth(k) is k without walking the tree.
  size_t dense_ = 0;
};

// Per resource level (epoch), the trials with a finite value there and their scores: what BOHB
// fits on, kept across asks like ObservationIndex. Failed trials count nowhere.
class LevelIndex {
 public:
  struct Entry {
    double score;
    int64_t number;
  };
  // Best first: higher score, then lower trial number.
  struct Better {
    bool operator()(const Entry& a, const Entry& b) const {
      return a.score > b.score || (a.score == b.score && a.number < b.number);
    }
  };
  struct Level {
    std::set<Entry, Better> ranked;
    std::map<int64_t, double> scores;  // by trial number
  };
  void Sync(const StudyView& study);
  // Levels with at least one value.
  const std::map<int64_t, Level>& levels() const { return levels_; }

 private:
  TrialCursor cursor_;
  std::vector<int64_t> look_;
  std::map<int64_t, Level> levels_;
  std::vector<std::vector<std::pair<int64_t, double>>> counted_;  // by trial: (level, score)
};

// Each trial's parameters in unit space (NaN where inactive), computed once per trial number.
// Parameters of a trial never change, so the cache never changes an answer; it starts over when the
// space or seed differs or the history shrinks (another study).
class UnitCache {
 public:
  static constexpr double kInactive = std::numeric_limits<double>::quiet_NaN();
  // Starts over if the view is another study's and makes room for every trial: after it, Row on
  // the same view moves no row, so pointers from Row stay valid until the view grows.
  void Sync(const StudyView& study);
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
