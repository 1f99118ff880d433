// The soak: a busy study's week in minutes. A real `sift coordinator` process (SQLite or
// PostgreSQL), simulated workers over the real Workers service (soak_worker.h) that join,
// leave, are reclaimed and vanish, and the coordinator restarted while they run (SIGKILL and
// SIGTERM in turn). Samples the coordinator's memory, descriptors and database size as it
// goes; at the end checks every acknowledged report against the store and the ledger against
// the trials' costs. tests/soak/soak_test.cc runs a short one, bench/coordinator/soak.cc the
// full one.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "tests/soak/soak_worker.h"

namespace sift::testing::soak {

struct Options {
  std::string sift;                   // the `sift` binary
  std::string prices;                 // its price catalog
  std::string db;                     // a SQLite file or a postgresql:// URL
  std::string dir;                    // the study's config and the coordinators' logs
  std::function<int64_t()> db_bytes;  // the database's size on disk now
  int workers = 64;                   // slots: a worker that leaves is replaced by a new one
  int64_t reports = 20000;            // about this many: the study's max_trials x epochs
  int epochs = 10;
  int restarts = 3;  // evenly spaced; SIGKILL first, then SIGTERM, in turn
  int samples = 8;   // further samples, evenly spaced over the reports
  WorkerFates fates;
  double lease_timeout_s = 3;
  double timeout_s = 600;  // the whole run
  uint64_t seed = 1;
};

// One look at the coordinator.
struct Sample {
  std::string event;    // "sample", "before SIGKILL", "before SIGTERM", "end"
  int process = 0;      // 1 for the first coordinator, then one more per restart
  int64_t reports = 0;  // acknowledged so far
  double seconds = 0;   // since the load started
  int64_t rss_kb = 0, fds = 0, db_bytes = 0;
};

struct Result {
  std::string error;  // "" or why the run could not finish
  std::vector<Sample> samples;
  WorkerCounts counts;
  int64_t acked = 0;
  int64_t stored = 0;   // report rows in the store
  int64_t missing = 0;  // acknowledged, not in the store
  int64_t changed = 0;  // in the store with another epoch or value
  int64_t trials = 0, open_segments = 0;
  std::string study_state;
  double ledger_dollars = 0;  // the coordinator's ledger (GetStudy)
  double trial_dollars = 0;   // the trials' costs summed (ListTrials)
  double store_dollars = 0;   // the trials' costs priced from the store's segments
  double seconds = 0;
  std::vector<std::string> worker_errors;
};

Result RunSoak(const Options& options);

// The samples as a Markdown table, and the rest of the result in a line.
std::string SampleTable(const Result& result);
std::string Summary(const Result& result);

// The soak's invariants that `result` breaks, each saying by how much: a store or the run
// failed, an acknowledged report missing or changed, the ledger apart from the trials' costs,
// a lease left open, and memory, descriptors or the database growing past their bounds.
std::vector<std::string> Violations(const Options& options, const Result& result);

}  // namespace sift::testing::soak
