// The Coordinator without gRPC: study life cycle, leases, idempotence, budgets, restart.
#include "tests/coordinator/core/coordinator_test.h"

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

namespace sift::coordinator {
namespace coordinator_test {

using search::Action;
using search::TrialState;

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
  struct rlimit old {};
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
    EXPECT_EQ(c_->CheckpointPath(w2, b.lease_id, bad, &path).code, Status::Code::kInvalidArgument)
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
  EXPECT_EQ(
      c_->ReportProgress(w1, a.lease_id, 4, 4, {{"val_accuracy", 0.8}}, "trial-3-e4.ckpt", &d).code,
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
  const int64_t id =
      Study(Config("{type: asha, variant: promotion, min_resource: 1, eta: 2}", 2, 2) +
            "checkpoint: {every_epochs: 5}\n");
  Assignment a = Acquire(w);
  ASSERT_EQ(Report(w, a, 1, 1, 0.9, /*checkpointed=*/false).action, Action::kPause);
  EXPECT_EQ(c_->CompleteTrial(w, a.lease_id, {}, "x.ckpt").code, Status::Code::kInvalidArgument);
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
  Report(w, a, 1, 1, 0.5, /*checkpointed=*/false);         // no model: no test evaluation after
  ASSERT_TRUE(c_->CompleteTrial(w, a.lease_id, {}).ok());  // one epoch cost $0.010
  Assignment b = Acquire(w);                               // $0.010 + ~$0.010 fits in $0.025
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
  clock_.Advance(6);                                         // $0.012 now, over the $0.01 budget
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

}  // namespace coordinator_test
}  // namespace sift::coordinator
