#include "search/plateau_scheduler.h"

#include <cstdio>

namespace sift::search {

Decision PlateauScheduler::OnReport(const StudyView& study, const TrialView& trial) {
  if (trial.LastResource() < options_.min_resource) return Decision::Continue();
  // Walk the curve once: track the best (smoothed, oriented) score and when it last improved.
  bool first = true;
  double ema = 0, best = 0;
  int64_t best_at = 0, reports_since = 0;
  for (const auto& [resource, value] : trial.values) {
    const double score = study.Score(value);
    ema = first ? score : options_.smoothing * ema + (1.0 - options_.smoothing) * score;
    if (first || ema > best + options_.min_delta) {
      best = ema;
      best_at = resource;
      reports_since = 0;
    } else {
      ++reports_since;
    }
    first = false;
  }
  if (reports_since < options_.patience) return Decision::Continue();
  char reason[160];
  std::snprintf(reason, sizeof(reason),
                "plateau: no improvement > %g in %lld epochs (best %.4f at epoch %lld)",
                options_.min_delta, static_cast<long long>(reports_since),
                study.Score(best), static_cast<long long>(best_at));
  return Decision::Stop(reason);
}

}  // namespace sift::search
