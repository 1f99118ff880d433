// The gRPC services over a real coordinator and SQLite, called through the generated stubs: each
// RPC's answer, the status code and message of each kind of bad input, and roles. An exception
// inside a handler answers INTERNAL with what went wrong (gRPC's own catch says only "Unexpected
// error in RPC handling"), and the coordinator keeps serving.
#include <SQLiteCpp/SQLiteCpp.h>
#include <grpcpp/grpcpp.h>
#include <gtest/gtest.h>
#include <unistd.h>
#include <zlib.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <future>
#include <iterator>
#include <optional>
#include <thread>

#include "common/checkpoint_file.h"
#include "common/data/data_spec.h"
#include "coordinator/rpc/client.h"
#include "coordinator/core/coordinator.h"
#include "coordinator/rpc/server.h"
#include "tests/coordinator/test_clock.h"
#include "sift/v1/workers_service.grpc.pb.h"

namespace sift::coordinator {
namespace {

TEST(ServicesTest, AnExceptionInAHandlerAnswersInternalWithItsMessage) {
  const auto db = std::filesystem::temp_directory_path() /
                  ("sift-services-" + std::to_string(getpid()) + ".db");
  for (const char* s : {"", "-wal", "-shm"}) std::filesystem::remove(db.string() + s);
  {
    Coordinator c(OpenSqliteStore(db.string()), {});
    int64_t id = 0;
    std::vector<std::string> errors;
    const std::string config =
        "name: t\nsearch_space:\n  lr: {type: float, low: 0.001, high: 0.1}\n";
    ASSERT_TRUE(c.CreateStudy(config, "t.yaml", &id, &errors).ok());
    WorkerRecord in, w;
    in.market = "on-demand";
    in.price_per_hour = 1;
    ASSERT_TRUE(c.RegisterWorker(in, &w).ok());
    AcquireResult result;
    Assignment a;
    ASSERT_TRUE(c.AcquireTrial(w.id, &result, &a).ok());
    search::Decision d;
    ASSERT_TRUE(c.ReportProgress(w.id, a.lease_id, 1, 1, {{"val_accuracy", 0.5}}, "", &d).ok());

    Server server(&c, "127.0.0.1:0");
    // Something no sift wrote: the next read of the study's reports throws.
    SQLite::Database(db.string(), SQLite::OPEN_READWRITE)
        .exec("UPDATE reports SET metrics = '{\"val_loss\":[1]}'");
    auto stub = v1::Studies::NewStub(MakeChannel("127.0.0.1:" + std::to_string(server.port())));
    v1::ListTrialsRequest req;
    req.set_study_id(id);
    v1::ListTrialsResponse resp;
    grpc::Status s = stub->ListTrials(MakeContext("").get(), req, &resp);
    EXPECT_EQ(s.error_code(), grpc::StatusCode::INTERNAL) << s.error_message();
    EXPECT_NE(s.error_message().find("ListTrials: report of trial 0 epoch 1.val_loss"),
              std::string::npos)
        << s.error_message();
    // The service is still up and answers what it can.
    v1::ListStudiesResponse studies;
    EXPECT_TRUE(stub->ListStudies(MakeContext("").get(), v1::ListStudiesRequest(), &studies).ok());
    EXPECT_EQ(studies.studies_size(), 1);
    server.Shutdown();
  }
  for (const char* s : {"", "-wal", "-shm"}) std::filesystem::remove(db.string() + s);
}

// ---- Every RPC through the generated stubs, over a real server, Coordinator and SQLite file.

const char* kConfig =
    "name: svc\n"
    "objective: {metric: val_accuracy, direction: maximize}\n"
    "search_space:\n"
    "  lr: {type: float, low: 0.001, high: 0.1, scale: log}\n"
    "budget: {max_trials: 2, max_epochs: 2}\n";

class ServicesRpcTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::temp_directory_path() /
           ("sift-services-" + std::to_string(getpid()) + "-" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    std::filesystem::remove_all(dir_);
    std::filesystem::create_directories(dir_);
  }
  void TearDown() override {
    Stop();
    std::filesystem::remove_all(dir_);
  }

  void Start(ServerSecurity security = {}) {
    CoordinatorOptions o;
    o.checkpoint_dir = (dir_ / "checkpoints").string();
    o.heartbeat_interval_s = 0.5;
    o.lease_timeout_s = 30;
    o.config_limits.max_bytes = 4096;
    if (use_test_clock_) o.clock = clock_.fn();
    coordinator_ = std::make_unique<Coordinator>(OpenSqliteStore((dir_ / "sift.db").string()), o);
    server_ = std::make_unique<Server>(coordinator_.get(), "127.0.0.1:0", std::move(security));
    auto channel = MakeChannel("127.0.0.1:" + std::to_string(server_->port()));
    studies_ = v1::Studies::NewStub(channel);
    workers_ = v1::Workers::NewStub(channel);
  }
  void Stop() {
    server_.reset();
    coordinator_.reset();
  }

  // A context as `sift` makes one (MakeContext), from user `user` instead of $USER.
  static std::unique_ptr<grpc::ClientContext> As(const std::string& user,
                                                 const std::string& token = "") {
    auto ctx = std::make_unique<grpc::ClientContext>();
    if (!token.empty()) ctx->AddMetadata("authorization", "Bearer " + token);
    ctx->AddMetadata("x-sift-user", user);
    ctx->set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(10));
    return ctx;
  }

  int64_t Create(const std::string& config = kConfig) {
    v1::CreateStudyRequest req;
    req.set_config(config);
    req.set_config_path("svc.yaml");
    v1::CreateStudyResponse resp;
    grpc::Status s = studies_->CreateStudy(As("alice").get(), req, &resp);
    EXPECT_TRUE(s.ok()) << s.error_message();
    return resp.study().id();
  }

  std::string Register(const std::string& name = "w") {
    v1::RegisterWorkerRequest req;
    req.set_name(name);
    req.set_instance_type("local-cpu");
    req.set_price_per_hour(1.5);
    req.set_threads(1);
    v1::RegisterWorkerResponse resp;
    grpc::Status s = workers_->RegisterWorker(MakeContext("").get(), req, &resp);
    EXPECT_TRUE(s.ok()) << s.error_message();
    return resp.worker_id();
  }

  v1::AcquireTrialResponse Acquire(const std::string& worker, double idle_exit_s = 0) {
    v1::AcquireTrialRequest req;
    req.set_worker_id(worker);
    req.set_idle_exit_seconds(idle_exit_s);
    v1::AcquireTrialResponse resp;
    grpc::Status s = workers_->AcquireTrial(MakeContext("").get(), req, &resp);
    EXPECT_TRUE(s.ok()) << s.error_message();
    return resp;
  }

  grpc::Status Report(const std::string& worker, const std::string& lease, int64_t seq,
                      int64_t epoch, double value, v1::ReportProgressResponse* resp,
                      const std::string& checkpoint = "") {
    v1::ReportProgressRequest req;
    req.set_worker_id(worker);
    req.set_lease_id(lease);
    req.set_seq(seq);
    req.set_epoch(epoch);
    (*req.mutable_metrics())["val_accuracy"] = value;
    req.set_checkpoint(checkpoint);
    return workers_->ReportProgress(MakeContext("").get(), req, resp);
  }

  grpc::Status Complete(const std::string& worker, const std::string& lease,
                        const std::string& checkpoint = "") {
    v1::CompleteTrialRequest req;
    req.set_worker_id(worker);
    req.set_lease_id(lease);
    (*req.mutable_final_metrics())["val_accuracy"] = 0.75;
    req.set_checkpoint(checkpoint);
    v1::CompleteTrialResponse resp;
    return workers_->CompleteTrial(MakeContext("").get(), req, &resp);
  }

  // Streams `data` as checkpoint `name` in chunks of `chunk` bytes; `crc` overrides the CRC.
  grpc::Status Upload(const std::string& worker, const std::string& lease, const std::string& name,
                      const std::string& data, bool last = true,
                      std::optional<uint32_t> crc = std::nullopt) {
    v1::UploadCheckpointResponse resp;
    auto ctx = MakeContext("");
    auto writer = workers_->UploadCheckpoint(ctx.get(), &resp);
    const size_t chunk = 7;
    for (size_t at = 0; at < data.size(); at += chunk) {
      v1::CheckpointChunk c;
      c.set_worker_id(worker);
      c.set_lease_id(lease);
      c.set_name(name);
      c.set_offset(static_cast<int64_t>(at));
      c.set_data(data.substr(at, chunk));
      if (last && at + chunk >= data.size()) {
        c.set_last(true);
        c.set_total_size(static_cast<int64_t>(data.size()));
        c.set_crc32(crc ? *crc
                        : static_cast<uint32_t>(crc32(0, reinterpret_cast<const Bytef*>(data.data()),
                                                      static_cast<uInt>(data.size()))));
      }
      if (!writer->Write(c)) break;
    }
    writer->WritesDone();
    grpc::Status s = writer->Finish();
    if (s.ok()) {
      EXPECT_EQ(resp.size(), static_cast<int64_t>(data.size()));
    }
    return s;
  }

  grpc::Status Download(const std::string& worker, const std::string& lease,
                        const std::string& name, std::string* data) {
    v1::DownloadCheckpointRequest req;
    req.set_worker_id(worker);
    req.set_lease_id(lease);
    req.set_name(name);
    auto ctx = MakeContext("");
    auto reader = workers_->DownloadCheckpoint(ctx.get(), req);
    v1::CheckpointChunk c;
    data->clear();
    while (reader->Read(&c)) {
      EXPECT_EQ(c.offset(), static_cast<int64_t>(data->size()));
      *data += c.data();
    }
    return reader->Finish();
  }

  // The bytes of a checkpoint file holding `payload`, as a worker writes one.
  std::string CheckpointBytes(const std::string& payload) {
    const std::string path = (dir_ / "framed.ckpt").string();
    common::WriteFramedFile(path, common::kCheckpointMagic, common::kCheckpointVersion, payload);
    std::ifstream in(path, std::ios::binary);
    return std::string(std::istreambuf_iterator<char>(in), {});
  }

  std::filesystem::path dir_;
  bool use_test_clock_ = false;  // set before Start: the coordinator reads clock_, not the system's
  testing::TestClock clock_;
  std::unique_ptr<Coordinator> coordinator_;
  std::unique_ptr<Server> server_;
  std::unique_ptr<v1::Studies::Stub> studies_;
  std::unique_ptr<v1::Workers::Stub> workers_;
};

#define EXPECT_STATUS(status, code, text)                                           \
  do {                                                                              \
    const grpc::Status s_ = (status);                                               \
    EXPECT_EQ(s_.error_code(), grpc::StatusCode::code) << s_.error_message();       \
    EXPECT_NE(s_.error_message().find(text), std::string::npos) << s_.error_message(); \
  } while (0)

TEST_F(ServicesRpcTest, StudiesRpcsAnswerWithTheStudyAsItIsNow) {
  Start();
  v1::CreateStudyRequest create;
  create.set_config(kConfig);
  create.set_config_path("svc.yaml");
  v1::CreateStudyResponse created;
  ASSERT_TRUE(studies_->CreateStudy(As("alice").get(), create, &created).ok());
  const v1::Study& s = created.study();
  EXPECT_GT(s.id(), 0);
  EXPECT_EQ(s.name(), "svc");
  EXPECT_EQ(s.state(), v1::STUDY_RUNNING);
  EXPECT_EQ(s.objective_metric(), "val_accuracy");
  EXPECT_TRUE(s.maximize());
  EXPECT_EQ(s.max_trials(), 2);
  EXPECT_EQ(s.trials_total(), 0);
  ASSERT_GE(s.events_size(), 1);
  EXPECT_EQ(s.events(0).action(), "created");
  EXPECT_EQ(s.events(0).user(), "alice");
  EXPECT_EQ(s.events(0).detail(), "svc.yaml");

  v1::GetStudyRequest get;
  get.set_study_id(s.id());
  v1::Study got;
  ASSERT_TRUE(studies_->GetStudy(As("bob").get(), get, &got).ok());
  EXPECT_EQ(got.id(), s.id());
  EXPECT_EQ(got.name(), "svc");
  v1::ListStudiesResponse list;
  ASSERT_TRUE(studies_->ListStudies(As("bob").get(), v1::ListStudiesRequest(), &list).ok());
  ASSERT_EQ(list.studies_size(), 1);
  EXPECT_EQ(list.studies(0).id(), s.id());

  v1::PauseStudyRequest pause;
  pause.set_study_id(s.id());
  v1::Study paused;
  ASSERT_TRUE(studies_->PauseStudy(As("bob").get(), pause, &paused).ok());
  EXPECT_EQ(paused.state(), v1::STUDY_PAUSED);
  EXPECT_EQ(paused.events(paused.events_size() - 1).user(), "bob");
  v1::ResumeStudyRequest resume;
  resume.set_study_id(s.id());
  v1::Study resumed;
  ASSERT_TRUE(studies_->ResumeStudy(As("bob").get(), resume, &resumed).ok());
  EXPECT_EQ(resumed.state(), v1::STUDY_RUNNING);

  v1::UpdateBudgetRequest budget;
  budget.set_study_id(s.id());
  budget.set_max_trials(5);
  budget.set_max_dollars(2.5);
  v1::Study updated;
  ASSERT_TRUE(studies_->UpdateBudget(As("carol").get(), budget, &updated).ok());
  EXPECT_EQ(updated.max_trials(), 5);
  EXPECT_DOUBLE_EQ(updated.max_dollars(), 2.5);
  EXPECT_DOUBLE_EQ(updated.max_hours(), 0);  // not set in the request: unchanged
  EXPECT_EQ(updated.events(updated.events_size() - 1).user(), "carol");

  v1::CancelStudyRequest cancel;
  cancel.set_study_id(s.id());
  v1::Study cancelled;
  ASSERT_TRUE(studies_->CancelStudy(As("dave").get(), cancel, &cancelled).ok());
  EXPECT_EQ(cancelled.state(), v1::STUDY_CANCELLED);
  // An ended study cannot be paused, resumed or rebudgeted.
  EXPECT_STATUS(studies_->PauseStudy(As("bob").get(), pause, &paused), FAILED_PRECONDITION, "");
  EXPECT_STATUS(studies_->ResumeStudy(As("bob").get(), resume, &resumed), FAILED_PRECONDITION, "");
  EXPECT_STATUS(studies_->UpdateBudget(As("bob").get(), budget, &updated), FAILED_PRECONDITION,
                "");
}

TEST_F(ServicesRpcTest, AnUnknownStudyIsNotFoundOnEveryStudiesRpc) {
  Start();
  Create();
  const int64_t id = 42;
  v1::Study study;
  v1::GetStudyRequest get;
  get.set_study_id(id);
  EXPECT_STATUS(studies_->GetStudy(As("a").get(), get, &study), NOT_FOUND, "no study 42");
  v1::ListTrialsRequest trials;
  trials.set_study_id(id);
  v1::ListTrialsResponse trials_resp;
  EXPECT_STATUS(studies_->ListTrials(As("a").get(), trials, &trials_resp), NOT_FOUND, "42");
  v1::CancelStudyRequest cancel;
  cancel.set_study_id(id);
  EXPECT_STATUS(studies_->CancelStudy(As("a").get(), cancel, &study), NOT_FOUND, "42");
  v1::PauseStudyRequest pause;
  pause.set_study_id(id);
  EXPECT_STATUS(studies_->PauseStudy(As("a").get(), pause, &study), NOT_FOUND, "42");
  v1::ResumeStudyRequest resume;
  resume.set_study_id(id);
  EXPECT_STATUS(studies_->ResumeStudy(As("a").get(), resume, &study), NOT_FOUND, "42");
  v1::UpdateBudgetRequest budget;
  budget.set_study_id(id);
  budget.set_max_trials(3);
  EXPECT_STATUS(studies_->UpdateBudget(As("a").get(), budget, &study), NOT_FOUND, "42");
  v1::EvaluateTrialRequest evaluate;
  evaluate.set_study_id(id);
  v1::Trial trial;
  EXPECT_STATUS(studies_->EvaluateTrial(As("a").get(), evaluate, &trial), NOT_FOUND, "42");
  // The known study is untouched.
  v1::ListStudiesResponse list;
  ASSERT_TRUE(studies_->ListStudies(As("a").get(), v1::ListStudiesRequest(), &list).ok());
  ASSERT_EQ(list.studies_size(), 1);
  EXPECT_EQ(list.studies(0).state(), v1::STUDY_RUNNING);
}

TEST_F(ServicesRpcTest, ABadConfigIsRefusedWithWhereItIsWrongAndCreatesNothing) {
  Start();
  v1::CreateStudyRequest req;
  req.set_config_path("bad.yaml");
  v1::CreateStudyResponse resp;
  // YAML that does not parse: the file and the line.
  req.set_config("name: bad\nsearch_space:\n  lr: type: float\nbudget: {max_trials: 2}\n");
  grpc::Status s = studies_->CreateStudy(As("a").get(), req, &resp);
  EXPECT_EQ(s.error_code(), grpc::StatusCode::INVALID_ARGUMENT) << s.error_message();
  EXPECT_NE(s.error_message().find("invalid study config"), std::string::npos) << s.error_message();
  EXPECT_NE(s.error_message().find("bad.yaml:3:"), std::string::npos) << s.error_message();
  // Valid YAML, wrong values: each field by its path.
  req.set_config(
      "name: bad\nsearch_space:\n  lr: {type: float, low: 0, high: 0.1, scale: log}\n"
      "budget: {max_trials: -1}\nscheduler: {type: nope}\n");
  s = studies_->CreateStudy(As("a").get(), req, &resp);
  EXPECT_EQ(s.error_code(), grpc::StatusCode::INVALID_ARGUMENT) << s.error_message();
  for (const char* field : {"search_space.lr", "budget.max_trials", "scheduler"}) {
    EXPECT_NE(s.error_message().find(field), std::string::npos) << field << "\n"
                                                                << s.error_message();
  }
  // Over the coordinator's size limit: refused before parsing, naming the limit.
  req.set_config(std::string(5000, '#'));
  s = studies_->CreateStudy(As("a").get(), req, &resp);
  EXPECT_EQ(s.error_code(), grpc::StatusCode::RESOURCE_EXHAUSTED) << s.error_message();
  EXPECT_NE(s.error_message().find("bad.yaml: 5000 bytes, over the limit of 4096"),
            std::string::npos)
      << s.error_message();
  v1::ListStudiesResponse list;
  ASSERT_TRUE(studies_->ListStudies(As("a").get(), v1::ListStudiesRequest(), &list).ok());
  EXPECT_EQ(list.studies_size(), 0);
}

TEST_F(ServicesRpcTest, WorkerRpcsRunATrialFromLeaseToCompletion) {
  use_test_clock_ = true;  // the idle exit below is timed on it, not on this machine's load
  Start();
  const int64_t study = Create();
  v1::RegisterWorkerRequest reg;
  reg.set_name("w1");
  reg.set_instance_type("local-cpu");
  reg.set_market(v1::MARKET_SPOT);
  reg.set_price_per_hour(1.5);
  v1::RegisterWorkerResponse registered;
  ASSERT_TRUE(workers_->RegisterWorker(MakeContext("").get(), reg, &registered).ok());
  const std::string w = registered.worker_id();
  EXPECT_FALSE(w.empty());
  EXPECT_DOUBLE_EQ(registered.price_per_hour(), 1.5);
  EXPECT_EQ(registered.heartbeat_interval_ms(), 500);
  EXPECT_EQ(registered.lease_timeout_ms(), 30000);

  const v1::AcquireTrialResponse acquired = Acquire(w);
  ASSERT_EQ(acquired.status(), v1::AcquireTrialResponse::ASSIGNED);
  const v1::TrialAssignment& a = acquired.assignment();
  EXPECT_EQ(a.study_id(), study);
  EXPECT_EQ(a.trial_number(), 0);
  EXPECT_FALSE(a.lease_id().empty());
  EXPECT_EQ(a.max_epochs(), 2);
  EXPECT_EQ(a.start_epoch(), 0);
  EXPECT_EQ(a.objective_metric(), "val_accuracy");
  EXPECT_EQ(a.resume_checkpoint(), "");
  EXPECT_EQ(a.checkpoint_dir(), "");  // not shared: checkpoints go through the service
  ASSERT_EQ(a.params().count("lr"), 1u);
  EXPECT_EQ(a.command_size(), 0);
  // The worker trains on the spec's JSON (kept per study, not made per acquisition).
  const data::DataSpec spec = data::DataSpecFromJson(a.data().spec_json());
  EXPECT_EQ(spec.dir, a.data().dir());
  EXPECT_EQ(spec.val_size, a.data().val_size());

  v1::HeartbeatRequest hb;
  hb.set_worker_id(w);
  hb.add_lease_ids(a.lease_id());
  hb.add_lease_ids("not-a-lease");
  v1::HeartbeatResponse hb_resp;
  ASSERT_TRUE(workers_->Heartbeat(MakeContext("").get(), hb, &hb_resp).ok());
  ASSERT_EQ(hb_resp.revoked_lease_ids_size(), 1);
  EXPECT_EQ(hb_resp.revoked_lease_ids(0), "not-a-lease");

  v1::ReportProgressResponse r1, again, r2;
  ASSERT_TRUE(Report(w, a.lease_id(), 1, 1, 0.5, &r1).ok());
  EXPECT_EQ(r1.decision(), v1::DECISION_CONTINUE);
  ASSERT_TRUE(Report(w, a.lease_id(), 1, 1, 0.5, &again).ok());  // a retry: the same answer
  EXPECT_EQ(again.decision(), r1.decision());
  EXPECT_EQ(again.reason(), r1.reason());
  ASSERT_TRUE(Report(w, a.lease_id(), 2, 2, 0.6, &r2).ok());
  EXPECT_EQ(r2.decision(), v1::DECISION_CONTINUE);
  EXPECT_EQ(r2.reason(), "max epochs reached (2)");
  ASSERT_TRUE(Complete(w, a.lease_id()).ok());
  // The lease ended with the trial.
  EXPECT_STATUS(Complete(w, a.lease_id()), FAILED_PRECONDITION, "is not held");

  v1::ListTrialsRequest lt;
  lt.set_study_id(study);
  lt.set_include_reports(true);
  v1::ListTrialsResponse trials;
  ASSERT_TRUE(studies_->ListTrials(As("a").get(), lt, &trials).ok());
  ASSERT_EQ(trials.trials_size(), 1);
  const v1::Trial& t = trials.trials(0);
  EXPECT_EQ(t.state(), v1::TRIAL_COMPLETED);
  EXPECT_EQ(t.epochs(), 2);
  EXPECT_TRUE(t.has_objective());
  EXPECT_DOUBLE_EQ(t.objective(), 0.6);
  EXPECT_DOUBLE_EQ(t.final_metrics().at("val_accuracy"), 0.75);
  ASSERT_EQ(t.reports_size(), 2);
  EXPECT_EQ(t.reports(1).epoch(), 2);
  EXPECT_GE(t.cost_dollars(), 0);
  lt.set_include_reports(false);
  ASSERT_TRUE(studies_->ListTrials(As("a").get(), lt, &trials).ok());
  EXPECT_EQ(trials.trials(0).reports_size(), 0);

  // The second (last) trial fails; then there is nothing left, and a worker that asks to leave
  // when idle is told to once it has waited that long.
  const v1::AcquireTrialResponse second = Acquire(w);
  ASSERT_EQ(second.status(), v1::AcquireTrialResponse::ASSIGNED);
  EXPECT_EQ(second.assignment().trial_number(), 1);
  v1::FailTrialRequest fail;
  fail.set_worker_id(w);
  fail.set_lease_id(second.assignment().lease_id());
  fail.set_error("out of memory");
  v1::FailTrialResponse failed;
  ASSERT_TRUE(workers_->FailTrial(MakeContext("").get(), fail, &failed).ok());
  const v1::AcquireTrialResponse none = Acquire(w);
  EXPECT_EQ(none.status(), v1::AcquireTrialResponse::NO_WORK);
  EXPECT_EQ(none.retry_after_ms(), 500);
  EXPECT_EQ(Acquire(w, 0.05).status(), v1::AcquireTrialResponse::NO_WORK);  // idle 0 of 0.05 s
  clock_.Advance(0.1);
  EXPECT_EQ(Acquire(w, 0.05).status(), v1::AcquireTrialResponse::SHUTDOWN);
  ASSERT_TRUE(studies_->ListTrials(As("a").get(), lt, &trials).ok());
  ASSERT_EQ(trials.trials_size(), 2);
  EXPECT_EQ(trials.trials(1).state(), v1::TRIAL_FAILED);
  EXPECT_NE(trials.trials(1).end_reason().find("out of memory"), std::string::npos)
      << trials.trials(1).end_reason();
}

TEST_F(ServicesRpcTest, AReportIsAnsweredOnlyOnceCommittedAndItsRetryMeanwhileTheSame) {
  Start();
  const int64_t study = Create();
  const std::string w = Register();
  const std::string lease = Acquire(w).assignment().lease_id();
  // Another connection holds the database's write lock (as another process could): the
  // coordinator's commit waits for it (busy_timeout).
  SQLite::Database other((dir_ / "sift.db").string(), SQLite::OPEN_READWRITE);
  other.exec("BEGIN IMMEDIATE");
  struct Call {
    grpc::ClientContext ctx;
    v1::ReportProgressRequest req;
    v1::ReportProgressResponse resp;
    std::promise<grpc::Status> status;
  };
  auto send = [&](Call& c) {
    c.ctx.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(30));
    c.req.set_worker_id(w);
    c.req.set_lease_id(lease);
    c.req.set_seq(1);
    c.req.set_epoch(1);
    (*c.req.mutable_metrics())["val_accuracy"] = 0.5;
    workers_->async()->ReportProgress(&c.ctx, &c.req, &c.resp,
                                      [&c](grpc::Status s) { c.status.set_value(s); });
    return c.status.get_future();
  };
  auto stored = [&] {
    return OpenSqliteStoreReadOnly((dir_ / "sift.db").string())->ListReports(study).size();
  };
  Call first, retry;
  auto first_status = send(first);
  EXPECT_EQ(first_status.wait_for(std::chrono::milliseconds(300)), std::future_status::timeout);
  auto retry_status = send(retry);  // the worker gave up waiting and sent it again
  EXPECT_EQ(retry_status.wait_for(std::chrono::milliseconds(200)), std::future_status::timeout);
  EXPECT_EQ(stored(), 0u);
  other.exec("COMMIT");
  const grpc::Status s1 = first_status.get(), s2 = retry_status.get();
  ASSERT_TRUE(s1.ok()) << s1.error_message();
  ASSERT_TRUE(s2.ok()) << s2.error_message();
  EXPECT_EQ(stored(), 1u);
  EXPECT_EQ(first.resp.decision(), v1::DECISION_CONTINUE);
  EXPECT_EQ(retry.resp.decision(), first.resp.decision());
  EXPECT_EQ(retry.resp.reason(), first.resp.reason());
  // The next epoch is decided on it.
  v1::ReportProgressResponse second;
  ASSERT_TRUE(Report(w, lease, 2, 2, 0.6, &second).ok());
  EXPECT_EQ(second.reason(), "max epochs reached (2)");
  EXPECT_EQ(stored(), 2u);
}

TEST_F(ServicesRpcTest, WorkerRpcsRefuseUnknownWorkersAndLeasesNotTheirs) {
  Start();
  Create();
  v1::AcquireTrialRequest acquire;
  acquire.set_worker_id("nobody");
  v1::AcquireTrialResponse acquired;
  EXPECT_STATUS(workers_->AcquireTrial(MakeContext("").get(), acquire, &acquired), NOT_FOUND,
                "unknown worker 'nobody': register first");
  v1::HeartbeatRequest hb;
  hb.set_worker_id("nobody");
  v1::HeartbeatResponse hb_resp;
  EXPECT_STATUS(workers_->Heartbeat(MakeContext("").get(), hb, &hb_resp), NOT_FOUND,
                "unknown worker 'nobody'");

  const std::string w1 = Register("w1"), w2 = Register("w2");
  const auto a = Acquire(w1).assignment();
  v1::ReportProgressResponse resp;
  EXPECT_STATUS(Report(w1, "bogus", 1, 1, 0.5, &resp), FAILED_PRECONDITION,
                "lease 'bogus' is not held (expired, ended or never granted)");
  EXPECT_STATUS(Report(w2, a.lease_id(), 1, 1, 0.5, &resp), FAILED_PRECONDITION,
                "belongs to another worker");
  EXPECT_STATUS(Report("nobody", a.lease_id(), 1, 1, 0.5, &resp), NOT_FOUND, "unknown worker");
  EXPECT_STATUS(Complete(w2, a.lease_id()), FAILED_PRECONDITION, "belongs to another worker");
  v1::PreemptTrialRequest preempt;
  preempt.set_worker_id(w1);
  preempt.set_lease_id(a.lease_id());
  preempt.set_checkpoint("trial-1-e1.ckpt");  // another trial's
  v1::PreemptTrialResponse preempted;
  EXPECT_STATUS(workers_->PreemptTrial(MakeContext("").get(), preempt, &preempted),
                INVALID_ARGUMENT, "trial-1-e1.ckpt");
  // The owner still holds it after all that.
  ASSERT_TRUE(Report(w1, a.lease_id(), 1, 1, 0.5, &resp).ok());
  EXPECT_EQ(resp.decision(), v1::DECISION_CONTINUE);
}

TEST_F(ServicesRpcTest, CheckpointsGoUpAndComeBackAfterAPreemption) {
  Start();
  const int64_t study = Create();
  const std::string w1 = Register("w1"), w2 = Register("w2");
  const auto a = Acquire(w1).assignment();
  const std::string bytes = CheckpointBytes("model weights: " + std::string(100, 'x') + " end");

  // Refused uploads store nothing.
  EXPECT_STATUS(Upload(w1, a.lease_id(), "trial-0-e1.ckpt", "not a checkpoint file"), DATA_LOSS,
                "checkpoint trial-0-e1.ckpt is damaged (truncated");
  EXPECT_STATUS(Upload(w1, a.lease_id(), "trial-0-e1.ckpt", bytes, true, 12345u), DATA_LOSS,
                "CRC");
  EXPECT_STATUS(Upload(w1, a.lease_id(), "trial-0-e1.ckpt", bytes, /*last=*/false),
                INVALID_ARGUMENT, "ended without its last chunk");
  EXPECT_STATUS(Upload(w1, a.lease_id(), "trial-7-e1.ckpt", bytes), INVALID_ARGUMENT,
                "not a checkpoint name of trial 0");
  EXPECT_STATUS(Upload(w2, a.lease_id(), "trial-0-e1.ckpt", bytes), FAILED_PRECONDITION,
                "belongs to another worker");
  std::string down;
  EXPECT_STATUS(Download(w1, a.lease_id(), "trial-0-e1.ckpt", &down), NOT_FOUND, "");

  grpc::Status up = Upload(w1, a.lease_id(), "trial-0-e1.ckpt", bytes);
  ASSERT_TRUE(up.ok()) << up.error_message();
  v1::ReportProgressResponse resp;
  ASSERT_TRUE(Report(w1, a.lease_id(), 1, 1, 0.5, &resp, "trial-0-e1.ckpt").ok());
  v1::PreemptTrialRequest preempt;
  preempt.set_worker_id(w1);
  preempt.set_lease_id(a.lease_id());
  preempt.set_checkpoint("trial-0-e1.ckpt");
  preempt.set_reason("spot notice");
  v1::PreemptTrialResponse preempted;
  ASSERT_TRUE(workers_->PreemptTrial(MakeContext("").get(), preempt, &preempted).ok());

  // Another worker gets the trial back where it was, and the checkpoint with it.
  const auto b = Acquire(w2);
  ASSERT_EQ(b.status(), v1::AcquireTrialResponse::ASSIGNED);
  EXPECT_EQ(b.assignment().study_id(), study);
  EXPECT_EQ(b.assignment().trial_number(), 0);
  EXPECT_EQ(b.assignment().start_epoch(), 1);
  EXPECT_EQ(b.assignment().resume_checkpoint(), "trial-0-e1.ckpt");
  EXPECT_EQ(b.assignment().params().at("lr").DebugString(), a.params().at("lr").DebugString());
  ASSERT_TRUE(Download(w2, b.assignment().lease_id(), "trial-0-e1.ckpt", &down).ok());
  EXPECT_EQ(down, bytes);
  // The old lease is gone with its worker's claim on it.
  EXPECT_STATUS(Download(w1, a.lease_id(), "trial-0-e1.ckpt", &down), FAILED_PRECONDITION,
                "is not held");
}

TEST_F(ServicesRpcTest, EvaluateTrialQueuesAFinishedTrialsTestScoreOnce) {
  Start();
  const int64_t study = Create();
  const std::string w = Register();
  const auto a = Acquire(w).assignment();
  v1::EvaluateTrialRequest req;
  req.set_study_id(study);
  req.set_trial_number(0);
  v1::Trial trial;
  // Still running: nothing to score yet.
  EXPECT_STATUS(studies_->EvaluateTrial(As("a").get(), req, &trial), FAILED_PRECONDITION, "");
  ASSERT_TRUE(Upload(w, a.lease_id(), "trial-0-e2.ckpt", CheckpointBytes("weights")).ok());
  v1::ReportProgressResponse resp;
  ASSERT_TRUE(Report(w, a.lease_id(), 1, 1, 0.5, &resp).ok());
  ASSERT_TRUE(Report(w, a.lease_id(), 2, 2, 0.6, &resp, "trial-0-e2.ckpt").ok());
  ASSERT_TRUE(Complete(w, a.lease_id(), "trial-0-e2.ckpt").ok());
  ASSERT_TRUE(studies_->EvaluateTrial(As("a").get(), req, &trial).ok());
  EXPECT_EQ(trial.number(), 0);
  EXPECT_EQ(trial.state(), v1::TRIAL_COMPLETED);
  EXPECT_EQ(trial.test_evaluation(), "pending");
  EXPECT_EQ(trial.checkpoint(), "trial-0-e2.ckpt");
  req.set_trial_number(9);
  EXPECT_STATUS(studies_->EvaluateTrial(As("a").get(), req, &trial), NOT_FOUND, "9");
}

// Regression: `sift status` (the summary rebuilt from these RPCs' answers) printed `by market: -`
// after dollars were spent, "asked for by ;", "RUNNING ();" and the best model's file without
// its folder, where `sift report` (the coordinator's own summary) printed them right.
TEST_F(ServicesRpcTest, StatusPrintsTheSummaryThatReportPrints) {
  use_test_clock_ = true;  // both summaries are made at the same instant
  Start();
  const int64_t study = Create();
  const std::string w = Register();
  const auto a = Acquire(w).assignment();
  clock_.Advance(60);
  ASSERT_TRUE(Upload(w, a.lease_id(), "trial-0-e2.ckpt", CheckpointBytes("weights")).ok());
  v1::ReportProgressResponse resp;
  ASSERT_TRUE(Report(w, a.lease_id(), 1, 1, 0.5, &resp).ok());
  ASSERT_TRUE(Report(w, a.lease_id(), 2, 2, 0.6, &resp, "trial-0-e2.ckpt").ok());
  ASSERT_TRUE(Complete(w, a.lease_id(), "trial-0-e2.ckpt").ok());
  v1::EvaluateTrialRequest evaluate;
  evaluate.set_study_id(study);
  evaluate.set_trial_number(0);
  v1::Trial evaluated;
  ASSERT_TRUE(studies_->EvaluateTrial(As("erin").get(), evaluate, &evaluated).ok());

  StudyReport direct;
  ASSERT_TRUE(coordinator_->GetStudy(study, &direct.study).ok());
  ASSERT_TRUE(coordinator_->ListTrials(study, &direct.trials).ok());
  StudyReport wire;
  v1::GetStudyRequest get;
  get.set_study_id(study);
  v1::Study got;
  ASSERT_TRUE(studies_->GetStudy(As("a").get(), get, &got).ok());
  wire.study = FromProto(got);
  v1::ListTrialsRequest list;
  list.set_study_id(study);
  v1::ListTrialsResponse trials;
  ASSERT_TRUE(studies_->ListTrials(As("a").get(), list, &trials).ok());
  for (const auto& t : trials.trials()) wire.trials.push_back(FromProto(t));

  const std::string text = FormatSummary(direct);
  EXPECT_EQ(FormatSummary(wire), text);
  EXPECT_NE(text.find("by market: on-demand $0.0250"), std::string::npos) << text;
  EXPECT_NE(text.find("(asked for by erin; scored once)"), std::string::npos) << text;
  EXPECT_NE(text.find("'svc': RUNNING; "), std::string::npos) << text;
  EXPECT_NE(text.find("best trial's model: " + (dir_ / "checkpoints").string() +
                      "/study-" + std::to_string(study) + "/trial-0-e2.ckpt"),
            std::string::npos)
      << text;
}

TEST_F(ServicesRpcTest, RolesDecideWhoMayCallWhatOverPlaintextToo) {
  ServerSecurity security;
  ASSERT_EQ(security.credentials.Add(common::Role::kUser, "user-0123456789abcdef", "test"), "");
  ASSERT_EQ(security.credentials.Add(common::Role::kViewer, "viewer-0123456789abcdef", "test"),
            "");
  ASSERT_EQ(security.credentials.Add(common::Role::kWorker, "worker-0123456789abcdef", "test"),
            "");
  Start(std::move(security));
  v1::CreateStudyRequest create;
  create.set_config(kConfig);
  v1::CreateStudyResponse created;
  EXPECT_STATUS(studies_->CreateStudy(MakeContext("").get(), create, &created), UNAUTHENTICATED,
                "missing 'authorization: Bearer <token>' metadata");
  EXPECT_STATUS(studies_->CreateStudy(MakeContext("user-wrong").get(), create, &created),
                UNAUTHENTICATED, "invalid token");
  EXPECT_STATUS(studies_->CreateStudy(As("v", "viewer-0123456789abcdef").get(), create, &created),
                PERMISSION_DENIED, "a viewer token may not call /sift.v1.Studies/CreateStudy");
  EXPECT_STATUS(
      studies_->CreateStudy(As("w", "worker-0123456789abcdef").get(), create, &created),
      PERMISSION_DENIED, "a worker token may not call /sift.v1.Studies/CreateStudy");
  ASSERT_TRUE(studies_->CreateStudy(As("u", "user-0123456789abcdef").get(), create, &created).ok());
  v1::ListStudiesResponse list;
  EXPECT_TRUE(studies_
                  ->ListStudies(As("v", "viewer-0123456789abcdef").get(),
                                v1::ListStudiesRequest(), &list)
                  .ok());
  EXPECT_EQ(list.studies_size(), 1);
  v1::RegisterWorkerRequest reg;
  reg.set_price_per_hour(1);
  v1::RegisterWorkerResponse registered;
  EXPECT_STATUS(workers_->RegisterWorker(MakeContext("user-0123456789abcdef").get(), reg,
                                         &registered),
                PERMISSION_DENIED, "a user token may not call /sift.v1.Workers/RegisterWorker");
  grpc::Status s =
      workers_->RegisterWorker(MakeContext("worker-0123456789abcdef").get(), reg, &registered);
  EXPECT_TRUE(s.ok()) << s.error_message();
}

}  // namespace
}  // namespace sift::coordinator
