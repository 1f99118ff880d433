// A study's trial checkpoints on disk: where each trial resumes, the older ones it falls back
// to, their names and folder, and the retention that deletes what no trial needs. Apart from the
// Coordinator because it is the one part that reads and deletes in the checkpoint directory.
// The resume points live in each ServedStudy: methods given a study expect its lock held;
// Prune takes the table lock itself (to read the leases) and must not be called under it.
#pragma once

#include <cstdint>
#include <mutex>
#include <string>
#include <vector>

#include "coordinator/core/lease_table.h"
#include "coordinator/core/status.h"
#include "coordinator/core/study_registry.h"

namespace sift::coordinator {

class TrialCheckpoints {
 public:
  // `dir` "": no checkpoints are kept here and trials never resume. `table_mu` guards `leases`.
  TrialCheckpoints(std::string dir, std::mutex& table_mu, const LeaseTable& leases)
      : dir_(std::move(dir)), table_mu_(table_mu), leases_(leases) {}

  bool enabled() const { return !dir_.empty(); }
  // The trial's newest checkpoint, "" when it has none.
  static std::string Resume(const ServedStudy& study, int64_t number);
  // The trial's checkpoints on disk older than `newest`, newest first.
  std::vector<std::string> Older(int64_t study_id, int64_t number, const std::string& newest) const;
  // INVALID_ARGUMENT unless `name` is "" or a checkpoint name of trial `number`.
  static Status CheckName(const std::string& name, int64_t number);
  std::string StudyDir(int64_t study_id) const;
  // Deletes the study's checkpoints that its checkpoint.keep no longer wants; never fails.
  // `only`: judge just these names instead of listing the directory (a report's superseded one).
  void Prune(const ServedStudy& study, const std::vector<std::string>& only = {});

 private:
  const std::string dir_;
  std::mutex& table_mu_;
  const LeaseTable& leases_;
};

}  // namespace sift::coordinator
