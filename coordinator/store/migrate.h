// `sift migrate`: copies studies, with everything the Store holds about them, from one
// database to another (SQLite to PostgreSQL, or back), keeping their ids.
#pragma once

#include <cstdint>
#include <string>

#include "coordinator/store/store.h"

namespace sift::coordinator {

// Copies study `study_id` (0: every study, and the idle time before any study) from `from` to
// `to`, with its trials, reports, ledger segments, audit trail and the workers they name, in one
// transaction of `to`. Returns "" or what stopped it (a study already in `to`, no such study);
// on a problem nothing is copied.
std::string CopyStudies(Store& from, Store& to, int64_t study_id, int64_t* copied);

}  // namespace sift::coordinator
