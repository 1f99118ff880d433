// Study leases: which of the coordinators sharing one database serves each open study. The
// lease is a row in the database (Store::ClaimStudy) that its coordinator renews; a coordinator
// that dies stops renewing, and another one takes the study over once the lease has expired
// (by the database's clock), rebuilding it from the database as a restart would. Each takeover
// raises the lease's epoch, which fences every write of the coordinator that had it
// (coordinator/store/fenced_store.h): one that only stalled finds its writes refused and lets go.
#include <spdlog/spdlog.h>
#include <unistd.h>

#include "coordinator/core/coordinator.h"

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

void Coordinator::RenewStudyLeases(double now) {
  // Studies whose writes the database refused (their lease moved on while this coordinator was
  // not looking: paused, frozen, cut off) go at once, not at the next renewal.
  for (const StudyFenced& fenced : store_->TakeFenced()) {
    spdlog::warn(
        "[study {}] fenced: the database holds its lease at epoch {}, this coordinator "
        "at epoch {} (another coordinator took it over); its writes are refused and "
        "it is no longer served here",
        fenced.study_id, fenced.current, fenced.held);
    DropStudy(fenced.study_id);
  }
  if (!studies_.RenewalDue(now)) return;
  std::vector<int64_t> lost;
  for (const auto& study : studies_.All()) {
    {
      std::lock_guard<std::mutex> lock(study->mu);
      if (study->dropped || !IsOpen(study->runner->state())) continue;
    }
    const int64_t id = study->id();
    try {
      if (!studies_.Claim(id, now)) lost.push_back(id);
    } catch (const std::exception& e) {
      spdlog::error("[study {}] cannot renew its lease: {}", id, e.what());
      // Unrenewed, another coordinator may take it once it expires: stop serving it by then.
      if (now >= studies_.HeldUntil(id)) lost.push_back(id);
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
    if (!IsOpen(s.state) || studies_.Find(s.id)) continue;
    try {
      if (!studies_.Claim(s.id, now)) continue;
      // Its workers registered with the coordinator that served it; they keep their ids here.
      if (!workers_loaded) {
        const auto records = store_->ListWorkers();
        std::lock_guard<std::mutex> table(table_mu_);
        for (const auto& w : records) workers_.AddIfAbsent(w, now);
        workers_loaded = true;
      }
      spdlog::warn("[study {}] taking it over: its lease was free (its coordinator stopped)", s.id);
      RestoreStudy(s, now);
    } catch (const std::exception& e) {
      spdlog::error("[study {}] cannot take it over: {}", s.id, e.what());
      DropStudy(s.id);
    }
  }
}

void Coordinator::DropStudy(int64_t study_id) {
  // Its runner, resume points, evaluations, alerts and forecast checks go with its entry: they
  // are the new owner's now, and kept here they would be stale if the study came back. Whoever
  // still holds the entry sees `dropped` under its lock.
  std::shared_ptr<ServedStudy> study = studies_.Remove(study_id);
  std::unique_lock<std::mutex> lock;
  if (study) {
    lock = std::unique_lock<std::mutex>(study->mu);
    study->dropped = true;
  }
  std::lock_guard<std::mutex> table(table_mu_);
  ledger_.DropStudy(study_id);
  leases_.DropStudy(study_id);
  costs_.DropTags(study_id);
}

void Coordinator::ReleaseStudyLeases() { studies_.ReleaseAll(); }

}  // namespace sift::coordinator
