// Cost watching: each open study's budget alerts and recorded forecasts, and the dollar quotas
// across studies tagged alike. Apart from the Coordinator because it only reads the ledger and
// writes study events: coordinator/cost/ decides what is due, this records it, logs it and runs
// its command. It takes the Coordinator's table lock itself to read the ledger and the tags;
// its per-study methods expect that study's lock held (coordinator.h, "Locks").
#pragma once

#include <cstdint>
#include <map>
#include <mutex>
#include <string>
#include <vector>

#include "common/config/config.h"
#include "coordinator/core/status.h"
#include "coordinator/core/study_registry.h"
#include "coordinator/cost/alert_command.h"
#include "coordinator/cost/alerts.h"
#include "coordinator/cost/ledger.h"
#include "coordinator/cost/quota.h"
#include "coordinator/store/fenced_store.h"

namespace sift::coordinator {

class CostWatch {
 public:
  // `table_mu` guards `ledger` and the tags kept here. A study's forecast is remade at most
  // every `forecast_interval_s`.
  CostWatch(FencedStore& store, std::mutex& table_mu, const Ledger& ledger,
            std::vector<Quota> quotas, double forecast_interval_s)
      : store_(store),
        table_mu_(table_mu),
        ledger_(ledger),
        quotas_(std::move(quotas)),
        forecast_interval_s_(forecast_interval_s) {}

  // A study's tags, for the quotas across studies. The caller holds the table lock.
  void SetTags(int64_t study_id, common::Tags tags) { tags_[study_id] = std::move(tags); }
  void DropTags(int64_t study_id) { tags_.erase(study_id); }

  // The caller holds the study's lock. Alerts and recorded forecasts due for an open study:
  // each recorded once, logged, and its command (if any) run off this thread.
  void Watch(ServedStudy& study, double now);
  // The budget thresholds crossed and not yet alerted, each fired once (also before a study
  // that its budget ends is closed, so that no crossed threshold goes unannounced). `spent`:
  // the study's dollars now (the caller has them: each read takes the table lock).
  void FireBudgetAlerts(ServedStudy& study, double spent, double now);
  // Sets what the runner's quotas have spent across their studies, before it decides.
  void UpdateQuotaUse(StudyRunner& runner, double now);
  // RESOURCE_EXHAUSTED when a quota on `tags` is spent already. The caller holds no table lock.
  Status CheckQuotas(const common::Tags& tags, double now);

 private:
  void FireCostEvent(ServedStudy& study, const CostEvent& event, double now);
  double StudyDollars(int64_t study_id, double now);  // takes the table lock
  // Dollars of every study tagged key=value (open leases to `now`). The caller holds the table
  // lock.
  double TagDollars(const std::string& key, const std::string& value, double now) const;

  FencedStore& store_;
  std::mutex& table_mu_;
  const Ledger& ledger_;
  const std::vector<Quota> quotas_;
  const double forecast_interval_s_;
  std::map<int64_t, common::Tags> tags_;  // each study's, under the table lock
  // Last: destroyed first, so it waits for commands still running while the rest is intact.
  AlertCommands alert_commands_;
};

}  // namespace sift::coordinator
