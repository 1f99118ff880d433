// The Parzen estimator under TPE: densities, bandwidths (Optuna's and Scott's rule), categorical
// components, and the weights that age old trials out.
#include "search/tpe/parzen_estimator.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <set>

#include "search/tpe/tpe_searcher.h"

namespace sift::search {
namespace parzen_estimator_test {

TEST(ParzenEstimator, DensityIntegratesToOneAndMatchesTheFormula) {
  ParzenEstimator est({0});
  est.Add(1.0, {0.2}, {0.1}, {});
  est.Add(3.0, {0.7}, {0.3}, {});
  // Numeric integral over [0, 1] by the midpoint rule.
  double total = 0;
  const int n = 20000;
  for (int i = 0; i < n; ++i) {
    const double x = (i + 0.5) / n;
    total += std::exp(est.LogPdf(&x)) / n;
  }
  EXPECT_NEAR(total, 1.0, 1e-6);
  // By hand at x = 0.5: truncated normals renormalised by their mass in [0, 1].
  auto phi = [](double z) { return std::exp(-0.5 * z * z) / std::sqrt(2 * M_PI); };
  auto cdf = [](double z) { return 0.5 * std::erfc(-z / std::sqrt(2.0)); };
  const double p1 = phi((0.5 - 0.2) / 0.1) / 0.1 / (cdf(8.0) - cdf(-2.0));
  const double p2 = phi((0.5 - 0.7) / 0.3) / 0.3 / (cdf(1.0) - cdf(-0.7 / 0.3));
  const double x = 0.5;
  EXPECT_NEAR(std::exp(est.LogPdf(&x)), 0.25 * p1 + 0.75 * p2, 1e-12);
}

TEST(ParzenEstimator, OptunaSigmasFromNeighbourGaps) {
  // Observations 0.1, 0.4 plus the prior at 0.5: sorted 0.1, 0.4, 0.5 with ends 0 and 1.
  // Without endpoints: sigma(0.1) = 0.4 - 0.1 = 0.3; sigma(0.4) = max(0.3, 0.1) = 0.3;
  // the prior keeps sigma 1. Magic clip: min sigma 1/min(100, 1 + 3) = 0.25.
  ParzenEstimator est = BuildTpeEstimator({0}, {0.1, 0.4}, {1.0, 1.0}, TpeKernelOptions{});
  ParzenEstimator ref({0});
  ref.Add(1.0, {0.1}, {0.3}, {});
  ref.Add(1.0, {0.4}, {0.3}, {});
  ref.Add(1.0, {0.5}, {1.0}, {});
  for (double x : {0.0, 0.33, 0.9}) EXPECT_NEAR(est.LogPdf(&x), ref.LogPdf(&x), 1e-12);
}

TEST(ParzenEstimator, ScottBandwidthFromTheWeightedSpreadPerDimension) {
  // Three 2-d observations, weights 1, 1, 2. Dimension 0: values 0.2, 0.4, 0.5, weighted mean
  // 1.6 / 4 = 0.4, variance (0.04 + 0 + 2 * 0.01) / 4 = 0.015. Dimension 1: 0.9, 0.1, 0.5, mean
  // 0.5, variance (0.16 + 0.16 + 0) / 4 = 0.08. Shrink n^(-1/(d+4)) = 3^(-1/6). Magic clip floor
  // 1/min(100, 1 + 4) = 0.2: dimension 0's sigma (0.1224 * 0.8327 = 0.102) is clipped to 0.2,
  // dimension 1's (0.2828 * 0.8327 = 0.2355) is not. The prior keeps sigma 1, weight 1.
  const std::vector<double> obs = {0.2, 0.9, 0.4, 0.1, 0.5, 0.5};
  const std::vector<double> w = {1.0, 1.0, 2.0};
  TpeKernelOptions o;
  o.multivariate = true;
  o.bandwidth = TpeBandwidth::kScott;
  const ParzenEstimator est = BuildTpeEstimator({0, 0}, obs, w, o);
  const double shrink = std::pow(3.0, -1.0 / 6.0);
  const double s1 = std::sqrt(0.08) * shrink;
  ParzenEstimator ref({0, 0});
  ref.Add(1.0, {0.2, 0.9}, {0.2, s1}, {{}, {}});
  ref.Add(1.0, {0.4, 0.1}, {0.2, s1}, {{}, {}});
  ref.Add(2.0, {0.5, 0.5}, {0.2, s1}, {{}, {}});
  ref.Add(1.0, {0.5, 0.5}, {1.0, 1.0}, {{}, {}});
  for (const std::vector<double>& x :
       std::vector<std::vector<double>>{{0.0, 0.0}, {0.3, 0.6}, {0.45, 0.12}, {1.0, 0.95}}) {
    EXPECT_NEAR(est.LogPdf(x.data()), ref.LogPdf(x.data()), 1e-12);
  }
  // The same data with the floor scaled by 0.3 (0.06): dimension 0 is no longer clipped.
  o.magic_clip_scale = 0.3;
  const ParzenEstimator narrow = BuildTpeEstimator({0, 0}, obs, w, o);
  const double s0 = std::sqrt(0.015) * shrink;
  ParzenEstimator ref_narrow({0, 0});
  ref_narrow.Add(1.0, {0.2, 0.9}, {s0, s1}, {{}, {}});
  ref_narrow.Add(1.0, {0.4, 0.1}, {s0, s1}, {{}, {}});
  ref_narrow.Add(2.0, {0.5, 0.5}, {s0, s1}, {{}, {}});
  ref_narrow.Add(1.0, {0.5, 0.5}, {1.0, 1.0}, {{}, {}});
  for (const std::vector<double>& x :
       std::vector<std::vector<double>>{{0.0, 0.0}, {0.3, 0.6}, {0.45, 0.12}, {1.0, 0.95}}) {
    EXPECT_NEAR(narrow.LogPdf(x.data()), ref_narrow.LogPdf(x.data()), 1e-12);
  }
}

TEST(ParzenEstimator, MagicClipScaleScalesTheFloorOfOptunasRule) {
  // Optuna's multivariate rule at n = 2, d = 2: 0.2 * 2^(-1/6) = 0.178, under the floor
  // 1/min(100, 1 + 3) = 0.25; scaled by 0.5 the floor is 0.125 and the rule's sigma stands.
  const std::vector<double> obs = {0.1, 0.2, 0.8, 0.7};
  const std::vector<double> w = {1.0, 1.0};
  TpeKernelOptions o;
  o.multivariate = true;
  for (const double scale : {1.0, 0.5}) {
    o.magic_clip_scale = scale;
    const double s = scale == 1.0 ? 0.25 : 0.2 * std::pow(2.0, -1.0 / 6.0);
    const ParzenEstimator est = BuildTpeEstimator({0, 0}, obs, w, o);
    ParzenEstimator ref({0, 0});
    ref.Add(1.0, {0.1, 0.2}, {s, s}, {{}, {}});
    ref.Add(1.0, {0.8, 0.7}, {s, s}, {{}, {}});
    ref.Add(1.0, {0.5, 0.5}, {1.0, 1.0}, {{}, {}});
    for (const std::vector<double>& x :
         std::vector<std::vector<double>>{{0.1, 0.25}, {0.6, 0.6}, {0.95, 0.0}}) {
      EXPECT_NEAR(est.LogPdf(x.data()), ref.LogPdf(x.data()), 1e-12) << "scale " << scale;
    }
  }
}

TEST(ParzenEstimator, PresortedOrderGivesTheSameEstimator) {
  // A caller may pass the observations' order by (value bits, index) instead of having them
  // sorted; the estimator must be bit-identical. Values with ties, the ends and the prior's 0.5.
  Rng rng(3);
  for (int round = 0; round < 40; ++round) {
    const size_t n = 1 + rng.Below(300);
    std::vector<double> obs(n);
    for (double& v : obs) {
      const uint64_t kind = rng.Below(10);
      v = kind == 0   ? 0.5
          : kind == 1 ? 0.0
          : kind == 2 ? 1.0
          : kind < 5  ? std::round(rng.Uniform() * 20) / 20
                      : rng.Uniform();
    }
    std::vector<size_t> order(n);
    for (size_t i = 0; i < n; ++i) order[i] = i;
    std::sort(order.begin(), order.end(), [&](size_t a, size_t b) {
      return std::make_pair(TpeSortKey(obs[a]), a) < std::make_pair(TpeSortKey(obs[b]), b);
    });
    TpeKernelOptions o;
    o.consider_prior = round % 4 != 3;
    o.consider_endpoints = round % 3 == 1;
    const std::vector<double> w = TpeDefaultWeights(n);
    const ParzenEstimator sorted_here = BuildTpeEstimator({0}, obs, w, o);
    const ParzenEstimator presorted = BuildTpeEstimator({0}, obs, w, o, &order);
    Rng a(round), b(round);
    for (int i = 0; i < 50; ++i) {
      const std::vector<double> x = sorted_here.Sample(a);
      EXPECT_EQ(x, presorted.Sample(b));
      EXPECT_EQ(sorted_here.LogPdf(x.data()), presorted.LogPdf(x.data()));
    }
  }
}

TEST(ParzenEstimator, RebuiltInPlaceEqualsAFreshBuild) {
  // One estimator rebuilt again and again (what an ask does with g) over other dimensions, sizes
  // and options, against one built fresh each time: the same draws and densities, bit for bit.
  Rng rng(5);
  ParzenEstimator reused;
  const std::vector<std::vector<int>> shapes = {{0}, {3}, {0, 2}, {2}, {0, 0, 4}, {0}};
  for (int round = 0; round < 60; ++round) {
    const std::vector<int>& choices = shapes[static_cast<size_t>(round) % shapes.size()];
    const size_t n = rng.Below(40);
    std::vector<double> obs;
    for (size_t i = 0; i < n; ++i) {
      for (int k : choices)
        obs.push_back(k == 0 ? rng.Uniform() : static_cast<double>(rng.Below(k)));
    }
    TpeKernelOptions o;
    o.consider_prior = round % 5 != 4;
    o.multivariate = round % 2 == 1;
    o.bandwidth = round % 3 == 0 ? TpeBandwidth::kScott : TpeBandwidth::kOptuna;
    const std::vector<double> w = TpeDefaultWeights(n);
    const ParzenEstimator fresh = BuildTpeEstimator(choices, obs, w, o);
    BuildTpeEstimator(choices, obs.data(), n, w.data(), o, reused);
    ASSERT_EQ(reused.components(), fresh.components());
    Rng a(round), b(round);
    for (int i = 0; i < 30; ++i) {
      const std::vector<double> x = fresh.Sample(a);
      ASSERT_EQ(reused.Sample(b), x) << "round " << round;
      ASSERT_EQ(reused.LogPdf(x.data()), fresh.LogPdf(x.data())) << "round " << round;
    }
  }
}

TEST(ParzenEstimator, CategoricalBuildEqualsOptunasComponentsAddedOneByOne) {
  // The builder fills a 1-d categorical estimator from one row of log probabilities per observed
  // choice; against the components added one by one with Optuna's probabilities (every choice
  // prior_weight / kernels, the observed one 1 more, normalised): the same bits.
  Rng rng(6);
  for (int round = 0; round < 30; ++round) {
    const int k = 2 + static_cast<int>(rng.Below(4));
    const size_t n = rng.Below(40);
    std::vector<double> obs(n);
    for (double& v : obs) v = static_cast<double>(rng.Below(static_cast<uint64_t>(k)));
    TpeKernelOptions o;
    o.consider_prior = round % 4 != 3;
    o.prior_weight = round % 3 == 0 ? 2.5 : 1.0;
    const std::vector<double> w = TpeDefaultWeights(n);
    const ParzenEstimator built = BuildTpeEstimator({k}, obs, w, o);
    ParzenEstimator ref({k});
    const size_t kernels = n + (o.consider_prior || n == 0 ? 1 : 0);
    for (size_t c = 0; c < kernels; ++c) {
      std::vector<double> probs(static_cast<size_t>(k), o.prior_weight / kernels);
      if (c < n) probs[static_cast<size_t>(obs[c])] += 1.0;
      double total = 0;
      for (double p : probs) total += p;
      for (double& p : probs) p /= total;
      ref.Add(c < n ? w[c] : (n == 0 ? 1.0 : o.prior_weight), {}, {}, {probs});
    }
    for (int c = 0; c < k; ++c) {
      const double x = c;
      EXPECT_EQ(built.LogPdf(&x), ref.LogPdf(&x)) << "round " << round;
    }
    Rng a(round), b(round);
    for (int i = 0; i < 20; ++i) EXPECT_EQ(built.Sample(a), ref.Sample(b)) << "round " << round;
  }
}

TEST(ParzenEstimator, CategoricalDensityFollowsEveryAddedComponent) {
  // A 1-d categorical density keeps one value per choice between asks of LogPdf; adding a
  // component must change them. Against the mixture computed by hand.
  ParzenEstimator est({3});
  std::vector<std::pair<double, std::vector<double>>> added;
  auto by_hand = [&](size_t c) {
    double num = 0, den = 0;
    for (const auto& [w, p] : added) {
      num += w * p[c];
      den += w;
    }
    return std::log(num / den);
  };
  const std::vector<std::pair<double, std::vector<double>>> components = {
      {1.0, {0.7, 0.2, 0.1}}, {2.0, {0.1, 0.1, 0.8}}, {0.5, {0.3, 0.3, 0.4}}};
  for (const auto& [w, p] : components) {
    est.Add(w, {}, {}, {p});
    added.push_back({w, p});
    for (double c : {0.0, 1.0, 2.0, 1.0}) {
      EXPECT_NEAR(est.LogPdf(&c), by_hand(static_cast<size_t>(c)), 1e-12) << added.size();
    }
  }
  est.Clear({2});
  est.Add(1.0, {}, {}, {{0.25, 0.75}});
  const double one = 1.0;
  EXPECT_NEAR(est.LogPdf(&one), std::log(0.75), 1e-12);
}

TEST(TpeDefaultWeights, FlatForRecentRampBefore) {
  EXPECT_EQ(TpeDefaultWeights(3), (std::vector<double>{1, 1, 1}));
  auto w = TpeDefaultWeights(30);
  EXPECT_DOUBLE_EQ(w[0], 1.0 / 30);
  EXPECT_DOUBLE_EQ(w[4], 1.0);
  EXPECT_DOUBLE_EQ(w[29], 1.0);
}

}  // namespace parzen_estimator_test
}  // namespace sift::search
