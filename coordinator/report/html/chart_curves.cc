// Learning curves of every trial (a sample past kMaxCurves), with markers where the scheduler
// stopped, paused or promoted the trial and where a lease was preempted, lost or resumed.
#include <fmt/format.h>

#include <cmath>
#include <limits>

#include "coordinator/report/html/chart_data.h"
#include "coordinator/report/html/charts.h"
#include "coordinator/report/html/svg.h"

namespace sift::coordinator::html {

std::string CurvesChart(const HtmlStudy& s) {
  const StudyReport& r = s.report;
  const std::string& metric = r.study.metric;
  Frame f;
  f.w = 560;
  const auto drawn = TrialsToDraw(r, kMaxCurves);
  double emax = 1, ylo = std::numeric_limits<double>::infinity(), yhi = -ylo;
  for (size_t i : drawn) {
    for (const auto& rep : r.trials[i].reports) {
      auto it = rep.metrics.find(metric);
      if (it == rep.metrics.end() || !std::isfinite(it->second)) continue;
      emax = std::max(emax, static_cast<double>(rep.epoch));
      ylo = std::min(ylo, it->second), yhi = std::max(yhi, it->second);
    }
  }
  if (!(yhi >= ylo)) {
    return SvgOpen(f, "curves empty") + R"(<text x="280" y="140" text-anchor="middle">)"
                                        "no reports yet</text></svg>";
  }
  const Scale x = MakeScale(0, emax, f.x0(), f.x1(), false);
  const Scale y = MakeScale(ylo, yhi, f.y0(), f.y1(), false);
  std::string out = SvgOpen(f, "curves") + AxisX(f, x, "epoch") + AxisY(f, y, metric);
  std::string markers;
  for (size_t i : drawn) {
    const TrialSummary& t = r.trials[i];
    const std::string key = fmt::format("{}-{}", r.study.record.id, t.record.number);
    std::vector<std::pair<double, double>> pts;
    for (const auto& rep : t.reports) {
      auto it = rep.metrics.find(metric);
      if (it != rep.metrics.end() && std::isfinite(it->second)) {
        pts.emplace_back(static_cast<double>(rep.epoch), it->second);
      }
    }
    std::string line;
    for (size_t k : Downsample(pts.size(), kMaxCurvePoints)) {
      line += Px(x(pts[k].first)) + "," + Px(y(pts[k].second)) + " ";
    }
    if (!line.empty()) {
      out += fmt::format(R"(<polyline class="curve" data-t="{}" points="{}" fill="none" )"
                         R"(stroke="{}" stroke-opacity="0.55"/>)",
                         key, line, StateColor(search::ToString(t.record.state)));
    }
    for (const auto& m : TrialMarkers(t, s.segments)) {
      // The marker sits on the curve at its epoch (or on the axis where that epoch has no value).
      double value = ylo;
      for (const auto& [e, v] : pts) {
        if (e <= static_cast<double>(m.epoch)) value = v;
      }
      markers += fmt::format(R"(<circle class="mark {}" data-t="{}" data-m="{}: {}" cx="{}" )"
                             R"(cy="{}" r="3.2" fill="{}" stroke="#fff" stroke-width="0.6"/>)",
                             m.kind, key, m.kind, Escape(m.reason),
                             Px(x(static_cast<double>(m.epoch))), Px(y(value)), StateColor(m.kind));
    }
  }
  out += markers;  // above every line
  std::vector<std::pair<std::string, std::string>> legend;
  for (const char* k : {"stop", "pause", "promote", "preempt", "lost", "resume"}) {
    legend.emplace_back(k, StateColor(k));
  }
  out += Legend(f, legend) + "</svg>";
  if (drawn.size() < r.trials.size()) {
    out += fmt::format(R"(<p class="note">{} of {} trials' curves drawn (the frontier, the best )"
                       R"(quarter and an even sample of the rest), each with at most {} points.)"
                       R"(</p>)",
                       drawn.size(), r.trials.size(), kMaxCurvePoints);
  }
  return out;
}

}  // namespace sift::coordinator::html
