// The Coordinator without gRPC: study life cycle, leases, idempotence, budgets, restart.
#include "coordinator/core/coordinator.h"

#include <gtest/gtest.h>
#include <signal.h>
#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <limits>
#include <thread>

#include "common/checkpoint_names.h"
#include "tests/coordinator/coordinator_fixture.h"

namespace sift::coordinator {
namespace {

using search::Action;
using search::TrialState;

std::string Config(const std::string& scheduler = "{type: fifo}", int trials = 3, int epochs = 3,
                   const std::string& budget_extra = "") {
  return "name: t\n"
         "search_space:\n"
         "  lr: {type: float, low: 1.0e-4, high: 1.0e-1, scale: log}\n"
         "  hidden: {type: int, low: 16, high: 64}\n"
         "trainer: {model: mlp}\n"
         "scheduler: " +
         scheduler +
         "\n"
         "budget: {max_trials: " +
         std::to_string(trials) + ", max_epochs: " + std::to_string(epochs) + budget_extra +
         "}\n"
         "seed: 5\n";
}

class CoordinatorTest : public testing::CoordinatorFixture {
 protected:
  CoordinatorTest() : CoordinatorFixture("sift-coord") {}
  void SetUp() override {
    CoordinatorFixture::SetUp();
    Open();
  }
  // `embedded`: as `sift run` configures it; otherwise as a standalone `sift coordinator`.
  void Open(bool embedded = true) {
    CoordinatorOptions o;
    o.lease_timeout_s = 10;
    o.shutdown_when_idle = embedded;
    o.fail_unrunnable_studies = embedded;
    o.checkpoint_dir = db_.string() + ".checkpoints";
    Reopen(o);
  }
  // Reports epoch `epoch`, checkpointed under its epoch name as workers do by default.
  search::Decision Report(const std::string& w, const Assignment& a, int64_t seq, int64_t epoch,
                          double acc, bool checkpointed = true) {
    search::Decision d;
    Status s = c_->ReportProgress(w, a.lease_id, seq, epoch, {{"val_accuracy", acc}},
                                  checkpointed ? common::EpochCheckpointName(a.number, epoch) : "", &d);
    EXPECT_TRUE(s.ok()) << s.message;
    return d;
  }

  // Scores the test evaluation a completed study owes its best trial, as a worker would.
  void ScoreBestTrial(const std::string& w) {
    Assignment e = Acquire(w);
    ASSERT_TRUE(e.evaluate_test);
    ASSERT_TRUE(c_->CompleteTrial(w, e.lease_id, {{"test_accuracy", 0.5}}).ok());
  }

  // Writes checkpoint `name` of study `id` where a worker (or an upload) would.
  void WriteCheckpoint(int64_t id, const std::string& name) {
    const auto dir = std::filesystem::path(db_.string() + ".checkpoints") /
                     ("study-" + std::to_string(id));
    std::filesystem::create_directories(dir);
    std::ofstream(dir / name) << "weights of " << name;
  }
  std::vector<std::string> Checkpoints(int64_t id) {
    std::vector<std::string> out;
    std::error_code ec;
    for (const auto& e : std::filesystem::directory_iterator(
             db_.string() + ".checkpoints/study-" + std::to_string(id), ec)) {
      out.push_back(e.path().filename().string());
    }
    std::sort(out.begin(), out.end());
    return out;
  }
};

TEST_F(CoordinatorTest, BadConfigIsRefusedWithEveryProblemNamed) {
  int64_t id = 0;
  std::vector<std::string> errors;
  Status s =
      c_->CreateStudy("name: t\nsearch_space:\n  lr: {type: float, low: 0, high: 1, scale: log}\n",
                      "bad.yaml", &id, &errors);
  EXPECT_EQ(s.code, Status::Code::kInvalidArgument);
  EXPECT_NE(s.message.find("search_space.lr.low: must be > 0 for a log scale"), std::string::npos)
      << s.message;
  EXPECT_TRUE(c_->ListStudies().empty());
}

TEST_F(CoordinatorTest, TrialRunsToCompletionAndIsChargedForItsLeasedTime) {
  const std::string w = Worker();
  const int64_t id = Study(Config("{type: fifo}", 1, 2));
  Assignment a = Acquire(w);
  EXPECT_EQ(a.number, 0);
  EXPECT_EQ(a.start_epoch, 0);
  EXPECT_EQ(std::get<std::string>(a.params.at("model")),
            "mlp");  // fixed trainer settings ride along
  EXPECT_TRUE(a.params.count("lr"));
  clock_.Advance(10);
  EXPECT_EQ(Report(w, a, 1, 1, 0.7).action, Action::kContinue);
  clock_.Advance(10);
  auto d = Report(w, a, 2, 2, 0.8);
  EXPECT_EQ(d.action, Action::kContinue);
  EXPECT_EQ(d.reason, "max epochs reached (2)");
  clock_.Advance(5);
  ASSERT_TRUE(c_->CompleteTrial(w, a.lease_id, {{"test_accuracy", 0.79}}).ok());

  std::vector<TrialSummary> trials;
  ASSERT_TRUE(c_->ListTrials(id, &trials).ok());
  ASSERT_EQ(trials.size(), 1u);
  EXPECT_EQ(trials[0].record.state, TrialState::kCompleted);
  EXPECT_EQ(trials[0].record.final_metrics.at("test_accuracy"), 0.79);
  EXPECT_NEAR(trials[0].seconds, 25, 1e-6);
  EXPECT_NEAR(trials[0].dollars, 0.025, 1e-9);
  EXPECT_EQ(trials[0].reports.size(), 2u);

  StudySummary s;
  ASSERT_TRUE(c_->GetStudy(id, &s).ok());
  EXPECT_EQ(s.record.state, StudyState::kCompleted);
  EXPECT_EQ(s.record.end_reason, "all 1 trials finished");
  EXPECT_NEAR(s.dollars, 0.025, 1e-9);
  ScoreBestTrial(w);  // its one test evaluation comes before the workers are let go
  AcquireResult r;
  Assignment none;
  ASSERT_TRUE(c_->AcquireTrial(w, &r, &none).ok());
  EXPECT_EQ(r, AcquireResult::kShutdown);
}

TEST_F(CoordinatorTest, RetriedReportIsAppliedOnceAndGetsTheSameAnswer) {
  const std::string w = Worker();
  const int64_t id = Study(Config("{type: plateau, patience: 1}", 1, 5));
  Assignment a = Acquire(w);
  Report(w, a, 1, 1, 0.8);
  auto first = Report(w, a, 2, 2, 0.7);  // no improvement: plateau stops it
  EXPECT_EQ(first.action, Action::kStop);
  auto retry = Report(w, a, 2, 2, 0.7);  // the answer was lost; the worker retries
  EXPECT_EQ(retry.action, Action::kStop);
  EXPECT_EQ(retry.reason, first.reason);
  std::vector<TrialSummary> trials;
  c_->ListTrials(id, &trials);
  EXPECT_EQ(trials[0].reports.size(), 2u);
  EXPECT_EQ(trials[0].record.state, TrialState::kStopped);
  EXPECT_NE(trials[0].record.end_reason.find("plateau"), std::string::npos);
  // A stopped trial still completes its lease, keeping its state and reason, adding metrics.
  ASSERT_TRUE(c_->CompleteTrial(w, a.lease_id, {{"test_accuracy", 0.75}}).ok());
  c_->ListTrials(id, &trials);
  EXPECT_EQ(trials[0].record.state, TrialState::kStopped);
  EXPECT_EQ(trials[0].record.final_metrics.at("test_accuracy"), 0.75);
}

TEST_F(CoordinatorTest, ConcurrentReportsAreAllInTheStoreOnceAcknowledged) {
  constexpr int kWorkers = 8, kEpochs = 25;
  const int64_t id = Study(Config("{type: fifo}", kWorkers, kEpochs));
  std::vector<std::string> workers;
  for (int i = 0; i < kWorkers; ++i) workers.push_back(Worker());
  std::atomic<int> acknowledged{0};
  std::vector<std::thread> threads;
  for (const std::string& w : workers) {
    threads.emplace_back([&, w] {
      Assignment a = Acquire(w);
      for (int64_t e = 1; e <= kEpochs; ++e) {
        search::Decision d;
        Status s = c_->ReportProgress(w, a.lease_id, e, e, {{"val_accuracy", 0.01 * e}}, "", &d);
        ASSERT_TRUE(s.ok()) << s.message;
        ++acknowledged;
        // Acknowledged means committed: another connection sees it now.
        ASSERT_TRUE(OpenSqliteStoreReadOnly(db_.string())->FindReport(a.lease_id, e));
      }
      EXPECT_TRUE(c_->CompleteTrial(w, a.lease_id, {}).ok());
    });
  }
  for (auto& t : threads) t.join();
  EXPECT_EQ(acknowledged, kWorkers * kEpochs);
  auto store = OpenSqliteStoreReadOnly(db_.string());
  EXPECT_EQ(store->ListReports(id).size(), size_t{kWorkers * kEpochs});
  for (const auto& t : store->ListTrials(id)) EXPECT_EQ(t.state, TrialState::kCompleted);
}

TEST_F(CoordinatorTest, AReportWhoseCommitFailsIsRefusedTakenBackAndCanBeRetried) {
  const std::string w = Worker();
  const int64_t id = Study(Config("{type: fifo}", 1, 5));
  Assignment a = Acquire(w);
  Report(w, a, 1, 1, 0.5, false);
  // A report too big for the room left (a real EFBIG under a file-size limit).
  std::map<std::string, double> big{{"val_accuracy", 0.6}};
  for (int i = 0; i < 20000; ++i) big["metric_" + std::to_string(i)] = i;
  struct rlimit old{};
  ASSERT_EQ(getrlimit(RLIMIT_FSIZE, &old), 0);
  struct rlimit tight = old;
  std::error_code ec;
  uintmax_t largest = 0;
  for (const char* suffix : {"", "-wal", "-shm"}) {
    const uintmax_t size = std::filesystem::file_size(db_.string() + suffix, ec);
    if (!ec) largest = std::max(largest, size);
  }
  tight.rlim_cur = static_cast<rlim_t>(largest + 16 * 1024);
  signal(SIGXFSZ, SIG_IGN);
  ASSERT_EQ(setrlimit(RLIMIT_FSIZE, &tight), 0);
  search::Decision d;
  Status s = c_->ReportProgress(w, a.lease_id, 2, 2, big, "", &d);
  ASSERT_EQ(setrlimit(RLIMIT_FSIZE, &old), 0);
  EXPECT_EQ(s.code, Status::Code::kUnavailable) << s.message;
  // Memory took it back: the same report (same seq, same epoch) is accepted as new.
  EXPECT_EQ(Report(w, a, 2, 2, 0.6, false).action, Action::kContinue);
  std::vector<TrialSummary> trials;
  c_->ListTrials(id, &trials);
  ASSERT_EQ(trials[0].reports.size(), 2u);
  EXPECT_EQ(trials[0].reports[1].metrics.size(), 1u);
  EXPECT_EQ(trials[0].record.state, TrialState::kRunning);
}

TEST_F(CoordinatorTest, AReportStillCommittingWhenTheCoordinatorStopsIsAnsweredOnceAndKept) {
  const std::string w = Worker();
  const int64_t id = Study(Config("{type: fifo}", 1, 5));
  Assignment a = Acquire(w);
  std::atomic<int> answers{0};
  Status got = Status::Error(Status::Code::kInternal, "not answered");
  search::Decision decision;
  c_->ReportProgressAsync(w, a.lease_id, 1, 1, {{"val_accuracy", 0.5}}, "",
                          [&](const Status& s, const search::Decision& d) {
                            got = s;
                            decision = d;
                            ++answers;
                          });
  c_.reset();  // at once: the write is queued or committing
  EXPECT_EQ(answers.load(), 1);
  EXPECT_TRUE(got.ok()) << got.message;
  EXPECT_EQ(decision.action, Action::kContinue);
  EXPECT_EQ(OpenSqliteStoreReadOnly(db_.string())->ListReports(id).size(), 1u);
}

TEST_F(CoordinatorTest, ForeignUnknownAndMalformedCallsAreRefusedClearly) {
  const std::string w1 = Worker(), w2 = Worker();
  Study(Config());
  Assignment a = Acquire(w1);
  search::Decision d;
  Status s = c_->ReportProgress(w2, a.lease_id, 1, 1, {{"val_accuracy", 0.5}}, "", &d);
  EXPECT_EQ(s.code, Status::Code::kFailedPrecondition);
  EXPECT_NE(s.message.find("belongs to another worker"), std::string::npos);
  s = c_->ReportProgress("w-nobody", a.lease_id, 1, 1, {{"val_accuracy", 0.5}}, "", &d);
  EXPECT_EQ(s.code, Status::Code::kNotFound);
  s = c_->ReportProgress(w1, "L-bogus", 1, 1, {{"val_accuracy", 0.5}}, "", &d);
  EXPECT_EQ(s.code, Status::Code::kFailedPrecondition);
  s = c_->ReportProgress(w1, a.lease_id, 1, 1, {{"val_loss", 0.5}}, "", &d);
  EXPECT_EQ(s.code, Status::Code::kInvalidArgument);
  EXPECT_NE(s.message.find("val_accuracy"), std::string::npos);
  s = c_->ReportProgress(w1, a.lease_id, 1, 3, {{"val_accuracy", 0.5}}, "", &d);
  EXPECT_EQ(s.code, Status::Code::kInvalidArgument);
  EXPECT_NE(s.message.find("expected 1"), std::string::npos);
  // None of that disturbed the real worker.
  EXPECT_EQ(Report(w1, a, 1, 1, 0.5).action, Action::kContinue);
}

TEST_F(CoordinatorTest, ExpiredLeaseRequeuesTheTrialAtItsLastEpochAndTheLedgerBalances) {
  const std::string w1 = Worker(), w2 = Worker(7.2);
  const int64_t id = Study(Config("{type: fifo}", 1, 3));
  Assignment a = Acquire(w1);
  clock_.Advance(4);
  Report(w1, a, 1, 1, 0.6);  // epoch 1 checkpointed and reported at t=4
  clock_.Advance(2);
  std::vector<std::string> revoked;
  ASSERT_TRUE(c_->Heartbeat(w1, {a.lease_id}, &revoked).ok());  // last sign of life at t=6
  EXPECT_TRUE(revoked.empty());
  clock_.Advance(11);  // the VM is gone: past the 10 s lease timeout without a heartbeat
  c_->Tick();
  std::vector<TrialSummary> trials;
  c_->ListTrials(id, &trials);
  EXPECT_EQ(trials[0].record.state, TrialState::kPending);
  // The stale worker's late report changes nothing.
  search::Decision d;
  EXPECT_EQ(c_->ReportProgress(w1, a.lease_id, 2, 2, {{"val_accuracy", 0.9}}, "", &d).code,
            Status::Code::kFailedPrecondition);

  Assignment b = Acquire(w2);
  EXPECT_EQ(b.number, 0);
  EXPECT_EQ(b.start_epoch, 1);
  EXPECT_EQ(b.resume_checkpoint, "trial-0-e1.ckpt");
  EXPECT_EQ(b.seed, a.seed);  // the same trial trains from the same seed
  clock_.Advance(2);
  Report(w2, b, 1, 2, 0.7);
  Report(w2, b, 2, 3, 0.8);
  ASSERT_TRUE(c_->CompleteTrial(w2, b.lease_id, {}).ok());
  c_->ListTrials(id, &trials);
  EXPECT_EQ(trials[0].record.state, TrialState::kCompleted);
  ASSERT_EQ(trials[0].reports.size(), 3u);
  for (int e = 0; e < 3; ++e) EXPECT_EQ(trials[0].reports[e].epoch, e + 1);
  // The lost VM is billed to its last heartbeat: 6 s at $3.6/h, 2 s of them after its last
  // checkpoint and so wasted; then 2 s at $7.2/h on the second worker.
  EXPECT_NEAR(trials[0].dollars, 6 * 0.001 + 2 * 0.002, 1e-9);
  EXPECT_NEAR(trials[0].wasted_dollars, 2 * 0.001, 1e-9);
  EXPECT_EQ(trials[0].interruptions, 1);
  StudySummary s;
  c_->GetStudy(id, &s);
  EXPECT_NEAR(s.dollars, trials[0].dollars, 1e-9);
  EXPECT_NEAR(s.wasted_dollars, 2 * 0.001, 1e-9);
  EXPECT_EQ(s.expirations, 1);
  EXPECT_NEAR(s.dollars_by_market.at("spot"), s.dollars, 1e-9);
}

TEST_F(CoordinatorTest, PreemptedTrialIsRequeuedAtOnceAndResumesFromItsCheckpoint) {
  const std::string w1 = Worker(), w2 = Worker();
  const int64_t id = Study(Config("{type: fifo}", 1, 3));
  Assignment a = Acquire(w1);
  clock_.Advance(3);
  Report(w1, a, 1, 1, 0.6);
  clock_.Advance(2);
  EXPECT_EQ(c_->PreemptTrial(w1, a.lease_id, "../../etc/passwd", "SIGTERM").code,
            Status::Code::kInvalidArgument);
  EXPECT_EQ(c_->PreemptTrial(w1, a.lease_id, "trial-9-e1-s5.ckpt", "SIGTERM").code,
            Status::Code::kInvalidArgument);  // another trial's checkpoint
  ASSERT_TRUE(c_->PreemptTrial(w1, a.lease_id, "trial-0-e1-s7.ckpt", "SIGTERM").ok());
  // No lease timeout to wait for: the next worker gets it now, mid-epoch.
  Assignment b = Acquire(w2);
  EXPECT_EQ(b.number, 0);
  EXPECT_EQ(b.start_epoch, 1);
  EXPECT_EQ(b.resume_checkpoint, "trial-0-e1-s7.ckpt");
  // Its checkpoint path is confined to its own trial's names.
  std::string path;
  EXPECT_EQ(c_->CheckpointPath(w2, b.lease_id, "trial-1-e1.ckpt", &path).code,
            Status::Code::kInvalidArgument);
  // An upload named outside the one grammar (a negative epoch was once accepted) is refused.
  for (const char* bad : {"trial-0-e-1.ckpt", "trial-0-e01.ckpt", "trial-0-e1.ckpt.part"}) {
    EXPECT_EQ(c_->CheckpointPath(w2, b.lease_id, bad, &path).code,
              Status::Code::kInvalidArgument)
        << bad;
  }
  EXPECT_EQ(c_->CheckpointPath(w1, b.lease_id, "trial-0-e1.ckpt", &path).code,
            Status::Code::kFailedPrecondition);
  clock_.Advance(1);
  Report(w2, b, 1, 2, 0.7);
  Report(w2, b, 2, 3, 0.8);
  ASSERT_TRUE(c_->CompleteTrial(w2, b.lease_id, {}).ok());
  std::vector<TrialSummary> trials;
  c_->ListTrials(id, &trials);
  EXPECT_EQ(trials[0].record.state, TrialState::kCompleted);
  EXPECT_EQ(trials[0].reports.size(), 3u);
  EXPECT_EQ(trials[0].interruptions, 1);
  EXPECT_NEAR(trials[0].wasted_dollars, 0.0, 1e-12);  // it checkpointed on the notice
  StudySummary s;
  c_->GetStudy(id, &s);
  EXPECT_EQ(s.preemptions, 1);

  // A restarted coordinator still knows where a preempted trial resumes.
  c_.reset();
  Open();
  c_->ListTrials(id, &trials);
  EXPECT_EQ(trials[0].reports.size(), 3u);
}

TEST_F(CoordinatorTest, RestartKeepsAMidEpochResumePoint) {
  const std::string w = Worker();
  Study(Config("{type: fifo}", 1, 3));
  Assignment a = Acquire(w);
  Report(w, a, 1, 1, 0.6);
  clock_.Advance(1);
  ASSERT_TRUE(c_->PreemptTrial(w, a.lease_id, "trial-0-e1-s3.ckpt", "SIGTERM").ok());
  c_.reset();
  Open();
  Assignment b = Acquire(Worker());
  EXPECT_EQ(b.resume_checkpoint, "trial-0-e1-s3.ckpt");
  EXPECT_EQ(b.start_epoch, 1);
}

TEST_F(CoordinatorTest, SparseCheckpointsResumeFromTheNewestAndBillTheRedoneEpochs) {
  const std::string w1 = Worker(), w2 = Worker();
  const int64_t id = Study(Config("{type: fifo}", 1, 4) + "checkpoint: {every_epochs: 2}\n");
  Assignment a = Acquire(w1);
  EXPECT_EQ(a.checkpoint_every_epochs, 2);
  EXPECT_EQ(a.resume_checkpoint, "");
  clock_.Advance(2);
  Report(w1, a, 1, 1, 0.6, /*checkpointed=*/false);
  clock_.Advance(2);
  Report(w1, a, 2, 2, 0.7);  // checkpoint at t=4
  clock_.Advance(2);
  Report(w1, a, 3, 3, 0.75, /*checkpointed=*/false);  // t=6, last sign of life
  search::Decision d;
  EXPECT_EQ(c_->ReportProgress(w1, a.lease_id, 4, 4, {{"val_accuracy", 0.8}}, "trial-3-e4.ckpt",
                               &d)
                .code,
            Status::Code::kInvalidArgument);  // another trial's name
  clock_.Advance(11);
  c_->Tick();
  // Three epochs are on record, the newest checkpoint is epoch 2's: the next worker loads it and
  // retrains epoch 3 without reporting it again.
  Assignment b = Acquire(w2);
  EXPECT_EQ(b.start_epoch, 3);
  EXPECT_EQ(b.resume_checkpoint, "trial-0-e2.ckpt");
  std::vector<TrialSummary> trials;
  c_->ListTrials(id, &trials);
  EXPECT_NEAR(trials[0].wasted_dollars, 2 * 0.001, 1e-9);  // t=4..6, since the checkpoint
  // A restarted coordinator agrees.
  c_.reset();
  Open();
  clock_.Advance(11);
  c_->Tick();  // b's lease had no heartbeat since the restart
  Assignment c = Acquire(Worker());
  EXPECT_EQ(c.start_epoch, 3);
  EXPECT_EQ(c.resume_checkpoint, "trial-0-e2.ckpt");
}

TEST_F(CoordinatorTest, PausedTrialResumesFromTheCheckpointItHandedBack) {
  const std::string w = Worker();
  // ASHA with promotion: the first trial pauses at its first rung (epoch 1) until promoted.
  const int64_t id = Study(Config("{type: asha, variant: promotion, min_resource: 1, eta: 2}", 2, 2) +
                           "checkpoint: {every_epochs: 5}\n");
  Assignment a = Acquire(w);
  ASSERT_EQ(Report(w, a, 1, 1, 0.9, /*checkpointed=*/false).action, Action::kPause);
  EXPECT_EQ(c_->CompleteTrial(w, a.lease_id, {}, "x.ckpt").code,
            Status::Code::kInvalidArgument);
  ASSERT_TRUE(c_->CompleteTrial(w, a.lease_id, {}, "trial-0-e1.ckpt").ok());
  Assignment b = Acquire(w);
  ASSERT_EQ(b.number, 1);
  ASSERT_EQ(Report(w, b, 1, 1, 0.1, /*checkpointed=*/false).action, Action::kPause);
  ASSERT_TRUE(c_->CompleteTrial(w, b.lease_id, {}, common::EpochCheckpointName(1, 1)).ok());
  c_.reset();
  Open();  // the promotion point survives a restart
  Assignment p = Acquire(w);
  EXPECT_EQ(p.number, 0);
  EXPECT_EQ(p.start_epoch, 1);
  EXPECT_EQ(p.resume_checkpoint, "trial-0-e1.ckpt");
  std::vector<TrialSummary> trials;
  c_->ListTrials(id, &trials);
  EXPECT_EQ(trials[0].record.state, TrialState::kRunning);
}

TEST_F(CoordinatorTest, NoNewTrialWhoseNextEpochWouldOvershootTheBudget) {
  const std::string w = Worker();  // $0.001 per second
  const int64_t id = Study(Config("{type: fifo}", 5, 1, ", max_dollars: 0.025"));
  Assignment a = Acquire(w);
  clock_.Advance(10);
  Report(w, a, 1, 1, 0.5, /*checkpointed=*/false);  // no model: no test evaluation after
  ASSERT_TRUE(c_->CompleteTrial(w, a.lease_id, {}).ok());  // one epoch cost $0.010
  Assignment b = Acquire(w);  // $0.010 + ~$0.010 fits in $0.025
  clock_.Advance(10);
  Report(w, b, 1, 1, 0.5, /*checkpointed=*/false);
  ASSERT_TRUE(c_->CompleteTrial(w, b.lease_id, {}).ok());
  AcquireResult r;
  Assignment none;
  ASSERT_TRUE(c_->AcquireTrial(w, &r, &none).ok());  // $0.020 + ~$0.010 would not
  EXPECT_EQ(r, AcquireResult::kShutdown);
  StudySummary s;
  c_->GetStudy(id, &s);
  EXPECT_EQ(s.total, 2);
  EXPECT_NE(s.record.end_reason.find("would overshoot"), std::string::npos) << s.record.end_reason;
  EXPECT_LE(s.dollars, 0.025);
}

TEST_F(CoordinatorTest, DollarBudgetStopsNewWorkAndRunningTrials) {
  const std::string w = Worker();
  const int64_t id = Study(Config("{type: fifo}", 5, 10, ", max_dollars: 0.01"));
  Assignment a = Acquire(w);
  clock_.Advance(6);
  EXPECT_EQ(Report(w, a, 1, 1, 0.5, /*checkpointed=*/false).action, Action::kContinue);
  clock_.Advance(6);  // $0.012 now, over the $0.01 budget
  auto d = Report(w, a, 2, 2, 0.6, /*checkpointed=*/false);  // no model, no test evaluation
  EXPECT_EQ(d.action, Action::kStop);
  EXPECT_NE(d.reason.find("budget"), std::string::npos);
  ASSERT_TRUE(c_->CompleteTrial(w, a.lease_id, {}).ok());
  AcquireResult r;
  Assignment none;
  ASSERT_TRUE(c_->AcquireTrial(w, &r, &none).ok());
  EXPECT_EQ(r, AcquireResult::kShutdown);
  StudySummary s;
  c_->GetStudy(id, &s);
  EXPECT_EQ(s.total, 1);
  EXPECT_NE(s.record.end_reason.find("budget"), std::string::npos);
}

TEST_F(CoordinatorTest, RestartRestoresHistoryLeasesAndMakesTheSameSuggestions) {
  const std::string w = Worker();
  const int64_t id = Study(Config("{type: fifo}", 3, 2));
  Assignment a = Acquire(w);
  Report(w, a, 1, 1, 0.5);

  // Reference: what the next two trials would be without a restart.
  auto reference_db = db_.string() + ".ref";
  // WAL mode: committed data may still sit in the -wal file, so copy both.
  std::filesystem::copy_file(db_, reference_db);
  std::filesystem::copy_file(db_.string() + "-wal", reference_db + "-wal");

  c_.reset();  // the coordinator dies; its database stays
  Open();
  StudySummary s;
  ASSERT_TRUE(c_->GetStudy(id, &s).ok());
  EXPECT_EQ(s.total, 1);
  EXPECT_EQ(s.running, 1);
  // The worker carries on under its lease.
  EXPECT_EQ(Report(w, a, 2, 2, 0.6).action, Action::kContinue);
  ASSERT_TRUE(c_->CompleteTrial(w, a.lease_id, {}).ok());
  Assignment b = Acquire(w);
  EXPECT_EQ(b.number, 1);

  // A fresh coordinator on the pre-restart copy suggests the same trial 1.
  CoordinatorOptions o;
  o.clock = clock_.fn();
  Coordinator other(OpenSqliteStore(reference_db), o);
  WorkerRecord in, out;
  in.market = "spot";
  in.price_per_hour = 1;
  other.RegisterWorker(in, &out);
  AcquireResult r;
  Assignment other_b;
  ASSERT_TRUE(other.AcquireTrial(out.id, &r, &other_b).ok());
  ASSERT_EQ(r, AcquireResult::kAssigned);
  EXPECT_EQ(other_b.number, 1);
  EXPECT_EQ(other_b.params, b.params);
  for (const char* sfx : {"", "-wal", "-shm"}) std::filesystem::remove(reference_db + sfx);
}

TEST_F(CoordinatorTest, HoursBudgetStopsTheStudy) {
  const std::string w = Worker();
  const int64_t id = Study(Config("{type: fifo}", 5, 10, ", max_hours: 0.01"));  // 36 s
  Assignment a = Acquire(w);
  clock_.Advance(20);
  EXPECT_EQ(Report(w, a, 1, 1, 0.5).action, Action::kContinue);
  clock_.Advance(20);
  auto d = Report(w, a, 2, 2, 0.6);
  EXPECT_EQ(d.action, Action::kStop);
  EXPECT_EQ(d.reason, "budget: 0.01 h elapsed of 0.01 h");
  ASSERT_TRUE(c_->CompleteTrial(w, a.lease_id, {}).ok());
  StudySummary s;
  c_->GetStudy(id, &s);
  EXPECT_EQ(s.record.state, StudyState::kCompleted);
  EXPECT_EQ(s.total, 1);
}

TEST_F(CoordinatorTest, CancelStopsPendingWorkAndRunningTrialsAtTheirNextReport) {
  const std::string w = Worker();
  const int64_t id = Study(Config("{type: fifo}", 3, 5));
  Assignment a = Acquire(w);
  ASSERT_TRUE(c_->CancelStudy(id).ok());
  auto d = Report(w, a, 1, 1, 0.5);
  EXPECT_EQ(d.action, Action::kStop);
  EXPECT_EQ(d.reason, "study cancelled");
  ASSERT_TRUE(c_->CompleteTrial(w, a.lease_id, {}).ok());
  EXPECT_TRUE(c_->AllStudiesFinished());
  EXPECT_EQ(c_->CancelStudy(999).code, Status::Code::kNotFound);
}

TEST_F(CoordinatorTest, LatestKeepsEachTrialsResumePointAndNothingItSupersedes) {
  const std::string w1 = Worker(), w2 = Worker();
  const int64_t id = Study(Config("{type: fifo}", 1, 4));  // checkpoint.keep defaults to latest
  Assignment a = Acquire(w1);
  for (int epoch = 1; epoch <= 2; ++epoch) {
    WriteCheckpoint(id, common::EpochCheckpointName(0, epoch));
    Report(w1, a, epoch, epoch, 0.5 + 0.1 * epoch);
  }
  EXPECT_EQ(Checkpoints(id), std::vector<std::string>({"trial-0-e2.ckpt"}));
  // Epoch 3 is written but its VM is lost before reporting it: the file waits, unrecorded.
  WriteCheckpoint(id, "trial-0-e3.ckpt");
  clock_.Advance(11);
  c_->Tick();
  EXPECT_EQ(Checkpoints(id), std::vector<std::string>({"trial-0-e2.ckpt", "trial-0-e3.ckpt"}));
  Assignment b = Acquire(w2);
  ASSERT_EQ(b.resume_checkpoint, "trial-0-e2.ckpt");  // still there to resume from
  WriteCheckpoint(id, "trial-0-e3.ckpt");             // retrained, and now reported
  Report(w2, b, 1, 3, 0.8);
  WriteCheckpoint(id, "trial-0-e4.ckpt");
  Report(w2, b, 2, 4, 0.85);
  ASSERT_TRUE(c_->CompleteTrial(w2, b.lease_id, {}).ok());
  EXPECT_EQ(Checkpoints(id), std::vector<std::string>({"trial-0-e4.ckpt"}))
      << "a finished trial keeps its final model";
}

TEST_F(CoordinatorTest, BestKeepsOnlyTheBestFinishedTrialsModel) {
  const std::string w = Worker();
  const int64_t id = Study(Config("{type: fifo}", 3, 1) + "checkpoint: {keep: best}\n");
  for (double acc : {0.7, 0.9, 0.8}) {
    Assignment a = Acquire(w);
    WriteCheckpoint(id, common::EpochCheckpointName(a.number, 1));
    Report(w, a, 1, 1, acc);
    // Until its lease ends a trial keeps its checkpoint, whatever its value.
    EXPECT_EQ(Checkpoints(id).back(), common::EpochCheckpointName(a.number, 1));
    ASSERT_TRUE(c_->CompleteTrial(w, a.lease_id, {}).ok());
  }
  StudySummary s;
  ASSERT_TRUE(c_->GetStudy(id, &s).ok());
  EXPECT_EQ(s.best_trial, 1);
  EXPECT_EQ(Checkpoints(id), std::vector<std::string>({"trial-1-e1.ckpt"}));
}

TEST_F(CoordinatorTest, AllKeepsEveryCheckpointAndARestartPrunesUnderTheStudysPolicy) {
  const std::string w = Worker();
  const int64_t keep_all = Study(Config("{type: fifo}", 1, 3) + "checkpoint: {keep: all}\n");
  Assignment a = Acquire(w);
  for (int epoch = 1; epoch <= 3; ++epoch) {
    WriteCheckpoint(keep_all, common::EpochCheckpointName(0, epoch));
    Report(w, a, epoch, epoch, 0.5);
  }
  ASSERT_TRUE(c_->CompleteTrial(w, a.lease_id, {}).ok());
  EXPECT_EQ(Checkpoints(keep_all).size(), 3u);
  ScoreBestTrial(w);
  // Files left by an older sift (which kept everything) go once a restarted coordinator sees
  // them under a study that keeps the latest.
  const int64_t latest = Study(Config("{type: fifo}", 1, 3));
  Assignment b = Acquire(w);
  WriteCheckpoint(latest, "trial-0-e1.ckpt");
  Report(w, b, 1, 1, 0.5);
  WriteCheckpoint(latest, "trial-0-e0-s9.ckpt");
  c_.reset();
  Open();
  EXPECT_EQ(Checkpoints(latest), std::vector<std::string>({"trial-0-e1.ckpt"}));
  EXPECT_EQ(Checkpoints(keep_all).size(), 3u);
}

// A trial whose objective turns NaN ends as DIVERGED (its own outcome, with why), keeps its
// dollars, is never retried, is nobody's best, and all of it survives a restart.
TEST_F(CoordinatorTest, NonFiniteObjectiveEndsTheTrialDivergedForGood) {
  const double nan = std::nan(""), inf = std::numeric_limits<double>::infinity();
  const std::string w = Worker();
  const int64_t id = Study(Config("{type: fifo}", 2, 3));
  Assignment a = Acquire(w);
  clock_.Advance(5);
  Report(w, a, 1, 1, 0.5);
  clock_.Advance(5);
  search::Decision d;
  ASSERT_TRUE(c_->ReportProgress(w, a.lease_id, 2, 2,
                                 {{"val_accuracy", nan}, {"train_loss", inf}, {"val_loss", nan}},
                                 "", &d)
                  .ok());
  EXPECT_EQ(d.action, Action::kStop);
  EXPECT_EQ(d.reason, "val_accuracy NaN at epoch 2");
  ASSERT_TRUE(c_->CompleteTrial(w, a.lease_id, {{"test_accuracy", 0.1}}).ok());

  auto check = [&](const char* when) {
    SCOPED_TRACE(when);
    std::vector<TrialSummary> trials;
    ASSERT_TRUE(c_->ListTrials(id, &trials).ok());
    EXPECT_EQ(trials[0].record.state, TrialState::kDiverged);
    EXPECT_EQ(trials[0].record.end_reason, "val_accuracy NaN at epoch 2");
    EXPECT_NEAR(trials[0].dollars, 10 * 0.001, 1e-9);  // its leased time stays on the bill
    ASSERT_EQ(trials[0].reports.size(), 2u);
    EXPECT_TRUE(std::isnan(trials[0].reports[1].metrics.at("val_accuracy")));
    EXPECT_EQ(trials[0].reports[1].metrics.at("train_loss"), inf);
    StudySummary s;
    ASSERT_TRUE(c_->GetStudy(id, &s).ok());
    EXPECT_FALSE(s.best_trial.has_value());  // 0.5 at epoch 1 is no result of a diverged trial
    EXPECT_EQ(s.finished, 1);
    // The retried report gets its first answer (the replay lookup reads NaN metrics).
    search::Decision again;
    ASSERT_TRUE(c_->ReportProgress(w, a.lease_id, 2, 2, {{"val_accuracy", nan}}, "", &again).ok());
    EXPECT_EQ(again.action, Action::kStop);
    EXPECT_EQ(again.reason, "val_accuracy NaN at epoch 2");
  };
  check("running");
  c_.reset();
  Open();
  check("after a restart");
  // Never retried: the next lease is a new trial.
  const std::string w2 = Worker();
  EXPECT_EQ(Acquire(w2).number, 1);
}

TEST_F(CoordinatorTest, NonFiniteTrainingLossEndsTheTrialUnlessStopOnDivergenceIsOff) {
  const double inf = std::numeric_limits<double>::infinity();
  const std::string w = Worker();
  Study(Config("{type: fifo}", 1, 3));
  Assignment a = Acquire(w);
  search::Decision d;
  ASSERT_TRUE(c_->ReportProgress(w, a.lease_id, 1, 1, {{"val_accuracy", 0.1}, {"train_loss", -inf}},
                                 "", &d)
                  .ok());
  EXPECT_EQ(d.action, Action::kStop);
  EXPECT_EQ(d.reason, "train_loss -Infinity at epoch 1");
  ASSERT_TRUE(c_->CompleteTrial(w, a.lease_id, {}).ok());

  std::string off = Config("{type: fifo}", 1, 3);
  off.replace(off.find("trainer: {model: mlp}"), 21,
              "trainer: {model: mlp, stop_on_divergence: false}");
  const int64_t id = Study(off);
  Assignment b = Acquire(w);
  EXPECT_EQ(b.study_id, id);
  ASSERT_TRUE(c_->ReportProgress(w, b.lease_id, 1, 1, {{"val_accuracy", 0.1}, {"train_loss", inf}},
                                 "", &d)
                  .ok());
  EXPECT_EQ(d.action, Action::kContinue);
}

// Damaged checkpoints: a resume is offered the older ones still on disk (newest first), and the
// work redone past a damaged one is waste in the ledger.
TEST_F(CoordinatorTest, ResumeOffersOlderCheckpointsAndRedoneWorkIsWaste) {
  const std::string w1 = Worker(), w2 = Worker();
  const int64_t id = Study(Config("{type: fifo}", 1, 4) + "checkpoint: {keep: all}\n");
  Assignment a = Acquire(w1);
  for (int e = 1; e <= 3; ++e) {
    WriteCheckpoint(id, common::EpochCheckpointName(0, e));
    clock_.Advance(1);
    Report(w1, a, e, e, 0.5 + 0.1 * e);
  }
  WriteCheckpoint(id, "trial-0-e1-s3.ckpt");
  search::Decision d;
  EXPECT_EQ(c_->ReportProgress(w1, a.lease_id, 4, 4, {{"val_accuracy", 0.9}}, "trial-0-e-1.ckpt",
                               &d)
                .code,
            Status::Code::kInvalidArgument);  // not a checkpoint name
  clock_.Advance(11);
  c_->Tick();  // the VM is gone
  Assignment b = Acquire(w2);
  EXPECT_EQ(b.resume_checkpoint, "trial-0-e3.ckpt");
  EXPECT_EQ(b.resume_fallbacks,
            (std::vector<std::string>{"trial-0-e2.ckpt", "trial-0-e1-s3.ckpt", "trial-0-e1.ckpt"}));
  clock_.Advance(10);
  ASSERT_TRUE(c_->RecordRedoneWork(w2, b.lease_id, 6.0, "trial-0-e3.ckpt").ok());
  ASSERT_TRUE(c_->RecordRedoneWork(w2, b.lease_id, 6.0, "trial-0-e3.ckpt").ok());  // a retry
  EXPECT_EQ(c_->RecordRedoneWork(w1, b.lease_id, 6.0, "x").code,
            Status::Code::kFailedPrecondition);
  Report(w2, b, 1, 4, 0.9);
  ASSERT_TRUE(c_->CompleteTrial(w2, b.lease_id, {}).ok());
  std::vector<TrialSummary> trials;
  c_->ListTrials(id, &trials);
  // The lost VM wasted nothing (it had checkpointed its last epoch); the fallback redid 6 s.
  EXPECT_NEAR(trials[0].wasted_dollars, 6 * 0.001, 1e-9);
}

}  // namespace
}  // namespace sift::coordinator

namespace sift::coordinator {
namespace {

AcquireResult AcquireOnly(Coordinator& c, const std::string& w, double idle_exit_s,
                          Assignment* a = nullptr) {
  AcquireResult r;
  Assignment ignored;
  EXPECT_TRUE(c.AcquireTrial(w, &r, a ? a : &ignored, idle_exit_s).ok());
  return r;
}

TEST_F(CoordinatorTest, StandaloneTellsAnIdleWorkerToLeaveAfterItsGraceEvenWithNoStudy) {
  c_.reset();
  Open(/*embedded=*/false);
  const std::string w = Worker();  // $0.001 per second
  EXPECT_EQ(AcquireOnly(*c_, w, 5), AcquireResult::kNoWork);
  clock_.Advance(4);
  EXPECT_EQ(AcquireOnly(*c_, w, 5), AcquireResult::kNoWork);
  // A worker that did not ask for an idle exit keeps waiting.
  const std::string patient = Worker();
  clock_.Advance(1);
  EXPECT_EQ(AcquireOnly(*c_, w, 5), AcquireResult::kShutdown);
  EXPECT_EQ(AcquireOnly(*c_, patient, 0), AcquireResult::kNoWork);
  clock_.Advance(100);
  EXPECT_EQ(AcquireOnly(*c_, patient, 0), AcquireResult::kNoWork);
}

// Issue 11: memory must stay bounded under hostile calls. Registrations were not (each stayed in
// memory for good): of the workers silent past the lease timeout, only the 1,000 heard from last
// (kMaxLostWorkers) are remembered. A live worker, or one holding a lease, never is forgotten; a
// forgotten one is told to register again.
TEST_F(CoordinatorTest, OnlyTheLostWorkersHeardFromLastAreRemembered) {
  c_.reset();
  Open(/*embedded=*/false);
  const int64_t id = Study(Config("{type: fifo}", 1, 3));
  const std::string holder = Worker();
  Assignment a = Acquire(holder);
  EXPECT_EQ(a.study_id, id);
  std::vector<std::string> silent;
  for (int i = 0; i < 1003; ++i) {
    silent.push_back(Worker());
    clock_.Advance(0.001);
  }
  const std::string live = Worker();
  std::vector<std::string> revoked;
  for (int i = 0; i < 10; ++i) {  // beats keep the holder's lease, the live one asks for work
    clock_.Advance(1.5);
    ASSERT_TRUE(c_->Heartbeat(holder, {a.lease_id}, &revoked).ok());
    EXPECT_EQ(AcquireOnly(*c_, live, 0), AcquireResult::kNoWork);
    c_->Tick();
  }
  // The three silent longest are forgotten, the next ones kept.
  for (int i = 0; i < 6; ++i) {
    Assignment ignored;
    AcquireResult r;
    const Status s = c_->AcquireTrial(silent[i], &r, &ignored, 0);
    EXPECT_EQ(s.code, i < 3 ? Status::Code::kNotFound : Status::Code::kOk) << i << s.message;
    if (i < 3) {
      EXPECT_NE(s.message.find("register first"), std::string::npos) << s.message;
    }
  }
  EXPECT_EQ(AcquireOnly(*c_, live, 0), AcquireResult::kNoWork);
  Report(holder, a, 1, 1, 0.5);
}

TEST_F(CoordinatorTest, IdleTimeAfterAStudysTrialsIsBilledToNoTrialAndReportedWithTheStudy) {
  c_.reset();
  Open(/*embedded=*/false);
  const std::string w = Worker();  // $0.001 per second
  const int64_t id = Study(Config("{type: fifo}", 1, 1));
  Assignment a;
  ASSERT_EQ(AcquireOnly(*c_, w, 30, &a), AcquireResult::kAssigned);
  clock_.Advance(10);
  Report(w, a, 1, 1, 0.7, /*checkpointed=*/false);  // no model to score: no evaluation after
  ASSERT_TRUE(c_->CompleteTrial(w, a.lease_id, {}).ok());
  StudySummary s;
  ASSERT_TRUE(c_->GetStudy(id, &s).ok());
  EXPECT_EQ(s.record.state, StudyState::kCompleted);
  EXPECT_EQ(AcquireOnly(*c_, w, 30), AcquireResult::kNoWork);  // the idle stretch opens
  clock_.Advance(29);
  EXPECT_EQ(AcquireOnly(*c_, w, 30), AcquireResult::kNoWork);
  clock_.Advance(1);
  EXPECT_EQ(AcquireOnly(*c_, w, 30), AcquireResult::kShutdown);
  ASSERT_TRUE(c_->GetStudy(id, &s).ok());
  EXPECT_NEAR(s.idle_seconds, 30, 1e-6);
  EXPECT_NEAR(s.idle_dollars, 0.030, 1e-9);
  EXPECT_NEAR(s.dollars, 0.010, 1e-9);  // the study's own cost is only its lease
  // It is in the database, so a restarted coordinator and `sift report` see it too.
  c_.reset();
  Open(/*embedded=*/false);
  ASSERT_TRUE(c_->GetStudy(id, &s).ok());
  EXPECT_NEAR(s.idle_seconds, 30, 1e-6);
}

TEST_F(CoordinatorTest, AStudyInWhichEveryTrialFailedEndsFailed) {
  const std::string w = Worker();
  const int64_t id = Study(Config("{type: fifo}", 2, 1));
  for (int i = 0; i < 2; ++i) {
    Assignment a = Acquire(w);
    ASSERT_TRUE(c_->FailTrial(w, a.lease_id, "cannot decode train-images").ok());
  }
  StudySummary s;
  ASSERT_TRUE(c_->GetStudy(id, &s).ok());
  EXPECT_EQ(s.record.state, StudyState::kFailed);
  EXPECT_NE(s.record.end_reason.find("every trial failed (2 of 2)"), std::string::npos)
      << s.record.end_reason;
  EXPECT_NE(s.record.end_reason.find("cannot decode train-images"), std::string::npos)
      << s.record.end_reason;
}

TEST_F(CoordinatorTest, AWorkerThatCannotRunAStudyHandsTheTrialBackUnfailedAndGetsNoMore) {
  c_.reset();
  Open(/*embedded=*/false);
  const std::string w = Worker(), other = Worker();
  const int64_t id = Study(Config("{type: fifo}", 2, 1));
  Assignment a = Acquire(w);
  ASSERT_TRUE(c_->FailTrial(w, a.lease_id, "data.dir '/nope': no such directory",
                            /*worker_cannot_run=*/true)
                  .ok());
  std::vector<TrialSummary> trials;
  ASSERT_TRUE(c_->ListTrials(id, &trials).ok());
  ASSERT_EQ(trials.size(), 1u);
  EXPECT_EQ(trials[0].record.state, TrialState::kPending);
  EXPECT_NE(trials[0].record.end_reason.find("cannot run it: data.dir '/nope'"),
            std::string::npos);
  EXPECT_EQ(AcquireOnly(*c_, w, 0), AcquireResult::kNoWork);  // barred from the study
  Assignment b = Acquire(other);  // a worker that has the data gets the same trial
  EXPECT_EQ(b.number, a.number);
  StudySummary s;
  ASSERT_TRUE(c_->GetStudy(id, &s).ok());
  EXPECT_EQ(s.record.state, StudyState::kRunning);
}

TEST_F(CoordinatorTest, EmbeddedStudyThatNoLiveWorkerCanRunEndsFailed) {
  const std::string w = Worker();
  const int64_t id = Study(Config("{type: fifo}", 2, 1));
  Assignment a = Acquire(w);
  ASSERT_TRUE(c_->FailTrial(w, a.lease_id, "data.dir '/nope': no such directory", true).ok());
  StudySummary s;
  ASSERT_TRUE(c_->GetStudy(id, &s).ok());
  EXPECT_EQ(s.record.state, StudyState::kFailed);
  EXPECT_NE(s.record.end_reason.find("no worker can run its trials"), std::string::npos);
  EXPECT_EQ(AcquireOnly(*c_, w, 0), AcquireResult::kShutdown);
}

// Study control (pause, resume, budget, audit trail): what `sift pause/resume/budget` and a
// Ctrl-C on `sift run` do to a study.

std::vector<std::string> Actions(const StudySummary& s) {
  std::vector<std::string> out;
  for (const auto& e : s.events) out.push_back(e.user + " " + e.action);
  return out;
}

TEST_F(CoordinatorTest, APausedStudyHandsOutNothingAndItsTrialsHandBackAtTheirNextEpoch) {
  const int64_t id = Study(Config("{type: fifo}", 2, 3));
  const std::string w = Worker();
  Assignment a = Acquire(w);
  EXPECT_EQ(Report(w, a, 1, 1, 0.5).action, Action::kContinue);
  ASSERT_TRUE(c_->PauseStudy(id, "alice", "by hand").ok());
  AcquireResult r;
  Assignment none;
  ASSERT_TRUE(c_->AcquireTrial(Worker(), &r, &none).ok());
  EXPECT_EQ(r, AcquireResult::kNoWork);  // not kShutdown: a paused study can be resumed
  EXPECT_FALSE(c_->AllStudiesFinished());
  const search::Decision d = Report(w, a, 2, 2, 0.6);
  EXPECT_EQ(d.action, Action::kPause);
  EXPECT_EQ(d.reason, "study paused");
  ASSERT_TRUE(c_->CompleteTrial(w, a.lease_id, {}, common::EpochCheckpointName(a.number, 2)).ok());
  std::vector<TrialSummary> trials;
  ASSERT_TRUE(c_->ListTrials(id, &trials).ok());
  EXPECT_EQ(trials.at(0).record.state, TrialState::kPending);  // not parked at a rung
  EXPECT_EQ(trials.at(0).interruptions, 0);
  StudySummary s;
  ASSERT_TRUE(c_->GetStudy(id, &s).ok());
  EXPECT_EQ(s.record.state, StudyState::kPaused);
  EXPECT_EQ(s.record.end_reason, "paused by alice (by hand)");
  EXPECT_EQ(s.preemptions, 0);
  // Resumed, the trial continues after its last recorded epoch, from that epoch's checkpoint.
  ASSERT_TRUE(c_->ResumeStudy(id, "bob").ok());
  Assignment again = Acquire(w);
  EXPECT_EQ(again.number, a.number);
  EXPECT_EQ(again.start_epoch, 2);
  EXPECT_EQ(again.resume_checkpoint, common::EpochCheckpointName(a.number, 2));
  ASSERT_TRUE(c_->GetStudy(id, &s).ok());
  EXPECT_EQ(Actions(s),
            std::vector<std::string>({"unknown created", "alice paused", "bob resumed"}));
  // Pausing twice is a no-op; an ended study can be neither paused nor resumed.
  ASSERT_TRUE(c_->CancelStudy(id, "carol").ok());
  EXPECT_EQ(c_->PauseStudy(id, "alice").code, Status::Code::kFailedPrecondition);
  EXPECT_EQ(c_->ResumeStudy(id, "alice").code, Status::Code::kFailedPrecondition);
  ASSERT_TRUE(c_->GetStudy(id, &s).ok());
  EXPECT_EQ(Actions(s).back(), "carol cancelled");
}

TEST_F(CoordinatorTest, AWorkerStoppedByAPauseIsNoPreemptionAndItsTrialResumesAfterARestart) {
  const int64_t id = Study(Config("{type: fifo}", 2, 3));
  const std::string w = Worker();
  Assignment a = Acquire(w);
  Report(w, a, 1, 1, 0.5);
  Assignment b = Acquire(w);
  ASSERT_TRUE(c_->PauseStudy(id, "alice", "SIGINT").ok());
  // Worker a checkpoints mid-epoch and hands back (SIGTERM from `sift run`); b is killed.
  const std::string mid = common::PreemptCheckpointName(a.number, 1, 7);
  ASSERT_TRUE(c_->PreemptTrial(w, a.lease_id, mid, "SIGTERM").ok());
  clock_.Advance(4);
  EXPECT_EQ(c_->InterruptLeases(id), 1);
  StudySummary s;
  ASSERT_TRUE(c_->GetStudy(id, &s).ok());
  EXPECT_EQ(s.preemptions, 0);
  EXPECT_EQ(s.expirations, 0);
  EXPECT_EQ(s.running, 0);
  EXPECT_GT(s.wasted_dollars, 0.0);  // b's four seconds since it started are lost work
  c_.reset();
  Open();
  ASSERT_TRUE(c_->GetStudy(id, &s).ok());
  EXPECT_EQ(s.record.state, StudyState::kPaused);
  ASSERT_TRUE(c_->ResumeStudy(id, "alice", "sift run").ok());
  Assignment first = Acquire(w);
  EXPECT_EQ(first.number, a.number);
  EXPECT_EQ(first.start_epoch, 1);
  EXPECT_EQ(first.resume_checkpoint, mid);
  EXPECT_EQ(Acquire(w).number, b.number);
}

TEST_F(CoordinatorTest, BudgetChangesAreCheckedApplyToTheNextWorkAndSurviveARestart) {
  const int64_t id = Study(Config("{type: fifo}", 4, 1));
  const std::string w = Worker();
  Assignment a = Acquire(w);
  auto problem = [&](BudgetChange c) { return c_->UpdateBudget(id, c, "alice").message; };
  EXPECT_EQ(problem({}), "nothing to change: give max_dollars, max_hours or max_trials");
  EXPECT_EQ(problem({-1.0, std::nullopt, std::nullopt}),
            "max_dollars: must be a number > 0, got -1");
  EXPECT_EQ(problem({std::nullopt, 0.0, std::nullopt}), "max_hours: must be a number > 0, got 0");
  EXPECT_EQ(problem({std::nullopt, std::nullopt, 0}), "max_trials: must be >= 1, got 0");
  EXPECT_EQ(c_->UpdateBudget(id, {std::nullopt, std::nullopt, 0}, "alice").code,
            Status::Code::kInvalidArgument);
  EXPECT_EQ(c_->UpdateBudget(99, {5.0, std::nullopt, std::nullopt}, "alice").code,
            Status::Code::kNotFound);
  ASSERT_TRUE(c_->UpdateBudget(id, {5.0, std::nullopt, 2}, "alice").ok());
  c_.reset();
  Open();
  StudySummary s;
  ASSERT_TRUE(c_->GetStudy(id, &s).ok());
  EXPECT_EQ(s.budget.max_trials, 2);
  EXPECT_EQ(s.max_trials, 2);
  EXPECT_EQ(s.budget.max_dollars, 5.0);
  EXPECT_EQ(Actions(s), std::vector<std::string>({"unknown created", "alice budget"}));
  EXPECT_EQ(s.events.back().detail, R"({"max_dollars":5.0,"max_trials":2})");
  // Two trials, not the config's four: the second is the last one handed out.
  Report(w, a, 1, 1, 0.5);
  ASSERT_TRUE(c_->CompleteTrial(w, a.lease_id, {}).ok());
  Assignment b = Acquire(w);
  EXPECT_EQ(problem({std::nullopt, std::nullopt, 1}),
            "max_trials: 1 is fewer than the 2 trials already created");
  Report(w, b, 1, 1, 0.6);
  ASSERT_TRUE(c_->CompleteTrial(w, b.lease_id, {}).ok());
  ASSERT_TRUE(c_->GetStudy(id, &s).ok());
  EXPECT_EQ(s.record.state, StudyState::kCompleted);
  EXPECT_EQ(s.record.end_reason, "all 2 trials finished");
  EXPECT_EQ(c_->UpdateBudget(id, {std::nullopt, std::nullopt, 3}, "alice").code,
            Status::Code::kFailedPrecondition);
}

TEST_F(CoordinatorTest, PausedTimeDoesNotCountAgainstMaxHoursAcrossARestart) {
  const int64_t id = Study(Config("{type: fifo}", 3, 1, ", max_hours: 1"));
  const std::string w = Worker();
  clock_.Advance(1800);
  ASSERT_TRUE(c_->PauseStudy(id, "alice", "SIGHUP").ok());
  clock_.Advance(3 * 3600);  // overnight
  c_.reset();
  Open();
  ASSERT_TRUE(c_->ResumeStudy(id, "alice").ok());
  Acquire(w);  // 30 minutes of the hour spent, not three and a half hours
  clock_.Advance(1801);
  AcquireResult r;
  Assignment none;
  ASSERT_TRUE(c_->AcquireTrial(w, &r, &none).ok());
  EXPECT_EQ(r, AcquireResult::kNoWork);  // now the hour is up
}


class EvaluationTest : public CoordinatorTest {
 protected:
  // Three one-epoch trials with val_accuracy 0.5, 0.9, 0.7: trial 1 is the best.
  int64_t FinishedStudy(const std::string& w) {
    const int64_t id = Study(Config("{type: fifo}", 3, 1));
    for (double acc : {0.5, 0.9, 0.7}) {
      Assignment a = Acquire(w);
      EXPECT_FALSE(a.evaluate_test);
      Report(w, a, 1, 1, acc);
      WriteCheckpoint(id, common::EpochCheckpointName(a.number, 1));
      EXPECT_TRUE(c_->CompleteTrial(w, a.lease_id, {{"peak_rss_mb", 1}}).ok());
    }
    return id;
  }
  std::map<int64_t, std::optional<EvaluationRecord>> Evaluations(int64_t id) {
    std::vector<TrialSummary> trials;
    EXPECT_TRUE(c_->ListTrials(id, &trials).ok());
    std::map<int64_t, std::optional<EvaluationRecord>> out;
    for (const auto& t : trials) out[t.record.number] = t.evaluation;
    return out;
  }
};

TEST_F(EvaluationTest, BestTrialIsScoredOnTestOnceWhenTheStudyCompletes) {
  const std::string w = Worker();
  const int64_t id = FinishedStudy(w);
  StudySummary s;
  ASSERT_TRUE(c_->GetStudy(id, &s).ok());
  EXPECT_EQ(s.record.state, StudyState::kCompleted);
  EXPECT_FALSE(c_->AllStudiesFinished());  // the best trial's score is still owed

  Assignment e = Acquire(w);
  EXPECT_TRUE(e.evaluate_test);
  EXPECT_EQ(e.number, 1);
  EXPECT_EQ(e.resume_checkpoint, common::EpochCheckpointName(1, 1));
  EXPECT_TRUE(e.resume_fallbacks.empty());
  EXPECT_TRUE(std::get<std::string>(e.params.at("model")) == "mlp");
  auto evals = Evaluations(id);
  ASSERT_TRUE(evals[1]);
  EXPECT_EQ(evals[1]->state, EvaluationState::kRunning);
  EXPECT_EQ(evals[1]->requested_by, "best trial");
  EXPECT_FALSE(evals[0]);
  EXPECT_FALSE(evals[2]);
  // The worker may read exactly that checkpoint, and only it.
  std::string path;
  EXPECT_TRUE(c_->CheckpointPath(w, e.lease_id, e.resume_checkpoint, &path).ok());
  EXPECT_FALSE(c_->CheckpointPath(w, e.lease_id, common::EpochCheckpointName(0, 1), &path).ok());
  std::vector<std::string> revoked;
  ASSERT_TRUE(c_->Heartbeat(w, {e.lease_id}, &revoked).ok());
  EXPECT_TRUE(revoked.empty());

  ASSERT_TRUE(c_->CompleteTrial(w, e.lease_id, {{"test_accuracy", 0.88}}).ok());
  evals = Evaluations(id);
  ASSERT_TRUE(evals[1]);
  EXPECT_EQ(evals[1]->state, EvaluationState::kDone);
  EXPECT_EQ(evals[1]->metrics.at("test_accuracy"), 0.88);
  EXPECT_FALSE(evals[0]);
  EXPECT_TRUE(c_->AllStudiesFinished());
  // Trials' own records carry no test score; asking again for the best one changes nothing.
  std::vector<TrialSummary> trials;
  c_->ListTrials(id, &trials);
  for (const auto& t : trials) EXPECT_EQ(t.record.final_metrics.count("test_accuracy"), 0u);
  ASSERT_TRUE(c_->RequestEvaluation(id, 1, "me").ok());
  AcquireResult r;
  Assignment none;
  ASSERT_TRUE(c_->AcquireTrial(w, &r, &none).ok());
  EXPECT_EQ(r, AcquireResult::kShutdown);
}

TEST_F(EvaluationTest, ALostEvaluationLeaseIsRequeuedAndARestartKeepsIt) {
  const std::string w1 = Worker();
  const int64_t id = FinishedStudy(w1);
  Assignment e = Acquire(w1);
  ASSERT_TRUE(e.evaluate_test);
  const std::string w2 = Worker();
  clock_.Advance(11);  // w1 went silent past the lease timeout
  c_->Tick();
  EXPECT_EQ(Evaluations(id)[1]->state, EvaluationState::kPending);
  EXPECT_EQ(c_->CompleteTrial(w1, e.lease_id, {{"test_accuracy", 0.1}}).code,
            Status::Code::kFailedPrecondition);
  Assignment again = Acquire(w2);
  EXPECT_TRUE(again.evaluate_test);
  EXPECT_EQ(again.number, 1);
  // The coordinator restarts while w2 scores: the evaluation is still owed, and runs again.
  c_.reset();
  Open();
  EXPECT_FALSE(c_->AllStudiesFinished());
  EXPECT_EQ(Evaluations(id)[1]->state, EvaluationState::kPending);
  const std::string w3 = Worker();
  Assignment third = Acquire(w3);
  EXPECT_TRUE(third.evaluate_test);
  ASSERT_TRUE(c_->CompleteTrial(w3, third.lease_id, {{"test_accuracy", 0.87}}).ok());
  c_.reset();
  Open();
  EXPECT_EQ(Evaluations(id)[1]->state, EvaluationState::kDone);
  EXPECT_EQ(Evaluations(id)[1]->metrics.at("test_accuracy"), 0.87);
  EXPECT_TRUE(c_->AllStudiesFinished());
}

TEST_F(EvaluationTest, AnyFinishedTrialCanBeScoredOnRequestAndFailuresAreKept) {
  const std::string w = Worker();
  const int64_t id = Study(Config("{type: fifo}", 2, 1));
  Assignment a = Acquire(w);
  // A running trial has no model yet.
  EXPECT_EQ(c_->RequestEvaluation(id, a.number, "me").code, Status::Code::kFailedPrecondition);
  EXPECT_EQ(c_->RequestEvaluation(id, 7, "me").code, Status::Code::kNotFound);
  EXPECT_EQ(c_->RequestEvaluation(99, 0, "me").code, Status::Code::kNotFound);
  Report(w, a, 1, 1, 0.6);
  ASSERT_TRUE(c_->CompleteTrial(w, a.lease_id, {}).ok());
  TrialSummary t;
  ASSERT_TRUE(c_->RequestEvaluation(id, 0, "alice", &t).ok());
  ASSERT_TRUE(t.evaluation);
  EXPECT_EQ(t.evaluation->state, EvaluationState::kPending);
  EXPECT_EQ(t.evaluation->requested_by, "alice");
  // A requested evaluation goes out before the study's remaining trial.
  Assignment e = Acquire(w);
  EXPECT_TRUE(e.evaluate_test);
  EXPECT_EQ(e.number, 0);
  ASSERT_TRUE(c_->FailTrial(w, e.lease_id, "checkpoint damaged").ok());
  auto evals = Evaluations(id);
  EXPECT_EQ(evals[0]->state, EvaluationState::kFailed);
  EXPECT_EQ(evals[0]->error, "checkpoint damaged");
  // The trial itself is untouched by its evaluation's failure.
  std::vector<TrialSummary> trials;
  c_->ListTrials(id, &trials);
  EXPECT_EQ(trials[0].record.state, TrialState::kCompleted);
  // A failed one can be asked for again.
  ASSERT_TRUE(c_->RequestEvaluation(id, 0, "alice").ok());
  EXPECT_EQ(Evaluations(id)[0]->state, EvaluationState::kPending);
}

TEST_F(EvaluationTest, ATrialWithoutACheckpointIsNotScored) {
  const std::string w = Worker();
  const int64_t id = Study(Config("{type: fifo}", 1, 1));
  Assignment a = Acquire(w);
  Report(w, a, 1, 1, 0.6, /*checkpointed=*/false);
  ASSERT_TRUE(c_->CompleteTrial(w, a.lease_id, {}).ok());
  EXPECT_FALSE(Evaluations(id)[0]);
  EXPECT_EQ(c_->RequestEvaluation(id, 0, "me").code, Status::Code::kFailedPrecondition);
  EXPECT_TRUE(c_->AllStudiesFinished());
}

}  // namespace
}  // namespace sift::coordinator
