#include "worker/coordinator_link.h"

#include <unistd.h>

#include <filesystem>
#include <stdexcept>

#include "common/posix_fs.h"
#include "worker/checkpoint_transfer.h"
#include "worker/scratch_dirs.h"

namespace sift::worker {

namespace fs = std::filesystem;

CoordinatorLink::CoordinatorLink(const WorkerOptions& options, std::atomic<bool>* stop)
    : options_(options), stop_(stop) {
  SweepDeadScratchOnce("sift-worker-");
  scratch_dir_ = ScratchPath("sift-worker-");
  grpc::ChannelArguments args;
  args.SetMaxReceiveMessageSize(16 << 20);
  // gRPC waits 1 s, then up to 120 s, between reconnects: a worker would idle (billed) that
  // long after a restarted coordinator is back. At most 2 s here (with Call's wait for the
  // connection, a worker was back 0.6-1.8 s after a 3-30 s outage; 6.8-9.8 s before). The
  // minimum stays: it is also the connect timeout, and 200 ms cuts handshakes short.
  args.SetInt(GRPC_ARG_INITIAL_RECONNECT_BACKOFF_MS, 200);
  args.SetInt(GRPC_ARG_MAX_RECONNECT_BACKOFF_MS, 2000);
  // A connection of its own, as a worker process has: links in one process (the soak's
  // simulated workers, tests/soak) would otherwise share one through gRPC's global pool.
  args.SetInt(GRPC_ARG_USE_LOCAL_SUBCHANNEL_POOL, 1);
  channel_ = common::MakeChannel(options_.client, args);
  stub_ = v1::Workers::NewStub(channel_);
}

CoordinatorLink::~CoordinatorLink() {
  common::RemoveAll(scratch_dir_);
  {
    std::lock_guard<std::mutex> lock(mu_);
    quit_ = true;
  }
  cv_.notify_all();
  if (heartbeat_.joinable()) heartbeat_.join();
}

std::unique_ptr<grpc::ClientContext> CoordinatorLink::Context(double timeout_s) const {
  return common::MakeContext(options_.client.token, timeout_s);
}

grpc::Status CoordinatorLink::Register() {
  v1::RegisterWorkerRequest req;
  req.set_name(options_.name);
  req.set_instance_type(options_.instance_type);
  req.set_market(options_.market == "spot" ? v1::MARKET_SPOT : v1::MARKET_ON_DEMAND);
  req.set_price_per_hour(options_.price_per_hour);
  req.set_device(options_.device);
  req.set_threads(options_.threads);
  v1::RegisterWorkerResponse resp;
  grpc::Status s =
      Call("RegisterWorker", [&] { return stub_->RegisterWorker(Context().get(), req, &resp); });
  if (s.ok()) {
    {
      // The heartbeat thread reads both under mu_ (and a NOT_FOUND registers again while it
      // runs); this thread, their only writer, reads them without.
      std::lock_guard<std::mutex> lock(mu_);
      worker_id_ = resp.worker_id();
      heartbeat_ms_ = std::max(100, resp.heartbeat_interval_ms());
    }
    spdlog::info("registered as {} at ${:.4f}/h", worker_id_, resp.price_per_hour());
  }
  return s;
}

void CoordinatorLink::StartHeartbeat() {
  if (!heartbeat_.joinable()) heartbeat_ = std::thread([this] { HeartbeatLoop(); });
}

void CoordinatorLink::HeartbeatLoop() {
  std::unique_lock<std::mutex> lock(mu_);
  while (!quit_) {
    cv_.wait_for(lock, std::chrono::milliseconds(heartbeat_ms_));
    if (quit_ || lease_id_.empty()) continue;
    v1::HeartbeatRequest req;
    req.set_worker_id(worker_id_);
    req.add_lease_ids(lease_id_);
    lock.unlock();
    v1::HeartbeatResponse resp;
    grpc::Status s = stub_->Heartbeat(Context(5).get(), req, &resp);
    lock.lock();
    if (s.ok() && resp.revoked_lease_ids_size() > 0 && resp.revoked_lease_ids(0) == lease_id_) {
      spdlog::warn("lease {} was revoked; abandoning the trial", lease_id_);
      revoked_ = true;
    }
  }
}

void CoordinatorLink::SetLease(const std::string& id) {
  std::lock_guard<std::mutex> lock(mu_);
  lease_id_ = id;
  revoked_ = false;
}

std::string CoordinatorLink::lease() const {
  std::lock_guard<std::mutex> lock(mu_);
  return lease_id_;
}

void CoordinatorLink::Fail(const v1::TrialAssignment& a, const std::string& error,
                           bool cannot_run) {
  if (cannot_run) {
    spdlog::error("trial {}: this worker cannot run study {}: {}; handing it back",
                  a.trial_number(), a.study_id(), error);
  } else {
    spdlog::error("trial {} failed: {}", a.trial_number(), error);
  }
  v1::FailTrialRequest req;
  req.set_worker_id(worker_id_);
  req.set_lease_id(a.lease_id());
  req.set_error(error);
  req.set_worker_cannot_run(cannot_run);
  v1::FailTrialResponse resp;
  Call("FailTrial", [&] { return stub_->FailTrial(Context().get(), req, &resp); });
}

grpc::Status CoordinatorLink::Preempt(const v1::TrialAssignment& a, const std::string& checkpoint,
                                      const std::string& reason) {
  v1::PreemptTrialRequest req;
  req.set_worker_id(worker_id_);
  req.set_lease_id(a.lease_id());
  req.set_checkpoint(checkpoint);
  req.set_reason(reason);
  v1::PreemptTrialResponse resp;
  return Call("PreemptTrial", [&] { return stub_->PreemptTrial(Context().get(), req, &resp); });
}

grpc::Status CoordinatorLink::Report(const v1::TrialAssignment& a, v1::ReportProgressRequest* req,
                                     v1::ReportProgressResponse* resp) {
  req->set_worker_id(worker_id_);
  req->set_lease_id(a.lease_id());
  return Call("ReportProgress", [&] { return stub_->ReportProgress(Context().get(), *req, resp); });
}

grpc::Status CoordinatorLink::Complete(const v1::TrialAssignment& a,
                                       v1::CompleteTrialRequest* req) {
  req->set_worker_id(worker_id_);
  req->set_lease_id(a.lease_id());
  v1::CompleteTrialResponse resp;
  return Call("CompleteTrial", [&] { return stub_->CompleteTrial(Context().get(), *req, &resp); });
}

std::string CoordinatorLink::LocalCheckpoint(const v1::TrialAssignment& a,
                                             const std::string& name) {
  const std::string dir = a.checkpoint_dir().empty() ? scratch_dir_ : a.checkpoint_dir();
  if (std::string p = common::CreateDirectories(dir); !p.empty()) throw std::runtime_error(p);
  return dir + "/" + name;
}

std::string CoordinatorLink::StoreCheckpoint(const v1::TrialAssignment& a,
                                             const std::string& name) {
  if (!a.checkpoint_dir().empty()) return "";
  const std::string path = LocalCheckpoint(a, name);
  grpc::Status s = Call("UploadCheckpoint", [&] {
    return UploadCheckpoint(
        stub_.get(), [this] { return Context(120); }, worker_id_, a.lease_id(), path, name);
  });
  common::Remove(path);  // the coordinator holds it now (or the upload failed)
  return s.ok() ? "" : "checkpoint upload failed: " + s.error_message();
}

std::string CoordinatorLink::FetchCheckpoint(const v1::TrialAssignment& a, const std::string& name,
                                             const std::string& path, bool* missing) {
  *missing = false;
  if (!a.checkpoint_dir().empty()) {
    *missing = !fs::exists(path);
    return *missing ? "no checkpoint " + path : "";
  }
  grpc::Status s = Call("DownloadCheckpoint", [&] {
    return DownloadCheckpoint(
        stub_.get(), [this] { return Context(120); }, worker_id_, a.lease_id(), name, path);
  });
  *missing = s.error_code() == grpc::StatusCode::NOT_FOUND ||
             s.error_code() == grpc::StatusCode::DATA_LOSS;
  return s.ok() ? "" : "cannot fetch checkpoint " + name + ": " + s.error_message();
}

}  // namespace sift::worker
