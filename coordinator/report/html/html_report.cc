#include "coordinator/report/html/html_report.h"

#include <fmt/chrono.h>
#include <fmt/format.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>

#include "common/config/config.h"
#include "common/config/config_limits.h"
#include "coordinator/report/frontier.h"
#include "coordinator/report/html/chart_data.h"
#include "coordinator/report/html/svg.h"
#include "coordinator/report/report_cost.h"
#include "coordinator/report/study_reports.h"
#include "coordinator/store/store.h"

namespace sift::coordinator {
namespace {

using html::Escape;

std::string Figure(const std::string& title, const std::string& body,
                   const std::string& note = "") {
  return "<figure><figcaption>" + Escape(title) + "</figcaption>" + body +
         (note.empty() ? "" : "<p class=\"note\">" + note + "</p>") + "</figure>";
}

std::string ForecastLine(const HtmlStudy& s, double now) {
  const StudyReport& r = s.report;
  const double start = r.study.record.created_at;
  if (IsOpen(r.study.record.state)) {
    const Forecast f = ForecastFinish(r, s.segments, now);
    if (!f.possible) return "Forecast: none until a trial ends.";
    std::string out =
        fmt::format("Forecast to finish ({} trials left): {} in total, about {} from now{}.",
                    f.trials_left, html::Dollars(f.dollars), html::Duration(f.finish_at - now),
                    f.limited_by.empty() ? "" : "; the budget's " + f.limited_by + " ends it");
    if (f.target) out += " Target " + FormatTargetForecast(*f.target, r.study.metric, now) + ".";
    return out;
  }
  // Ended: the forecasts recorded on the way (at 25% and 50% of the budget) against what
  // happened; a study without them gets what a forecast made halfway through would have said.
  const double end = r.study.record.ended_at > start ? r.study.record.ended_at : now;
  std::string out = fmt::format("Ended after {} at {}.", html::Duration(end - start),
                                html::Dollars(r.study.dollars));
  const auto recorded = ForecastVersusActual(r.study);
  for (const auto& line : recorded) out += " Recorded " + line + ".";
  if (!recorded.empty()) return out;
  const Forecast half = ForecastFinish(r, s.segments, start + (end - start) / 2);
  if (half.possible) {
    out +=
        fmt::format(" Forecast made halfway ({} trials ended then): {} and {}.", half.trials_ended,
                    html::Dollars(half.dollars), html::Duration(half.finish_at - start));
  }
  return out;
}

// Several objectives or constraints: the Pareto set over all of them, each pair of objectives,
// and the hypervolume as the study spent (report/frontier.h).
std::string FrontierFigures(const HtmlStudy& s) {
  const auto objectives = ObjectivesOf(s.report);
  const Frontier frontier = FrontierOf(s.report);
  const auto curve = HypervolumeCurve(s.report, frontier);
  std::string out = Figure(
      "Pareto set over every objective, feasible trials only", html::ParetoSetTable(s, frontier),
      "Early-stopped trials count at their last reported value; a trial "
      "that breaks a constraint, or never reported its metric, is infeasible.");
  for (size_t i = 0; i < objectives.size(); ++i) {
    for (size_t j = i + 1; j < objectives.size(); ++j) {
      out += Figure(objectives[j].metric + " vs " + objectives[i].metric,
                    html::ObjectivePairChart(s, frontier, i, j),
                    "Ringed: the Pareto set over all objectives; hollow: infeasible; shaded: where "
                    "a constraint on an axis is broken.");
    }
  }
  const std::string reference =
      "Reference point: each objective's worst value over the feasible trials, 10% of its range "
      "beyond.";
  out += Figure("hypervolume vs cumulative dollars", html::HypervolumeChart(s, curve, false),
                reference);
  out += Figure("hypervolume vs wall time", html::HypervolumeChart(s, curve, true), reference);
  return out;
}

std::string StudySection(const HtmlReport& page, const HtmlStudy& s) {
  const StudyReport& r = s.report;
  const auto& st = r.study;
  std::string out =
      fmt::format(R"(<section class="study" id="s{}"><h2>Study #{} {} )"
                  R"(<small>{}</small></h2>)",
                  st.record.id, st.record.id, Escape(st.record.name),
                  Escape(std::string(ToString(st.record.state)) +
                         (st.record.end_reason.empty() ? "" : ": " + st.record.end_reason)));
  if (std::string tags = FormatTags(st.tags); !tags.empty()) {
    out += "<p class=\"tags\">" + Escape(tags) + "</p>";
  }
  out += "<pre class=\"summary\">" + Escape(FormatSummary(r)) + "</pre>";
  out += "<p class=\"forecast\">" + Escape(ForecastLine(s, page.now)) + "</p>";
  const std::string best = st.best_trial ? fmt::format("{}-{}", st.record.id, *st.best_trial) : "";
  out += fmt::format(R"(<div class="detail" id="detail-{}" data-best="{}">hover or click a point)"
                     R"( to see its trial</div><div class="grid">)",
                     st.record.id, best);
  out += Figure(st.metric + " vs dollars per trial, Pareto frontier", html::ParetoChart(s),
                "Frontier: solid over all trials (early-stopped ones at their last value), "
                "dashed over completed trials only.");
  if (ShowsFrontier(r)) out += FrontierFigures(s);
  out += Figure("learning curves, marked where the scheduler or a lease changed course",
                html::CurvesChart(s));
  out += Figure("spend over time against the budget", html::SpendChart(s, page.now));
  out += Figure("parallel coordinates, coloured by " + st.metric, html::ParallelChart(s));
  out += Figure("parameter importance", html::ImportanceChart(s),
                "Method: for each parameter alone, the trials' " + Escape(st.metric) +
                    " (at one epoch that enough trials reached, so early stopping does not "
                    "masquerade as importance) averaged per bin (a categorical's values, a "
                    "number's quantile bins, at most "
                    "10 of 5 or more trials each); the share of its variance those means explain, "
                    "less what noise would explain (epsilon-squared). Interactions are not "
                    "counted; with few trials it is rough.");
  out += Figure("dollars it took to reach each level", html::LevelsTable(s));
  out += "</div>";
  out += Figure(
      "worker timeline: leases by how they ended, redone work hatched, "
      "preemptions marked",
      html::TimelineChart(s, page.workers, page.now));
  out += "<h3>Trials <small>(click a header to sort)</small></h3><div class=\"tablewrap\">" +
         html::TrialTable(s) + "</div></section>";
  return out;
}

}  // namespace

HtmlReport HtmlReportFor(std::vector<StudyReport> reports, Store& store,
                         const std::string& source) {
  HtmlReport out;
  out.source = source;
  for (const auto& w : store.ListWorkers()) out.workers[w.id] = w;
  out.now =
      std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
  for (auto& report : reports) {
    HtmlStudy s;
    s.report = std::move(report);
    const int64_t id = s.report.study.record.id;
    s.segments = store.ListSegments(id);
    s.idle = store.ListIdleSegments(id);
    // The study was parsed when it was stored, so this cannot fail, but it is checked.
    common::StudyConfig config;
    if (common::ParseStudyConfig(s.report.study.record.config_text, "study", &config,
                                 common::ConfigLimits::None())
            .empty()) {
      s.space = config.space;
    }
    out.studies.push_back(std::move(s));
  }
  return out;
}

HtmlReport LoadHtmlReport(const std::string& db, int64_t study_id, std::optional<double> target) {
  // The text report's summaries, and from the store the ledger's leases.
  std::vector<StudyReport> reports = LoadStudyReports(db, study_id, target);
  auto store = OpenStoreReadOnly(db);
  return HtmlReportFor(std::move(reports), *store, RedactDbUrl(db));
}

std::string RenderHtmlReport(const HtmlReport& page) {
  std::string out =
      R"(<!doctype html><html lang="en"><head><meta charset="utf-8">)"
      R"(<meta name="viewport" content="width=device-width"><title>Sift report</title>)"
      "<style>";
  out += html::PageStyle();
  out += "</style></head><body data-js=\"pending\"><header><h1>Sift report</h1>";
  size_t trials = 0;
  for (const auto& s : page.studies) trials += s.report.trials.size();
  out += fmt::format(
      "<p>{} from {}: {} studies, {} trials. Charts drawn by Sift as SVG; hover a "
      "mark for its trial, click to keep it.</p></header>",
      fmt::format("{:%Y-%m-%d %H:%M} UTC", fmt::gmtime(static_cast<std::time_t>(page.now))),
      Escape(page.source), page.studies.size(), trials);
  if (page.studies.empty()) {
    out += "<p>No study in this database.</p>";
  } else {
    out += "<section class=\"compare\"><h2>Studies side by side</h2><div class=\"grid\">";
    out += Figure("best so far vs cumulative dollars, one line per study",
                  html::BestSoFarChart(page.studies, false));
    out += Figure("best so far vs wall time", html::BestSoFarChart(page.studies, true));
    out += "</div></section>";
    for (const auto& s : page.studies) out += StudySection(page, s);
  }
  out += "<div id=\"tip\"></div><script>";
  out += html::PageScript();
  out += "</script></body></html>\n";
  return out;
}

std::string WriteHtmlReport(const HtmlReport& report, const std::string& path) {
  const std::string text = RenderHtmlReport(report);
  const std::string tmp = path + ".tmp";
  std::error_code ec;
  // As --out does: a folder that is not there yet is made, not guessed at in the error.
  if (const auto parent = std::filesystem::path(path).parent_path(); !parent.empty()) {
    std::filesystem::create_directories(parent, ec);
    if (ec) return parent.string() + ": cannot create the folder: " + ec.message();
  }
  {
    std::ofstream f(tmp, std::ios::trunc | std::ios::binary);
    f << text;
    f.flush();
    if (!f) return path + ": cannot write: " + std::strerror(errno);
  }
  std::filesystem::rename(tmp, path, ec);
  if (ec) return path + ": cannot write: " + ec.message();
  return "";
}

int HtmlReportCommand(const std::string& db, int64_t study_id, std::optional<double> target,
                      const std::string& path) {
  HtmlReport report;
  try {
    report = LoadHtmlReport(db, study_id, target);
  } catch (const std::exception& e) {
    const std::string what = e.what();
    std::cerr << (what.find(db) == std::string::npos ? db + ": " : "") << what << "\n";
    return 1;
  }
  if (std::string problem = WriteHtmlReport(report, path); !problem.empty()) {
    std::cerr << problem << "\n";
    return 1;
  }
  size_t trials = 0;
  for (const auto& s : report.studies) trials += s.report.trials.size();
  std::error_code ec;
  const auto bytes = std::filesystem::file_size(path, ec);
  std::cout << "wrote " << path << ": " << report.studies.size() << " studies, " << trials
            << " trials, " << (ec ? 0 : bytes / 1024) << " KiB\n";
  return 0;
}

}  // namespace sift::coordinator
