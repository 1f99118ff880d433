#include "coordinator/core/lease_table.h"

namespace sift::coordinator {

namespace {

template <typename Leases>
std::vector<std::string> Silent(const Leases& leases, double now, double timeout_s) {
  std::vector<std::string> out;
  for (const auto& [id, lease] : leases) {
    if (now - lease.last_seen > timeout_s) out.push_back(id);
  }
  return out;
}

}  // namespace

void LeaseTable::Grant(const TrialLease& lease) {
  trials_[lease.id] = lease;
  by_study_[lease.study_id].insert(lease.id);
}

TrialLease* LeaseTable::Find(const std::string& id) {
  auto it = trials_.find(id);
  return it == trials_.end() ? nullptr : &it->second;
}

Status LeaseTable::Held(const std::string& worker_id, const std::string& id, TrialLease** out) {
  TrialLease* lease = Find(id);
  if (!lease) {
    return Status::Error(Status::Code::kFailedPrecondition,
                         "lease '" + id + "' is not held (expired, ended or never granted)");
  }
  if (lease->worker_id != worker_id) {
    return Status::Error(Status::Code::kFailedPrecondition,
                         "lease '" + id + "' belongs to another worker");
  }
  *out = lease;
  return Status::Ok();
}

void LeaseTable::End(const std::string& id) {
  auto it = trials_.find(id);
  if (it == trials_.end()) return;
  auto study = by_study_.find(it->second.study_id);
  study->second.erase(id);
  if (study->second.empty()) by_study_.erase(study);
  trials_.erase(it);
}

std::vector<std::string> LeaseTable::OfStudy(int64_t study_id) const {
  auto it = by_study_.find(study_id);
  if (it == by_study_.end()) return {};
  return {it->second.begin(), it->second.end()};
}

std::set<int64_t> LeaseTable::TrialsOf(int64_t study_id) const {
  std::set<int64_t> out;
  for (const auto& id : OfStudy(study_id)) out.insert(trials_.at(id).number);
  return out;
}

bool LeaseTable::AnyOf(int64_t study_id) const { return by_study_.count(study_id) > 0; }

void LeaseTable::DropStudy(int64_t study_id) {
  for (const auto& id : OfStudy(study_id)) End(id);
}

std::vector<std::string> LeaseTable::Expired(double now, double timeout_s) const {
  return Silent(trials_, now, timeout_s);
}

void LeaseTable::GrantEvaluation(const EvaluationLease& lease) { evaluations_[lease.id] = lease; }

EvaluationLease* LeaseTable::FindEvaluation(const std::string& id) {
  auto it = evaluations_.find(id);
  return it == evaluations_.end() ? nullptr : &it->second;
}

void LeaseTable::EndEvaluation(const std::string& id) { evaluations_.erase(id); }

std::vector<std::string> LeaseTable::ExpiredEvaluations(double now, double timeout_s) const {
  return Silent(evaluations_, now, timeout_s);
}

std::vector<std::string> LeaseTable::Heartbeat(const std::string& worker_id,
                                               const std::vector<std::string>& ids, double now) {
  std::vector<std::string> revoked;
  for (const auto& id : ids) {
    if (EvaluationLease* e = FindEvaluation(id); e && e->worker_id == worker_id) {
      e->last_seen = now;
    } else if (TrialLease* t = Find(id); t && t->worker_id == worker_id) {
      t->last_seen = now;
    } else {
      revoked.push_back(id);
    }
  }
  return revoked;
}

std::set<std::string> LeaseTable::Holders() const {
  std::set<std::string> out;
  for (const auto& [id, lease] : trials_) out.insert(lease.worker_id);
  for (const auto& [id, lease] : evaluations_) out.insert(lease.worker_id);
  return out;
}

}  // namespace sift::coordinator
