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

namespace {
// A 4-ary heap of entries: the front is the one that `before` puts first. A node's four children
// share one or two cache lines, so a sift-down through a rung of 10,000 entries touches about half
// the lines a binary heap would.
template <class Before>
void Push4(std::vector<RungRecord::Entry>& h, const RungRecord::Entry& e, Before before) {
  size_t i = h.size();
  h.push_back(e);
  while (i > 0) {
    const size_t parent = (i - 1) / 4;
    if (!before(e, h[parent])) break;
    h[i] = h[parent];
    i = parent;
  }
  h[i] = e;
}

template <class Before>
RungRecord::Entry Pop4(std::vector<RungRecord::Entry>& h, Before before) {
  const RungRecord::Entry front = h.front();
  const RungRecord::Entry last = h.back();
  h.pop_back();
  const size_t n = h.size();
  if (n == 0) return front;
  size_t i = 0;
  for (;;) {
    const size_t first = 4 * i + 1;
    if (first >= n) break;
    size_t best = first;
    for (size_t j = first + 1; j < std::min(first + 4, n); ++j) {
      if (before(h[j], h[best])) best = j;
    }
    if (!before(h[best], last)) break;
    h[i] = h[best];
    i = best;
  }
  h[i] = last;
  return front;
}
}  // namespace

void RungRecord::Add(int64_t trial, double score) {
  score = Orderable(score);
  const auto t = static_cast<size_t>(trial);
  if (t >= recorded_.size()) {
    recorded_.resize(std::max(t + 1, 2 * recorded_.size()),
                     std::numeric_limits<double>::quiet_NaN());
  }
  if (!std::isnan(recorded_[t])) return;
  recorded_[t] = score;
  const Entry e{score, trial};
  // top_: the worst first; rest_: the best first.
  const auto worst_first = [](const Entry& a, const Entry& b) { return Better(b, a); };
  const auto best_first = [](const Entry& a, const Entry& b) { return Better(a, b); };
  // An entry better than the worst of the top belongs in the top; the sizes are then restored by
  // moving the boundary entries (at most one each way per insertion).
  if (!top_.empty() && Better(e, top_.front())) {
    Push4(top_, e, worst_first);
  } else {
    Push4(rest_, e, best_first);
  }
  const int64_t n = size();
  const auto k = static_cast<size_t>(
      eta_ <= 0 ? 0 : at_least_one_ ? SurvivorCount(n, eta_) : PromotableCount(n, eta_));
  while (top_.size() > k) Push4(rest_, Pop4(top_, worst_first), best_first);
  while (top_.size() < k && !rest_.empty()) Push4(top_, Pop4(rest_, best_first), worst_first);
}

bool RungRecord::InTop(int64_t trial, double score) const {
  score = Orderable(score);
  const auto t = static_cast<size_t>(trial);
  if (t >= recorded_.size() || !(recorded_[t] == score) || top_.empty()) return false;
  return !Better(Cutoff(), Entry{score, trial});
}

}  // namespace sift::search
