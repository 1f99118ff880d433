#include "search/multi/mo_plateau_scheduler.h"

#include <cmath>
#include <string>
#include <vector>

#include "search/multi/objective_vectors.h"
#include "search/number_text.h"

namespace sift::search {

Decision MoPlateauScheduler::OnReport(const StudyView& study, const TrialView& trial) {
  if (trial.LastResource() < options_.min_resource) return Decision::Continue();
  const size_t m = ObjectiveCount(study);
  std::vector<PlateauTrack> tracks(m, PlateauTrack(options_));
  double least_violation = INFINITY;
  int64_t reports_since = 0;
  bool first = true;
  for (const auto& [resource, value] : trial.values) {
    const std::vector<double> scores = ObjectivesAt(study, trial, resource);
    bool improved = false;
    for (size_t i = 0; i < m; ++i) {
      // A missing value (-infinity) neither improves nor resets a track.
      if (scores[i] != -INFINITY) improved |= tracks[i].Add(scores[i], resource);
    }
    const double violation = ViolationAt(study, trial, resource);
    const bool less = first || violation < least_violation;
    if (less) least_violation = violation;
    improved = violation > 0 ? less : improved || less;
    reports_since = improved ? 0 : reports_since + 1;
    first = false;
  }
  if (reports_since < options_.patience) return Decision::Continue();
  std::string best;
  for (size_t i = 0; i < m; ++i) {
    const double b = ObjectiveAt(study, i).maximize ? tracks[i].best() : -tracks[i].best();
    best += (i ? ", " : "") + G6(b) + " at epoch " + std::to_string(tracks[i].best_at());
  }
  std::string reason = "mo-plateau: no objective improved by > " + G6(options_.min_delta) + " in " +
                       std::to_string(reports_since) + " epochs (best " + best + ")";
  if (least_violation > 0) reason += "; infeasible (violation " + G6(least_violation) + ")";
  return Decision::Stop(std::move(reason));
}

}  // namespace sift::search
