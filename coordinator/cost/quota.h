// Quotas: a dollar limit per tag across studies (`sift coordinator --quota team=vision:100`).
// Every study tagged team=vision counts against it, open leases included; once it is spent, none
// of them gets new work and their running trials stop at their next report, exactly as a
// study's own max_dollars is enforced (StudyRunner::BudgetExhausted checks both).
#pragma once

#include <string>
#include <vector>

namespace sift::coordinator {

struct Quota {
  std::string key, value;  // the tag
  double dollars = 0;      // > 0
  std::string Name() const { return key + "=" + value; }
};

// Parses KEY=VALUE:DOLLARS; returns "" or the problem, naming the text and the part that is
// wrong (the tag's rules are the config's: common/config/config_cost.h).
std::string ParseQuota(const std::string& text, Quota* out);

// What a quota has spent, and its limit, as a study's runner is told before it decides.
struct QuotaUse {
  std::string name;  // team=vision
  double limit = 0;
  double spent = 0;  // by every study with the tag, this one included
};

}  // namespace sift::coordinator
