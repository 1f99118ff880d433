#include "search/tpe/tpe_searcher.h"

#include <algorithm>
#include <cmath>

namespace sift::search {
namespace {

constexpr uint64_t kTpeStream = 0x545045;  // "TPE"

std::vector<int> Choices(const SearchSpace& space, const std::vector<size_t>& dims) {
  std::vector<int> c;
  for (size_t d : dims) {
    const ParamSpec& spec = space.params()[d];
    c.push_back(spec.numeric() ? 0 : static_cast<int>(spec.choices.size()));
  }
  return c;
}

}  // namespace

TpeSearcher::Split TpeSearcher::SplitTrials(const StudyView& study,
                                            const std::vector<Observation>& obs) const {
  const size_t n = obs.size();
  const size_t n_below = std::min<size_t>(
      static_cast<size_t>(std::ceil(options_.gamma * static_cast<double>(n))),
      static_cast<size_t>(options_.gamma_max));
  std::vector<size_t> order(n);
  for (size_t i = 0; i < n; ++i) order[i] = i;
  // BetterObservation is a strict total order, so the partition is the same on every platform.
  std::nth_element(order.begin(), order.begin() + static_cast<std::ptrdiff_t>(n_below), order.end(),
                   [&](size_t a, size_t b) { return BetterObservation(obs[a], obs[b]); });
  std::vector<char> good(n, 0);
  for (size_t i = 0; i < n_below; ++i) good[order[i]] = 1;
  Split s;
  for (size_t i = 0; i < n; ++i) (good[i] ? s.below : s.above).push_back(obs[i].number);
  if (options_.constant_liar) {
    for (const auto& t : study.trials) {
      if (t.state == TrialState::kRunning || t.state == TrialState::kPending) {
        s.above.push_back(t.number);
      }
    }
    std::sort(s.above.begin(), s.above.end());
  }
  return s;
}

void TpeSearcher::SampleGroup(const StudyView& study, const std::vector<size_t>& dims,
                              const Split& split, Rng& rng, Params& out) {
  const SearchSpace& space = *study.space;
  const std::vector<int> choices = Choices(space, dims);
  // Rows of one side's trials where every dim of the group is active.
  // For a 1-d numeric group, also the trial number of each row, to sort them from sorted_.
  const bool sortable = dims.size() == 1 && choices[0] == 0;
  auto rows = [&](const std::vector<int64_t>& numbers, std::vector<int64_t>& kept) {
    std::vector<double> m;
    m.reserve(numbers.size() * dims.size());
    for (int64_t number : numbers) {
      const double* row = units_.Row(study, number);
      bool active = true;
      for (size_t d : dims) active = active && !std::isnan(row[d]);
      if (!active) continue;
      if (sortable) kept.push_back(number);
      for (size_t j = 0; j < dims.size(); ++j) {
        const double u = row[dims[j]];
        // Categoricals as their index: ToUnit put choice i at (i + 0.5) / k.
        m.push_back(choices[j] == 0
                        ? u
                        : std::min<double>(choices[j] - 1, std::floor(u * choices[j])));
      }
    }
    return m;
  };
  TpeKernelOptions kernel = options_.kernel;
  kernel.multivariate = kernel.multivariate && dims.size() > 1;
  std::vector<int64_t> below_numbers, above_numbers;
  const std::vector<double> below = rows(split.below, below_numbers);
  const std::vector<double> above = rows(split.above, above_numbers);
  std::vector<size_t> below_order, above_order;
  const bool presorted = sortable &&
                         SortedRows(study, dims[0], below_numbers, below, below_order) &&
                         SortedRows(study, dims[0], above_numbers, above, above_order);
  const ParzenEstimator l =
      BuildTpeEstimator(choices, below, TpeDefaultWeights(below.size() / dims.size()), kernel,
                        presorted ? &below_order : nullptr);
  const ParzenEstimator g =
      BuildTpeEstimator(choices, above, TpeDefaultWeights(above.size() / dims.size()), kernel,
                        presorted ? &above_order : nullptr);
  std::vector<double> best;
  double best_score = -INFINITY;
  for (int64_t i = 0; i < options_.n_ei_candidates; ++i) {
    std::vector<double> x = l.Sample(rng);
    const double score = l.LogPdf(x.data()) - g.LogPdf(x.data());
    if (best.empty() || score > best_score) {
      best_score = score;
      best = std::move(x);
    }
  }
  for (size_t j = 0; j < dims.size(); ++j) {
    const ParamSpec& spec = space.params()[dims[j]];
    out[spec.name] = choices[j] == 0 ? space.FromUnit(spec, best[j])
                                     : spec.choices[static_cast<size_t>(best[j])];
  }
}

bool TpeSearcher::SortedRows(const StudyView& study, size_t d, const std::vector<int64_t>& numbers,
                             const std::vector<double>& values, std::vector<size_t>& order) {
  if (sorted_generation_ != units_.generation() || sorted_.size() != study.space->size()) {
    sorted_.assign(study.space->size(), SortedDim{});
    sorted_generation_ = units_.generation();
  }
  SortedDim& s = sorted_[d];
  row_of_.assign(study.trials.size(), -1);
  bool negative = false;
  const size_t old_size = s.entries.size();
  for (size_t r = 0; r < numbers.size(); ++r) {
    const auto number = static_cast<size_t>(numbers[r]);
    row_of_[number] = static_cast<int64_t>(r);
    if (!(values[r] >= 0.0)) {
      negative = true;  // the bandwidth sort orders by value, not bits, then
      continue;
    }
    if (number >= s.has.size()) s.has.resize(number + 1, 0);
    if (!s.has[number]) {
      s.has[number] = 1;
      s.entries.push_back({TpeSortKey(values[r]), numbers[r]});
    }
  }
  // Usually one new trial since the last ask: merging it in is cheap where sorting is not.
  const auto mid = s.entries.begin() + static_cast<std::ptrdiff_t>(old_size);
  std::sort(mid, s.entries.end());
  std::inplace_merge(s.entries.begin(), mid, s.entries.end());
  if (negative) return false;
  order.clear();
  for (const auto& [bits, number] : s.entries) {
    const auto i = static_cast<size_t>(number);
    if (i < row_of_.size() && row_of_[i] >= 0) order.push_back(static_cast<size_t>(row_of_[i]));
  }
  return true;
}

Params TpeSearcher::SuggestOne(const StudyView& study, uint64_t number, const Split& split) {
  const SearchSpace& space = *study.space;
  Rng rng(DeriveSeed(study.seed, {number, kTpeStream}));
  Params out;
  std::vector<size_t> joint;
  if (options_.kernel.multivariate) {
    for (size_t d = 0; d < space.size(); ++d) {
      if (!space.params()[d].condition) joint.push_back(d);
    }
    if (!joint.empty()) SampleGroup(study, joint, split, rng, out);
  }
  for (size_t d = 0; d < space.size(); ++d) {
    const ParamSpec& spec = space.params()[d];
    if (out.count(spec.name) || !space.IsActive(spec, out)) continue;
    SampleGroup(study, {d}, split, rng, out);
  }
  return out;
}

std::vector<Params> TpeSearcher::Suggest(const StudyView& study, int count) {
  std::vector<Params> out;
  const std::vector<Observation> obs = CollectObservations(study);
  const bool startup = static_cast<int64_t>(obs.size()) < options_.n_startup;
  Split split;
  if (!startup) split = SplitTrials(study, obs);
  for (int i = 0; i < count; ++i) {
    const uint64_t number = study.trials.size() + i;
    if (startup) {
      Rng rng(DeriveSeed(study.seed, {number, kTpeStream, 0}));
      out.push_back(study.space->Sample(rng));
    } else {
      out.push_back(SuggestOne(study, number, split));
    }
  }
  return out;
}

}  // namespace sift::search
