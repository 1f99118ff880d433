#include "coordinator/cost/quota.h"

#include <cmath>
#include <cstdlib>

#include "common/config/config_cost.h"

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
  if (std::string p = common::CheckTagKey(q.key); !p.empty()) {
    return what + "tag key '" + q.key + "': " + p;
  }
  if (std::string p = common::CheckTagValue(q.value); !p.empty()) {
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

}  // namespace sift::coordinator
