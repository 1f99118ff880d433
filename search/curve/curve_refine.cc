// CurveFitter::Refine: the grid's best shape moved to the least-squares optimum on the points.
#include <Eigen/Dense>
#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

#include "search/curve/curve_models.h"

namespace sift::search {
namespace {

// At most four parameters: on the stack, no allocation per step.
using Matrix = Eigen::Matrix<double, Eigen::Dynamic, Eigen::Dynamic, 0, 4, 4>;
using Vector = Eigen::Matrix<double, Eigen::Dynamic, 1, 0, 4, 1>;

// The shape's free parameters on a log scale: (scale) or (scale, power).
int Dims(CurveFamily f) {
  return f == CurveFamily::kLogPower || f == CurveFamily::kWeibull ? 2 : 1;
}

CurveShape WithLog(CurveShape s, int i, double log_value) {
  // Kept within a factor of the grid's range, where every family's curve stays well defined.
  (i == 0 ? s.scale : s.power) = std::exp(std::clamp(log_value, -6.0, 9.0));
  return s;
}

}  // namespace

bool CurveFitter::Refine(const CurveSums& sums, double horizon, CurveShape& shape) const {
  // Levenberg-Marquardt on (start, gain, log parameters) with forward differences for the shape:
  // a few steps from the grid's best point, which is already close. Deterministic: fixed steps.
  const int d = Dims(shape.family);
  const size_t m = static_cast<size_t>(2 + d);
  const auto sse_of = [&](const CurveShape& s, double c, double a, std::vector<double>* g) {
    const double one = CurveBasis(s, 1.0), span = CurveBasis(s, horizon) - one;
    if (!(span > 1e-12)) return std::numeric_limits<double>::infinity();
    double sse = 0;
    for (size_t i = 0; i < sums.points_.size(); ++i) {
      const double gi = NormalisedBasis(s, sums.points_[i].first, one, span);
      if (g != nullptr) (*g)[i] = gi;
      const double r = c + a * gi - sums.points_[i].second;
      sse += r * r;
    }
    return sse;
  };
  const size_t n = sums.points_.size();
  // Every buffer sized once: a refinement runs at each report, and allocation was a visible
  // share of it.
  std::vector<double> g(n), gd(n * static_cast<size_t>(d)), gk(n), ng(n);
  double log_p[2] = {std::log(shape.scale), std::log(shape.power)};
  // Start and gain of the starting shape, from its own least squares.
  double c = 0, a = 0;
  {
    sse_of(shape, 0, 0, &g);
    double sg = 0, sgg = 0, sgy = 0;
    for (size_t i = 0; i < n; ++i) {
      sg += g[i];
      sgg += g[i] * g[i];
      sgy += g[i] * sums.points_[i].second;
    }
    const double nd = static_cast<double>(n), sxx = sgg - sg * sg / nd;
    if (!(sxx > 0)) return false;
    a = std::max(0.0, (sgy - sg * sums.sy_ / nd) / sxx);
    c = (sums.sy_ - a * sg) / nd;
  }
  if (a <= 0) return false;  // a flat fit has no shape to refine
  double sse = sse_of(shape, c, a, &g);
  double lambda = 1e-3;
  bool moved = false;
  constexpr double kStep = 1e-6;
  for (int iter = 0; iter < 8; ++iter) {
    for (int k = 0; k < d; ++k) {
      sse_of(WithLog(shape, k, log_p[k] + kStep), 0, 0, &gk);
      for (size_t i = 0; i < n; ++i) gd[i * d + k] = a * (gk[i] - g[i]) / kStep;
    }
    Matrix jtj = Matrix::Zero(m, m);
    Vector jtr = Vector::Zero(m);
    Vector row(m);
    for (size_t i = 0; i < n; ++i) {
      row(0) = 1.0;
      row(1) = g[i];
      for (int k = 0; k < d; ++k) row(2 + k) = gd[i * d + k];
      const double r = c + a * g[i] - sums.points_[i].second;
      jtj.noalias() += row * row.transpose();
      jtr.noalias() += r * row;
    }
    bool accepted = false;
    for (int tries = 0; tries < 6 && !accepted; ++tries) {
      Matrix damped = jtj;
      for (size_t k = 0; k < m; ++k) damped(k, k) += lambda * (jtj(k, k) + 1e-12);
      const Vector step = damped.ldlt().solve(-jtr);
      CurveShape next = shape;
      double next_log[2] = {log_p[0], log_p[1]};
      for (int k = 0; k < d; ++k) {
        next_log[k] += step(2 + k);
        next = WithLog(next, k, next_log[k]);
      }
      const double nc = c + step(0), na = std::max(0.0, a + step(1));
      const double nsse = sse_of(next, nc, na, &ng);
      if (nsse < sse) {
        accepted = true;
        moved = true;
        const bool done = sse - nsse <= 1e-12 * sse;
        shape = next;
        log_p[0] = next_log[0];
        log_p[1] = next_log[1];
        c = nc;
        a = na;
        sse = nsse;
        g.swap(ng);
        lambda = std::max(1e-9, lambda * 0.25);
        if (done || a <= 0) return moved;
      } else {
        lambda *= 8.0;
      }
    }
    if (!accepted) break;
  }
  return moved;
}

}  // namespace sift::search
