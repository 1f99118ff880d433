#include "search/rungs.h"

#include <algorithm>
#include <cmath>

#include "search/rng.h"

namespace sift::search {

std::vector<int64_t> RungLevels(int64_t min_resource, int64_t max_resource, int64_t eta,
                                int64_t early_stopping_rate) {
  std::vector<int64_t> levels;
  // Integer arithmetic: no rounding surprises on any platform.
  int64_t r = std::max<int64_t>(1, min_resource);
  for (int64_t i = 0; i < early_stopping_rate && r < max_resource; ++i) r *= eta;
  for (; r < max_resource; r *= eta) levels.push_back(r);
  return levels;
}

int RungIndex(const std::vector<int64_t>& levels, int64_t resource) {
  auto it = std::lower_bound(levels.begin(), levels.end(), resource);
  if (it == levels.end() || *it != resource) return -1;
  return static_cast<int>(it - levels.begin());
}

int64_t PromotableCount(int64_t n, int64_t eta) { return n / eta; }

int64_t SurvivorCount(int64_t n, int64_t eta) { return std::max<int64_t>(1, n / eta); }

int64_t HyperbandBracketCount(int64_t min_resource, int64_t max_resource, int64_t eta) {
  int64_t n = 1;
  for (int64_t r = std::max<int64_t>(1, min_resource) * eta; r <= max_resource; r *= eta) ++n;
  return n;
}

namespace {
// Hyperband's allocation: bracket i (early-stopping rate i) gets ceil(B * eta^(B-1-i) / (B - i)).
std::vector<uint64_t> BracketWeights(int64_t n_brackets, int64_t eta) {
  std::vector<uint64_t> w;
  for (int64_t i = 0; i < n_brackets; ++i) {
    const int64_t s = n_brackets - 1 - i;
    uint64_t p = 1;
    for (int64_t k = 0; k < s && p < (uint64_t{1} << 40); ++k) p *= static_cast<uint64_t>(eta);
    const uint64_t num = static_cast<uint64_t>(n_brackets) * p;
    const uint64_t den = static_cast<uint64_t>(s + 1);
    w.push_back((num + den - 1) / den);
  }
  return w;
}
}  // namespace

int HyperbandBracket(int64_t trial_number, int64_t n_brackets, int64_t eta) {
  if (n_brackets <= 1) return 0;
  const std::vector<uint64_t> w = BracketWeights(n_brackets, eta);
  uint64_t total = 0;
  for (uint64_t x : w) total += x;
  uint64_t h = Mix64(static_cast<uint64_t>(trial_number) ^ 0x485950455242414EULL) % total;
  for (size_t i = 0; i < w.size(); ++i) {
    if (h < w[i]) return static_cast<int>(i);
    h -= w[i];
  }
  return 0;
}

std::optional<RungRecord::Entry> RungRecord::Add(int64_t trial, double score) {
  score = Orderable(score);
  const auto t = static_cast<size_t>(trial);
  if (t >= recorded_.size()) {
    recorded_.resize(std::max(t + 1, 2 * recorded_.size()),
                     std::numeric_limits<double>::quiet_NaN());
  }
  if (!std::isnan(recorded_[t])) return std::nullopt;
  recorded_[t] = score;
  const int64_t n = scores_.size() + 1;
  const int64_t old_k = top_count_;
  top_count_ = eta_ <= 0 ? 0 : at_least_one_ ? SurvivorCount(n, eta_) : PromotableCount(n, eta_);
  const Entry e{score, trial};
  scores_.Add(e, n - top_count_);
  if (top_count_ == 0) return std::nullopt;
  if (!Better(Cutoff(), e)) return e;
  if (top_count_ > old_k) return Cutoff();
  return std::nullopt;
}

bool RungRecord::InTop(int64_t trial, double score) const {
  score = Orderable(score);
  const auto t = static_cast<size_t>(trial);
  if (t >= recorded_.size() || !(recorded_[t] == score) || top_count_ == 0) return false;
  return !Better(Cutoff(), Entry{score, trial});
}

}  // namespace sift::search
