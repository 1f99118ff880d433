#include "coordinator/quota.h"

#include <fmt/format.h>

#include <cmath>
#include <cstdlib>

#include "common/config/config_cost.h"
#include "coordinator/coordinator.h"

namespace sift::coordinator {

std::string ParseQuota(const std::string& text, Quota* out) {
  const std::string what = "--quota '" + text + "': ";
  const size_t eq = text.find('=');
  const size_t colon = text.rfind(':');
  if (eq == std::string::npos || colon == std::string::npos || colon < eq) {
    return what + "must be KEY=VALUE:DOLLARS (a tag and its dollar limit), e.g. team=vision:100";
  }
  Quota q;
  q.key = text.substr(0, eq);
  q.value = text.substr(eq + 1, colon - eq - 1);
  const std::string dollars = text.substr(colon + 1);
  if (std::string p = CheckTagKey(q.key); !p.empty()) return what + "tag key '" + q.key + "': " + p;
  if (std::string p = CheckTagValue(q.value); !p.empty()) {
    return what + "tag value '" + q.value + "' " + p;
  }
  char* end = nullptr;
  q.dollars = std::strtod(dollars.c_str(), &end);
  if (dollars.empty() || end != dollars.c_str() + dollars.size() || !std::isfinite(q.dollars) ||
      q.dollars <= 0) {
    return what + "the dollar limit must be a number > 0, got '" + dollars + "'";
  }
  *out = q;
  return "";
}

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
  const Tags& tags = runner.config().tags;
  std::lock_guard<std::mutex> table(table_mu_);
  for (const auto& q : options_.quotas) {
    const auto it = tags.find(q.key);
    if (it == tags.end() || it->second != q.value) continue;
    uses.push_back({q.Name(), q.dollars, TagDollars(q.key, q.value, now)});
  }
  runner.SetQuotaUse(std::move(uses));  // (the runner is the caller's, under its study lock)
}

Status Coordinator::CheckQuotas(const Tags& tags, double now) {
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
