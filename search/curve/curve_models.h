// Parametric learning-curve families (after Domhan et al., IJCAI 2015), fitted by least squares
// to a trial's (epoch, score) points, with a prediction and its interval at a target epoch.
//
// Every family is y(t) = start + gain * shape(t), where shape is one of the family's curves
// normalised to rise from 0 at epoch 1 to 1 at the horizon (the study's max epochs), and
// gain >= 0: scores are oriented (larger is better), so every fitted curve is monotone, and all
// four families saturate, so extrapolations are bounded. The shape's own parameters (exponent,
// scale) range over a fixed grid; for each grid point start and gain are a closed-form
// least-squares solution from five running sums, so adding a point costs O(grid) with no
// transcendental call once the epoch's row of the basis table exists. The grid points are weighed
// by their profile likelihood (SSE^-(n-2)/2 with a uniform prior over the grid; see NoisePrior
// for the noise), which carries the uncertainty of the shape into the interval without MCMC;
// the best of them is then refined by a
// few Levenberg-Marquardt steps on the points, so that the grid's spacing does not bound the
// accuracy. Fixed steps throughout: deterministic, and cheap enough to run at every report.
#pragma once

#include <cstddef>
#include <cstdint>
#include <utility>
#include <vector>

namespace sift::search {

enum class CurveFamily {
  kPowerLaw,     // -t^-alpha                        (Domhan's pow3)
  kExponential,  // -exp(-t / s)                     (exp3)
  kLogPower,     // t^gamma / (t^gamma + s^gamma)    (log power; the MMF curve, reparametrised)
  kWeibull,      // -exp(-(t / s)^delta)             (Weibull)
};
constexpr int kCurveFamilyCount = 4;
const char* ToString(CurveFamily f);

struct CurveShape {
  CurveFamily family = CurveFamily::kPowerLaw;
  double scale = 0;  // alpha for the power law; s (epochs) for the others
  double power = 1;  // gamma or delta for the two-parameter families; 1 otherwise
};

// The family's curve at epoch t, before normalisation; increasing in t.
double CurveBasis(const CurveShape& shape, double t);
// It normalised: (CurveBasis(t) - one) / span, with `one` its value at epoch 1 and `span` its
// rise from there to the horizon.
inline double NormalisedBasis(const CurveShape& shape, double t, double one, double span) {
  return (CurveBasis(shape, t) - one) / span;
}

// The grid of shapes for one horizon and their normalised values at each epoch, computed once
// per epoch and shared by every trial of a study.
class CurveGrid {
 public:
  explicit CurveGrid(int64_t horizon);
  int64_t horizon() const { return horizon_; }
  size_t size() const { return shapes_.size(); }
  const CurveShape& shape(size_t j) const { return shapes_[j]; }
  // Grid points [first, last) of a family.
  size_t First(CurveFamily f) const { return first_[static_cast<int>(f)]; }
  size_t Last(CurveFamily f) const { return first_[static_cast<int>(f) + 1]; }
  // Whether the shape rises measurably between epoch 1 and the horizon (a shape that does not
  // would leave the gain undetermined).
  bool Usable(size_t j) const { return usable_[j] != 0; }
  // Normalised shape values of every grid point at epoch t >= 1: 0 at epoch 1, 1 at the horizon.
  // Valid until the next call for an epoch past the cached range.
  const double* At(int64_t t);

 private:
  void Fill(int64_t t, double* out) const;
  int64_t horizon_;
  std::vector<CurveShape> shapes_;
  size_t first_[kCurveFamilyCount + 1] = {};
  std::vector<double> at_one_, span_;  // raw basis at epoch 1, and its rise to the horizon
  std::vector<char> usable_;
  std::vector<std::vector<double>> rows_;  // by epoch - 1, filled on first use
  std::vector<double> scratch_;            // epochs past the cached range
};

// The running least-squares sums of one curve at every grid point. Points must come in
// increasing epoch order; non-finite values are skipped. Summing in that order whatever the
// history's length keeps a rebuilt CurveSums bit-identical to one grown point by point.
class CurveSums {
 public:
  void Add(CurveGrid& grid, int64_t epoch, double score);
  int64_t points() const { return n_; }
  int64_t first_epoch() const { return first_epoch_; }
  int64_t last_epoch() const { return last_epoch_; }
  double first_score() const { return y0_; }
  // Of the scores less the first: their sum, sum of squares and range.
  double sum() const { return sy_; }
  double sum_squares() const { return syy_; }
  double spread() const { return hi_ - lo_; }

 private:
  friend class CurveFitter;
  int64_t n_ = 0, first_epoch_ = 0, last_epoch_ = 0;
  double y0_ = 0;            // the first score: values are summed relative to it
  double sy_ = 0, syy_ = 0;  // of the shifted scores
  double lo_ = 0, hi_ = 0;   // range of the shifted scores
  std::vector<std::pair<double, double>> points_;  // (epoch, shifted score), for refinement
  std::vector<double> sg_, sgg_, sgy_;             // per grid point
};

// P(T <= t) for Student's t with `dof` degrees of freedom (the normal's beyond 100), by the
// finite series for integer dof (Abramowitz and Stegun 26.7.3-4): exact and cheap.
double StudentTCdf(double t, int64_t dof);

// One grid point's fit, as a Student-t predictive at the target epoch (dof = points - 2, plus
// the noise prior's).
struct CurveComponent {
  double log_weight = 0;  // log profile likelihood, plus the log of the shape's prior
  double mean = 0;        // the fitted curve at the target
  double curve_var = 0;   // variance of that value (start and gain uncertain)
  double noise_var = 0;   // residual variance: an observation adds it
};

struct CurvePrediction {
  double mean = 0;        // predicted score at the target epoch
  double sd_curve = 0;    // sd of the curve's value there (parameters and shape uncertain)
  double sd_obs = 0;      // sd of an observation there (adds the noise)
  double lo = 0, hi = 0;  // central interval of the curve's value at the fitter's level
};

struct FamilyFit {
  CurveFamily family = CurveFamily::kPowerLaw;
  bool ok = false;   // false: too few points, or no shape of the family fits the rules
  CurveShape shape;  // the most likely shape: a grid point, or the refined one
  double start = 0;  // its curve: start + gain * normalised shape(t)
  double gain = 0;
  double noise_var = 0;     // residual variance, SSE / dof (the prior's pseudo-residuals in both)
  double log_evidence = 0;  // log of the family's likelihood summed over its shapes (up to a
                            // constant shared by all families)
  double best_log_weight = 0;  // the most likely shape's
  int64_t dof = 0;
  std::vector<CurveComponent> components;  // the grid points that carry weight
  CurvePrediction prediction;
};

// A conjugate (scaled inverse chi-squared) prior on the noise variance: `dof` pseudo-residuals of
// variance `var`. With a handful of points the residuals alone say little about the noise, and
// a shape that happens to pass through them all would take the whole weight with a variance
// near zero: the prior, e.g. the noise of curves already finished, keeps that in check.
struct NoisePrior {
  int64_t dof = 0;
  double var = 0;
};

class CurveFitter {
 public:
  // Fewest points a fit needs: two linear parameters and one degree of freedom for the noise.
  static constexpr int64_t kMinPoints = 3;
  // A shape must show this share of its rise to the horizon between the first and the last
  // point: a curve that has yet to start rising could end anywhere, and would otherwise keep
  // every flat, bad curve alive (the curves of trained models do most of their rising early).
  static constexpr double kMinShareSeen = 0.25;

  // `level`: the coverage of the central interval, in (0, 1).
  explicit CurveFitter(double level = 0.9);
  struct Options {
    int64_t target = 0;  // epoch to predict at; the horizon when 0
    NoisePrior prior;
    bool refine = true;     // refine the best grid shape on the points (most of a fit's cost)
    bool summarise = true;  // fill FamilyFit::prediction (a mixture of several can skip it)
  };
  FamilyFit Fit(CurveGrid& grid, const CurveSums& sums, CurveFamily family,
                const Options& options) const;
  FamilyFit Fit(CurveGrid& grid, const CurveSums& sums, CurveFamily family) const {
    return Fit(grid, sums, family, Options());
  }
  // Adds the fit's best shape refined on the points as one more shape, when it moved (what
  // Options::refine does inside Fit).
  void AddRefined(const CurveGrid& grid, const CurveSums& sums, const Options& options,
                  FamilyFit& fit) const;
  // Moments and central interval of a mixture of components weighted by exp(log_weight); the
  // normalised weights go to `weights` when given.
  CurvePrediction Summarise(const std::vector<CurveComponent>& components, int64_t dof,
                            std::vector<double>* weights = nullptr) const;
  // The Student-t quantile at (1 + level) / 2 for `dof` degrees of freedom.
  double Quantile(int64_t dof) const;

 private:
  static constexpr int64_t kTabulatedDof = 100;
  // Moves the family's best grid shape to the least-squares optimum on the points themselves.
  bool Refine(const CurveSums& sums, double horizon, CurveShape& shape) const;

  std::vector<double> quantile_;  // by dof, 0 standing for the normal's
};

// Convenience for one-off fits: sums of `points` (epoch, score) in order, then Fit.
FamilyFit FitCurve(CurveFamily family, const std::vector<std::pair<int64_t, double>>& points,
                   int64_t horizon, int64_t target = 0, double level = 0.9);

}  // namespace sift::search
