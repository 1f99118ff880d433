#include "search/predict_guard.h"

#include <cmath>
#include <cstdio>
#include <string>

#include "search/number_text.h"

namespace sift::search {
namespace {

CurveOptions AsCurve(const PredictGuardOptions& o) {
  CurveOptions c;
  c.k = o.k;
  c.level = o.level;
  c.threshold = 0;  // its own verdict is never used: only its forecast
  return c;
}

}  // namespace

PredictGuard::PredictGuard(std::unique_ptr<Scheduler> rules, PredictGuardOptions options)
    : rules_(std::move(rules)), curve_(AsCurve(options)), options_(options) {}

Decision PredictGuard::OnReport(const StudyView& study, const TrialView& trial) {
  Decision d = rules_->OnReport(study, trial);
  curve_.OnReport(study, trial);  // its forecast only; it keeps its fits in step
  if (d.action != Action::kStop) return d;
  if (trial.LastResource() < options_.min_epochs) {
    std::string r = "predict: stop deferred to epoch ";
    r.append(std::to_string(options_.min_epochs)).append(", where the curve can be judged; ");
    return Decision::Continue(r.append("the rules said: ").append(d.reason));
  }
  const double kth = curve_.last_threshold_score();
  if (!curve_.last_forecast().ok || std::isnan(kth)) return d;
  const double p = CurveEnsemble::ProbabilityAbove(curve_.last_forecast(), kth);
  if (!(p >= options_.keep)) return d;
  const bool max = study.objective.maximize;
  const CurvePrediction v = CurveEnsemble::InValues(curve_.last_forecast().prediction, max);
  char buf[96];
  std::snprintf(buf, sizeof(buf), "%.3g >= %g", p, options_.keep);
  std::string r = "predict: kept, P(final ";
  r.append(max ? "> " : "< ").append(G6(study.Score(kth))).append(") = ").append(buf);
  r.append(", predicted final ").append(G6(v.mean)).append(" [").append(G6(v.lo)).append(", ");
  r.append(G6(v.hi)).append("]; the rules said: ").append(d.reason);
  return Decision::Continue(std::move(r));
}

}  // namespace sift::search
