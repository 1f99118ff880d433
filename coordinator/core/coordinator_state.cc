#include "coordinator/core/coordinator_state.h"

#include <chrono>

namespace sift::coordinator {

double SystemNow() {
  return std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
}

CoordinatorState::CoordinatorState(std::unique_ptr<Store> store, CoordinatorOptions options)
    : store_(std::make_unique<FencedStore>(std::move(store))),
      commit_(std::make_unique<GroupCommit>(*store_)),
      after_commit_(std::make_unique<TaskThread>("sift-committed")),
      options_(std::move(options)),
      studies_(*store_, options_.max_running_studies, options_.study_lease_s, options_.owner),
      workers_(options_.lease_timeout_s),
      checkpoints_(options_.checkpoint_dir, table_mu_, leases_),
      costs_(*store_, table_mu_, ledger_, options_.quotas, options_.forecast_interval_s) {
  if (!options_.clock) options_.clock = SystemNow;
}

CoordinatorState::LockedStudy CoordinatorState::LockStudy(int64_t study_id) {
  LockedStudy locked;
  auto study = studies_.Find(study_id);
  if (!study) return locked;
  locked.lock = std::unique_lock<std::mutex>(study->mu);
  if (study->dropped) {
    locked.lock.unlock();
    return locked;
  }
  locked.study = std::move(study);
  return locked;
}

int64_t CoordinatorState::StudyOfLease(const std::string& lease_id) {
  std::lock_guard<std::mutex> table(table_mu_);
  if (const TrialLease* lease = leases_.Find(lease_id)) return lease->study_id;
  if (const EvaluationLease* lease = leases_.FindEvaluation(lease_id)) return lease->study_id;
  return 0;
}

double CoordinatorState::StudyDollars(int64_t study_id, double now) {
  std::lock_guard<std::mutex> table(table_mu_);
  return ledger_.StudyDollars(study_id, now);
}

Status CoordinatorState::CheckLease(const ServedStudy* study, const std::string& worker_id,
                                    const std::string& lease_id, TrialLease** out,
                                    bool completing_ok) {
  std::lock_guard<std::mutex> table(table_mu_);
  WorkerTable::Worker* w = nullptr;
  if (Status s = workers_.Touch(worker_id, Now(), &w); !s.ok()) return s;
  if (Status s = leases_.Held(worker_id, lease_id, out); !s.ok()) return s;
  if (!study || (*out)->study_id != study->id()) {  // granted since the caller looked
    return Status::Error(Status::Code::kFailedPrecondition,
                         "lease '" + lease_id + "' is not held (expired, ended or never granted)");
  }
  if ((*out)->completing.valid() && !completing_ok) {
    return Status::Error(Status::Code::kFailedPrecondition,
                         "lease '" + lease_id + "' is being completed");
  }
  return Status::Ok();
}

}  // namespace sift::coordinator
