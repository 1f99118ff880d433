// Study leases: which of the coordinators sharing one database serves each open study. The
// lease is a row in the database (Store::ClaimStudy) that its coordinator renews; a coordinator
// that dies stops renewing, and another one takes the study over once the lease has expired,
// rebuilding it from the database as a restart would.
#include <spdlog/spdlog.h>
#include <unistd.h>

#include "coordinator/coordinator.h"

namespace sift::coordinator {

CoordinatorOptions SharedDatabaseOptions(const std::string& db, const std::string& listen,
                                         double lease_s) {
  CoordinatorOptions o;
  if (!IsPostgresUrl(db)) return o;
  o.study_lease_s = lease_s > 0 ? lease_s : 15;
  char host[256] = {};
  gethostname(host, sizeof(host) - 1);
  o.owner = std::string(host) + "/" + listen;
  // Port 0 is a different port each start: the process tells this one apart.
  if (listen.size() >= 2 && listen.compare(listen.size() - 2, 2, ":0") == 0) {
    o.owner += "/pid" + std::to_string(getpid());
  }
  return o;
}

bool Coordinator::ClaimStudyLease(int64_t study_id, double now) {
  if (options_.study_lease_s <= 0) return true;
  const double until = now + options_.study_lease_s;
  if (!store_->ClaimStudy(study_id, options_.owner, now, until)) return false;
  lease_until_[study_id] = until;
  return true;
}

void Coordinator::RenewStudyLeases(double now) {
  if (options_.study_lease_s <= 0 || now < next_lease_check_) return;
  next_lease_check_ = now + options_.study_lease_s / 3;
  std::vector<int64_t> lost;
  for (const auto& [id, runner] : studies_) {
    if (!IsOpen(runner->state())) continue;
    try {
      if (!ClaimStudyLease(id, now)) lost.push_back(id);
    } catch (const std::exception& e) {
      spdlog::error("[study {}] cannot renew its lease: {}", id, e.what());
      // Unrenewed, another coordinator may take it once it expires: stop serving it by then.
      if (now >= lease_until_[id]) lost.push_back(id);
    }
  }
  for (int64_t id : lost) {
    spdlog::error("[study {}] its lease passed to another coordinator; no longer serving it", id);
    DropStudy(id);
  }
  std::vector<StudyRecord> studies;
  try {
    studies = store_->ListStudies();
  } catch (const std::exception& e) {
    spdlog::error("cannot look for studies to take over: {}", e.what());
    return;
  }
  bool workers_loaded = false;
  for (const auto& s : studies) {
    if (!IsOpen(s.state) || studies_.count(s.id)) continue;
    try {
      if (!ClaimStudyLease(s.id, now)) continue;
      // Its workers registered with the coordinator that served it; they keep their ids here.
      if (!workers_loaded) {
        for (const auto& w : store_->ListWorkers()) {
          workers_.try_emplace(w.id, Worker{w, now, 0, {}});
        }
        workers_loaded = true;
      }
      spdlog::warn("[study {}] taking it over: its lease was free (its coordinator stopped)",
                   s.id);
      RestoreStudy(s, now);
    } catch (const std::exception& e) {
      spdlog::error("[study {}] cannot take it over: {}", s.id, e.what());
      DropStudy(s.id);
    }
  }
}

void Coordinator::DropStudy(int64_t study_id) {
  studies_.erase(study_id);
  lease_until_.erase(study_id);
  ledger_.DropStudy(study_id);
  leases_.DropStudy(study_id);
  for (auto it = resume_.begin(); it != resume_.end();) {
    it = it->first.first == study_id ? resume_.erase(it) : std::next(it);
  }
}

void Coordinator::ReleaseStudyLeases() {
  std::lock_guard<std::mutex> lock(mu_);
  if (options_.study_lease_s <= 0) return;
  for (const auto& [id, until] : lease_until_) {
    try {
      store_->ReleaseStudy(id, options_.owner);
    } catch (const std::exception& e) {
      spdlog::warn("[study {}] cannot release its lease (it expires by itself): {}", id, e.what());
    }
  }
  lease_until_.clear();
}

}  // namespace sift::coordinator
