// sift-worker: trains trials for a coordinator, or one trial standalone (`sift-worker train`).
#include <spdlog/spdlog.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <iostream>
#include <mutex>
#include <nlohmann/json.hpp>
#include <optional>
#include <thread>

#include "common/config/config.h"
#include "common/main_guard.h"
#include "worker/export_command.h"
#include "worker/standalone.h"
#include "worker/stop_signals.h"
#include "worker/worker_client.h"

int Main(int argc, char** argv) {
  CLI::App app{"sift-worker: trains Sift trials with LibTorch"};
  sift::worker::WorkerOptions o;
  o.name = "worker-" + std::to_string(getpid());
  sift::common::AddClientFlags(&app, &o.client);
  app.add_option("--name", o.name, "name shown in logs and reports");
  app.add_option("--instance-type", o.instance_type, "price catalog key");
  app.add_option("--market", o.market, "on-demand or spot")
      ->check(CLI::IsMember({"on-demand", "spot"}));
  app.add_option("--price-per-hour", o.price_per_hour, "override the catalog price");
  app.add_option("--threads", o.threads, "LibTorch intra-op threads")->check(CLI::Range(1, 256));
  app.add_option("--device", o.device, "cpu, cuda or auto")
      ->check(CLI::IsMember({"cpu", "cuda", "auto"}));
  app.add_option("--cache-dir", o.cache_dir, "preprocessed dataset cache");
  app.add_option("--trial-log-dir", o.trial_log_dir,
                 "where command trials' stdout and stderr are kept, one pair per trial");
  app.add_flag("--exit-when-idle", o.exit_when_idle,
               "exit (0) when no study has work for this worker for --idle-exit-seconds");
  app.add_option("--idle-exit-seconds", o.idle_exit_seconds,
                 "with --exit-when-idle: how long without work before leaving (0: only when the "
                 "coordinator says the run is over)")
      ->check(CLI::NonNegativeNumber);
  app.add_option("--retry-seconds", o.retry_seconds, "keep retrying an unreachable coordinator");
  app.add_option("--simulate-preemption", o.simulate_preemption,
                 "spot simulator: chance in [0,1] that a lease is reclaimed (half SIGTERM, half "
                 "SIGKILL)")
      ->check(CLI::Range(0.0, 1.0));
  app.add_option("--preemption-seed", o.preemption_seed, "seed of the spot simulator");
  app.add_option("--memory-limit-mb", o.memory_limit_mb,
                 "memory a trial may use, for micro_batch: auto (default: what is available)")
      ->check(CLI::NonNegativeNumber);
  app.add_option("--grace-seconds", o.grace_seconds,
                 "after SIGTERM, leave within this many seconds (checkpoint and hand back first)");

  sift::worker::StandaloneOptions s;
  auto* train = app.add_subcommand("train", "run one trial standalone, without a coordinator");
  train->add_option("--config", s.config_path, "study config (YAML or JSON)")->required();
  train->add_option("--params", s.params_json,
                    "searched parameters as JSON, e.g. '{\"lr\":0.001}'");
  train->add_option("--epochs", s.epochs, "epochs (default: the config's budget.max_epochs)");
  train->add_option("--checkpoint", s.checkpoint_path, "save a checkpoint here after each epoch");
  train->add_option("--resume", s.resume_path, "resume from this checkpoint");
  std::string export_checkpoint, export_out;
  auto* exporter = app.add_subcommand(
      "export",
      "write a trial checkpoint's model as TorchScript (PyTorch's torch.jit.load); a command "
      "trial's checkpoint unpacks into a folder");
  exporter->add_option("--checkpoint", export_checkpoint, "a trial's .ckpt")->required();
  exporter
      ->add_option("--out", export_out,
                   "the TorchScript file to write (a command trial: a new or empty directory)")
      ->required();
  CLI11_PARSE(app, argc, argv);
  if (*exporter) return sift::worker::RunExport(export_checkpoint, export_out);

  spdlog::set_pattern("[%H:%M:%S.%e] [%n:" + o.name + "] [%l] %v");
  if (*train) {
    s.threads = app.count("--threads") > 0 ? o.threads : 0;  // 0: the config's worker.threads
    s.device = o.device;
    s.cache_dir = o.cache_dir;
    s.memory_limit_mb = o.memory_limit_mb;
    return sift::worker::RunStandalone(s);
  }
  // A spot VM's notice arrives as SIGTERM: finish the step, then leave. Taken on a thread of its
  // own (stop_signals.h says why), listening before the client starts gRPC's threads, and
  // gone before the client is.
  std::mutex mu;
  bool requested = false;  // a stop that came while the client was being made
  std::optional<sift::worker::WorkerClient> worker;
  sift::worker::StopSignals signals([&](int) {
    std::lock_guard<std::mutex> lock(mu);
    requested = true;
    if (worker) worker->RequestStop();
  });
  {
    std::lock_guard<std::mutex> lock(mu);
    worker.emplace(o);
    if (requested) worker->RequestStop();
  }
  return worker->Run();
}

int main(int argc, char** argv) {
  return sift::common::GuardedMain("sift-worker", [&] { return Main(argc, argv); });
}
