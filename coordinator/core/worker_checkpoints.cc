// The Coordinator's checkpoint requests from a lease's worker: where it writes (uploads) or
// reads (downloads) a checkpoint of its trial, and the work it redid past a damaged one.
#include <spdlog/spdlog.h>

#include <cmath>

#include "common/checkpoint_names.h"
#include "coordinator/core/coordinator.h"

namespace sift::coordinator {

Status Coordinator::CheckpointPath(const std::string& worker_id, const std::string& lease_id,
                                   const std::string& name, std::string* path) {
  LockedStudy study = LockStudy(StudyOfLease(lease_id));
  std::optional<EvaluationLease> evaluation;
  if (study) {
    std::lock_guard<std::mutex> table(table_mu_);
    if (const EvaluationLease* e = leases_.FindEvaluation(lease_id);
        e && e->worker_id == worker_id && e->study_id == study->id()) {
      evaluation = *e;
    }
  }
  if (evaluation) {
    // An evaluation reads the one checkpoint it was given, and writes none.
    if (name != TrialCheckpoints::Resume(*study, evaluation->number)) {
      return Status::Error(Status::Code::kInvalidArgument,
                           "'" + name + "' is not the checkpoint this evaluation scores");
    }
    *path = checkpoints_.StudyDir(evaluation->study_id) + "/" + name;
    return Status::Ok();
  }
  TrialLease* lease = nullptr;
  if (Status s = CheckLease(study.study.get(), worker_id, lease_id, &lease); !s.ok()) return s;
  if (options_.checkpoint_dir.empty()) {
    return Status::Error(Status::Code::kFailedPrecondition,
                         "this coordinator keeps no checkpoints (start it with --checkpoint-dir)");
  }
  if (!common::IsCheckpointNameOf(name, lease->number)) {
    return Status::Error(Status::Code::kInvalidArgument,
                         "'" + name + "' is not a checkpoint name of trial " +
                             std::to_string(lease->number) + " (the lease's trial)");
  }
  *path = checkpoints_.StudyDir(lease->study_id) + "/" + name;
  return Status::Ok();
}

Status Coordinator::RecordRedoneWork(const std::string& worker_id, const std::string& lease_id,
                                     double redone_seconds, const std::string& damaged) {
  LockedStudy study = LockStudy(StudyOfLease(lease_id));
  TrialLease* lease = nullptr;
  if (Status s = CheckLease(study.study.get(), worker_id, lease_id, &lease); !s.ok()) return s;
  if (!std::isfinite(redone_seconds) || redone_seconds < 0) {
    return Status::Error(Status::Code::kInvalidArgument, "redone_seconds must be >= 0");
  }
  try {
    store_->SetRedoneSeconds(lease->study_id, lease_id, redone_seconds);
  } catch (const std::exception& e) {
    return StorageError(e, "the redone work");
  }
  spdlog::warn(
      "[study {}] trial {}: checkpoint '{}' was damaged or missing; its worker fell back "
      "to an older one and redid {:.1f} s of work (counted as waste)",
      lease->study_id, lease->number, damaged, redone_seconds);
  return Status::Ok();
}

}  // namespace sift::coordinator
