// The Coordinator's side of quotas (coordinator/cost/quota.h): what each tag's studies spent, told to a
// study's runner before it decides, and checked before a study is created.
#include <fmt/format.h>

#include "coordinator/core/coordinator.h"

namespace sift::coordinator {

double Coordinator::TagDollars(const std::string& key, const std::string& value,
                               double now) const {
  std::vector<int64_t> tagged;
  for (const auto& [id, tags] : tags_) {
    const auto it = tags.find(key);
    if (it != tags.end() && it->second == value) tagged.push_back(id);
  }
  return ledger_.StudiesDollars(tagged, now);
}

void Coordinator::UpdateQuotaUse(StudyRunner& runner, double now) {
  if (options_.quotas.empty()) return;
  std::vector<QuotaUse> uses;
  const common::Tags& tags = runner.config().tags;
  std::lock_guard<std::mutex> table(table_mu_);
  for (const auto& q : options_.quotas) {
    const auto it = tags.find(q.key);
    if (it == tags.end() || it->second != q.value) continue;
    uses.push_back({q.Name(), q.dollars, TagDollars(q.key, q.value, now)});
  }
  runner.SetQuotaUse(std::move(uses));  // (the runner is the caller's, under its study lock)
}

Status Coordinator::CheckQuotas(const common::Tags& tags, double now) {
  std::lock_guard<std::mutex> table(table_mu_);
  for (const auto& q : options_.quotas) {
    const auto it = tags.find(q.key);
    if (it == tags.end() || it->second != q.value) continue;
    const double spent = TagDollars(q.key, q.value, now);
    if (spent >= q.dollars) {
      return Status::Error(Status::Code::kResourceExhausted,
                           fmt::format("quota {}: ${:.4f} spent of ${:.4f} by the studies tagged "
                                       "so; raise --quota or tag the study otherwise",
                                       q.Name(), spent, q.dollars));
    }
  }
  return Status::Ok();
}

}  // namespace sift::coordinator
