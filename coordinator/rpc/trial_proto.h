// The Trial message and the TrialSummary it carries, both ways (the parameters' own conversion is
// common/wire/proto_convert.h).
#pragma once

#include "coordinator/core/summaries.h"
#include "sift/v1/study.pb.h"

namespace sift::coordinator {

v1::TrialState ToProto(search::TrialState s);
// `include_reports`: the curve too (ListTrials asks for it; GetTrial does not).
void ToProto(const TrialSummary& t, bool include_reports, v1::Trial* out);
// TRIAL_STATE_UNSPECIFIED reads as PENDING, a state past the known ones as the last (clamped);
// an unknown test evaluation state as FAILED.
TrialSummary FromProto(const v1::Trial& t);

}  // namespace sift::coordinator
