// The chaos test: three workers on 127.0.0.1 under a seeded spot simulator (a 30% chance per
// lease of a reclaim, alternately with notice and SIGKILL), plus one certain real SIGTERM and one
// real SIGKILL to busy workers, and one kill -9 of the coordinator, restarted on the same
// database. Random search plus plateau stopping decide independently of timing, so the
// study must end exactly as a fault-free run with the same seed: same trials, the same
// per-epoch metrics bit for bit, the same best configuration (and, with several objectives,
// the same Pareto set and hypervolume).
#include <gtest/gtest.h>
#include <signal.h>
#include <unistd.h>

#include <chrono>
#include <cmath>
#include <fstream>
#include <map>
#include <string>
#include <thread>

#include "common/params_json.h"
#include "coordinator/rpc/client.h"
#include "coordinator/store/json.h"
#include "coordinator/store/store.h"
#include "tests/free_port.h"
#include "tests/integration/process.h"
#include "tests/pg_server.h"

namespace sift::testing {
namespace chaos_test {

// Everything but the goal, shared by the two studies below.
constexpr const char* kStudy = R"(search_space:
  lr: {type: float, low: 3.0e-4, high: 3.0e-3, scale: log}
  hidden: {type: int, low: 32, high: 96}
  dropout: {type: float, low: 0.0, high: 0.3}
trainer: {model: mlp, depth: 1, batch_size: 64}
searcher: {type: random}
scheduler: {type: plateau, patience: 1, min_delta: 0.01}
budget: {max_trials: 12, max_epochs: 4}
seed: 11
data: {train_limit: 6144, val_size: 512, test_limit: 500}
checkpoint: {every_epochs: 2}
)";

const std::string kConfig = std::string(R"(name: chaos
objective: {metric: val_accuracy, direction: maximize}
)") + kStudy;

// The same study for the cost/accuracy frontier: two objectives, one of them the parameter
// count the worker measures, and a constraint; plateau per objective, which like random search
// decides from each trial's own curve, so faults must change nothing but the bill here too.
const std::string kFrontierConfig = std::string(R"(name: chaos-frontier
objectives:
  - {metric: val_accuracy, direction: maximize}
  - {metric: params}
constraints:
  - {metric: val_loss, max: 0.8}
)") + kStudy;

struct Outcome {
  std::map<int64_t, std::string> params, state;
  // trial -> epoch -> (val_accuracy, val_loss, train_loss), compared bitwise
  std::map<int64_t, std::map<int64_t, std::tuple<double, double, double>>> curves;
  int64_t best = -1;
  int64_t pareto_trials = -1;  // the study's Pareto set as the coordinator reports it
  double hypervolume = -1;
  int64_t duplicate_reports = 0, unfinished = 0;
  int64_t preemptions = 0, expirations = 0, resumes = 0;
  int64_t retrained =
      0;  // epochs reported before a VM was lost, retrained from an older checkpoint
  double dollars = 0, wasted = 0, max_epoch_seconds = 0;
  // Over interrupted leases: the work lost, less the data load a fresh VM does in its first
  // lease; apart for leases open during the coordinator's outage.
  double max_wasted_seconds = 0, max_wasted_outage_seconds = 0;
  double outage_seconds = 0;  // from the coordinator's kill -9 to its restart listening
  double study_dollars = 0, trial_dollars = 0;
};

class Cluster {
 public:
  // `db`: a postgresql:// URL, or "" for a SQLite file in `dir`.
  Cluster(std::string dir, bool chaos, std::string db = "", std::string config = kConfig)
      : dir_(std::move(dir)),
        chaos_(chaos),
        config_(std::move(config)),
        port_(FreePort()),
        db_(db.empty() ? dir_ + "/sift.db" : std::move(db)) {}

  Outcome Run() {
    { std::ofstream(dir_ + "/study.yaml") << config_; }
    StartCoordinator();
    std::string out;
    if (RunCommand({BinDir() + "/sift", "submit", dir_ + "/study.yaml", "--coordinator", Address()},
                   &out) != 0) {
      ADD_FAILURE() << out << coordinator_->Log();
      return {};
    }
    for (int slot = 0; slot < 3; ++slot) StartWorker(slot);
    bool coordinator_killed = false, notice_sent = false, vm_killed = false;
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::minutes(4);
    while (std::chrono::steady_clock::now() < deadline) {
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
      // A reclaimed VM is replaced by a fresh one, as a managed instance group would.
      for (int slot = 0; slot < 3; ++slot) {
        if (!workers_[slot]->Running()) StartWorker(slot);
      }
      v1::Study study;
      if (!GetStudy(&study)) continue;
      // Besides the simulator's random reclaims, one certain of each kind: a real SIGTERM and a
      // real SIGKILL to workers that are busy training (all three are until the last trials).
      if (chaos_ && !notice_sent && study.trials_finished() >= 1) {
        workers_[0]->Signal(SIGTERM);
        notice_sent = true;
      }
      if (chaos_ && coordinator_killed && !vm_killed && study.trials_finished() >= 6) {
        workers_[1]->Signal(SIGKILL);
        vm_killed = true;
      }
      if (chaos_ && !coordinator_killed && study.trials_finished() >= 3) {
        outage_from_ = UnixNow();
        coordinator_->Signal(SIGKILL);  // kill -9, mid-study
        coordinator_->Wait(10);
        std::this_thread::sleep_for(std::chrono::milliseconds(700));
        StartCoordinator();
        outage_to_ = UnixNow();
        coordinator_killed = true;
        continue;
      }
      if (study.state() != v1::STUDY_RUNNING) break;
    }
    EXPECT_TRUE(!chaos_ || coordinator_killed);
    Outcome o = Collect();
    o.outage_seconds = outage_to_ - outage_from_;
    for (auto& w : workers_) w->Signal(SIGTERM);
    coordinator_->Signal(SIGTERM);
    coordinator_->Wait(20);
    return o;
  }

 private:
  static double UnixNow() {
    return std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch())
        .count();
  }

  std::string Address() const { return "127.0.0.1:" + std::to_string(port_); }

  void StartCoordinator() {
    std::vector<std::string> argv = {BinDir() + "/sift",
                                     "coordinator",
                                     "--listen",
                                     Address(),
                                     "--db",
                                     db_,
                                     "--prices",
                                     SourceDir() + "/examples/prices.json",
                                     "--lease-timeout",
                                     "2"};
    if (coordinator::IsPostgresUrl(db_)) {
      argv.insert(argv.end(), {"--checkpoint-dir", dir_ + "/checkpoints"});
    }
    coordinator_ = std::make_unique<Process>(
        argv, dir_ + "/coordinator-" + std::to_string(coordinator_starts_++) + ".log");
    for (int i = 0; i < 200 && coordinator_->Log().find("listening on") == std::string::npos; ++i) {
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
  }

  void StartWorker(int slot) {
    const std::vector<std::string> argv = WorkerArgv(Address(), "w" + std::to_string(slot), "spot",
                                                     dir_, chaos_ ? 0.3 : 0, 1000 + worker_starts_);
    const std::string log = dir_ + "/worker-" + std::to_string(worker_starts_++) + ".log";
    if (static_cast<int>(workers_.size()) <= slot) workers_.resize(slot + 1);
    workers_[slot] = std::make_unique<Process>(argv, log);
  }

  bool GetStudy(v1::Study* study) {
    auto stub = v1::Studies::NewStub(coordinator::MakeChannel(Address()));
    v1::GetStudyRequest req;
    req.set_study_id(1);
    return stub->GetStudy(coordinator::MakeContext("", 2).get(), req, study).ok();
  }

  Outcome Collect() {
    Outcome o;
    // What the coordinator says, over gRPC: the study's total and each trial's dollars.
    v1::Study study;
    EXPECT_TRUE(GetStudy(&study));
    o.study_dollars = study.cost_dollars();
    auto stub = v1::Studies::NewStub(coordinator::MakeChannel(Address()));
    v1::ListTrialsRequest req;
    req.set_study_id(1);
    v1::ListTrialsResponse trials;
    EXPECT_TRUE(stub->ListTrials(coordinator::MakeContext("").get(), req, &trials).ok());
    for (const auto& t : trials.trials()) o.trial_dollars += t.cost_dollars();
    if (study.has_best()) o.best = study.best_trial_number();
    o.pareto_trials = study.pareto_trials();
    if (study.has_hypervolume()) o.hypervolume = study.hypervolume();

    std::map<std::string, double> load_seconds;  // worker id -> its one data load
    for (int i = 0; i < worker_starts_; ++i) {
      std::ifstream log(dir_ + "/worker-" + std::to_string(i) + ".log");
      std::string id;
      for (std::string line; std::getline(log, line);) {
        o.retrained += line.find("retrained epoch") != std::string::npos;
        if (const auto at = line.find("registered as "); at != std::string::npos) {
          id = line.substr(at + 14, line.find(' ', at + 14) - at - 14);
        }
        if (const auto at = line.find(" loaded in "); at != std::string::npos) {
          load_seconds[id] = std::stod(line.substr(at + 11));
        }
      }
    }
    // What the database holds, read through the Store (SQLite or PostgreSQL alike).
    auto store = coordinator::OpenStoreReadOnly(db_);
    for (const auto& t : store->ListTrials(1)) {
      o.params[t.number] = common::ParamsToJsonText(t.params);
      const std::string s = search::ToString(t.state);
      o.state[t.number] = s;
      o.unfinished += s != "COMPLETED" && s != "STOPPED";
    }
    auto metric = [](const coordinator::ReportRecord& r, const char* name) {
      auto it = r.metrics.find(name);
      return it == r.metrics.end() ? 0.0 : it->second;
    };
    for (const auto& r : store->ListReports(1)) {
      auto& curve = o.curves[r.number];
      o.duplicate_reports += curve.count(r.epoch);
      curve[r.epoch] = {metric(r, "val_accuracy"), metric(r, "val_loss"), metric(r, "train_loss")};
      o.max_epoch_seconds = std::max(o.max_epoch_seconds, metric(r, "epoch_seconds"));
    }
    const auto segments = store->ListSegments(1);
    std::map<std::string, double> first_start;  // worker id -> its first lease's start
    for (const auto& g : segments) {
      auto [it, fresh] = first_start.emplace(g.worker_id, g.start);
      if (!fresh) it->second = std::min(it->second, g.start);
    }
    for (const auto& g : segments) {
      o.preemptions += g.end_reason == "preempted";
      o.expirations += g.end_reason == "expired";
      o.resumes += g.start_epoch > 0;
      const double load = g.start == first_start[g.worker_id] ? load_seconds[g.worker_id] : 0;
      const bool in_outage = g.end && g.start<outage_to_&& * g.end> outage_from_;
      double& worst = in_outage ? o.max_wasted_outage_seconds : o.max_wasted_seconds;
      worst = std::max(worst, g.wasted_seconds - load);
      if (g.end) o.dollars += (*g.end - g.start) * g.price_per_hour / 3600;
      o.wasted += g.wasted_seconds * g.price_per_hour / 3600;
    }
    return o;
  }

  std::string dir_;
  bool chaos_;
  std::string config_;
  int port_;
  std::string db_;
  int coordinator_starts_ = 0, worker_starts_ = 0;
  double outage_from_ = 0, outage_to_ = 0;  // unix seconds, as the segments' times
  std::unique_ptr<Process> coordinator_;
  std::vector<std::unique_ptr<Process>> workers_;
};

// Prints the chaos run's figures and checks that it ended exactly as the fault-free run.
void ExpectOnlyTheBillChanged(const Outcome& calm, const Outcome& chaos) {
  std::printf(
      "chaos summary: %lld preemptions with notice, %lld lost leases (SIGKILL), %lld resumes, "
      "%lld epochs retrained silently, 1 coordinator kill -9; $%.8f total, $%.8f wasted "
      "(%.1f%%); fault-free run $%.8f; worst interruption lost %.2f s beyond its data load "
      "(%.2f s for leases open in the %.2f s outage)\n",
      static_cast<long long>(chaos.preemptions), static_cast<long long>(chaos.expirations),
      static_cast<long long>(chaos.resumes), static_cast<long long>(chaos.retrained), chaos.dollars,
      chaos.wasted, chaos.dollars > 0 ? 100 * chaos.wasted / chaos.dollars : 0.0, calm.dollars,
      chaos.max_wasted_seconds, chaos.max_wasted_outage_seconds, chaos.outage_seconds);

  ASSERT_EQ(calm.params.size(), 12u);
  EXPECT_EQ(calm.unfinished, 0);
  EXPECT_EQ(chaos.unfinished, 0) << "every trial ends in a terminal state";
  EXPECT_GE(chaos.preemptions, 1) << "no reclaim with notice happened";
  EXPECT_GE(chaos.expirations, 1) << "no VM vanished (SIGKILL)";
  // The same trials, ending the same way, with the same curves bit for bit.
  EXPECT_EQ(chaos.params, calm.params);
  EXPECT_EQ(chaos.state, calm.state);
  EXPECT_EQ(chaos.curves, calm.curves);
  EXPECT_EQ(chaos.best, calm.best);
  EXPECT_EQ(chaos.pareto_trials, calm.pareto_trials);
  EXPECT_EQ(chaos.hypervolume, calm.hypervolume);
  // No report lost or applied twice.
  EXPECT_EQ(chaos.duplicate_reports, 0);
  // Wasted work per interruption, less a fresh VM's data load in its first lease (1.6-4 s when
  // three start at once on two cores), is at most one checkpoint interval (two epochs here),
  // plus how long a silent VM's last sign of life can trail its death: a heartbeat period
  // (tolerance 1 s). A lease open during the coordinator's outage also holds the outage (a
  // restarted coordinator bills open leases up to its restart; a live worker waits it out)
  // and the worker's reconnection after it (gRPC reconnect backoff, at most 2 s; 0.5 s slack).
  EXPECT_LE(chaos.max_wasted_seconds, 2 * chaos.max_epoch_seconds + 1.0)
      << "epoch " << chaos.max_epoch_seconds << " s";
  EXPECT_LE(chaos.max_wasted_outage_seconds,
            2 * chaos.max_epoch_seconds + chaos.outage_seconds + 2.5)
      << "epoch " << chaos.max_epoch_seconds << " s, coordinator outage " << chaos.outage_seconds
      << " s";
  // The ledger balances: segments, trials and the study agree.
  EXPECT_NEAR(chaos.trial_dollars, chaos.study_dollars, 1e-9);
  EXPECT_NEAR(chaos.dollars, chaos.study_dollars, 1e-9);
}

TEST(Chaos, PreemptionsAndACoordinatorCrashChangeNothingButTheBill) {
  Outcome calm = Cluster(TempDir("chaos-reference"), /*chaos=*/false).Run();
  Outcome chaos = Cluster(TempDir("chaos"), /*chaos=*/true).Run();
  ExpectOnlyTheBillChanged(calm, chaos);
}

// With two objectives and a constraint: the Pareto set and its hypervolume, read back over gRPC
// after the coordinator's kill -9 and replay, are those of the fault-free run.
TEST(Chaos, AFrontierStudyEndsWithTheSameParetoSet) {
  Outcome calm = Cluster(TempDir("chaos-frontier-reference"), false, "", kFrontierConfig).Run();
  Outcome chaos = Cluster(TempDir("chaos-frontier"), true, "", kFrontierConfig).Run();
  EXPECT_GE(calm.pareto_trials, 2) << "a frontier of one trial would prove little";
  EXPECT_GT(calm.hypervolume, 0);
  ExpectOnlyTheBillChanged(calm, chaos);
}

// The same on PostgreSQL (both runs, each on a fresh database of the test binary's server): the
// coordinator's kill -9 and restart on the same address takes its study's lease straight back.
TEST(Chaos, OnPostgresTooNothingButTheBillChanges) {
  std::string why;
  PgServer* server = nullptr;
#ifdef SIFT_HAVE_POSTGRES
  server = PgServer::Get(&why);
#else
  why = "this sift was built without libpqxx (scripts/install-deps.sh installs it)";
#endif
  if (!server) GTEST_SKIP() << why;
  Outcome calm =
      Cluster(TempDir("chaos-pg-reference"), /*chaos=*/false, server->NewDatabase()).Run();
  Outcome chaos = Cluster(TempDir("chaos-pg"), /*chaos=*/true, server->NewDatabase()).Run();
  ExpectOnlyTheBillChanged(calm, chaos);
}

}  // namespace chaos_test
}  // namespace sift::testing
