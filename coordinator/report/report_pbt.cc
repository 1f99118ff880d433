#include "coordinator/report/report_pbt.h"

#include <fmt/format.h>

#include <algorithm>

#include "common/params_json.h"

namespace sift::coordinator {
namespace {

using json = nlohmann::json;

json Json(const std::vector<PbtSegment>& segments) {
  json out = json::array();
  for (const auto& s : segments) {
    json j = {{"first_epoch", s.first},
              {"last_epoch", s.last},
              {"trial", s.trial},
              {"params", common::ParamsToJson(s.params)}};
    if (s.copied_from >= 0) j["copied_from"] = s.copied_from;
    out.push_back(j);
  }
  return out;
}

int64_t EpochsOf(const StudyReport& report, int64_t number) {
  return number >= 0 && number < static_cast<int64_t>(report.trials.size())
             ? report.trials[number].epochs
             : 0;
}

std::vector<ExploitRecord> ExploitsOf(const StudyReport& report, int64_t number) {
  std::vector<ExploitRecord> out;
  for (const auto& e : report.exploits) {
    if (e.number == number) out.push_back(e);
  }
  std::sort(out.begin(), out.end(), [](const auto& a, const auto& b) { return a.epoch < b.epoch; });
  return out;
}

}  // namespace

std::vector<PbtSegment> MemberSegments(const StudyReport& report, int64_t number) {
  std::vector<PbtSegment> out;
  const auto exploits = ExploitsOf(report, number);
  int64_t first = 1;
  int64_t copied_from = -1;
  for (const auto& e : exploits) {
    out.push_back({first, e.epoch, number, copied_from, e.params_before});
    first = e.epoch + 1;
    copied_from = e.from_trial;
  }
  const search::Params now =
      exploits.empty() ? report.trials.at(number).record.params : exploits.back().params_after;
  out.push_back({first, std::max(first - 1, EpochsOf(report, number)), number, copied_from, now});
  return out;
}

std::vector<PbtSegment> Schedule(const StudyReport& report, int64_t number, int64_t epochs) {
  const auto exploits = ExploitsOf(report, number);
  // The last copy at or before `epochs`: everything before it is the donor's history.
  const ExploitRecord* last = nullptr;
  for (const auto& e : exploits) {
    if (e.epoch < epochs) last = &e;
  }
  if (last == nullptr) {
    const search::Params first =
        exploits.empty() ? report.trials.at(number).record.params : exploits.front().params_before;
    return {{1, epochs, number, -1, first}};
  }
  std::vector<PbtSegment> out = Schedule(report, last->from_trial, last->epoch);
  out.push_back({last->epoch + 1, epochs, number, last->from_trial, last->params_after});
  return out;
}

std::string FormatPbt(const StudyReport& report) {
  if (report.exploits.empty()) return "";
  std::string out =
      fmt::format("pbt: {} exploits; each member's segments:\n", report.exploits.size());
  for (const auto& t : report.trials) {
    std::string line;
    for (const auto& s : MemberSegments(report, t.record.number)) {
      if (s.copied_from >= 0)
        line += fmt::format("; copied #{} at epoch {}, ", s.copied_from, s.first - 1);
      // A member just copied has trained none of its new segment yet (a running study).
      line += s.last >= s.first
                  ? fmt::format("epochs {}-{} {}", s.first, s.last, ParamsText(s.params))
                  : fmt::format("from epoch {} {}", s.first, ParamsText(s.params));
    }
    out += fmt::format("  #{}: {}\n", t.record.number, line);
  }
  if (report.study.best_trial) {
    const int64_t best = *report.study.best_trial;
    out += fmt::format("best trial {}'s hyperparameter schedule (through the members it copied):\n",
                       best);
    for (const auto& s : Schedule(report, best, EpochsOf(report, best))) {
      out += fmt::format("  epochs {}-{}: {} (trained as #{})\n", s.first, s.last,
                         ParamsText(s.params), s.trial);
    }
  }
  return out;
}

json PbtJson(const StudyReport& report) {
  if (report.exploits.empty()) return nullptr;
  json lineage = json::array();
  for (const auto& t : report.trials) {
    lineage.push_back(
        {{"trial", t.record.number}, {"segments", Json(MemberSegments(report, t.record.number))}});
  }
  json j = {{"lineage", lineage}};
  json exploits = json::array();
  for (const auto& e : report.exploits) {
    exploits.push_back({{"trial", e.number},
                        {"epoch", e.epoch},
                        {"from_trial", e.from_trial},
                        {"params_before", common::ParamsToJson(e.params_before)},
                        {"params_after", common::ParamsToJson(e.params_after)},
                        {"reason", e.reason}});
  }
  j["exploits"] = exploits;
  if (report.study.best_trial) {
    const int64_t best = *report.study.best_trial;
    j["best_schedule"] = {{"trial", best},
                          {"segments", Json(Schedule(report, best, EpochsOf(report, best)))}};
  }
  return j;
}

}  // namespace sift::coordinator
