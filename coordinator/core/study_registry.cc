#include "coordinator/core/study_registry.h"

#include <spdlog/spdlog.h>

namespace sift::coordinator {

StudyRegistry::StudyRegistry(FencedStore& store, int64_t max_running, double lease_s,
                             std::string owner)
    : store_(store), max_running_(max_running), lease_s_(lease_s), owner_(std::move(owner)) {}

std::shared_ptr<ServedStudy> StudyRegistry::Find(int64_t id) const {
  std::shared_lock<std::shared_mutex> lock(studies_mu_);
  auto it = studies_.find(id);
  return it == studies_.end() ? nullptr : it->second;
}

void StudyRegistry::Add(std::shared_ptr<ServedStudy> study) {
  const int64_t id = study->id();
  std::unique_lock<std::shared_mutex> lock(studies_mu_);
  studies_[id] = std::move(study);
}

std::shared_ptr<ServedStudy> StudyRegistry::Remove(int64_t id) {
  {
    std::lock_guard<std::mutex> lock(leases_mu_);
    held_.erase(id);
  }
  store_.LetGo(id);
  std::unique_lock<std::shared_mutex> lock(studies_mu_);
  auto it = studies_.find(id);
  if (it == studies_.end()) return nullptr;
  auto study = std::move(it->second);
  studies_.erase(it);
  return study;
}

StudyRegistry::Studies StudyRegistry::All() const {
  std::shared_lock<std::shared_mutex> lock(studies_mu_);
  Studies out;
  out.reserve(studies_.size());
  for (const auto& [id, study] : studies_) out.push_back(study);
  return out;
}

Status StudyRegistry::RunningCap() const {
  int64_t running = 0;
  for (const auto& study : All()) {
    std::lock_guard<std::mutex> lock(study->mu);
    running += !study->dropped && study->runner->state() == StudyState::kRunning;
  }
  if (running < max_running_) return Status::Ok();
  return Status::Error(Status::Code::kResourceExhausted,
                       std::to_string(running) + " studies are running, the limit " +
                           "(--max-running-studies " + std::to_string(max_running_) +
                           "); cancel one or wait for one to finish");
}

bool StudyRegistry::Claim(int64_t id, double now) {
  if (lease_s_ <= 0) return true;
  int64_t held = 0;
  {
    std::lock_guard<std::mutex> lock(leases_mu_);
    if (auto it = held_.find(id); it != held_.end()) held = it->second.epoch;
  }
  // A study held here is only ever renewed: taken again, its memory would be stale.
  const int64_t epoch = store_.ClaimStudy(id, owner_, lease_s_, held);
  if (epoch == 0) return false;
  store_.Hold(id, epoch);
  std::lock_guard<std::mutex> lock(leases_mu_);
  held_[id] = {now + lease_s_, epoch};
  return true;
}

bool StudyRegistry::RenewalDue(double now) {
  std::lock_guard<std::mutex> lock(leases_mu_);
  if (lease_s_ <= 0 || now < next_renewal_) return false;
  next_renewal_ = now + lease_s_ / 3;
  return true;
}

double StudyRegistry::HeldUntil(int64_t id) const {
  std::lock_guard<std::mutex> lock(leases_mu_);
  auto it = held_.find(id);
  return it == held_.end() ? 0 : it->second.until;
}

void StudyRegistry::ReleaseAll() {
  if (lease_s_ <= 0) return;
  std::map<int64_t, Held> held;
  {
    std::lock_guard<std::mutex> lock(leases_mu_);
    held.swap(held_);
  }
  for (const auto& [id, lease] : held) {
    try {
      store_.ReleaseStudy(id, owner_);
    } catch (const std::exception& e) {
      spdlog::warn("[study {}] cannot release its lease (it expires by itself): {}", id, e.what());
    }
  }
}

}  // namespace sift::coordinator
