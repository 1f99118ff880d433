#include "worker/worker_client.h"

#include <spdlog/spdlog.h>

#include <chrono>
#include <cstdlib>
#include <thread>

#include "worker/builtin_runner.h"
#include "worker/command_runner.h"
#include "worker/coordinator_link.h"
#include "worker/spot_simulator.h"

namespace sift::worker {

// The loop around the runners: acquire a lease, hand it to the runner for its kind of trial.
struct WorkerClient::Impl {
  Impl(const WorkerOptions& options, std::atomic<bool>* stop)
      : link(options, stop),
        spot(options.simulate_preemption, options.preemption_seed, &link, stop),
        builtin(&link, &spot, stop),
        command(&link, &spot, stop, options.trial_log_dir) {}

  CoordinatorLink link;
  SpotSimulator spot;
  BuiltinRunner builtin;
  CommandRunner command;

  TrialRunner& RunnerFor(const v1::TrialAssignment& a) {
    if (a.command_size() > 0) return command;
    return builtin;
  }

  // The lease is dropped from the heartbeat on every exit, so an abandoned one can expire and be
  // requeued.
  void RunTrial(const v1::TrialAssignment& a) {
    link.SetLease(a.lease_id());
    if (!a.evaluate_test()) spot.Schedule(a);  // an evaluation trains nothing to preempt
    RunnerFor(a).Run(a);
    link.SetLease("");
  }
};

WorkerClient::WorkerClient(WorkerOptions options)
    : impl_(std::make_unique<Impl>(options, &stop_)) {}

WorkerClient::~WorkerClient() = default;

int WorkerClient::Run() {
  Impl& w = *impl_;
  CoordinatorLink& link = w.link;
  const WorkerOptions& options = link.options();
  if (grpc::Status s = link.Register(); !s.ok()) {
    spdlog::error("cannot register with {}: {}", options.client.address, s.error_message());
    return 1;
  }
  link.StartHeartbeat();
  // The grace-period watchdog: once a stop is requested, checkpointing and handing back get
  // grace_seconds; past that the process leaves as the VM would be taken anyway. It ends with
  // this loop (joined on every return below): a loop that returned in time is not killed later,
  // and the watchdog never reads stop_ of a WorkerClient that is gone.
  std::atomic<bool> loop_over{false};
  std::thread watchdog([this, &loop_over, grace = options.grace_seconds] {
    const auto nap = std::chrono::milliseconds(50);
    while (!stop_ && !loop_over) std::this_thread::sleep_for(nap);
    const auto until = std::chrono::steady_clock::now() +
                       std::chrono::milliseconds(static_cast<int64_t>(grace * 1000));
    while (!loop_over && std::chrono::steady_clock::now() < until) std::this_thread::sleep_for(nap);
    if (loop_over) return;
    spdlog::error("grace period of {:.0f} s over; leaving now", grace);
    spdlog::default_logger()->flush();
    std::_Exit(0);
  });
  struct EndWatchdog {
    std::atomic<bool>& over;
    std::thread& thread;
    ~EndWatchdog() {
      over = true;
      thread.join();
    }
  } end_watchdog{loop_over, watchdog};
  while (!stop_) {
    v1::AcquireTrialRequest req;
    req.set_worker_id(link.worker_id());
    if (options.exit_when_idle) req.set_idle_exit_seconds(options.idle_exit_seconds);
    v1::AcquireTrialResponse resp;
    grpc::Status s = link.Call("AcquireTrial", [&] {
      return link.stub()->AcquireTrial(link.Context().get(), req, &resp);
    });
    if (s.error_code() == grpc::StatusCode::NOT_FOUND) {
      spdlog::warn("coordinator does not know this worker ({}); registering again",
                   s.error_message());
      if (!link.Register().ok()) return 1;
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
        if (options.exit_when_idle) {
          spdlog::info(
              "coordinator has no more work for this worker (idle exit after {:.0f} s, "
              "or the run is over); exiting, no lease held",
              options.idle_exit_seconds);
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
