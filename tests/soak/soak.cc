#include "tests/soak/soak.h"

#include <signal.h>
#include <spdlog/spdlog.h>

#include <chrono>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <map>
#include <memory>
#include <thread>
#include <utility>

#include "coordinator/cost/ledger.h"
#include "coordinator/rpc/client.h"
#include "coordinator/store/store.h"
#include "tests/free_port.h"
#include "tests/integration/process.h"
#include "tests/soak/process_probe.h"

namespace sift::testing::soak {
namespace {

using Clock = std::chrono::steady_clock;

bool IsPostgres(const std::string& db) { return db.rfind("postgresql://", 0) == 0; }

std::string StudyYaml(const Options& o) {
  const int64_t trials = (o.reports + o.epochs - 1) / o.epochs;
  return "name: soak\n"
         "objective: {metric: val_accuracy, direction: maximize}\n"
         "search_space:\n"
         "  lr: {type: float, low: 1.0e-4, high: 1.0e-1, scale: log}\n"
         "  hidden: {type: int, low: 32, high: 512, scale: log}\n"
         "searcher: {type: random}\n"
         "scheduler: {type: fifo}\n"
         "budget: {max_trials: " +
         std::to_string(trials) + ", max_epochs: " + std::to_string(o.epochs) +
         "}\n"
         "seed: " +
         std::to_string(o.seed) +
         "\n"
         "data: {dir: " +
         o.dir + "/data}\n";
}

// The coordinator under test, started again on the same port after each restart.
class Coordinator {
 public:
  Coordinator(const Options& o) : options_(o), port_(FreePort()) {}
  std::string address() const { return "127.0.0.1:" + std::to_string(port_); }
  Process* process() { return process_.get(); }
  int generation() const { return generation_; }

  // "" or why it did not start. The port may still be held a moment after a SIGKILL.
  std::string Start() {
    ++generation_;
    std::vector<std::string> argv = {options_.sift,
                                     "coordinator",
                                     "--listen",
                                     address(),
                                     "--db",
                                     options_.db,
                                     "--prices",
                                     options_.prices,
                                     "--lease-timeout",
                                     std::to_string(options_.lease_timeout_s)};
    // A killed coordinator's study lease lapses this fast, so the next one takes the study.
    if (IsPostgres(options_.db)) argv.insert(argv.end(), {"--study-lease", "2"});
    for (int attempt = 0; attempt < 5; ++attempt) {
      const std::string log = options_.dir + "/coordinator-" + std::to_string(generation_) +
                              (attempt ? "-" + std::to_string(attempt) : "") + ".log";
      process_ = std::make_unique<Process>(argv, log);
      for (int i = 0; i < 600 && process_->Running(); ++i) {
        if (process_->Log().find("listening on") != std::string::npos) return "";
        std::this_thread::sleep_for(std::chrono::milliseconds(50));
      }
      if (process_->Running()) return "coordinator did not start:\n" + process_->Log();
      std::this_thread::sleep_for(std::chrono::milliseconds(500));
    }
    return "coordinator exited at start:\n" + process_->Log();
  }

  // "" or what went wrong: a SIGTERM must end it cleanly.
  std::string Stop(int sig) {
    process_->Signal(sig);
    const int code = process_->Wait(120);
    if (sig == SIGKILL && code == 128 + SIGKILL) return "";
    if (sig == SIGTERM && code == 0) return "";
    return "coordinator " + std::to_string(generation_) + " ended with " + std::to_string(code) +
           " after signal " + std::to_string(sig) + ":\n" + process_->Log();
  }

 private:
  const Options& options_;
  int port_;
  int generation_ = 0;
  std::unique_ptr<Process> process_;
};

// A channel for the end's answers: a 100,000-trial ListTrials is over gRPC's 4 MB default.
std::unique_ptr<v1::Studies::Stub> StudiesStub(const std::string& address) {
  grpc::ChannelArguments args;
  args.SetMaxReceiveMessageSize(-1);
  return v1::Studies::NewStub(
      grpc::CreateCustomChannel(address, grpc::InsecureChannelCredentials(), args));
}

v1::Study GetStudy(const std::string& address, grpc::Status* status) {
  auto stub = StudiesStub(address);
  v1::GetStudyRequest req;
  req.set_study_id(1);
  v1::Study study;
  *status = stub->GetStudy(coordinator::MakeContext("").get(), req, &study);
  return study;
}

// The load: `workers` slots, each running simulated workers one after another.
class Slots {
 public:
  Slots(const Options& o, const std::string& address, SoakShared* shared) {
    for (int slot = 0; slot < o.workers; ++slot) {
      threads_.emplace_back([&o, address, shared, slot] {
        for (int life = 0; !shared->done; ++life) {
          const std::string name = "soak-" + std::to_string(slot) + "-" + std::to_string(life);
          const uint64_t seed = o.seed * 1000003ULL + static_cast<uint64_t>(slot) * 7919ULL +
                                static_cast<uint64_t>(life);
          if (RunSimWorker(address, name, slot % 2 == 0, o.fates, seed, shared) == "error") {
            std::this_thread::sleep_for(std::chrono::milliseconds(200));
          }
        }
      });
    }
  }
  ~Slots() { Join(); }
  void Join() {
    for (auto& t : threads_) {
      if (t.joinable()) t.join();
    }
  }

 private:
  std::vector<std::thread> threads_;
};

// Every acknowledged report looked up in the store; the trials' costs priced from its segments.
void CheckStore(const Options& o, const std::vector<AckedReport>& acked, Result* r) {
  auto store = coordinator::OpenStoreReadOnly(o.db);
  std::map<std::pair<std::string, int64_t>, coordinator::ReportRecord> rows;
  for (auto& rep : store->ListReports(1)) rows[{rep.lease_id, rep.seq}] = std::move(rep);
  r->stored = static_cast<int64_t>(rows.size());
  for (const auto& a : acked) {
    auto it = rows.find({a.lease_id, a.seq});
    if (it == rows.end()) {
      ++r->missing;
      continue;
    }
    const auto& m = it->second.metrics;
    auto v = m.find("val_accuracy");
    if (it->second.number != a.number || it->second.epoch != a.epoch || v == m.end() ||
        v->second != a.value) {
      ++r->changed;
    }
  }
  const auto segments = store->ListSegments(1);
  double last_end = 0;
  for (const auto& s : segments) {
    if (!s.end) ++r->open_segments;
    last_end = std::max(last_end, s.end.value_or(s.start));
  }
  for (const auto& [number, cost] : coordinator::TrialCosts(segments, last_end)) {
    r->store_dollars += cost.dollars;
  }
}

}  // namespace

Result RunSoak(const Options& o) {
  // The links' retry warnings (64 at each restart) would bury the driver's own output.
  spdlog::set_level(spdlog::level::err);
  Result r;
  std::ofstream(o.dir + "/study.yaml") << StudyYaml(o);
  Coordinator coordinator(o);
  if (std::string e = coordinator.Start(); !e.empty()) return r.error = e, r;
  std::string out;
  if (RunCommand({o.sift, "submit", o.dir + "/study.yaml", "--coordinator", coordinator.address()},
                 &out) != 0) {
    return r.error = "sift submit failed: " + out, r;
  }
  SoakShared shared;
  const auto t0 = Clock::now();
  auto sample = [&](const std::string& event) {
    const pid_t pid = coordinator.process()->pid();
    r.samples.push_back({event, coordinator.generation(), shared.reports.load(),
                         std::chrono::duration<double>(Clock::now() - t0).count(), ResidentKb(pid),
                         OpenFds(pid), o.db_bytes ? o.db_bytes() : -1});
  };
  Slots slots(o, coordinator.address(), &shared);
  auto watch = coordinator::OpenStoreReadOnly(o.db);
  int restarts_done = 0, samples_done = 0;
  auto due = [&](int k, int n) { return o.reports * k / (n + 1); };
  auto last_poll = Clock::now();
  while (r.error.empty()) {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    const int64_t reports = shared.reports;
    if (samples_done < o.samples && reports >= due(samples_done + 1, o.samples)) {
      ++samples_done;
      sample("sample");
    }
    if (restarts_done < o.restarts && reports >= due(restarts_done + 1, o.restarts)) {
      const int sig = restarts_done % 2 == 0 ? SIGKILL : SIGTERM;
      ++restarts_done;
      sample(sig == SIGKILL ? "before SIGKILL" : "before SIGTERM");
      r.error = coordinator.Stop(sig);
      if (r.error.empty()) r.error = coordinator.Start();
      continue;
    }
    // The end from the store's study row: GetStudy would read the study's every trial and
    // segment (and forecast from them); polled twice a second, at 40,000 trials it took most
    // of the coordinator's CPU.
    if (Clock::now() - last_poll > std::chrono::milliseconds(500)) {
      last_poll = Clock::now();
      const auto study = watch->GetStudy(1);
      if (study && study->state != coordinator::StudyState::kRunning) break;
    }
    if (Clock::now() - t0 > std::chrono::duration<double>(o.timeout_s)) {
      r.error = "the study did not end within " + std::to_string(o.timeout_s) + " s";
    }
  }
  r.seconds = std::chrono::duration<double>(Clock::now() - t0).count();
  // With the workers still connected (idle), as at every other sample.
  if (r.error.empty()) sample("end");
  shared.done = true;
  slots.Join();
  if (!r.error.empty()) return r;
  grpc::Status s;
  const v1::Study study = GetStudy(coordinator.address(), &s);
  r.study_state = v1::StudyState_Name(study.state());
  r.ledger_dollars = study.cost_dollars();
  {
    auto stub = StudiesStub(coordinator.address());
    v1::ListTrialsRequest req;
    req.set_study_id(1);
    v1::ListTrialsResponse trials;
    if (grpc::Status t = stub->ListTrials(coordinator::MakeContext("").get(), req, &trials);
        !t.ok()) {
      return r.error = "ListTrials: " + t.error_message(), r;
    }
    r.trials = trials.trials_size();
    for (const auto& t : trials.trials()) r.trial_dollars += t.cost_dollars();
  }
  if (std::string e = coordinator.Stop(SIGTERM); !e.empty()) return r.error = e, r;
  r.counts = shared.counts;
  r.acked = static_cast<int64_t>(shared.acked.size());
  r.worker_errors = shared.errors;
  CheckStore(o, shared.acked, &r);
  return r;
}

std::string SampleTable(const Result& r) {
  std::string out =
      "| event | coordinator | reports | s | RSS (MB) | open fds | database (MB) |\n"
      "|---|---|---|---|---|---|---|\n";
  char line[256];
  for (const auto& s : r.samples) {
    std::snprintf(line, sizeof line, "| %s | %d | %lld | %.1f | %.1f | %lld | %.1f |\n",
                  s.event.c_str(), s.process, static_cast<long long>(s.reports), s.seconds,
                  static_cast<double>(s.rss_kb) / 1024.0, static_cast<long long>(s.fds),
                  static_cast<double>(s.db_bytes) / 1e6);
    out += line;
  }
  return out;
}

std::vector<std::string> Violations(const Options& o, const Result& r) {
  std::vector<std::string> out;
  auto check = [&out](bool ok, const std::string& what) {
    if (!ok) out.push_back(what);
  };
  auto n = [](auto v) { return std::to_string(v); };
  if (!r.error.empty()) return {r.error};
  check(r.study_state == "STUDY_COMPLETED", "the study ended " + r.study_state);
  for (const auto& e : r.worker_errors) out.push_back("a worker's call failed: " + e);
  // Every report acknowledged, through every restart, is stored as it was sent.
  check(r.acked >= o.reports * 9 / 10, "only " + n(r.acked) + " reports acknowledged");
  check(r.missing == 0, n(r.missing) + " of " + n(r.acked) + " acknowledged reports not stored");
  check(r.changed == 0, n(r.changed) + " acknowledged reports stored with another epoch or value");
  // The workers' lives happened: joins after leaves, reclaims and silent losses.
  check(r.counts.preempted > 0 && r.counts.vanished > 0 && r.counts.left > 0,
        "no worker was reclaimed, vanished or left");
  check(r.counts.registered > o.workers, "no worker joined after the first");
  // Every lease ended, and the ledger is the trials' costs (up to the order of summation).
  check(r.open_segments == 0, n(r.open_segments) + " segments still open");
  check(r.ledger_dollars > 0, "the ledger charged nothing");
  const double tolerance = 1e-9 * r.ledger_dollars;
  check(std::fabs(r.trial_dollars - r.ledger_dollars) <= tolerance,
        "ledger $" + n(r.ledger_dollars) + " but the trials' costs sum to $" + n(r.trial_dollars));
  check(std::fabs(r.store_dollars - r.ledger_dollars) <= tolerance,
        "ledger $" + n(r.ledger_dollars) + " but the store's segments price the trials at $" +
            n(r.store_dollars));
  // Flat after warm-up, from the second sample to the last: memory within 1.25x plus the
  // study's history (what its searcher and scheduler decide from: each trial's parameters and
  // curve, about 53 bytes a report at 10 epochs by heaptrack, bench/coordinator/README.md),
  // descriptors within a few (the workers' connections come and go), the database no faster
  // than linear in the reports (1.5x the second sample's bytes per report, which include the
  // fixed overhead).
  if (r.samples.size() < 3) return out.push_back("fewer than 3 samples"), out;
  const Sample& warm = r.samples[1];
  const Sample& last = r.samples.back();
  constexpr int64_t kHistoryBytesPerReport = 64;
  const int64_t rss_bound_kb =
      warm.rss_kb * 5 / 4 + kHistoryBytesPerReport * (last.reports - warm.reports) / 1024;
  check(last.rss_kb <= rss_bound_kb, "RSS grew from " + n(warm.rss_kb) + " KiB to " +
                                         n(last.rss_kb) + " KiB, past " + n(rss_bound_kb) +
                                         " KiB (1.25x and " + n(kHistoryBytesPerReport) +
                                         " bytes of history a report)");
  check(last.fds <= warm.fds + 16, "open fds grew from " + n(warm.fds) + " to " + n(last.fds));
  const double linear = static_cast<double>(warm.db_bytes) * static_cast<double>(last.reports) /
                        static_cast<double>(std::max<int64_t>(1, warm.reports));
  check(static_cast<double>(last.db_bytes) <= 1.5 * linear,
        "the database grew to " + n(last.db_bytes) + " bytes, past 1.5x linear (" +
            n(static_cast<int64_t>(linear)) + ")");
  return out;
}

std::string Summary(const Result& r) {
  char text[1024];
  std::snprintf(
      text, sizeof text,
      "%lld reports acknowledged, %lld stored rows, %lld missing, %lld changed; "
      "%lld trials, %lld open segments; ledger $%.6f, trials $%.6f, store $%.6f; "
      "workers: %lld registrations, %lld reclaimed, %lld vanished, %lld left, "
      "%lld leases lost; %.1f s\n",
      static_cast<long long>(r.acked), static_cast<long long>(r.stored),
      static_cast<long long>(r.missing), static_cast<long long>(r.changed),
      static_cast<long long>(r.trials), static_cast<long long>(r.open_segments), r.ledger_dollars,
      r.trial_dollars, r.store_dollars, static_cast<long long>(r.counts.registered),
      static_cast<long long>(r.counts.preempted), static_cast<long long>(r.counts.vanished),
      static_cast<long long>(r.counts.left), static_cast<long long>(r.counts.abandoned), r.seconds);
  return text;
}

}  // namespace sift::testing::soak
