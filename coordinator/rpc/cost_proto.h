// sift.v1 <-> the cost controls of a study summary: its tags, target and forecast.
#pragma once

#include "coordinator/core/summaries.h"
#include "sift/v1/study.pb.h"

namespace sift::coordinator {

void CostToProto(const StudySummary& s, v1::Study* out);
void CostFromProto(const v1::Study& s, StudySummary* out);

}  // namespace sift::coordinator
