// The gRPC services over a real coordinator and SQLite, called through the generated stubs:
// the fixture the services suites share (services_studies_test.cc, services_workers_test.cc).
#pragma once

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
#include "coordinator/core/coordinator.h"
#include "coordinator/rpc/client.h"
#include "coordinator/rpc/server.h"
#include "sift/v1/workers_service.grpc.pb.h"
#include "tests/coordinator/test_clock.h"

namespace sift::coordinator {

// ---- Every RPC through the generated stubs, over a real server, Coordinator and SQLite file.

inline const char* kConfig =
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
        c.set_crc32(
            crc ? *crc
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

#define EXPECT_STATUS(status, code, text)                                              \
  do {                                                                                 \
    const grpc::Status s_ = (status);                                                  \
    EXPECT_EQ(s_.error_code(), grpc::StatusCode::code) << s_.error_message();          \
    EXPECT_NE(s_.error_message().find(text), std::string::npos) << s_.error_message(); \
  } while (0)

}  // namespace sift::coordinator
