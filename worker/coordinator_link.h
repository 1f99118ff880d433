// The worker's side of the Workers service: one channel, calls retried through coordinator
// outages, registration, the heartbeat that keeps the current lease alive, the trial RPCs, and
// checkpoint files moved to and from the coordinator (or a shared directory). No training here.
#pragma once

#include <grpcpp/grpcpp.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <memory>
#include <mutex>
#include <string>
#include <thread>

#include "sift/v1/workers_service.grpc.pb.h"
#include "worker/worker_client.h"

namespace sift::worker {

class CoordinatorLink {
 public:
  // `stop` (the worker's stop request) ends retries early.
  CoordinatorLink(const WorkerOptions& options, std::atomic<bool>* stop);
  ~CoordinatorLink();
  CoordinatorLink(const CoordinatorLink&) = delete;
  CoordinatorLink& operator=(const CoordinatorLink&) = delete;

  const WorkerOptions& options() const { return options_; }
  const std::string& worker_id() const { return worker_id_; }
  v1::Workers::Stub* stub() { return stub_.get(); }
  std::unique_ptr<grpc::ClientContext> Context(double timeout_s = 30) const;

  // Calls `rpc` until it succeeds, fails for good, or the coordinator stays unreachable for
  // retry_seconds. A retried report carries the same seq, so the coordinator applies it once.
  template <typename Fn>
  grpc::Status Call(const char* what, Fn rpc);

  grpc::Status Register();
  void StartHeartbeat();

  // The lease the heartbeat renews ("" for none); revoked() says the coordinator took it back.
  void SetLease(const std::string& id);
  std::string lease() const;
  bool revoked() const { return revoked_; }

  // `cannot_run`: the trial is fine, this machine cannot run it (its data is missing here).
  void Fail(const v1::TrialAssignment& a, const std::string& error, bool cannot_run = false);
  // Hands the trial back with `checkpoint` ("" if none could be taken); logs the outcome.
  grpc::Status Preempt(const v1::TrialAssignment& a, const std::string& checkpoint,
                       const std::string& reason);
  // Fills worker and lease ids.
  grpc::Status Report(const v1::TrialAssignment& a, v1::ReportProgressRequest* req,
                      v1::ReportProgressResponse* resp);
  grpc::Status Complete(const v1::TrialAssignment& a, v1::CompleteTrialRequest* req);

  // Where checkpoint `name` lives on this machine: the shared directory, or a scratch copy that
  // is uploaded to (and downloaded from) the coordinator.
  std::string LocalCheckpoint(const v1::TrialAssignment& a, const std::string& name);
  // After the file at LocalCheckpoint(a, name) was written: uploads it when there is no shared
  // directory (and removes the local copy). Returns "" or the problem.
  std::string StoreCheckpoint(const v1::TrialAssignment& a, const std::string& name);
  // Fetches the checkpoint `name` to `path` (a download, or the shared directory). "" or the
  // problem; `missing` says that the coordinator or the directory does not have it.
  std::string FetchCheckpoint(const v1::TrialAssignment& a, const std::string& name,
                              const std::string& path, bool* missing);

 private:
  void HeartbeatLoop();

  WorkerOptions options_;
  std::atomic<bool>* stop_;
  std::shared_ptr<grpc::Channel> channel_;
  std::unique_ptr<v1::Workers::Stub> stub_;
  // Set by Register under mu_ (the heartbeat thread reads them under it); Register's caller is
  // their only writer and reads them without.
  std::string worker_id_;
  int heartbeat_ms_ = 5000;
  std::string scratch_dir_;  // checkpoints on their way to or from the coordinator

  mutable std::mutex mu_;
  std::condition_variable cv_;
  std::string lease_id_;
  std::atomic<bool> revoked_{false};
  bool quit_ = false;
  std::thread heartbeat_;
};

template <typename Fn>
grpc::Status CoordinatorLink::Call(const char* what, Fn rpc) {
  using Clock = std::chrono::steady_clock;
  const auto deadline =
      Clock::now() + std::chrono::milliseconds(static_cast<int64_t>(options_.retry_seconds * 1000));
  int backoff_ms = 200;
  while (true) {
    grpc::Status s = rpc();
    // CANCELLED: the worker cancels nothing itself; a coordinator stopping gracefully answers it
    // to a call that arrives as it shuts down (seen in WorkerClientTest under load), which is
    // the same outage as UNAVAILABLE and ended the worker before.
    const bool retryable = s.error_code() == grpc::StatusCode::UNAVAILABLE ||
                           s.error_code() == grpc::StatusCode::DEADLINE_EXCEEDED ||
                           s.error_code() == grpc::StatusCode::CANCELLED;
    if (s.ok() || !retryable || Clock::now() > deadline || *stop_) return s;
    spdlog::warn("{}: coordinator unreachable ({}); retrying in {} ms", what, s.error_message(),
                 backoff_ms);
    const auto until = std::chrono::system_clock::now() + std::chrono::milliseconds(backoff_ms);
    if (channel_->GetState(false) == GRPC_CHANNEL_READY) {
      // Connected, and the coordinator itself answered UNAVAILABLE (busy storage) or was slow:
      // back off in full rather than retry at once.
      std::this_thread::sleep_until(until);
    } else {
      // Calls fail at once while the channel waits to reconnect, so sleeping blindly could
      // miss a restarted coordinator by a whole backoff: wait for the connection instead.
      channel_->WaitForConnected(until);
    }
    backoff_ms = std::min(backoff_ms * 2, 5000);
  }
}

}  // namespace sift::worker
