#include "search/bo/gaussian_process.h"

#include <gtest/gtest.h>

#include <Eigen/Dense>
#include <cmath>

#include "search/bo/gp_searcher.h"
#include "tests/search/history_sim.h"

namespace sift::search {
namespace gaussian_process_test {

// Three 1-d points, fixed hyperparameters: the posterior against the textbook closed form
// mean = k*^T (K + s_n I)^-1 y, var = k(x,x) - k*^T (K + s_n I)^-1 k*.
TEST(GaussianProcess, PosteriorMatchesClosedFormOnTinyData) {
  GpHyper h;
  h.log_lengthscale = {std::log(0.3)};
  h.log_signal = std::log(1.5);
  h.log_noise = std::log(1e-2);
  const std::vector<double> x{0.1, 0.5, 0.8}, y{-0.5, 1.0, 0.2};
  GaussianProcess gp(1);
  gp.SetHyper(h);
  gp.SetPoints(x, 3);
  gp.SetTargets(y);
  auto matern = [](double a, double b) {
    const double r = std::abs(a - b) / 0.3;
    return 1.5 * (1 + std::sqrt(5.0) * r + 5.0 / 3.0 * r * r) * std::exp(-std::sqrt(5.0) * r);
  };
  Eigen::Matrix3d k;
  for (int i = 0; i < 3; ++i) {
    for (int j = 0; j < 3; ++j) k(i, j) = matern(x[i], x[j]) + (i == j ? 1e-2 + 1e-8 : 0.0);
  }
  const Eigen::Vector3d yv(y[0], y[1], y[2]);
  for (double xs : {0.0, 0.3, 0.5, 0.95}) {
    const Eigen::Vector3d ks(matern(xs, x[0]), matern(xs, x[1]), matern(xs, x[2]));
    const double mean = ks.dot(k.ldlt().solve(yv));
    const double var = 1.5 - ks.dot(k.ldlt().solve(ks));
    double kv[3];
    gp.KernelVector(&xs, kv);
    EXPECT_NEAR(gp.Mean(kv), mean, 1e-10) << xs;
    EXPECT_NEAR(gp.Variance(kv), var, 1e-10) << xs;
  }
}

TEST(GaussianProcess, GrownFactorEqualsFreshFactorBitForBit) {
  GpHyper h;
  h.log_lengthscale = {std::log(0.4), std::log(0.2)};
  std::vector<double> x;
  for (int i = 0; i < 40; ++i) {
    x.push_back(std::fmod(0.37 * i, 1.0));
    x.push_back(std::fmod(0.61 * i, 1.0));
  }
  GaussianProcess grown(2), fresh(2);
  grown.SetHyper(h);
  fresh.SetHyper(h);
  for (size_t n = 1; n <= 40; ++n) grown.SetPoints(x, n);
  fresh.SetPoints(x, 40);
  std::vector<double> y(40);
  for (int i = 0; i < 40; ++i) y[i] = std::sin(6 * x[2 * i]) + x[2 * i + 1];
  grown.SetTargets(y);
  fresh.SetTargets(y);
  const double q[2] = {0.33, 0.71};
  std::vector<double> k(40);
  grown.KernelVector(q, k.data());
  EXPECT_EQ(grown.Mean(k.data()), fresh.Mean(k.data()));
  EXPECT_EQ(grown.Variance(k.data()), fresh.Variance(k.data()));
}

TEST(GaussianProcess, MarginalLikelihoodGradientMatchesFiniteDifferences) {
  std::vector<double> x, y;
  for (int i = 0; i < 12; ++i) {
    x.push_back(std::fmod(0.29 * i + 0.1, 1.0));
    x.push_back(std::fmod(0.53 * i + 0.2, 1.0));
    y.push_back(std::cos(5 * x[2 * i]) - x[2 * i + 1]);
  }
  GpHyper h;
  h.log_lengthscale = {std::log(0.3), std::log(0.6)};
  h.log_signal = 0.2;
  h.log_noise = std::log(1e-2);
  std::vector<double> g;
  LogMarginalLikelihood(x, y, 2, h, &g);
  const double eps = 1e-6;
  for (size_t p = 0; p < 4; ++p) {
    GpHyper a = h, b = h;
    double* pa = p < 2 ? &a.log_lengthscale[p] : p == 2 ? &a.log_signal : &a.log_noise;
    double* pb = p < 2 ? &b.log_lengthscale[p] : p == 2 ? &b.log_signal : &b.log_noise;
    *pa += eps;
    *pb -= eps;
    const double fd =
        (LogMarginalLikelihood(x, y, 2, a, nullptr) - LogMarginalLikelihood(x, y, 2, b, nullptr)) /
        (2 * eps);
    EXPECT_NEAR(g[p], fd, 1e-5 * (1 + std::abs(fd))) << "parameter " << p;
  }
  // Fitting improves the likelihood over the start.
  const GpHyper fit = FitHyperparameters(x, y, 2);
  EXPECT_GT(LogMarginalLikelihood(x, y, 2, fit, nullptr),
            LogMarginalLikelihood(x, y, 2, h, nullptr));
}

TEST(GpRefit, ScheduleIsSparseBeyondSmallN) {
  EXPECT_EQ(GpRefitPoint(7), 7);
  EXPECT_EQ(GpRefitPoint(27), 25);
  EXPECT_EQ(GpRefitPoint(99), 95);
  EXPECT_EQ(GpRefitPoint(1049), 1000);
}

TEST(GpSearcher, BoundedModelKeptAcrossAChurningHistoryEqualsAFreshSearcher) {
  // The feature cache and the bounded training set (best half + most recent), kept across asks
  // while trials pause, resume, stop, fail and diverge, against a searcher built fresh per view;
  // with cost_aware, whose model keeps the same rows.
  const SearchSpace space = testing::MixedSpace();
  for (const bool cost_aware : {false, true}) {
    GpOptions o;
    o.max_points = 16;
    o.fit_window = 20;
    o.cost_aware = cost_aware;
    GpSearcher kept(space, o);
    testing::ChurningStudy churn(space, cost_aware ? 8 : 7, 3);
    for (int i = 0; i < 90; ++i) {
      const auto p = kept.Suggest(churn.study(), 1);
      if (i % 6 == 0 || i > 84) {
        GpSearcher fresh(space, o);
        ASSERT_EQ(fresh.Suggest(churn.study(), 1), p) << "ask " << i;
      }
      churn.Step(p[0]);
      TrialView& t = churn.study().trials.back();
      t.cost_dollars = 0.01 * (1 + t.number % 3);
    }
  }
}

TEST(GpSearcher, BoundChangesNothingUntilItBinds) {
  const SearchSpace space = testing::MixedSpace();
  GpOptions bounded, unbounded;
  bounded.max_points = 20;
  unbounded.max_points = 0;
  GpSearcher a(space, bounded), b(space, unbounded);
  int same = 0, later = 0;
  testing::RunStudy(a, space, 34, 4, [&](const StudyView& study, const Params& p) {
    if (study.trials.size() <= 20) {
      EXPECT_EQ(b.Suggest(study, 1)[0], p) << study.trials.size();
    } else {
      ++later;
      same += b.Suggest(study, 1)[0] == p ? 1 : 0;
    }
  });
  EXPECT_LT(same, later);
}

}  // namespace gaussian_process_test
}  // namespace sift::search
