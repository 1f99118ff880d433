// The frontier over several objectives (report/frontier.h): one scatter per pair of objectives
// with the Pareto set marked and each constraint on an axis shaded where it is broken, the
// hypervolume against dollars and wall time, and the Pareto set as a table.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <limits>

#include "coordinator/report/frontier.h"
#include "coordinator/report/html/charts.h"
#include "coordinator/report/html/svg.h"

namespace sift::coordinator::html {
namespace {

std::string AxisValue(const std::string& metric, double v) {
  return metric == "dollars" ? Dollars(v) : Num(v);
}

// What a point's tooltip adds to its trial's row (which has the first objective and dollars): a
// Pareto point's values, an infeasible one's broken constraints, a dominated one nothing, since on
// a 10,000-trial page every point's values in each scatter would add megabytes.
std::string Mark(const std::vector<search::Objective>& objectives, const FrontierTrial& f) {
  if (!f.on_pareto) return f.feasible ? "" : Label(f);
  std::string out;
  for (size_t i = 0; i < objectives.size(); ++i) {
    out += objectives[i].metric + " " + FormatObjectiveValue(objectives[i].metric, *f.values[i]) +
           ", ";
  }
  return out + Label(f);
}

std::string MarkAttribute(const std::string& mark) {
  return mark.empty() ? "" : " data-m=\"" + Escape(mark) + "\"";
}

// The part of the plot where `c` is broken along one axis, shaded, and its bound as a line.
std::string ConstraintBand(const Frame& f, const Scale& s, const search::Constraint& c,
                           bool x_axis) {
  const double lo = x_axis ? f.x0() : f.y1(), hi = x_axis ? f.x1() : f.y0();
  const double at = std::clamp(s(c.bound), lo, hi);
  // Pixels grow rightwards on x and downwards on y: larger values lie right, or up.
  const bool beyond_hi = x_axis ? c.upper : !c.upper;
  const double a = beyond_hi ? at : lo, b = beyond_hi ? hi : at;
  const std::string label =
      fmt::format("{} {} {}", c.metric, c.upper ? "<=" : ">=", AxisValue(c.metric, c.bound));
  std::string out = x_axis ? fmt::format(R"(<rect class="infeasible" x="{}" y="{}" width="{}" )"
                                         R"(height="{}" fill="#d62728" fill-opacity="0.09"/>)",
                                         Px(a), Px(f.y1()), Px(b - a), Px(f.y0() - f.y1()))
                           : fmt::format(R"(<rect class="infeasible" x="{}" y="{}" width="{}" )"
                                         R"(height="{}" fill="#d62728" fill-opacity="0.09"/>)",
                                         Px(f.x0()), Px(a), Px(f.x1() - f.x0()), Px(b - a));
  out +=
      x_axis
          ? fmt::format(R"(<line x1="{0}" x2="{0}" y1="{1}" y2="{2}" stroke="#d62728" )"
                        R"(stroke-dasharray="4 3"/><text x="{3}" y="{4}">{5}</text>)",
                        Px(at), Px(f.y1()), Px(f.y0()), Px(at + 3), Px(f.y1() + 10), Escape(label))
          : fmt::format(R"(<line x1="{0}" x2="{1}" y1="{2}" y2="{2}" stroke="#d62728" )"
                        R"(stroke-dasharray="4 3"/><text x="{3}" y="{4}" )"
                        R"(text-anchor="end">{5}</text>)",
                        Px(f.x0()), Px(f.x1()), Px(at), Px(f.x1() - 2), Px(at - 4), Escape(label));
  return out;
}

}  // namespace

std::string ObjectivePairChart(const HtmlStudy& s, const Frontier& frontier, size_t i, size_t j) {
  const StudyReport& r = s.report;
  const auto objectives = ObjectivesOf(r);
  const std::string chart = fmt::format("objectives objectives-{}-{}", i, j);
  Frame f;
  double xlo = std::numeric_limits<double>::infinity(), xhi = -xlo, ylo = xlo, yhi = -xlo;
  for (const auto& t : frontier.trials) {
    if (!t.scored) continue;
    xlo = std::min(xlo, *t.values[i]), xhi = std::max(xhi, *t.values[i]);
    ylo = std::min(ylo, *t.values[j]), yhi = std::max(yhi, *t.values[j]);
  }
  if (!(xhi >= xlo)) return EmptyChart(f, chart, "no scored trial yet");
  const std::string& mx = objectives[i].metric;
  const std::string& my = objectives[j].metric;
  const bool xlog = mx == "dollars" && WantsLog(xlo, xhi);
  const bool ylog = my == "dollars" && WantsLog(ylo, yhi);
  const Scale x = MakeScale(xlo, xhi, f.x0(), f.x1(), xlog);
  const Scale y = MakeScale(ylo, yhi, f.y0(), f.y1(), ylog);
  auto axis_label = [](const search::Objective& o, bool log) {
    return o.metric + (o.maximize ? " (max)" : " (min)") + (log ? " (log)" : "");
  };
  std::string out = SvgOpen(f, chart);
  for (const auto& c : r.constraints) {
    if (c.metric == mx) out += ConstraintBand(f, x, c, true);
    if (c.metric == my) out += ConstraintBand(f, y, c, false);
  }
  out += AxisX(f, x, axis_label(objectives[i], xlog), mx == "dollars" ? Dollars : Num) +
         AxisY(f, y, axis_label(objectives[j], ylog), my == "dollars" ? Dollars : Num);
  const size_t n = frontier.trials.size();
  const double radius = n > 2000 ? 2 : n > 300 ? 2.8 : 4;
  // The Pareto set last, so that it is drawn over the others.
  for (bool pass_on : {false, true}) {
    for (size_t k = 0; k < n; ++k) {
      const FrontierTrial& t = frontier.trials[k];
      if (!t.scored || t.on_pareto != pass_on) continue;
      const std::string paint =
          t.feasible
              ? fmt::format(R"(fill="{}")", StateColor(search::ToString(r.trials[k].record.state)))
              : R"(fill="none" stroke="#888")";
      out += fmt::format(R"(<circle class="pt{}" data-t="{}"{} cx="{}" cy="{}" r="{}" {}/>)",
                         t.on_pareto  ? " on"
                         : t.feasible ? ""
                                      : " infeasible",
                         TrialKey(r.study.record.id, t.trial), MarkAttribute(Mark(objectives, t)),
                         Px(x(*t.values[i])), Px(y(*t.values[j])),
                         t.on_pareto ? radius + 1.5 : radius, paint);
    }
  }
  std::vector<std::pair<std::string, std::string>> legend = {{"Pareto set (ringed)", "#222"},
                                                             {"completed", StateColor("COMPLETED")},
                                                             {"stopped", StateColor("STOPPED")}};
  if (!r.constraints.empty()) legend.emplace_back("infeasible (hollow)", "#888");
  out += Legend(f, legend);
  return out + "</svg>";
}

std::string HypervolumeChart(const HtmlStudy& s, const std::vector<HypervolumeStep>& curve,
                             bool by_time) {
  const StudyReport& r = s.report;
  const std::string chart = by_time ? "hypervolume hv-time" : "hypervolume hv-dollars";
  Frame f;
  if (curve.empty()) return EmptyChart(f, chart, "no feasible scored trial has ended yet");
  const double start = r.study.record.created_at;
  auto at = [&](const HypervolumeStep& h) { return by_time ? h.at - start : h.dollars; };
  const double hi = at(curve.back());
  const bool log = !by_time && WantsLog(at(curve.front()), hi);
  const Scale x = MakeScale(log ? at(curve.front()) : 0, hi, f.x0(), f.x1(), log);
  const Scale y = MakeScale(0, curve.back().hypervolume, f.y0(), f.y1(), false);
  std::string out = SvgOpen(f, chart);
  out += by_time ? AxisX(f, x, "wall time since the study began", Duration)
                 : AxisX(f, x, log ? "cumulative dollars (log)" : "cumulative dollars", Dollars);
  out += AxisY(f, y, "hypervolume of the Pareto set");
  std::string pts, dots;
  std::optional<double> last_y;
  for (const auto& h : curve) {
    const double px = x(at(h)), py = y(h.hypervolume);
    if (last_y) pts += Px(px) + "," + Px(*last_y) + " ";  // a step: it only grows at a trial's end
    pts += Px(px) + "," + Px(py) + " ";
    last_y = py;
    dots += fmt::format(R"(<circle data-t="{}" data-m="hypervolume {}" cx="{}" cy="{}" r="3" )"
                        R"(fill="#1f77b4"/>)",
                        TrialKey(r.study.record.id, h.trial), Num(h.hypervolume), Px(px), Px(py));
  }
  out += fmt::format(R"(<polyline class="line" points="{}" fill="none" stroke="#1f77b4" )"
                     R"(stroke-width="2"/>)",
                     pts);
  return out + dots + "</svg>";
}

std::string ParetoSetTable(const HtmlStudy& s, const Frontier& frontier) {
  const StudyReport& r = s.report;
  const auto objectives = ObjectivesOf(r);
  if (frontier.pareto.empty()) return R"(<p class="note">no feasible scored trial yet</p>)";
  std::string out = R"(<table class="pareto"><thead><tr><th>trial</th>)";
  for (const auto& o : objectives) {
    out += "<th>" + Escape(o.metric) + (o.maximize ? " (max)" : " (min)") + "</th>";
  }
  const auto columns = ConstraintColumns(r);
  for (size_t i : columns) out += "<th>" + Escape(r.constraints[i].metric) + "</th>";
  out += "<th>state</th><th>model</th></tr></thead><tbody>";
  for (int64_t n : frontier.pareto) {
    const size_t at = FrontierIndex(frontier, n);
    const FrontierTrial& f = frontier.trials[at];
    const TrialSummary& t = r.trials[at];
    out += fmt::format(R"(<tr><td data-t="{}">#{}</td>)", TrialKey(r.study.record.id, n), n);
    for (size_t i = 0; i < objectives.size(); ++i) {
      out += "<td>" + Escape(FormatObjectiveValue(objectives[i].metric, *f.values[i])) + "</td>";
    }
    for (size_t i : columns) {
      const auto& v = f.constraints[i];
      out +=
          "<td>" + (v ? Escape(FormatObjectiveValue(r.constraints[i].metric, *v)) : "-") + "</td>";
    }
    out += fmt::format("<td>{}</td><td>{}</td></tr>", search::ToString(t.record.state),
                       t.checkpoint.empty() ? "none" : "yes");
  }
  return out + "</tbody></table>";
}

}  // namespace sift::coordinator::html
