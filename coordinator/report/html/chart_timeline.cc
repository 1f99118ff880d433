// The worker timeline: one row per worker, a bar per lease coloured by how it ended, the work a
// preemption or lost lease threw away hatched at the bar's end, idle stretches in grey.
#include <fmt/format.h>

#include <algorithm>
#include <map>

#include "coordinator/report/html/charts.h"
#include "coordinator/report/html/svg.h"

namespace sift::coordinator::html {

std::string TimelineChart(const HtmlStudy& s, const std::map<std::string, WorkerRecord>& workers,
                          double now) {
  const StudyReport& r = s.report;
  std::map<std::string, size_t> row;
  double first = 0, last = 0;
  bool any = false;
  for (const auto& seg : s.segments) {
    row.emplace(seg.worker_id, 0);
    const double end = seg.end ? *seg.end : now;
    first = any ? std::min(first, seg.start) : seg.start;
    last = any ? std::max(last, end) : end;
    any = true;
  }
  Frame f;
  f.w = 920;
  f.left = 150;
  if (!any) {
    return SvgOpen(f, "timeline empty") + R"(<text x="460" y="140" text-anchor="middle">)"
                                          "no lease yet</text></svg>";
  }
  for (const auto& idle : s.idle) {
    if (row.count(idle.worker_id)) last = std::max(last, idle.end);
  }
  size_t i = 0;
  for (auto& [id, r_index] : row) r_index = i++;
  const double row_h = row.size() > 40 ? 6 : 16;
  f.h = f.top + f.bottom + 16 + row_h * static_cast<double>(row.size());
  const Scale x = MakeScale(0, last - first, f.x0(), f.x1(), false);
  std::string out =
      SvgOpen(f, "timeline") + AxisX(f, x, "wall time since the first lease", Duration);
  auto top = [&](const std::string& worker) {
    return f.y1() + 16 + row_h * static_cast<double>(row.at(worker));
  };
  if (row_h >= 12) {
    for (const auto& [id, index] : row) {
      auto w = workers.find(id);
      const std::string label =
          w == workers.end() ? id : w->second.name + " (" + w->second.market + ")";
      out += fmt::format(R"(<text x="{}" y="{}" text-anchor="end">{}</text>)", Px(f.x0() - 6),
                         Px(top(id) + row_h - 5), Escape(label.substr(0, 24)));
    }
  }
  for (const auto& idle : s.idle) {
    if (!row.count(idle.worker_id)) continue;
    out += fmt::format(R"(<rect class="idle" x="{}" y="{}" width="{}" height="{}" fill="#ccc">)"
                       R"(<title>idle {} ({})</title></rect>)",
                       Px(x(idle.start - first)), Px(top(idle.worker_id) + row_h * 0.3),
                       Px(std::max(0.5, x(idle.end - first) - x(idle.start - first))),
                       Px(row_h * 0.4), Duration(idle.Seconds()), Escape(idle.end_reason));
  }
  for (const auto& seg : s.segments) {
    const double end = seg.end ? *seg.end : now;
    const std::string reason = seg.end ? seg.end_reason : "open";
    const double x0 = x(seg.start - first), x1 = x(end - first);
    // Only an interrupted lease says more than its trial's row (kept short: 10,000 trials).
    const bool interrupted = reason == "preempted" || reason == "expired";
    out += fmt::format(R"(<rect data-t="{}-{}"{} x="{}" y="{}" width="{}" height="{}" fill="{}"/>)",
                       r.study.record.id, seg.number,
                       interrupted
                           ? fmt::format(R"( data-m="lease {} {} after {}")", Escape(seg.lease_id),
                                         reason, Dollars(SegmentDollars(seg, now)))
                           : "",
                       Px(x0), Px(top(seg.worker_id)), Px(std::max(0.5, x1 - x0)), Px(row_h - 2),
                       StateColor(reason));
    if (seg.wasted_seconds > 0) {
      const double w0 = x(std::max(seg.start, end - seg.wasted_seconds) - first);
      out += fmt::format(R"(<rect class="redone" x="{}" y="{}" width="{}" height="{}" )"
                         R"x(fill="url(#hatch)"><title>{} of work redone</title></rect>)x",
                         Px(w0), Px(top(seg.worker_id)), Px(std::max(0.5, x1 - w0)), Px(row_h - 2),
                         Duration(seg.wasted_seconds));
    }
    if (interrupted) {
      out += fmt::format(R"(<path class="preempt" d="M{0},{1}l-3,-5h6z" fill="#000"/>)", Px(x1),
                         Px(top(seg.worker_id)));
    }
  }
  out += R"(<defs><pattern id="hatch" width="4" height="4" patternUnits="userSpaceOnUse" )"
         R"x(patternTransform="rotate(45)"><rect width="2" height="4" fill="#000" )x"
         R"(fill-opacity="0.45"/></pattern></defs>)";
  std::vector<std::pair<std::string, std::string>> legend;
  for (const char* k : {"completed", "stopped", "paused", "preempted", "expired", "failed"}) {
    legend.emplace_back(k, StateColor(k));
  }
  legend.emplace_back("idle", "#ccc");
  out += Legend(f, legend) + "</svg>";
  return out;
}

}  // namespace sift::coordinator::html
