// The trial table (rendered and sorted by the page's script; a row is also what a chart's tooltip
// shows) and the dollars it took to reach each objective level.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <nlohmann/json.hpp>
#include <string>

#include "common/metric_json.h"
#include "coordinator/report/frontier.h"
#include "coordinator/report/html/chart_data.h"
#include "coordinator/report/html/charts.h"
#include "coordinator/report/html/svg.h"

namespace sift::coordinator::html {

namespace {

// Short doubles keep a 10,000-trial page small: 6 significant digits are plenty to read and sort.
double Short(double v) { return std::isfinite(v) ? std::stod(fmt::format("{:.6g}", v)) : 0.0; }

}  // namespace

std::string TrialTable(const HtmlStudy& s) {
  const StudyReport& r = s.report;
  // A row is marked when its trial is on the frontier the page leads with: over every objective
  // when there are several (or constraints), else cost against the objective.
  const std::vector<int64_t> frontier = ShowsFrontier(r) ? FrontierOf(r).pareto : ParetoFrontier(r);
  // The rows travel as JSON that the page's script renders (the first 200, or all on request):
  // 10,000 rows of HTML would slow the page's first load several-fold.
  nlohmann::json rows = nlohmann::json::array();
  for (const auto& t : r.trials) {
    const std::string params = ParamsText(t.record.params);
    nlohmann::json objective = nullptr;
    if (t.objective) {
      objective = std::isfinite(*t.objective)
                      ? nlohmann::json(Short(*t.objective))
                      : nlohmann::json(common::FormatMetric(*t.objective, 4));
    }
    const bool on = std::find(frontier.begin(), frontier.end(), t.record.number) != frontier.end();
    rows.push_back({t.record.number, search::ToString(t.record.state), t.epochs, objective,
                    Short(t.dollars), Short(t.seconds), t.segments, Short(t.wasted_dollars), params,
                    t.record.end_reason, on ? 1 : 0});
  }
  nlohmann::json data = {{"columns",
                          {"trial", "state", "epochs", r.study.metric, "dollars", "wall", "leases",
                           "redone $", "params", "why it ended"}},
                         {"rows", rows}};
  std::string text = data.dump();
  // Inside <script>, "</" could end the element early.
  for (size_t at = text.find("</"); at != std::string::npos; at = text.find("</", at + 2)) {
    text.replace(at, 2, "<\\/");
  }
  return fmt::format(R"(<script type="application/json" class="trials" data-study="{0}">{1})"
                     R"(</script><table class="trials sortable" id="trials-{0}"><thead></thead>)"
                     R"(<tbody></tbody></table><p class="more" id="more-{0}"></p>)",
                     r.study.record.id, text);
}

std::string LevelsTable(const HtmlStudy& s) {
  const StudyReport& r = s.report;
  const auto levels = DollarsToLevels(r);
  if (levels.empty()) return R"(<p class="note">no scored trial yet</p>)";
  std::string out =
      fmt::format(R"(<table class="levels"><thead><tr><th>{} reached</th><th>after dollars</th>)"
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
