// The studies of a database as reports (`sift report`, its HTML page, `sift export --pareto`,
// `sift report --by-tag`), read from the Store alone: each study's runner is rebuilt from its
// rows (coordinator/core/stored_study.h, as a restarting coordinator does) without a Coordinator,
// its threads, leases or workers.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "coordinator/report/report.h"

namespace sift::coordinator {

// Every study of `db` (or just `study_id` when > 0; none is an error naming it), with its trials
// and the checkpoint folder beside a SQLite file. Throws std::runtime_error naming the database.
std::vector<StudyReport> LoadStudyReports(const std::string& db, int64_t study_id,
                                          std::optional<double> target = std::nullopt);

// Every study's summary, without its trials (tag roll-ups).
std::vector<StudySummary> LoadStudySummaries(const std::string& db);

}  // namespace sift::coordinator
