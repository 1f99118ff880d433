#include "coordinator/study_registry.h"

#include <spdlog/spdlog.h>

namespace sift::coordinator {

StudyRegistry::StudyRegistry(Store& store, int64_t max_running, double lease_s,
                             std::string owner)
    : store_(store), max_running_(max_running), lease_s_(lease_s), owner_(std::move(owner)) {}

StudyRunner* StudyRegistry::Find(int64_t id) const {
  auto it = runners_.find(id);
  return it == runners_.end() ? nullptr : it->second.get();
}

void StudyRegistry::Add(std::unique_ptr<StudyRunner> runner) {
  const int64_t id = runner->id();
  runners_[id] = std::move(runner);
}

void StudyRegistry::Remove(int64_t id) {
  runners_.erase(id);
  lease_until_.erase(id);
}

Status StudyRegistry::RunningCap() const {
  int64_t running = 0;
  for (const auto& [id, runner] : runners_) running += runner->state() == StudyState::kRunning;
  if (running < max_running_) return Status::Ok();
  return Status::Error(Status::Code::kResourceExhausted,
                       std::to_string(running) + " studies are running, the limit " +
                           "(--max-running-studies " + std::to_string(max_running_) +
                           "); cancel one or wait for one to finish");
}

bool StudyRegistry::Claim(int64_t id, double now) {
  if (lease_s_ <= 0) return true;
  const double until = now + lease_s_;
  if (!store_.ClaimStudy(id, owner_, now, until)) return false;
  lease_until_[id] = until;
  return true;
}

bool StudyRegistry::RenewalDue(double now) {
  if (lease_s_ <= 0 || now < next_renewal_) return false;
  next_renewal_ = now + lease_s_ / 3;
  return true;
}

double StudyRegistry::HeldUntil(int64_t id) const {
  auto it = lease_until_.find(id);
  return it == lease_until_.end() ? 0 : it->second;
}

void StudyRegistry::ReleaseAll() {
  if (lease_s_ <= 0) return;
  for (const auto& [id, until] : lease_until_) {
    try {
      store_.ReleaseStudy(id, owner_);
    } catch (const std::exception& e) {
      spdlog::warn("[study {}] cannot release its lease (it expires by itself): {}", id, e.what());
    }
  }
  lease_until_.clear();
}

}  // namespace sift::coordinator
