// The trial table (sorted by the page's script when a header is clicked; each row is what a
// chart's tooltip shows) and the dollars it took to reach each objective level.
#include <fmt/format.h>

#include <cmath>

#include "common/metric_json.h"
#include "coordinator/html_chart_data.h"
#include "coordinator/html_charts.h"
#include "coordinator/html_svg.h"

namespace sift::coordinator::html {

std::string TrialTable(const HtmlStudy& s) {
  const StudyReport& r = s.report;
  const auto frontier = ParetoFrontier(r);
  std::string out = fmt::format(
      R"(<table class="trials sortable" id="trials-{}"><thead><tr><th>trial</th><th>state</th>)"
      R"(<th>epochs</th><th>{}</th><th>dollars</th><th>wall</th><th>leases</th><th>redone $</th>)"
      R"(<th>params</th><th>why it ended</th></tr></thead><tbody>)",
      r.study.record.id, Escape(r.study.metric));
  out.reserve(r.trials.size() * 220);
  for (const auto& t : r.trials) {
    std::string params;
    for (const auto& [k, v] : t.record.params) {
      params += (params.empty() ? "" : " ") + k + "=" + search::ToString(v);
    }
    const bool on = std::find(frontier.begin(), frontier.end(), t.record.number) != frontier.end();
    // data-v: the sort key where the text is not one (blank objectives sort last).
    out += fmt::format(
        R"(<tr id="t{0}-{1}"{2}><td>{1}</td><td>{3}</td><td>{4}</td><td data-v="{5}">{6}</td>)"
        R"(<td data-v="{7:.9g}">{8}</td><td data-v="{9:.1f}">{10}</td><td>{11}</td>)"
        R"(<td data-v="{12:.9g}">{13}</td><td>{14}</td><td>{15}</td></tr>)",
        r.study.record.id, t.record.number, on ? R"( class="on")" : "",
        search::ToString(t.record.state), t.epochs,
        t.objective && std::isfinite(*t.objective) ? fmt::format("{:.9g}", *t.objective) : "",
        t.objective ? common::FormatMetric(*t.objective, 4) : "-", t.dollars,
        Dollars(t.dollars), t.seconds, Duration(t.seconds), t.segments, t.wasted_dollars,
        t.wasted_dollars > 0 ? Dollars(t.wasted_dollars) : "", Escape(params),
        Escape(t.record.end_reason));
  }
  return out + "</tbody></table>";
}

std::string LevelsTable(const HtmlStudy& s) {
  const StudyReport& r = s.report;
  const auto levels = DollarsToLevels(r);
  if (levels.empty()) return R"(<p class="note">no scored trial yet</p>)";
  std::string out = fmt::format(
      R"(<table class="levels"><thead><tr><th>{} reached</th><th>after dollars</th>)"
      R"(<th>by trial</th></tr></thead><tbody>)",
      Escape(r.study.metric));
  for (const auto& l : levels) {
    const bool target = r.target && *r.target == l.level;
    out += l.reached ? fmt::format(R"(<tr><td>{}{}</td><td>{}</td><td data-t="{}-{}">#{}</td>)"
                                   R"(</tr>)",
                                   Num(l.level), target ? " (target)" : "", Dollars(l.dollars),
                                   r.study.record.id, l.trial, l.trial)
                     : fmt::format(R"(<tr><td>{}{}</td><td>not reached</td><td></td></tr>)",
                                   Num(l.level), target ? " (target)" : "");
  }
  return out + "</tbody></table>";
}

}  // namespace sift::coordinator::html
