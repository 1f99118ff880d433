// Population-based training end to end (issue 27, section 2): `sift run` trains a population on a
// Fashion-MNIST slice, the bottom member copies a top one's checkpoint at each interval, and
// every segment's params are stored; a standalone coordinator killed -9 mid-study and restarted
// on its database ends with the same lineage and the same curves, bit for bit.
#include <gtest/gtest.h>
#include <signal.h>

#include <chrono>
#include <map>
#include <nlohmann/json.hpp>
#include <thread>
#include <tuple>

#include "common/params_json.h"
#include "coordinator/rpc/client.h"
#include "coordinator/store/store.h"
#include "tests/free_port.h"
#include "tests/integration/cluster_util.h"
#include "tests/integration/process.h"

namespace sift::testing {
namespace pbt_run_test {

constexpr const char* kConfig = R"(name: pbt
objective: {metric: val_accuracy, direction: maximize}
search_space:
  lr: {type: float, low: 1.0e-4, high: 3.0e-2, scale: log}
  weight_decay: {type: float, low: 0.0, high: 0.01}
trainer: {model: mlp, depth: 1, hidden: 32, batch_size: 64, optimizer: adam, precision: fp32}
searcher: {type: random}
scheduler: {type: pbt, population: 4, interval_epochs: 1, quantile: 0.25}
budget: {max_epochs: 4}
seed: 3
data: {train_limit: 2048, val_size: 512, test_limit: 500}
)";

// (trial, epoch) -> what the database says happened there.
using Lineage = std::map<std::pair<int64_t, int64_t>, std::tuple<int64_t, std::string>>;
using Curves = std::map<std::pair<int64_t, int64_t>, double>;

Lineage LineageOf(coordinator::Store& store) {
  Lineage out;
  for (const auto& e : store.ListExploits(1)) {
    out[{e.number, e.epoch}] = {e.from_trial, common::ParamsToJsonText(e.params_after)};
  }
  return out;
}

Curves CurvesOf(coordinator::Store& store) {
  Curves out;
  for (const auto& r : store.ListReports(1))
    out[{r.number, r.epoch}] = r.metrics.at("val_accuracy");
  return out;
}

TEST(PbtRun, SiftRunCopiesTopMembersAndRecordsEachSegment) {
  const std::string dir = TempDir("pbt-run");
  const std::string config = WriteFile(dir + "/pbt.yaml", kConfig);
  std::string output;
  ASSERT_EQ(RunCommand({BinDir() + "/sift", "run", config, "--out", dir + "/out", "--workers", "2"},
                       &output, /*timeout_s=*/300),
            0)
      << output;
  auto store = coordinator::OpenStoreReadOnly(dir + "/out/sift.db");
  const auto exploits = store->ListExploits(1);
  ASSERT_FALSE(exploits.empty()) << output;
  const Curves curves = CurvesOf(*store);
  const auto trials = store->ListTrials(1);
  ASSERT_EQ(trials.size(), 4u);
  std::map<int64_t, search::Params> current;  // each member's params, segment by segment
  for (const auto& e : exploits) {
    SCOPED_TRACE(e.reason);
    // The donor ranked above the member at the interval, and both had reached it.
    ASSERT_TRUE(curves.count({e.number, e.epoch}) && curves.count({e.from_trial, e.epoch}));
    EXPECT_GT(curves.at({e.from_trial, e.epoch}), curves.at({e.number, e.epoch}));
    // The member trained on from the interval epoch, on a lease that started there.
    for (int64_t epoch = e.epoch + 1; epoch <= 4; ++epoch) {
      EXPECT_TRUE(curves.count({e.number, epoch})) << "epoch " << epoch;
    }
    bool resumed_there = false;
    for (const auto& g : store->ListSegments(1)) {
      resumed_there |= g.number == e.number && g.start_epoch == e.epoch && g.start >= e.created_at;
    }
    EXPECT_TRUE(resumed_there);
    // Segments chain: each one's params are the previous segment's explored ones.
    if (current.count(e.number)) {
      EXPECT_EQ(e.params_before, current[e.number]);
    }
    EXPECT_NE(e.params_before, e.params_after);
    current[e.number] = e.params_after;
  }
  for (const auto& [number, params] : current) {
    EXPECT_EQ(trials[number].params, params) << "the stored params are the last segment's";
  }
  for (const auto& t : trials) EXPECT_EQ(search::ToString(t.state), std::string("COMPLETED"));
  // The closing report and results.json carry the lineage.
  EXPECT_NE(output.find("pbt: " + std::to_string(exploits.size()) + " exploits"), std::string::npos)
      << output;
  EXPECT_NE(output.find("hyperparameter schedule (through the members it copied)"),
            std::string::npos);
  const auto j = nlohmann::json::parse(Read(dir + "/out/results.json"));
  EXPECT_EQ(j["pbt"]["exploits"].size(), exploits.size());
  EXPECT_EQ(j["pbt"]["lineage"].size(), 4u);
}

// A standalone coordinator and two workers; `kill_after_exploit`: kill -9 the coordinator once
// the first exploit is stored, and restart it on the same address and database; `spot`: the
// workers' spot simulator reclaims leases (with notice or by SIGKILL), and a reclaimed worker is
// replaced by a fresh one.
void RunCluster(const std::string& dir, bool kill_after_exploit, bool spot, Lineage* lineage,
                Curves* curves, int64_t* interrupted = nullptr) {
  const std::string address = "127.0.0.1:" + std::to_string(FreePort());
  const std::string config = WriteFile(dir + "/pbt.yaml", kConfig);
  int starts = 0;
  std::unique_ptr<Process> coordinator;
  auto start = [&] {
    coordinator = std::make_unique<Process>(
        std::vector<std::string>{BinDir() + "/sift", "coordinator", "--listen", address, "--db",
                                 dir + "/sift.db", "--prices",
                                 SourceDir() + "/examples/prices.json", "--lease-timeout", "2"},
        dir + "/coordinator-" + std::to_string(starts++) + ".log");
    for (int i = 0; i < 200 && coordinator->Log().find("listening on") == std::string::npos; ++i) {
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
  };
  start();
  std::string out;
  ASSERT_EQ(RunCommand({BinDir() + "/sift", "submit", config, "--coordinator", address}, &out), 0)
      << out << coordinator->Log();
  std::vector<std::unique_ptr<Process>> workers(2);
  int worker_starts = 0;
  auto start_worker = [&](size_t slot) {
    const std::vector<std::string> argv =
        WorkerArgv(address, "w" + std::to_string(slot), spot ? "spot" : "on-demand", dir,
                   spot ? 0.5 : 0, 500 + worker_starts);
    workers[slot] = std::make_unique<Process>(
        argv, dir + "/worker-" + std::to_string(worker_starts++) + ".log");
  };
  for (size_t slot = 0; slot < workers.size(); ++slot) start_worker(slot);
  bool killed = false;
  v1::Study study;
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::minutes(4);
  while (std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    for (size_t slot = 0; slot < workers.size(); ++slot) {
      if (!workers[slot]->Running()) start_worker(slot);
    }
    if (kill_after_exploit && !killed &&
        !coordinator::OpenStoreReadOnly(dir + "/sift.db")->ListExploits(1).empty()) {
      coordinator->Signal(SIGKILL);
      coordinator->Wait(10);
      start();
      killed = true;
      continue;
    }
    auto stub = v1::Studies::NewStub(coordinator::MakeChannel(address));
    v1::GetStudyRequest req;
    req.set_study_id(1);
    if (stub->GetStudy(coordinator::MakeContext("", 2).get(), req, &study).ok() &&
        study.state() != v1::STUDY_RUNNING) {
      break;
    }
  }
  EXPECT_EQ(study.state(), v1::STUDY_COMPLETED) << coordinator->Log();
  EXPECT_EQ(killed, kill_after_exploit);
  for (auto& w : workers) w->Signal(SIGTERM);
  coordinator->Signal(SIGTERM);
  coordinator->Wait(20);
  auto store = coordinator::OpenStoreReadOnly(dir + "/sift.db");
  *lineage = LineageOf(*store);
  *curves = CurvesOf(*store);
  if (interrupted != nullptr) {
    *interrupted = 0;
    for (const auto& g : store->ListSegments(1)) {
      *interrupted += g.end_reason == "preempted" || g.end_reason == "expired";
    }
  }
}

TEST(PbtRun, ACoordinatorKilledMidStudyAndSpotReclaimsEndWithTheSameLineageAndCurves) {
  Lineage calm, restarted, chaos;
  Curves calm_curves, restarted_curves, chaos_curves;
  int64_t preemptions = 0;
  RunCluster(TempDir("pbt-calm"), false, false, &calm, &calm_curves);
  RunCluster(TempDir("pbt-kill"), true, false, &restarted, &restarted_curves);
  RunCluster(TempDir("pbt-chaos"), true, true, &chaos, &chaos_curves, &preemptions);
  ASSERT_FALSE(calm.empty());
  EXPECT_EQ(calm_curves.size(), 16u);  // four members, four epochs each, reported once
  EXPECT_EQ(restarted, calm);
  EXPECT_EQ(restarted_curves, calm_curves) << "the same curves, bit for bit";
  // Members reclaimed mid-interval (with notice, or their VM gone) resume from their own
  // checkpoints or retrain; the plan is the same.
  EXPECT_GT(preemptions, 0);
  EXPECT_EQ(chaos, calm);
  EXPECT_EQ(chaos_curves, calm_curves);
}

// A command trial whose "weights" are one number in its checkpoint folder, grown each epoch by
// its `rate` (read from SIFT_PARAMS when the program starts, so on every resume too).
constexpr const char* kGrower = R"(import json, os, time
rate = json.loads(os.environ["SIFT_PARAMS"])["rate"]
state = os.path.join(os.environ["SIFT_CHECKPOINT_DIR"], "state.json")
s = json.load(open(state)) if os.path.exists(state) else {"epoch": 0, "w": 0.0}
for epoch in range(s["epoch"] + 1, int(os.environ["SIFT_MAX_EPOCHS"]) + 1):
    time.sleep(0.2)
    s = {"epoch": epoch, "w": s["w"] + rate}
    json.dump(s, open(state + ".tmp", "w"))
    os.replace(state + ".tmp", state)
    print(json.dumps({"sift": {"epoch": epoch, "score": s["w"]}}), flush=True)
)";

// The copied member continues from the donor's folder (its number at the interval) with its own
// explored rate: the program re-read SIFT_PARAMS on resume.
TEST(PbtRun, ACommandTrialResumesFromTheDonorsFolderWithItsNewParams) {
  const std::string dir = TempDir("pbt-command");
  WriteFile(dir + "/grow.py", kGrower);
  const std::string config =
      WriteFile(dir + "/pbt.yaml",
                "name: grow\n"
                "trial: {command: [python3, " +
                    dir +
                    "/grow.py]}\n"
                    "objective: {metric: score, direction: maximize}\n"
                    "search_space:\n  rate: {type: float, low: 0.01, high: 1.0, scale: log}\n"
                    "scheduler: {type: pbt, population: 4, interval_epochs: 1, mutable: [rate]}\n"
                    "budget: {max_epochs: 3}\nseed: 5\n");
  std::string output;
  ASSERT_EQ(RunCommand({BinDir() + "/sift", "run", config, "--out", dir + "/out", "--workers", "2"},
                       &output, /*timeout_s=*/300),
            0)
      << output;
  auto store = coordinator::OpenStoreReadOnly(dir + "/out/sift.db");
  std::map<std::pair<int64_t, int64_t>, double> score;
  for (const auto& r : store->ListReports(1)) score[{r.number, r.epoch}] = r.metrics.at("score");
  const auto exploits = store->ListExploits(1);
  ASSERT_FALSE(exploits.empty()) << output;
  for (const auto& e : exploits) {
    SCOPED_TRACE(e.reason);
    ASSERT_TRUE(score.count({e.number, e.epoch + 1}));
    double rate = 0;
    ASSERT_TRUE(search::AsDouble(e.params_after.at("rate"), &rate));
    EXPECT_NEAR(score.at({e.number, e.epoch + 1}), score.at({e.from_trial, e.epoch}) + rate, 1e-9);
  }
}

}  // namespace pbt_run_test
}  // namespace sift::testing
