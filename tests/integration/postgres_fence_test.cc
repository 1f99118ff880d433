// Fencing on PostgreSQL with real processes (issue 31): the coordinator serving a study is
// SIGSTOPped past its study lease, the other takes the study over, and the first, SIGCONTed,
// tries to write for it (a report, a completion, an acquisition): the database refuses every
// one, and the study ends under the second exactly as it would have without the pause (its
// records compared with a run that had none).
#include <gtest/gtest.h>
#include <signal.h>

#include <algorithm>
#include <chrono>
#include <future>
#include <map>
#include <set>
#include <thread>

#include "common/params_json.h"
#include "coordinator/rpc/client.h"
#include "coordinator/store/store.h"
#include "sift/v1/workers_service.grpc.pb.h"
#include "tests/integration/cluster_util.h"
#include "tests/integration/process.h"
#include "tests/integration/two_coordinators.h"
#include "tests/pg_server.h"

namespace sift::testing {
namespace postgres_fence_test {

constexpr int kTrials = 3, kEpochs = 2;
constexpr const char* kConfig = R"(name: pg-fence
objective: {metric: val_accuracy, direction: maximize}
search_space:
  lr: {type: float, low: 1.0e-3, high: 3.0e-3, scale: log}
trainer: {model: mlp, depth: 1, batch_size: 128}
searcher: {type: random}
scheduler: {type: fifo}
budget: {max_trials: 3, max_epochs: 2}
seed: 5
data: {train_limit: 1024, val_size: 256, test_limit: 256}
checkpoint: {every_epochs: 1}
)";

bool Serves(const std::string& address, int64_t study_id) {
  auto stub = v1::Studies::NewStub(coordinator::MakeChannel(address));
  v1::GetStudyRequest req;
  req.set_study_id(study_id);
  v1::Study study;
  return stub->GetStudy(coordinator::MakeContext("", 5).get(), req, &study).ok();
}

TEST(PostgresFence, AStalledCoordinatorHasEveryWriteRefusedAfterTheTakeover) {
  std::string why;
  const std::string url = NewTestDatabase(&why);
  if (url.empty()) GTEST_SKIP() << why;
  const std::string dir = TempDir("pg-fence");
  const std::vector<std::string> flags = {
      "--study-lease", "3", "--lease-timeout", "3", "--checkpoint-dir", dir + "/checkpoints"};
  TwoCoordinators pair;
  ASSERT_TRUE(StartTwoCoordinators(url, dir, flags, kConfig, &pair));
  auto& [first, second, first_address, second_address] = pair;

  // A worker of the first coordinator holds trial 0 when it stalls.
  auto workers = v1::Workers::NewStub(coordinator::MakeChannel(first_address));
  v1::RegisterWorkerRequest reg;
  reg.set_name("stale");
  reg.set_instance_type("c6i.large");
  reg.set_market(v1::MARKET_ON_DEMAND);
  reg.set_price_per_hour(0.085);
  v1::RegisterWorkerResponse registered;
  ASSERT_TRUE(workers->RegisterWorker(coordinator::MakeContext("").get(), reg, &registered).ok());
  const std::string worker = registered.worker_id();
  v1::AcquireTrialRequest acquire;
  acquire.set_worker_id(worker);
  v1::AcquireTrialResponse held;
  ASSERT_TRUE(workers->AcquireTrial(coordinator::MakeContext("").get(), acquire, &held).ok());
  ASSERT_EQ(held.status(), v1::AcquireTrialResponse::ASSIGNED);
  const std::string lease = held.assignment().lease_id();
  v1::RegisterWorkerResponse other;  // and another asks it for work as it wakes
  ASSERT_TRUE(workers->RegisterWorker(coordinator::MakeContext("").get(), reg, &other).ok());

  first->Signal(SIGSTOP);
  // The takeover, polled: the second serves the study once the first's lease has expired.
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
  while (!Serves(second_address, 1) && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  ASSERT_TRUE(Serves(second_address, 1)) << second->Log();

  // The stalled coordinator's workers write as if nothing happened: their calls wait in its
  // socket and reach it as it wakes. Its first renewal would find the lease taken and drop the
  // study, so that, for the calls to reach its writes, the test holds the lease row for a moment
  // (share-locked, as a fenced write's check does): the renewal waits, the calls are applied to
  // memory and queued, and their writes then meet the database. Without the fence they landed.
  auto report = std::async(std::launch::async, [&] {
    v1::ReportProgressRequest req;
    req.set_worker_id(worker);
    req.set_lease_id(lease);
    req.set_seq(1);
    req.set_epoch(1);
    (*req.mutable_metrics())["val_accuracy"] = 0.99;
    v1::ReportProgressResponse resp;
    return workers->ReportProgress(coordinator::MakeContext("", 30).get(), req, &resp);
  });
  auto complete = std::async(std::launch::async, [&] {
    v1::CompleteTrialRequest req;
    req.set_worker_id(worker);
    req.set_lease_id(lease);
    (*req.mutable_final_metrics())["val_accuracy"] = 0.99;
    v1::CompleteTrialResponse resp;
    return workers->CompleteTrial(coordinator::MakeContext("", 30).get(), req, &resp);
  });
  auto more = std::async(std::launch::async, [&] {
    v1::AcquireTrialRequest req;
    req.set_worker_id(other.worker_id());
    v1::AcquireTrialResponse resp;
    grpc::Status s = workers->AcquireTrial(coordinator::MakeContext("", 30).get(), req, &resp);
    return std::make_pair(s, resp);
  });
  auto store = coordinator::OpenStore(url);
  std::promise<bool> locked;
  std::promise<void> release;
  auto holder = std::async(std::launch::async, [&] {
    bool held_row = false;
    try {
      store->Atomically([&] {
        store->CheckStudyLease(1, /*epoch=*/2);  // the second's: taken once, from the first
        held_row = true;
        locked.set_value(true);
        release.get_future().wait();
      });
    } catch (const std::exception& e) {
      ADD_FAILURE() << e.what();
      if (!held_row) locked.set_value(false);
    }
  });
  ASSERT_TRUE(locked.get_future().get());
  // The pauses below only give the calls time to arrive and be applied (for the unfenced code
  // to write them); what is asserted holds in any order.
  std::this_thread::sleep_for(std::chrono::milliseconds(200));
  first->Signal(SIGCONT);
  std::this_thread::sleep_for(std::chrono::milliseconds(500));
  release.set_value();
  holder.get();
  const grpc::Status reported = report.get(), completed = complete.get();
  const auto [acquired, assignment] = more.get();
  EXPECT_FALSE(reported.ok()) << "the stalled coordinator recorded a report";
  EXPECT_FALSE(completed.ok()) << "the stalled coordinator recorded a completion";
  EXPECT_FALSE(acquired.ok() && assignment.status() == v1::AcquireTrialResponse::ASSIGNED)
      << "the stalled coordinator handed out trial " << assignment.assignment().trial_number();
  EXPECT_FALSE(Serves(first_address, 1)) << first->Log();

  // Real workers finish the study under its new owner.
  std::vector<std::unique_ptr<Process>> trainers;
  for (int i = 0; i < 2; ++i) {
    trainers.push_back(std::make_unique<Process>(
        std::vector<std::string>{BinDir() + "/sift-worker", "--coordinator", second_address,
                                 "--name", "w" + std::to_string(i), "--threads", "1", "--cache-dir",
                                 dir + "/cache"},
        dir + "/worker-" + std::to_string(i) + ".log"));
  }
  const v1::Study study = WaitForStudyEnd(second_address, /*timeout_s=*/120);
  ASSERT_EQ(study.state(), v1::STUDY_COMPLETED) << second->Log() << trainers[0]->Log();
  for (auto& t : trainers) t->Signal(SIGTERM);
  for (auto& t : trainers) t->Wait(30);
  for (auto* c : {first.get(), second.get()}) {
    c->Signal(SIGTERM);
    EXPECT_EQ(c->Wait(30), 0) << c->Log();
  }

  // Nothing of the stalled coordinator's writes is in the records: no report on its lease, its
  // lease's segment ended by the new owner (expired), no other segment for its workers.
  const auto reports = store->ListReports(1);
  std::set<std::pair<int64_t, int64_t>> epochs;
  for (const auto& r : reports) {
    EXPECT_NE(r.lease_id, lease) << "trial " << r.number << " epoch " << r.epoch;
    EXPECT_TRUE(epochs.insert({r.number, r.epoch}).second)
        << "trial " << r.number << " epoch " << r.epoch << " reported twice";
    EXPECT_EQ(r.decision, "CONTINUE");
  }
  EXPECT_EQ(epochs.size(), static_cast<size_t>(kTrials * kEpochs));
  const auto trials = store->ListTrials(1);
  ASSERT_EQ(trials.size(), static_cast<size_t>(kTrials));
  for (const auto& t : trials) {
    EXPECT_EQ(t.state, search::TrialState::kCompleted) << "trial " << t.number;
    const auto accuracy = t.final_metrics.find("val_accuracy");
    EXPECT_FALSE(accuracy != t.final_metrics.end() && accuracy->second == 0.99)
        << "trial " << t.number << " has the stalled coordinator's final metrics";
  }
  // No trial ran twice at once: each trial's segments follow one another.
  std::map<int64_t, double> busy_until;
  for (const auto& seg : store->ListSegments(1)) {  // in start order
    ASSERT_TRUE(seg.end.has_value()) << seg.lease_id << " never closed";
    if (seg.lease_id == lease) {
      EXPECT_EQ(seg.end_reason, "expired");
    } else {
      EXPECT_NE(seg.worker_id, worker) << seg.lease_id;
      EXPECT_NE(seg.worker_id, other.worker_id()) << seg.lease_id;
    }
    auto [until, fresh] = busy_until.emplace(seg.number, *seg.end);
    if (!fresh) {
      EXPECT_GE(seg.start, until->second) << "trial " << seg.number << " ran twice at once";
      until->second = std::max(until->second, *seg.end);
    }
  }

  // The records equal a run without the pause (one embedded coordinator, its own workers):
  // the same trials with the same parameters, and every epoch's metrics bitwise.
  std::string output;
  ASSERT_EQ(RunCommand({BinDir() + "/sift", "run", dir + "/study.yaml", "--workers", "2",
                        "--threads-per-worker", "1", "--out", dir + "/reference"},
                       &output, /*timeout_s=*/180),
            0)
      << output;
  auto reference = coordinator::OpenStoreReadOnly(dir + "/reference/sift.db");
  const auto expected_trials = reference->ListTrials(1);
  ASSERT_EQ(expected_trials.size(), trials.size());
  for (size_t i = 0; i < trials.size(); ++i) {
    EXPECT_EQ(common::ParamsToJsonText(trials[i].params),
              common::ParamsToJsonText(expected_trials[i].params))
        << "trial " << i;
    EXPECT_EQ(trials[i].state, expected_trials[i].state) << "trial " << i;
  }
  std::map<std::pair<int64_t, int64_t>, std::map<std::string, double>> curve, expected_curve;
  for (const auto& r : reports) curve[{r.number, r.epoch}] = r.metrics;
  for (const auto& r : reference->ListReports(1)) expected_curve[{r.number, r.epoch}] = r.metrics;
  ASSERT_EQ(curve.size(), expected_curve.size());
  for (const auto& [at, metrics] : expected_curve) {
    for (const char* name : {"val_accuracy", "val_loss", "train_loss"}) {
      EXPECT_EQ(curve[at].at(name), metrics.at(name))
          << name << " of trial " << at.first << " at epoch " << at.second;
    }
  }
}

}  // namespace postgres_fence_test
}  // namespace sift::testing
