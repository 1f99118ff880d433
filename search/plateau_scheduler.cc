#include "search/plateau_scheduler.h"

#include <cstdio>

namespace sift::search {

Decision PlateauScheduler::OnReport(const StudyView& study, const TrialView& trial) {
  if (trial.LastResource() < options_.min_resource) return Decision::Continue();
  // Walk the curve once: track the best (smoothed, oriented) score and when it last improved.
  PlateauTrack track(options_);
  int64_t reports_since = 0;
  for (const auto& [resource, value] : trial.values) {
    reports_since = track.Add(study.Score(value), resource) ? 0 : reports_since + 1;
  }
  if (reports_since < options_.patience) return Decision::Continue();
  char reason[160];
  std::snprintf(reason, sizeof(reason),
                "plateau: no improvement > %g in %lld epochs (best %.4f at epoch %lld)",
                options_.min_delta, static_cast<long long>(reports_since),
                study.Score(track.best()), static_cast<long long>(track.best_at()));
  return Decision::Stop(reason);
}

}  // namespace sift::search
