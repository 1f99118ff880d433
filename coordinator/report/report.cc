#include "coordinator/report/report.h"

#include <fmt/format.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "common/metric_json.h"
#include "common/params_json.h"
#include "common/per_class_key.h"
#include "coordinator/cost/alerts.h"
#include "coordinator/report/frontier.h"
#include "coordinator/report/report_cost.h"
#include "coordinator/report/report_pbt.h"

namespace sift::coordinator {
namespace {

using json = nlohmann::json;

bool Better(const StudyReport& r, double a, double b) { return r.study.maximize ? a > b : a < b; }

std::string Csv(std::string s) {
  if (s.find_first_of(",\"\n") == std::string::npos) return s;
  std::string out = "\"";
  for (char c : s) out += c == '"' ? std::string("\"\"") : std::string(1, c);
  return out + "\"";
}

double PerDollar(const TrialSummary& t) {
  return t.objective && t.dollars > 0 ? *t.objective / t.dollars : 0.0;
}

}  // namespace

std::string ParamsText(const search::Params& params) {
  std::string out;
  for (const auto& [k, v] : params) out += (out.empty() ? "" : " ") + k + "=" + search::ToString(v);
  return out;
}

// Failed and diverged trials have no usable model: never best, never on the frontier.
bool Ranked(const TrialSummary& t) {
  return t.objective && std::isfinite(*t.objective) &&
         t.record.state != search::TrialState::kFailed &&
         t.record.state != search::TrialState::kDiverged;
}

namespace {

// The scores of an evaluation (test_accuracy, or test_rmse/test_mae/test_r2), in name order.
std::vector<std::pair<std::string, double>> TestScores(const EvaluationRecord& e) {
  std::vector<std::pair<std::string, double>> out;
  for (const auto& [k, v] : e.metrics) {
    if (k.rfind("test_", 0) == 0 && !common::IsPerClassKey(k) && k != "test_seconds") {
      out.emplace_back(k, v);
    }
  }
  return out;
}

// Numbers in number order ("2" before "10"), names in text order.
struct ClassOrder {
  bool operator()(const std::string& a, const std::string& b) const {
    const bool na = !a.empty() && a.find_first_not_of("0123456789") == std::string::npos;
    const bool nb = !b.empty() && b.find_first_not_of("0123456789") == std::string::npos;
    if (na && nb && a.size() != b.size()) return a.size() < b.size();
    return a < b;
  }
};

// Per class: (correct, total), from test_class_<class>_correct and test_class_<class>_total.
std::map<std::string, std::pair<int64_t, int64_t>, ClassOrder> PerClass(const EvaluationRecord& e) {
  std::map<std::string, std::pair<int64_t, int64_t>, ClassOrder> out;
  for (const auto& [k, v] : e.metrics) {
    std::string cls;
    bool correct = false;
    if (!common::ParsePerClassKey(k, &cls, &correct)) continue;
    (correct ? out[cls].first : out[cls].second) = static_cast<int64_t>(v);
  }
  return out;
}

// One line per evaluated trial: the held-out test score of the chosen trial, scored once.
std::string FormatEvaluations(const StudyReport& report) {
  std::string out;
  for (const auto& t : report.trials) {
    if (!t.evaluation) continue;
    const EvaluationRecord& e = *t.evaluation;
    const std::string who = e.requested_by == "best trial"
                                ? "the best trial, chosen by " + report.study.metric
                                : "asked for by " + e.requested_by;
    out += fmt::format("held-out test score of trial {} ({}; scored once): ", t.record.number, who);
    if (e.state != EvaluationState::kDone) {
      out += std::string(ToString(e.state)) + (e.error.empty() ? "" : " (" + e.error + ")") + "\n";
      continue;
    }
    std::string scores;
    for (const auto& [k, v] : TestScores(e)) {
      scores += (scores.empty() ? "" : ", ") + k + " " + common::FormatMetric(v, 4);
    }
    out += (scores.empty() ? "-" : scores) + "\n";
    std::string classes;
    for (const auto& [cls, ct] : PerClass(e)) {
      classes += fmt::format("{}{} {}/{}", classes.empty() ? "" : ", ", cls, ct.first, ct.second);
    }
    if (!classes.empty()) out += "  per class (correct/total): " + classes + "\n";
  }
  return out;
}

}  // namespace

const char* Describe(FrontierOver over) {
  return over == FrontierOver::kCompleted
             ? "completed trials only (trained to their last epoch)"
             : "all trials (early-stopped ones at their last reported value)";
}

std::vector<int64_t> ParetoFrontier(const StudyReport& report, FrontierOver over) {
  std::vector<const TrialSummary*> scored;
  for (const auto& t : report.trials) {
    const bool counted = over == FrontierOver::kAll
                             ? Ranked(t)
                             : Ranked(t) && t.record.state == search::TrialState::kCompleted;
    // A trial that breaks a constraint is no choice at any price (as in the Pareto set).
    if (counted && (report.constraints.empty() || Feasible(report, t))) scored.push_back(&t);
  }
  std::sort(scored.begin(), scored.end(), [&](const auto* a, const auto* b) {
    if (a->dollars != b->dollars) return a->dollars < b->dollars;
    return Better(report, *a->objective, *b->objective);
  });
  std::vector<int64_t> out;
  std::optional<double> best;
  for (const auto* t : scored) {
    if (!best || Better(report, *t->objective, *best)) {
      best = t->objective;
      out.push_back(t->record.number);
    }
  }
  return out;
}

std::vector<BestSoFar> BestSoFarCurve(const StudyReport& report) {
  std::vector<const TrialSummary*> ended;
  for (const auto& t : report.trials) {
    if (search::IsTerminal(t.record.state)) ended.push_back(&t);
  }
  std::sort(ended.begin(), ended.end(),
            [](const auto* a, const auto* b) { return a->record.ended_at < b->record.ended_at; });
  std::vector<BestSoFar> out;
  double dollars = 0;
  std::optional<double> best;
  for (const auto* t : ended) {
    dollars += t->dollars;
    if (Ranked(*t) && (!best || Better(report, *t->objective, *best))) {
      best = t->objective;
      out.push_back({dollars, *best, t->record.number, t->record.ended_at});
    }
  }
  return out;
}

std::string FormatTable(const StudyReport& report) {
  const std::string& metric = report.study.metric;
  std::string out = fmt::format("{:>5}  {:<9}  {:>6}  {:>12}  {:>8}  {:>9}  {:>10}  {}\n", "trial",
                                "state", "epochs", metric, "wall_s", "dollars",
                                report.study.maximize ? "obj_per_$" : "", "params / why it ended");
  for (const auto& t : report.trials) {
    out +=
        fmt::format("{:>5}  {:<9}  {:>6}  {:>12}  {:>8.1f}  {:>9.6f}  {:>10}  {}\n",
                    t.record.number, search::ToString(t.record.state), t.epochs,
                    t.objective ? common::FormatMetric(*t.objective, 4) : "-", t.seconds, t.dollars,
                    report.study.maximize && Ranked(t) ? fmt::format("{:.1f}", PerDollar(t)) : "",
                    ParamsText(t.record.params));
    if (!t.record.end_reason.empty()) {
      out += fmt::format("{:>5}  {:<9}  {:>6}  {:>12}  {:>8}  {:>9}  {:>10}  -> {}\n", "", "", "",
                         "", "", "", "", t.record.end_reason);
    }
  }
  if (ShowsFrontier(report)) out += "\nobjectives and constraints:\n" + FormatFrontierTable(report);
  return out;
}

std::string FormatSummary(const StudyReport& report) {
  const auto& s = report.study;
  std::string out;
  double total_seconds = 0;
  for (const auto& t : report.trials) total_seconds += t.seconds;
  out += fmt::format("study {} '{}': {}{}; {} trials, ${:.4f} over {:.0f} worker-seconds\n",
                     s.record.id, s.record.name, ToString(s.record.state),
                     s.record.end_reason.empty() ? "" : " (" + s.record.end_reason + ")", s.total,
                     s.dollars, total_seconds);
  out += FormatCostSummary(report);
  std::string diverged;
  for (const auto& t : report.trials) {
    if (t.record.state != search::TrialState::kDiverged) continue;
    diverged += fmt::format("{}#{} ({})", diverged.empty() ? "" : ", ", t.record.number,
                            t.record.end_reason);
  }
  if (!diverged.empty()) out += "diverged: " + diverged + "\n";
  int64_t resumed = 0;
  for (const auto& t : report.trials) resumed += t.segments > 1 ? t.segments - 1 : 0;
  std::string markets;
  for (const auto& [market, dollars] : s.dollars_by_market) {
    markets += fmt::format("{}{} ${:.4f}", markets.empty() ? "" : ", ", market, dollars);
  }
  const auto percent = [&](double d) { return s.dollars > 0 ? 100 * d / s.dollars : 0.0; };
  // Pauses lose work too, and a user who pressed Ctrl-C should read why.
  const std::string paused =
      s.paused_wasted_dollars > 0
          ? fmt::format(
                "; {:.1f}% lost to study pauses: the work since each trial's last "
                "checkpoint is lost (a command trial's partial epoch too, unless its "
                "program saves on SIGTERM)",
                percent(s.paused_wasted_dollars))
          : "";
  out += fmt::format(
      "spot: {} preemptions, {} lost leases, {} resumes; ${:.7f} of work redone "
      "({:.1f}%{}); by market: {}\n",
      s.preemptions, s.expirations, resumed, s.wasted_dollars, percent(s.wasted_dollars), paused,
      markets.empty() ? "-" : markets);
  out += fmt::format(
      "idle: ${:.6f} over {:.0f} worker-seconds waiting for work after this "
      "study's trials (billed, charged to no trial)\n",
      s.idle_dollars, s.idle_seconds);
  if (!s.best_trial) return out + "no trial reported a result\n";
  const TrialSummary& best = report.trials.at(*s.best_trial);
  out += fmt::format("best trial {}: {} = {:.4f} after {} epochs, ${:.6f}; {}\n",
                     best.record.number, s.metric, s.best_value, best.epochs, best.dollars,
                     ParamsText(best.record.params));
  out += FormatEvaluations(report);
  out += FormatPbt(report);
  if (!best.checkpoint.empty()) {
    const std::string& dir =
        report.checkpoint_dir.empty() ? s.checkpoint_dir : report.checkpoint_dir;
    out += fmt::format("best trial's model: {}{}\n", dir.empty() ? "" : dir + "/", best.checkpoint);
  }
  for (FrontierOver over : {FrontierOver::kCompleted, FrontierOver::kAll}) {
    std::string f;
    for (auto n : ParetoFrontier(report, over)) {
      f += fmt::format("{}#{} (${:.6f}, {:.4f})", f.empty() ? "" : ", ", n,
                       report.trials[n].dollars, *report.trials[n].objective);
    }
    out += "cost/" + s.metric + " Pareto frontier, " + Describe(over) + ": " +
           (f.empty() ? "none" : f) + "\n";
  }
  out += FormatFrontierSummary(report);
  // --target, else the config's objective.target.
  if (const auto target = report.target ? report.target : s.target) {
    std::optional<BestSoFar> hit;
    for (const auto& b : BestSoFarCurve(report)) {
      if (!Better(report, *target, b.value)) {
        hit = b;
        break;
      }
    }
    out += hit ? fmt::format("reached {} {:.4f} after ${:.5f} (trial {})\n", s.metric, *target,
                             hit->dollars, hit->trial)
               : fmt::format("never reached {} {:.4f}\n", s.metric, *target);
  }
  return out;
}

std::string ToCsv(const StudyReport& report) {
  std::vector<std::string> names;
  for (const auto& t : report.trials) {
    for (const auto& [k, v] : t.record.params) {
      if (std::find(names.begin(), names.end(), k) == names.end()) names.push_back(k);
    }
  }
  std::sort(names.begin(), names.end());
  // The held-out test scores, set only for evaluated trials (the chosen one, scored once).
  std::vector<std::string> tests;
  for (const auto& t : report.trials) {
    if (!t.evaluation) continue;
    for (const auto& [k, v] : TestScores(*t.evaluation)) {
      if (std::find(tests.begin(), tests.end(), k) == tests.end()) tests.push_back(k);
    }
  }
  if (tests.empty()) tests.push_back("test_accuracy");
  std::sort(tests.begin(), tests.end());
  std::string test_header;
  for (const auto& k : tests) test_header += "," + k;
  std::string out = "trial,state,epochs," + report.study.metric + test_header +
                    ",wall_seconds,dollars,objective_per_dollar,pareto_frontier";
  for (const auto& n : names) out += "," + Csv(n);
  const auto extra = FrontierColumns(report);
  for (const auto& m : extra) out += "," + Csv(m);
  if (ShowsFrontier(report)) out += ",feasible,on_pareto";
  out += ",end_reason\n";
  const Frontier frontier = ShowsFrontier(report) ? FrontierOf(report) : Frontier();
  // Which of the two frontiers (see Describe) each trial is on: "completed;all", "all" or "".
  const auto completed = ParetoFrontier(report, FrontierOver::kCompleted);
  const auto all = ParetoFrontier(report, FrontierOver::kAll);
  auto on = [](const std::vector<int64_t>& f, int64_t n) {
    return std::find(f.begin(), f.end(), n) != f.end();
  };
  for (size_t i = 0; i < report.trials.size(); ++i) {
    const TrialSummary& t = report.trials[i];
    std::string test_cells;
    for (const auto& k : tests) {
      const auto& m = t.evaluation ? t.evaluation->metrics : std::map<std::string, double>{};
      auto it = m.find(k);
      const bool done = t.evaluation && t.evaluation->state == EvaluationState::kDone;
      test_cells += "," + (done && it != m.end() ? common::FormatMetric(it->second, 6) : "");
    }
    out += fmt::format(
        "{},{},{},{}{},{:.3f},{:.8f},{}", t.record.number, search::ToString(t.record.state),
        t.epochs, t.objective ? common::FormatMetric(*t.objective, 6) : "", test_cells, t.seconds,
        t.dollars, Ranked(t) && t.dollars > 0 ? fmt::format("{:.3f}", PerDollar(t)) : "");
    const int64_t number = t.record.number;
    out += on(completed, number) ? ",completed;all" : on(all, number) ? ",all" : ",";
    for (const auto& n : names) {
      auto it = t.record.params.find(n);
      out += "," + (it == t.record.params.end() ? "" : Csv(search::ToString(it->second)));
    }
    for (const auto& m : extra) {
      const auto v = TrialMetric(t, m);
      out += "," + (!v                  ? ""
                    : std::isfinite(*v) ? fmt::format("{:.10g}", *v)
                                        : common::FormatMetric(*v, 0));
    }
    if (ShowsFrontier(report)) {
      const FrontierTrial& f = frontier.trials[i];
      out += std::string(f.feasible ? ",true" : ",false") + (f.on_pareto ? ",true" : ",false");
    }
    out += "," + Csv(t.record.end_reason) + "\n";
  }
  return out;
}

namespace {

// A trial's values of each objective and constraint metric, and where it stands (frontier.h).
void AddFrontierFields(const StudyReport& report, const FrontierTrial& f, json* jt) {
  const auto objectives = ObjectivesOf(report);
  json values = json::object();
  for (size_t k = 0; k < objectives.size(); ++k) {
    if (f.values[k]) values[objectives[k].metric] = common::MetricToJson(*f.values[k]);
  }
  for (size_t k = 0; k < report.constraints.size(); ++k) {
    if (f.constraints[k]) {
      values[report.constraints[k].metric] = common::MetricToJson(*f.constraints[k]);
    }
  }
  (*jt)["values"] = values;
  (*jt)["feasible"] = f.feasible;
  (*jt)["on_pareto"] = f.on_pareto;
  if (!f.feasible) (*jt)["infeasible_because"] = f.broken;
}

// The study's objectives and constraints, its Pareto set and the hypervolume as it grew.
void AddFrontierJson(const StudyReport& report, const Frontier& frontier, json* j) {
  const auto objectives = ObjectivesOf(report);
  json list = json::array(), constraints = json::array(), reference = json::object();
  for (size_t k = 0; k < objectives.size(); ++k) {
    const auto& o = objectives[k];
    list.push_back({{"metric", o.metric}, {"direction", o.maximize ? "maximize" : "minimize"}});
    if (!frontier.reference.empty()) reference[o.metric] = frontier.reference[k];
  }
  for (const auto& c : report.constraints) {
    constraints.push_back({{"metric", c.metric}, {c.upper ? "max" : "min", c.bound}});
  }
  (*j)["study"]["objectives"] = list;
  (*j)["study"]["constraints"] = constraints;
  (*j)["pareto"] = frontier.pareto;
  json curve = json::array();
  for (const auto& h : HypervolumeCurve(report, frontier)) {
    curve.push_back({{"dollars", h.dollars},
                     {"wall_seconds", h.at - report.study.record.created_at},
                     {"hypervolume", h.hypervolume},
                     {"trial", h.trial}});
  }
  (*j)["hypervolume"] = {{"reference", reference},
                         {"reference_is",
                          "each objective's worst value over feasible trials, "
                          "10% of its range beyond"},
                         {"curve", curve}};
}

}  // namespace

std::string ToJson(const StudyReport& report) {
  const auto& s = report.study;
  json j;
  j["study"] = {{"id", s.record.id},
                {"name", s.record.name},
                {"state", ToString(s.record.state)},
                {"end_reason", s.record.end_reason},
                {"objective", s.metric},
                {"maximize", s.maximize},
                {"dollars", s.dollars},
                {"trials", s.total},
                {"wasted_dollars", s.wasted_dollars},
                {"dollars_by_market", s.dollars_by_market},
                {"preemptions", s.preemptions},
                {"lost_leases", s.expirations},
                {"idle_dollars", s.idle_dollars},
                {"idle_seconds", s.idle_seconds}};
  if (s.best_trial) j["study"]["best_trial"] = *s.best_trial;
  j["study"]["tags"] = s.tags;
  if (s.forecast) j["study"]["forecast"] = json::parse(ForecastToJson(*s.forecast));
  json recorded = json::array();
  for (const auto& r : RecordedForecasts(s.events)) {
    recorded.push_back(
        {{"progress_percent", r.percent}, {"forecast", json::parse(ForecastToJson(r.forecast))}});
  }
  if (!recorded.empty()) j["study"]["recorded_forecasts"] = recorded;
  const bool several = ShowsFrontier(report);
  const Frontier frontier = several ? FrontierOf(report) : Frontier();
  json trials = json::array();
  for (size_t i = 0; i < report.trials.size(); ++i) {
    const TrialSummary& t = report.trials[i];
    const json params = common::ParamsToJson(t.record.params);
    json curve = json::array();
    for (const auto& r : t.reports) {
      curve.push_back({{"epoch", r.epoch}, {"metrics", common::MetricsToJson(r.metrics)}});
    }
    json jt = {{"number", t.record.number},
               {"state", search::ToString(t.record.state)},
               {"params", params},
               {"epochs", t.epochs},
               {"wall_seconds", t.seconds},
               {"dollars", t.dollars},
               {"wasted_dollars", t.wasted_dollars},
               {"leases", t.segments},
               {"interruptions", t.interruptions},
               {"end_reason", t.record.end_reason},
               {"final_metrics", common::MetricsToJson(t.record.final_metrics)},
               {"checkpoint", t.checkpoint},
               {"curve", curve}};
    if (t.evaluation) {
      const EvaluationRecord& e = *t.evaluation;
      json test = {{"state", ToString(e.state)},
                   {"requested_by", e.requested_by},
                   {"note", "held-out test split, scored once for this trial"}};
      json scores = json::object();
      for (const auto& [k, v] : TestScores(e)) scores[k] = common::MetricToJson(v);
      test["scores"] = scores;
      json classes = json::array();
      for (const auto& [cls, ct] : PerClass(e)) {
        // An index stays a number (IDX data), a name a string.
        const bool index = cls.find_first_not_of("0123456789") == std::string::npos;
        classes.push_back({{"class", index ? json(std::stoll(cls)) : json(cls)},
                           {"correct", ct.first},
                           {"total", ct.second}});
      }
      if (!classes.empty()) test["per_class"] = classes;
      if (!e.error.empty()) test["error"] = e.error;
      jt["test"] = test;
    }
    if (t.objective) {
      jt["objective"] = common::MetricToJson(*t.objective);
      if (Ranked(t) && t.dollars > 0) jt["objective_per_dollar"] = PerDollar(t);
    }
    if (several) AddFrontierFields(report, frontier.trials[i], &jt);
    trials.push_back(jt);
  }
  j["trials"] = trials;
  if (!report.exploits.empty()) j["pbt"] = PbtJson(report);
  json frontiers;
  for (auto [key, over] :
       {std::pair{"completed", FrontierOver::kCompleted}, std::pair{"all", FrontierOver::kAll}}) {
    frontiers[key] = {{"trials", ParetoFrontier(report, over)}, {"counts", Describe(over)}};
  }
  j["pareto_frontiers"] = frontiers;
  if (several) AddFrontierJson(report, frontier, &j);
  json curve = json::array();
  for (const auto& b : BestSoFarCurve(report)) {
    curve.push_back({{"dollars", b.dollars}, {"best", b.value}, {"trial", b.trial}});
  }
  j["best_so_far_by_dollars"] = curve;
  if (!report.environment.empty()) j["environment"] = report.environment;
  if (!report.checkpoint_dir.empty()) j["checkpoint_dir"] = report.checkpoint_dir;
  return j.dump(2) + "\n";
}

std::string WriteReportFiles(const StudyReport& report, const std::string& dir) {
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec) return dir + ": cannot create the folder: " + ec.message();
  for (const auto& [name, text] :
       {std::pair<std::string, std::string>{"results.csv", ToCsv(report)},
        {"results.json", ToJson(report)}}) {
    const std::string path = dir + "/" + name;
    std::ofstream f(path, std::ios::trunc);
    f << text;
    f.flush();
    if (!f) return path + ": cannot write: " + std::strerror(errno);
  }
  return "";
}

}  // namespace sift::coordinator
