// The Study message and the StudySummary it carries, both ways: the service answers with it, the
// CLI prints from it (its cost part, tags, target and forecast: cost_proto.h).
#pragma once

#include "coordinator/core/summaries.h"
#include "sift/v1/study.pb.h"

namespace sift::coordinator {

void ToProto(const StudySummary& s, v1::Study* out);
// by_state and the budget's other limits do not travel; the rest comes back as it was sent.
StudySummary FromProto(const v1::Study& s);

}  // namespace sift::coordinator
