#include "search/multi/mo_median.h"

#include <algorithm>

#include "search/median_scheduler.h"

namespace sift::search {

std::vector<double> MedianPoint(const Points& points) {
  if (points.empty()) return {};
  std::vector<double> median(points[0].size());
  std::vector<double> column(points.size());
  for (size_t m = 0; m < median.size(); ++m) {
    for (size_t i = 0; i < points.size(); ++i) column[i] = points[i][m];
    std::sort(column.begin(), column.end());
    median[m] = MedianExcluding(column, -1);
  }
  return median;
}

bool DominatedByMedian(const std::vector<double>& values, const Points& others, double grace) {
  if (others.empty()) return false;
  std::vector<double> bar = MedianPoint(others);
  for (double& x : bar) x -= grace;
  return Dominates(bar, values);
}

}  // namespace sift::search
