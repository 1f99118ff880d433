// Population-based training in the reports: each member's lineage (which member it copied at
// which epoch, and the params of each of its segments) and the hyperparameter schedule that
// produced the best member's model, followed back through the members it copied.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "coordinator/report/report.h"

namespace sift::coordinator {

// Epochs [first, last] trained with `params`, by `trial` (the member itself, or the one whose
// weights it copied at the end of this stretch).
struct PbtSegment {
  int64_t first = 1, last = 0;
  int64_t trial = 0;
  int64_t copied_from = -1;  // the member copied at first - 1; -1 for a member's first segment
  search::Params params;
};

// The member's own segments, split at each of its exploits.
std::vector<PbtSegment> MemberSegments(const StudyReport& report, int64_t number);
// What trained the member's model to `epochs`: its segments back to its last copy, and before
// that, the copied member's schedule up to that epoch (recursively).
std::vector<PbtSegment> Schedule(const StudyReport& report, int64_t number, int64_t epochs);

// Text for the closing summary; "" when the study made no exploit.
std::string FormatPbt(const StudyReport& report);
// results.json's "pbt" object: {"lineage": [...], "best_schedule": {...}}; null when no exploit.
nlohmann::json PbtJson(const StudyReport& report);

}  // namespace sift::coordinator
