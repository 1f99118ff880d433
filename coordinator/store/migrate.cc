#include "coordinator/store/migrate.h"

#include <set>

namespace sift::coordinator {
namespace {

void CopyStudy(Store& from, Store& to, const StudyRecord& study) {
  to.CreateStudy(study);  // keeps study.id
  for (const auto& e : from.ListStudyEvents(study.id)) to.InsertStudyEvent(e);
  for (const auto& t : from.ListTrials(study.id)) to.InsertTrial(t);
  for (const auto& r : from.ListReports(study.id)) to.InsertReport(r);
  for (const auto& s : from.ListSegments(study.id)) {
    to.OpenSegment(s);
    // OpenSegment starts with no waste; SetRedoneSeconds sets it while the segment is open.
    to.SetRedoneSeconds(s.study_id, s.lease_id, s.wasted_seconds);
    if (s.end) to.CloseSegment(s.study_id, s.lease_id, *s.end, s.end_reason, s.checkpoint, 0);
  }
  for (const auto& idle : from.ListIdleSegments(study.id)) to.InsertIdleSegment(idle);
  for (const auto& e : from.ListEvaluations(study.id)) to.UpsertEvaluation(e);
  // After the trials: an exploit sets its trial's params to the ones they already hold.
  for (const auto& e : from.ListExploits(study.id)) to.InsertExploit(e);
}

}  // namespace

std::string CopyStudies(Store& from, Store& to, int64_t study_id, int64_t* copied) {
  *copied = 0;
  std::vector<StudyRecord> studies;
  for (const auto& s : from.ListStudies()) {
    if (study_id == 0 || s.id == study_id) studies.push_back(s);
  }
  if (study_id != 0 && studies.empty()) return "no study " + std::to_string(study_id);
  for (const auto& s : studies) {
    if (to.GetStudy(s.id)) {
      return "study " + std::to_string(s.id) + " ('" + s.name +
             "') is already in the destination; nothing was copied";
    }
  }
  to.Atomically([&] {
    // Every worker: a segment's worker must be known to a coordinator that restores it.
    std::set<std::string> known;
    for (const auto& w : to.ListWorkers()) known.insert(w.id);
    for (const auto& w : from.ListWorkers()) {
      if (!known.count(w.id)) to.UpsertWorker(w);
    }
    for (const auto& s : studies) CopyStudy(from, to, s);
    if (study_id == 0) {
      for (const auto& idle : from.ListIdleSegments(0)) to.InsertIdleSegment(idle);
    }
  });
  *copied = static_cast<int64_t>(studies.size());
  return "";
}

}  // namespace sift::coordinator
