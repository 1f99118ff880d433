// Expected improvement in log space (Ament et al., "Unexpected Improvements to Expected
// Improvement for Bayesian Optimization", NeurIPS 2023). Plain EI underflows to exactly 0 a few
// standard deviations below the incumbent, which leaves the optimiser with flat ground; log-EI
// stays finite and informative arbitrarily far in the tail.
#pragma once

namespace sift::search {

// exp(x^2) * erfc(x), accurate for x >= 0 (scaled complementary error function).
double Erfcx(double x);

// log(h(z)) with h(z) = phi(z) + z * Phi(z), so that EI = sigma * h((mu - best) / sigma).
double LogH(double z);

// log EI for maximisation: mean, standard deviation (> 0) and the incumbent best value.
double LogExpectedImprovement(double mean, double sigma, double best);

}  // namespace sift::search
