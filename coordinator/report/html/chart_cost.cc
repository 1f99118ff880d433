// Cost charts: objective against dollars with the Pareto frontier, best-so-far against dollars
// and wall time (one line per study), spend against the budget with the forecast.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <set>

#include "coordinator/report/html/chart_data.h"
#include "coordinator/report/html/charts.h"
#include "coordinator/report/html/svg.h"

namespace sift::coordinator::html {
namespace {

std::string Key(const StudyReport& r, int64_t number) {
  return TrialKey(r.study.record.id, number);
}

std::string StudyLabel(const StudyReport& r) {
  return fmt::format("#{} {}", r.study.record.id, r.study.record.name);
}

std::string Hours(double s) { return Duration(s); }

}  // namespace

std::string ParetoChart(const HtmlStudy& s) {
  const StudyReport& r = s.report;
  Frame f;
  double lo = std::numeric_limits<double>::infinity(), hi = -lo, ylo = lo, yhi = -lo;
  for (const auto& t : r.trials) {
    if (!Ranked(t)) continue;
    lo = std::min(lo, t.dollars), hi = std::max(hi, t.dollars);
    ylo = std::min(ylo, *t.objective), yhi = std::max(yhi, *t.objective);
  }
  if (!(hi >= lo)) return EmptyChart(f, "pareto", "no scored trial yet");
  const bool log = WantsLog(lo, hi);
  const Scale x = MakeScale(lo, hi, f.x0(), f.x1(), log);
  const Scale y = MakeScale(ylo, yhi, f.y0(), f.y1(), false);
  std::string out = SvgOpen(f, "pareto") +
                    AxisX(f, x, log ? "dollars per trial (log)" : "dollars per trial", Dollars) +
                    AxisY(f, y, r.study.metric);
  // Both frontiers (see FrontierOver): all trials solid, completed-only dashed.
  for (auto [over, dash] : {std::pair{FrontierOver::kCompleted, " stroke-dasharray=\"4 3\""},
                            std::pair{FrontierOver::kAll, ""}}) {
    std::string pts;
    std::optional<double> last_y;
    for (auto n : ParetoFrontier(r, over)) {
      const auto& t = r.trials[static_cast<size_t>(n)];
      const double px = x(t.dollars), py = y(*t.objective);
      if (last_y) pts += Px(px) + "," + Px(*last_y) + " ";  // a step: no better value between
      pts += Px(px) + "," + Px(py) + " ";
      last_y = py;
    }
    if (!pts.empty()) {
      out += fmt::format(R"(<polyline class="frontier" points="{}" fill="none" stroke="#222" )"
                         R"(stroke-width="1.5"{}/>)",
                         pts, dash);
    }
  }
  const size_t n = r.trials.size();
  const double radius = n > 2000 ? 2 : n > 300 ? 2.8 : 4;
  const std::set<int64_t> frontier = [&] {
    auto v = ParetoFrontier(r);
    return std::set<int64_t>(v.begin(), v.end());
  }();
  for (const auto& t : r.trials) {
    if (!Ranked(t)) continue;
    const bool on = frontier.count(t.record.number) > 0;
    out +=
        fmt::format(R"(<circle class="pt{}" data-t="{}" cx="{}" cy="{}" r="{}" fill="{}"/>)",
                    on ? " on" : "", Key(r, t.record.number), Px(x(t.dollars)), Px(y(*t.objective)),
                    on ? radius + 1.5 : radius, StateColor(search::ToString(t.record.state)));
  }
  out += Legend(f, {{"completed", StateColor("COMPLETED")},
                    {"stopped", StateColor("STOPPED")},
                    {"frontier: all", "#222"},
                    {"completed only (dashed)", "#888"}});
  return out + "</svg>";
}

std::string BestSoFarChart(const std::vector<HtmlStudy>& studies, bool by_time) {
  Frame f;
  f.w = 560;
  double lo = std::numeric_limits<double>::infinity(), hi = -lo, ylo = lo, yhi = -lo;
  std::vector<std::vector<BestSoFar>> curves;
  for (const auto& s : studies) {
    curves.push_back(BestSoFarCurve(s.report));
    for (const auto& b : curves.back()) {
      const double xv = by_time ? b.at - s.report.study.record.created_at : b.dollars;
      lo = std::min(lo, xv), hi = std::max(hi, xv);
      ylo = std::min(ylo, b.value), yhi = std::max(yhi, b.value);
    }
  }
  const std::string chart = by_time ? "best-time" : "best-dollars";
  if (!(hi >= lo)) return EmptyChart(f, chart, "no scored trial yet");
  const bool log = !by_time && WantsLog(lo, hi);
  const Scale x = MakeScale(by_time ? 0 : lo, hi, f.x0(), f.x1(), log);
  const Scale y = MakeScale(ylo, yhi, f.y0(), f.y1(), false);
  std::string out = SvgOpen(f, chart);
  out += by_time ? AxisX(f, x, "wall time since the study began", Hours)
                 : AxisX(f, x, log ? "cumulative dollars (log)" : "cumulative dollars", Dollars);
  out += AxisY(f, y, "best " + studies.front().report.study.metric + " so far");
  std::vector<std::pair<std::string, std::string>> legend;
  for (size_t i = 0; i < studies.size(); ++i) {
    const StudyReport& r = studies[i].report;
    const std::string color = SeriesColor(i);
    legend.emplace_back(StudyLabel(r), color);
    std::string pts, dots;
    std::optional<double> last_y;
    for (const auto& b : curves[i]) {
      const double px = x(by_time ? b.at - r.study.record.created_at : b.dollars);
      const double py = y(b.value);
      if (last_y) pts += Px(px) + "," + Px(*last_y) + " ";
      pts += Px(px) + "," + Px(py) + " ";
      last_y = py;
      dots += fmt::format(R"(<circle data-t="{}" cx="{}" cy="{}" r="3" fill="{}"/>)",
                          Key(r, b.trial), Px(px), Px(py), color);
    }
    if (!pts.empty()) {
      out += fmt::format(R"(<polyline class="line" points="{}" fill="none" stroke="{}" )"
                         R"(stroke-width="2"/>)",
                         pts, color);
    }
    out += dots;
  }
  out += Legend(f, legend);
  return out + "</svg>";
}

std::string SpendChart(const HtmlStudy& s, double now) {
  const StudyReport& r = s.report;
  Frame f;
  const auto points = SpendOverTime(s.segments, now);
  if (points.empty()) return EmptyChart(f, "spend", "no lease yet");
  const double start = r.study.record.created_at;
  const double end = points.back().at;
  const bool open = IsOpen(r.study.record.state);
  const Forecast forecast = ForecastFinish(r, s.segments, open ? now : end);
  double xmax = end - start, ymax = points.back().dollars;
  if (open && forecast.possible) {
    xmax = std::max(xmax, forecast.finish_at - start);
    ymax = std::max(ymax, forecast.dollars);
  }
  const double budget = r.study.budget.max_dollars;
  if (budget > 0) ymax = std::max(ymax, budget);
  const Scale x = MakeScale(0, xmax, f.x0(), f.x1(), false);
  const Scale y = MakeScale(0, ymax, f.y0(), f.y1(), false);
  std::string out = SvgOpen(f, "spend") + AxisX(f, x, "wall time since the study began", Hours) +
                    AxisY(f, y, "dollars spent", Dollars);
  std::string pts;
  for (const auto& p : points) pts += Px(x(p.at - start)) + "," + Px(y(p.dollars)) + " ";
  out += fmt::format(R"(<polyline class="line" points="{}" fill="none" stroke="#1f77b4" )"
                     R"(stroke-width="2"/>)",
                     pts);
  if (budget > 0) {
    out += fmt::format(
        R"(<line class="budget" x1="{0}" x2="{1}" y1="{2}" y2="{2}" stroke="#d62728" )"
        R"(stroke-dasharray="6 3"/><text x="{3}" y="{4}" text-anchor="end">)"
        R"(budget {5}</text>)",
        Px(f.x0()), Px(f.x1()), Px(y(budget)), Px(f.x1() - 2), Px(y(budget) - 4), Dollars(budget));
  }
  if (open && forecast.possible) {
    out += fmt::format(R"(<line class="forecast" x1="{}" y1="{}" x2="{}" y2="{}" stroke="#ff7f0e" )"
                       R"(stroke-width="2" stroke-dasharray="3 3"/>)",
                       Px(x(points.back().at - start)), Px(y(points.back().dollars)),
                       Px(x(forecast.finish_at - start)), Px(y(forecast.dollars)));
  }
  out += Legend(f, {{"spent", "#1f77b4"}, {"forecast", "#ff7f0e"}, {"budget", "#d62728"}});
  return out + "</svg>";
}

}  // namespace sift::coordinator::html
