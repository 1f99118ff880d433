#include "coordinator/report/study_reports.h"

#include <stdexcept>

#include "coordinator/core/coordinator.h"

namespace sift::coordinator {

std::vector<StudyReport> LoadStudyReports(const std::string& db, int64_t study_id,
                                          std::optional<double> target) {
  Coordinator coordinator(OpenStoreReadOnly(db), {});
  std::vector<StudyReport> reports;
  for (const auto& study : coordinator.ListStudies()) {
    if (study_id > 0 && study.record.id != study_id) continue;
    StudyReport r;
    r.study = study;
    r.target = target;
    r.checkpoint_dir = CheckpointDirBeside(db, study.record.id);
    coordinator.ListTrials(study.record.id, &r.trials);
    reports.push_back(std::move(r));
  }
  if (study_id > 0 && reports.empty()) {
    throw std::runtime_error(RedactDbUrl(db) + ": no study " + std::to_string(study_id));
  }
  return reports;
}

}  // namespace sift::coordinator
