// Acquisition on its own, over a real SQLite store: registration's checks, a lease handed out
// and stored, and a worker that finds no work told to leave; the study-level steps it asks of
// the Coordinator are recorded by the hooks here.
#include "coordinator/core/acquisition.h"

#include <gtest/gtest.h>

#include "search/rng.h"
#include "tests/coordinator/state_fixture.h"

namespace sift::coordinator {
namespace acquisition_test {

using search::TrialState;

// What the acquisition asked of the Coordinator: no evaluations here.
struct RecordedHooks : Acquisition::Hooks {
  bool AssignEvaluation(const std::string&, const WorkerTable::Worker&, double,
                        Assignment*) override {
    ++evaluation_asks;
    return false;
  }
  bool EvaluationsOpen() override { return false; }
  void MaybeFinishStudy(ServedStudy&, double) override { ++finish_checks; }
  int evaluation_asks = 0;
  int finish_checks = 0;
};

class AcquisitionTest : public testing::StateFixture {
 protected:
  AcquisitionTest() : StateFixture("sift-acquisition") {}
  void Open(CoordinatorOptions o) {
    StateFixture::Open(std::move(o));
    acquisition_ = std::make_unique<Acquisition>(*state_, hooks_);
  }
  // A worker registered at a dollar a second; its id.
  std::string Register(const std::string& name) {
    WorkerRecord w, out;
    w.name = name;
    w.market = "on-demand";
    w.price_per_hour = 3600;
    EXPECT_TRUE(acquisition_->RegisterWorker(w, &out).ok());
    return out.id;
  }

  RecordedHooks hooks_;
  std::unique_ptr<Acquisition> acquisition_;
};

TEST_F(AcquisitionTest, RegistrationNamesWhatIsWrong) {
  Open({});
  WorkerRecord w, out;
  w.market = "reserved";
  Status s = acquisition_->RegisterWorker(w, &out);
  EXPECT_EQ(s.code, Status::Code::kInvalidArgument);
  EXPECT_NE(s.message.find("market: 'reserved'"), std::string::npos) << s.message;
  w.market = "spot";
  w.price_per_hour = -1;
  s = acquisition_->RegisterWorker(w, &out);
  EXPECT_NE(s.message.find("price_per_hour"), std::string::npos) << s.message;
  w.price_per_hour = 0;
  w.instance_type = "no-such-machine";
  s = acquisition_->RegisterWorker(w, &out);
  EXPECT_EQ(s.code, Status::Code::kInvalidArgument);
  EXPECT_NE(s.message.find("--price-per-hour"), std::string::npos) << s.message;
  EXPECT_TRUE(state_->store_->ListWorkers().empty());  // none of them stored

  const std::string id = Register("gpu-1");
  ASSERT_EQ(state_->store_->ListWorkers().size(), 1u);
  EXPECT_EQ(state_->store_->ListWorkers()[0].id, id);
  std::lock_guard<std::mutex> table(state_->table_mu_);
  ASSERT_NE(state_->workers_.Find(id), nullptr);
  EXPECT_EQ(state_->workers_.Find(id)->record.name, "gpu-1");
}

TEST_F(AcquisitionTest, ALeaseIsStoredBeforeTheWorkerHearsOfIt) {
  Open({});
  auto study = ServeStudy(1);
  AcquireResult result = AcquireResult::kNoWork;
  Assignment a;
  const Status unknown = acquisition_->AcquireTrial("w-nobody", &result, &a, 0);
  EXPECT_EQ(unknown.code, Status::Code::kNotFound);
  EXPECT_NE(unknown.message.find("w-nobody"), std::string::npos) << unknown.message;

  const std::string w = Register("gpu-1");
  ASSERT_TRUE(acquisition_->AcquireTrial(w, &result, &a, 0).ok());
  ASSERT_EQ(result, AcquireResult::kAssigned);
  EXPECT_EQ(hooks_.evaluation_asks, 1);  // evaluations first, and only to a known worker
  EXPECT_EQ(a.study_id, study->id());
  EXPECT_EQ(a.number, 0);
  EXPECT_EQ(a.max_epochs, 3);
  EXPECT_EQ(a.seed, search::DeriveSeed(7, {0}));
  EXPECT_EQ(a.params.count("lr"), 1u);
  const auto trials = state_->store_->ListTrials(study->id());
  ASSERT_EQ(trials.size(), 1u);
  EXPECT_EQ(trials[0].state, TrialState::kRunning);
  const auto segments = state_->store_->ListSegments(study->id());
  ASSERT_EQ(segments.size(), 1u);
  EXPECT_EQ(segments[0].lease_id, a.lease_id);
  EXPECT_EQ(segments[0].worker_id, w);
  EXPECT_FALSE(segments[0].end.has_value());
  TrialLease* held = nullptr;
  EXPECT_TRUE(state_->CheckLease(study.get(), w, a.lease_id, &held).ok());
}

TEST_F(AcquisitionTest, AWorkerWithoutWorkIsBilledIdleAndToldToLeaveAtItsIdleExit) {
  Open({});
  auto study = ServeStudy(1);
  const std::string busy = Register("gpu-1"), idle = Register("gpu-2");
  AcquireResult result = AcquireResult::kNoWork;
  Assignment a;
  ASSERT_TRUE(acquisition_->AcquireTrial(busy, &result, &a, 0).ok());
  ASSERT_EQ(result, AcquireResult::kAssigned);

  ASSERT_TRUE(acquisition_->AcquireTrial(idle, &result, &a, 30).ok());
  EXPECT_EQ(result, AcquireResult::kNoWork);  // the study's one trial is taken
  EXPECT_EQ(hooks_.finish_checks, 1);         // asked whether the study is done
  clock_.Advance(10);
  ASSERT_TRUE(acquisition_->AcquireTrial(idle, &result, &a, 30).ok());
  EXPECT_EQ(result, AcquireResult::kNoWork);
  clock_.Advance(25);
  ASSERT_TRUE(acquisition_->AcquireTrial(idle, &result, &a, 30).ok());
  EXPECT_EQ(result, AcquireResult::kShutdown);
  const auto stretches = state_->store_->ListIdleSegments(0);
  ASSERT_EQ(stretches.size(), 1u);  // it had worked for no study
  EXPECT_EQ(stretches[0].worker_id, idle);
  EXPECT_EQ(stretches[0].end - stretches[0].start, 35);
  EXPECT_EQ(stretches[0].end_reason, "idle-exit");
}

TEST_F(AcquisitionTest, AnEmbeddedRunSendsWorkersHomeOnceAllIsDone) {
  CoordinatorOptions o;
  o.shutdown_when_idle = true;
  Open(o);
  const std::string w = Register("cpu-1");
  AcquireResult result = AcquireResult::kNoWork;
  Assignment a;
  auto study = ServeStudy(1);
  {
    std::lock_guard<std::mutex> lock(study->mu);
    study->runner->ApplyStudyState(StudyState::kCompleted, "done");
  }
  ASSERT_TRUE(acquisition_->AcquireTrial(w, &result, &a, 0).ok());
  EXPECT_EQ(result, AcquireResult::kShutdown);
  EXPECT_TRUE(state_->store_->ListSegments(study->id()).empty());
}

}  // namespace acquisition_test
}  // namespace sift::coordinator
