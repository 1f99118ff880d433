// NSGA-II's steps (Deb, Pratap, Agarwal and Meyarivan 2002) as pure functions on genomes in the
// unit cube (SearchSpace::ToUnit/FromUnit map them to parameters): which population members
// survive, which become parents, and how parents make children. The searcher that keeps the
// population and asks for trials is built on these.
#pragma once

#include <cstddef>
#include <utility>
#include <vector>

#include "search/multi/pareto.h"
#include "search/rng.h"

namespace sift::search {

// The `size` members of a population (objective vectors, oriented) that carry on: whole
// non-dominated ranks, then the most crowding-distant of the rank that does not fit (ties to the
// lower index). Indices, in that order. Pass the ranks of constrained domination to honour
// constraints (ConstrainedRanks in objective_vectors.h); the crowding is of the values either way.
std::vector<int> Nsga2Survivors(const Points& points, const std::vector<int>& ranks, size_t size);

// The crowded-comparison operator: lower rank, then larger crowding distance, then lower index.
bool CrowdedBetter(int a, int b, const std::vector<int>& ranks,
                   const std::vector<double>& crowding);

// `count` parents by binary tournament: two members drawn uniformly (with replacement), the
// crowded-better one kept. `crowding` is each member's distance within its own rank.
std::vector<int> TournamentParents(const std::vector<int>& ranks,
                                   const std::vector<double>& crowding, size_t count, Rng& rng);

// Each member's crowding distance within its own rank (CrowdingDistance front by front).
std::vector<double> CrowdingByRank(const Points& points, const std::vector<int>& ranks);

// Simulated binary crossover of one coordinate in [0, 1] (Deb and Agrawal 1995, in the bounded
// form of Deb's NSGA-II code): children spread around the parents as a distribution index `eta`
// allows (larger: closer), never past the bounds. `u` in [0, 1) is the one uniform draw: u = 0
// puts both children at the parents' midpoint, u = 1 / alpha on the parents themselves.
// Returns (lower child, upper child).
std::pair<double, double> SbxCoordinate(double x1, double x2, double u, double eta);

// Polynomial mutation of one coordinate in [0, 1] (Deb's bounded form): u = 0.5 leaves it, u
// towards 0 moves it towards 0 and u towards 1 towards 1, as close as `eta` allows.
double PolynomialCoordinate(double x, double u, double eta);

struct Nsga2Variation {
  double crossover_probability = 0.9;  // else the children copy the parents
  double sbx_eta = 20;                 // as Deb's code and pymoo default
  double swap_probability = 0.5;       // per coordinate: crossed over at all, then children swapped
  double mutation_eta = 20;
  double mutation_probability = -1;  // per coordinate; below 0: 1 / dimensions
  bool uniform_crossover = false;    // swap coordinates instead of SBX (categorical-heavy spaces)
};

// Two children of two parents in [0, 1]^d: crossover (SBX or uniform) then polynomial mutation.
std::pair<std::vector<double>, std::vector<double>> Nsga2Children(const std::vector<double>& a,
                                                                  const std::vector<double>& b,
                                                                  const Nsga2Variation& v,
                                                                  Rng& rng);

}  // namespace sift::search
