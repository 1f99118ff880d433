// Rung maths for successive halving (ASHA, Hyperband) as pure functions, plus the sorted record of
// one rung. Kept apart from the schedulers so the rules can be unit-tested on hand-worked cases.
#pragma once

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <optional>
#include <utility>
#include <vector>

#include "search/rank_window.h"

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

// The scores recorded at one rung, split at the k-th best, k = floor(n / eta) (at least 1 when
// `at_least_one`; 0 for eta 0): ASHA only asks whether a trial is in the top k and what the k-th
// best is. A RankWindow focused on the k-th best (see rank_window.h): the exact two-heap split
// this replaces sent a boundary entry through every level of a heap on most additions. Best:
// larger score, ties to the lower trial number.
class RungRecord {
 public:
  struct Entry {
    double score;
    int64_t trial;
  };
  static bool Better(const Entry& a, const Entry& b) {
    return a.score > b.score || (a.score == b.score && a.trial < b.trial);
  }
  // The score as recorded: one that is not a number ranks last (and keeps the order strict).
  static double Orderable(double score) {
    return std::isnan(score) ? -std::numeric_limits<double>::infinity() : score;
  }

  explicit RungRecord(int64_t eta = 0, bool at_least_one = false)
      : eta_(eta), at_least_one_(at_least_one) {}
  // Adds a trial's score; a trial already recorded is left as it is. Returns the entry that this
  // addition brought into the top k, if any: at most one does (the new entry, or, when k grew
  // and the new entry stayed out, the one just below the old cutoff, now the cutoff).
  std::optional<Entry> Add(int64_t trial, double score);
  int64_t size() const { return scores_.size(); }
  int64_t top_count() const { return top_count_; }
  // Whether the trial is recorded with this score and among the top k.
  bool InTop(int64_t trial, double score) const;
  // The k-th best (the worst of the top k); only when top_count() > 0.
  const Entry& Cutoff() const { return scores_.At(scores_.size() - top_count_); }

 private:
  struct WorseFirst {
    bool operator()(const Entry& a, const Entry& b) const { return Better(b, a); }
  };
  int64_t eta_;
  bool at_least_one_;
  int64_t top_count_ = 0;
  RankWindow<Entry, WorseFirst> scores_;  // ascending: the k-th best is rank n - k
  std::vector<double> recorded_;          // by trial number: its score, NaN when not recorded
};

}  // namespace sift::search
