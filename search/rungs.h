// Rung maths for successive halving (ASHA, Hyperband) as pure functions, plus the sorted record of
// one rung. Kept apart from the schedulers so the rules can be unit-tested on hand-worked cases.
#pragma once

#include <cstddef>
#include <cstdint>
#include <utility>
#include <vector>

namespace sift::search {

// Resource levels at which a bracket judges trials: min_resource * eta^k, rounded, strictly below
// max_resource (reaching max_resource completes a trial, so no decision is taken there).
std::vector<int64_t> RungLevels(int64_t min_resource, int64_t max_resource, int64_t eta,
                                int64_t early_stopping_rate = 0);

// Index of `resource` in `levels`, or -1 when it is not a rung.
int RungIndex(const std::vector<int64_t>& levels, int64_t resource);

// How many of n trials at a rung the paper's rule promotes: floor(n / eta) (ASHA, Algorithm 2).
int64_t PromotableCount(int64_t n, int64_t eta);

// How many of n trials at a rung survive the stopping rule: the top floor(n / eta), but at least
// one, so the first trial to reach a rung is never stopped for being alone (as Optuna does).
int64_t SurvivorCount(int64_t n, int64_t eta);

// Number of Hyperband brackets: floor(log_eta(max / min)) + 1.
int64_t HyperbandBracketCount(int64_t min_resource, int64_t max_resource, int64_t eta);

// The bracket of a trial: a hash of its number picks a bracket with probability proportional to
// the classic Hyperband allocation (most aggressive bracket most often). Seed independent, so a
// restarted coordinator (or any replay) assigns the same bracket.
int HyperbandBracket(int64_t trial_number, int64_t n_brackets, int64_t eta);

// The scores recorded at one rung, best first (score = oriented objective, larger is better; ties
// broken by the lower trial number so ranks are deterministic).
class RungRecord {
 public:
  struct Entry {
    double score;
    int64_t trial;
  };

  // Adds a trial's score; a trial already recorded is left as it is. O(n) worst case (a memmove).
  void Add(int64_t trial, double score);
  // 0-based rank of a recorded trial, or -1.
  int64_t RankOf(int64_t trial, double score) const;
  int64_t size() const { return static_cast<int64_t>(entries_.size()); }
  const Entry& at(int64_t rank) const { return entries_[static_cast<size_t>(rank)]; }

 private:
  static bool Better(const Entry& a, const Entry& b) {
    return a.score > b.score || (a.score == b.score && a.trial < b.trial);
  }
  std::vector<Entry> entries_;
};

}  // namespace sift::search
