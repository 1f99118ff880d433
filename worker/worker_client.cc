#include "worker/worker_client.h"

#include <grpcpp/grpcpp.h>
#include <spdlog/spdlog.h>
#include <unistd.h>

#include <chrono>
#include <condition_variable>
#include <filesystem>
#include <mutex>
#include <thread>

#include "coordinator/proto_convert.h"
#include "sift/v1/workers_service.grpc.pb.h"
#include "worker/hparams/hparams.h"
#include "worker/trainer/process_stats.h"
#include "worker/trainer/trainer.h"

namespace sift::worker {
namespace {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

bool Retryable(const grpc::Status& s) {
  return s.error_code() == grpc::StatusCode::UNAVAILABLE ||
         s.error_code() == grpc::StatusCode::DEADLINE_EXCEEDED;
}

std::string CheckpointPath(const std::string& dir, int64_t trial, int64_t epoch) {
  return dir + "/trial-" + std::to_string(trial) + "-e" + std::to_string(epoch) + ".ckpt";
}

}  // namespace

struct WorkerClient::Impl {
  WorkerOptions options;
  std::atomic<bool>* stop;
  std::unique_ptr<v1::Workers::Stub> stub;
  std::string worker_id;
  int heartbeat_ms = 5000;

  // The lease the heartbeat thread renews; revoked_ tells the trainer to abandon it.
  std::mutex mu;
  std::condition_variable cv;
  std::string lease_id;
  std::atomic<bool> revoked{false};
  bool quit = false;
  std::thread heartbeat;

  DataSpec cached_spec;
  std::shared_ptr<const Datasets> cached_data;

  std::unique_ptr<grpc::ClientContext> Context(double timeout_s = 30) {
    auto ctx = std::make_unique<grpc::ClientContext>();
    if (!options.token.empty()) ctx->AddMetadata("authorization", "Bearer " + options.token);
    ctx->set_deadline(std::chrono::system_clock::now() +
                      std::chrono::milliseconds(static_cast<int64_t>(timeout_s * 1000)));
    return ctx;
  }

  // Calls `rpc` until it succeeds, fails for good, or the coordinator stays unreachable for
  // retry_seconds. A retried report carries the same seq, so the coordinator applies it once.
  template <typename Fn>
  grpc::Status Call(const char* what, Fn rpc) {
    const auto deadline = Clock::now() + std::chrono::milliseconds(
                                             static_cast<int64_t>(options.retry_seconds * 1000));
    int backoff_ms = 200;
    while (true) {
      grpc::Status s = rpc();
      if (s.ok() || !Retryable(s) || Clock::now() > deadline || *stop) return s;
      spdlog::warn("{}: coordinator unreachable ({}); retrying in {} ms", what, s.error_message(),
                   backoff_ms);
      std::this_thread::sleep_for(std::chrono::milliseconds(backoff_ms));
      backoff_ms = std::min(backoff_ms * 2, 5000);
    }
  }

  grpc::Status Register() {
    v1::RegisterWorkerRequest req;
    req.set_name(options.name);
    req.set_instance_type(options.instance_type);
    req.set_market(options.market == "spot" ? v1::MARKET_SPOT : v1::MARKET_ON_DEMAND);
    req.set_price_per_hour(options.price_per_hour);
    req.set_device(options.device);
    req.set_threads(options.threads);
    v1::RegisterWorkerResponse resp;
    grpc::Status s = Call("RegisterWorker", [&] {
      return stub->RegisterWorker(Context().get(), req, &resp);
    });
    if (s.ok()) {
      worker_id = resp.worker_id();
      heartbeat_ms = std::max(100, resp.heartbeat_interval_ms());
      spdlog::info("registered as {} at ${:.4f}/h", worker_id, resp.price_per_hour());
    }
    return s;
  }

  void HeartbeatLoop() {
    std::unique_lock<std::mutex> lock(mu);
    while (!quit) {
      cv.wait_for(lock, std::chrono::milliseconds(heartbeat_ms));
      if (quit || lease_id.empty()) continue;
      v1::HeartbeatRequest req;
      req.set_worker_id(worker_id);
      req.add_lease_ids(lease_id);
      lock.unlock();
      v1::HeartbeatResponse resp;
      grpc::Status s = stub->Heartbeat(Context(5).get(), req, &resp);
      lock.lock();
      if (s.ok() && resp.revoked_lease_ids_size() > 0 && resp.revoked_lease_ids(0) == lease_id) {
        spdlog::warn("lease {} was revoked; abandoning the trial", lease_id);
        revoked = true;
      }
    }
  }

  void SetLease(const std::string& id) {
    std::lock_guard<std::mutex> lock(mu);
    lease_id = id;
    revoked = false;
  }

  std::shared_ptr<const Datasets> Data(const v1::DataSpec& d) {
    DataSpec spec;
    spec.dir = d.dir();
    spec.train_limit = d.train_limit();
    spec.val_size = d.val_size();
    spec.test_limit = d.test_limit();
    spec.cache_dir = options.cache_dir;
    if (!cached_data || spec.dir != cached_spec.dir || spec.train_limit != cached_spec.train_limit ||
        spec.val_size != cached_spec.val_size || spec.test_limit != cached_spec.test_limit) {
      const auto t0 = Clock::now();
      cached_data = LoadDatasets(spec);
      cached_spec = spec;
      spdlog::info("data {} loaded in {:.2f} s: {} train, {} val, {} test", spec.dir,
                   std::chrono::duration<double>(Clock::now() - t0).count(),
                   cached_data->train.size(), cached_data->val.size(), cached_data->test.size());
    }
    return cached_data;
  }

  void Fail(const v1::TrialAssignment& a, const std::string& error) {
    spdlog::error("trial {} failed: {}", a.trial_number(), error);
    v1::FailTrialRequest req;
    req.set_worker_id(worker_id);
    req.set_lease_id(a.lease_id());
    req.set_error(error);
    v1::FailTrialResponse resp;
    Call("FailTrial", [&] { return stub->FailTrial(Context().get(), req, &resp); });
  }

  // Trains one assigned trial to its end. Never throws: failures become FailTrial. The lease is
  // dropped from the heartbeat on every exit, so an abandoned one can expire and be requeued.
  void RunTrial(const v1::TrialAssignment& a) {
    SetLease(a.lease_id());
    TrainAssigned(a);
    SetLease("");
  }

  void TrainAssigned(const v1::TrialAssignment& a) {
    TrainerOptions topts;
    std::string problem = ParseHParams(coordinator::FromProto(a.params()), &topts.hp);
    if (!problem.empty()) return Fail(a, "bad parameters: " + problem);
    topts.max_epochs = a.max_epochs();
    topts.seed = a.seed();
    topts.device = options.device;
    topts.num_threads = options.threads;
    const std::string& ckpt_dir = a.checkpoint_dir();
    try {
      Trainer trainer(topts, Data(a.data()));
      if (a.start_epoch() > 0) {
        const std::string path = CheckpointPath(ckpt_dir, a.trial_number(), a.start_epoch());
        if (ckpt_dir.empty() || !fs::exists(path)) {
          return Fail(a, "cannot resume at epoch " + std::to_string(a.start_epoch()) +
                             ": no checkpoint " + path);
        }
        trainer.LoadCheckpoint(path);
        spdlog::info("trial {} resumed from {}", a.trial_number(), path);
      }
      if (!ckpt_dir.empty()) fs::create_directories(ckpt_dir);
      int64_t seq = 0;
      bool paused = false;
      double samples_per_second = 0;
      while (trainer.epoch() < a.max_epochs()) {
        EpochMetrics m = trainer.TrainEpoch(stop);
        if (!m.completed || revoked) {
          spdlog::warn("trial {} interrupted in epoch {}; its lease will be requeued",
                       a.trial_number(), trainer.epoch() + 1);
          return;
        }
        samples_per_second = m.samples_per_second;
        // Checkpoint before reporting: every reported epoch can be resumed exactly.
        if (!ckpt_dir.empty()) {
          trainer.SaveCheckpoint(CheckpointPath(ckpt_dir, a.trial_number(), m.epoch));
          std::error_code ec;
          fs::remove(CheckpointPath(ckpt_dir, a.trial_number(), m.epoch - 2), ec);
        }
        v1::ReportProgressRequest req;
        req.set_worker_id(worker_id);
        req.set_lease_id(a.lease_id());
        req.set_seq(++seq);
        req.set_epoch(m.epoch);
        auto& metrics = *req.mutable_metrics();
        metrics["val_accuracy"] = m.val_accuracy;
        metrics["val_loss"] = m.val_loss;
        metrics["train_loss"] = m.train_loss;
        metrics["epoch_seconds"] = m.seconds;
        metrics["samples_per_second"] = m.samples_per_second;
        metrics["data_wait_fraction"] = m.data_wait_fraction;
        if (m.skipped_steps > 0) metrics["skipped_steps"] = static_cast<double>(m.skipped_steps);
        v1::ReportProgressResponse resp;
        grpc::Status s = Call("ReportProgress", [&] {
          return stub->ReportProgress(Context().get(), req, &resp);
        });
        if (s.error_code() == grpc::StatusCode::FAILED_PRECONDITION) {
          spdlog::warn("trial {}: {}; abandoning it", a.trial_number(), s.error_message());
          return;
        }
        if (!s.ok()) {
          spdlog::error("trial {}: report failed: {}", a.trial_number(), s.error_message());
          return;
        }
        if (resp.decision() == v1::DECISION_STOP) break;
        if (resp.decision() == v1::DECISION_PAUSE) {
          paused = true;
          break;
        }
      }
      v1::CompleteTrialRequest req;
      req.set_worker_id(worker_id);
      req.set_lease_id(a.lease_id());
      auto& final_metrics = *req.mutable_final_metrics();
      if (!paused) final_metrics["test_accuracy"] = trainer.TestAccuracy();
      final_metrics["peak_rss_mb"] = PeakRssBytes() / 1048576.0;
      final_metrics["samples_per_second"] = samples_per_second;
      v1::CompleteTrialResponse resp;
      grpc::Status s = Call("CompleteTrial", [&] {
        return stub->CompleteTrial(Context().get(), req, &resp);
      });
      if (!s.ok()) spdlog::warn("trial {}: completion not recorded: {}", a.trial_number(),
                                s.error_message());
    } catch (const std::exception& e) {
      Fail(a, e.what());
    }
  }
};

WorkerClient::WorkerClient(WorkerOptions options) : impl_(std::make_unique<Impl>()) {
  impl_->options = std::move(options);
  impl_->stop = &stop_;
  grpc::ChannelArguments args;
  args.SetMaxReceiveMessageSize(16 << 20);
  impl_->stub = v1::Workers::NewStub(grpc::CreateCustomChannel(
      impl_->options.coordinator, grpc::InsecureChannelCredentials(), args));
}

WorkerClient::~WorkerClient() {
  {
    std::lock_guard<std::mutex> lock(impl_->mu);
    impl_->quit = true;
  }
  impl_->cv.notify_all();
  if (impl_->heartbeat.joinable()) impl_->heartbeat.join();
}

int WorkerClient::Run() {
  Impl& w = *impl_;
  if (grpc::Status s = w.Register(); !s.ok()) {
    spdlog::error("cannot register with {}: {}", w.options.coordinator, s.error_message());
    return 1;
  }
  w.heartbeat = std::thread([&w] { w.HeartbeatLoop(); });
  while (!stop_) {
    v1::AcquireTrialRequest req;
    req.set_worker_id(w.worker_id);
    v1::AcquireTrialResponse resp;
    grpc::Status s = w.Call("AcquireTrial", [&] {
      return w.stub->AcquireTrial(w.Context().get(), req, &resp);
    });
    if (s.error_code() == grpc::StatusCode::NOT_FOUND) {
      spdlog::warn("coordinator does not know this worker ({}); registering again",
                   s.error_message());
      if (!w.Register().ok()) return 1;
      continue;
    }
    if (!s.ok()) {
      spdlog::error("AcquireTrial: {}", s.error_message());
      return 1;
    }
    switch (resp.status()) {
      case v1::AcquireTrialResponse::ASSIGNED:
        w.RunTrial(resp.assignment());
        break;
      case v1::AcquireTrialResponse::SHUTDOWN:
        if (w.options.exit_when_idle) {
          spdlog::info("coordinator has no more work; exiting");
          return 0;
        }
        [[fallthrough]];
      default:
        std::this_thread::sleep_for(std::chrono::milliseconds(std::max(50, resp.retry_after_ms())));
    }
  }
  spdlog::info("stopping on request");
  return 0;
}

}  // namespace sift::worker
