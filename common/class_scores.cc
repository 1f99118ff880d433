#include "common/class_scores.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>

namespace sift::common {

double BalancedAccuracy(const ClassCounts& c) {
  double sum = 0;
  int present = 0;
  for (size_t k = 0; k < c.total.size(); ++k) {
    if (c.total[k] == 0) continue;
    sum += static_cast<double>(c.correct[k]) / static_cast<double>(c.total[k]);
    ++present;
  }
  return present > 0 ? sum / present : 0.0;
}

double MacroF1(const ClassCounts& c) {
  double sum = 0;
  int counted = 0;
  for (size_t k = 0; k < c.total.size(); ++k) {
    const int64_t denominator = c.predicted[k] + c.total[k];
    if (denominator == 0) continue;
    sum += 2.0 * static_cast<double>(c.correct[k]) / static_cast<double>(denominator);
    ++counted;
  }
  return counted > 0 ? sum / counted : 0.0;
}

double BinaryRocAuc(const std::vector<double>& scores, const std::vector<int64_t>& labels) {
  const size_t n = scores.size();
  std::vector<size_t> order(n);
  std::iota(order.begin(), order.end(), size_t{0});
  std::sort(order.begin(), order.end(), [&](size_t a, size_t b) { return scores[a] < scores[b]; });
  // Mann-Whitney: the positives' rank sum, tied scores sharing their mean rank.
  double positive_ranks = 0;
  int64_t positives = 0;
  for (size_t i = 0; i < n;) {
    size_t j = i;
    while (j < n && scores[order[j]] == scores[order[i]]) ++j;
    const double mean_rank = (static_cast<double>(i + 1) + static_cast<double>(j)) / 2.0;
    for (size_t k = i; k < j; ++k) {
      if (labels[order[k]] == 1) positive_ranks += mean_rank, ++positives;
    }
    i = j;
  }
  const auto negatives = static_cast<int64_t>(n) - positives;
  if (positives == 0 || negatives == 0) return std::numeric_limits<double>::quiet_NaN();
  const auto p = static_cast<double>(positives);
  return (positive_ranks - p * (p + 1) / 2) / (p * static_cast<double>(negatives));
}

}  // namespace sift::common
