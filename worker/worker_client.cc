#include "worker/worker_client.h"

#include <grpcpp/grpcpp.h>
#include <spdlog/spdlog.h>
#include <unistd.h>

#include <chrono>
#include <cmath>
#include <cstdlib>
#include <condition_variable>
#include <filesystem>
#include <map>
#include <mutex>
#include <thread>

#include <csignal>

#include "common/checkpoint_names.h"
#include "common/data/data_spec.h"
#include "coordinator/proto_convert.h"
#include "search/rng.h"
#include "worker/checkpoint_transfer.h"
#include "worker/test_evaluation.h"
#include "sift/v1/workers_service.grpc.pb.h"
#include "worker/hparams/hparams.h"
#include "worker/trainer/micro_batch.h"
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

}  // namespace

struct WorkerClient::Impl {
  WorkerOptions options;
  std::atomic<bool>* stop;
  std::shared_ptr<grpc::Channel> channel;
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

  std::string cached_key;  // the spec and content hash cached_data was loaded for
  std::shared_ptr<const Datasets> cached_data;
  std::string scratch_dir;       // checkpoints on their way to or from the coordinator
  double last_epoch_seconds = 0;  // the spot simulator times its reclaims with it
  bool have_epoch_seconds = false;
  uint64_t leases_seen = 0;
  uint64_t reclaims_drawn = 0;
  std::string preempt_reason;

  std::unique_ptr<grpc::ClientContext> Context(double timeout_s = 30) {
    return common::MakeContext(options.client.token, timeout_s);
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
      const auto until = std::chrono::system_clock::now() + std::chrono::milliseconds(backoff_ms);
      if (channel->GetState(false) == GRPC_CHANNEL_READY) {
        // Connected, and the coordinator itself answered UNAVAILABLE (busy storage) or was slow:
        // back off in full rather than retry at once.
        std::this_thread::sleep_until(until);
      } else {
        // Calls fail at once while the channel waits to reconnect, so sleeping blindly could
        // miss a restarted coordinator by a whole backoff: wait for the connection instead.
        channel->WaitForConnected(until);
      }
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
    if (!d.spec_json().empty()) {
      static_cast<sift::data::DataSpec&>(spec) = sift::data::DataSpecFromJson(d.spec_json());
    } else {  // a coordinator that predates spec_json: the idx form
      spec.dir = d.dir();
      spec.train_limit = d.train_limit();
      spec.val_size = d.val_size();
      spec.test_limit = d.test_limit();
    }
    spec.cache_dir = options.cache_dir;
    // Kept while the study's spec and its files' bytes are the same: an edited file between
    // trials is read again (hashing is far cheaper than decoding).
    const std::string key = sift::data::ToJson(spec) + "|" + DataContentKey(spec);
    if (!cached_data || key != cached_key) {
      const auto t0 = Clock::now();
      cached_data = LoadDatasets(spec);
      cached_key = key;
      spdlog::info("data {} loaded in {:.2f} s: {} train, {} val, {} test",
                   spec.is_idx() ? spec.dir : spec.ResolvedFormat() + " files",
                   std::chrono::duration<double>(Clock::now() - t0).count(),
                   cached_data->train.size(), cached_data->val.size(), cached_data->test.size());
    }
    return cached_data;
  }

  // `cannot_run`: the trial is fine, this machine cannot run it (its data is missing here).
  void Fail(const v1::TrialAssignment& a, const std::string& error, bool cannot_run = false) {
    if (cannot_run) {
      spdlog::error("trial {}: this worker cannot run study {}: {}; handing it back",
                    a.trial_number(), a.study_id(), error);
    } else {
      spdlog::error("trial {} failed: {}", a.trial_number(), error);
    }
    v1::FailTrialRequest req;
    req.set_worker_id(worker_id);
    req.set_lease_id(a.lease_id());
    req.set_error(error);
    req.set_worker_cannot_run(cannot_run);
    v1::FailTrialResponse resp;
    Call("FailTrial", [&] { return stub->FailTrial(Context().get(), req, &resp); });
  }

  // Trains one assigned trial to its end. Never throws: failures become FailTrial. The lease is
  // dropped from the heartbeat on every exit, so an abandoned one can expire and be requeued.
  void RunTrial(const v1::TrialAssignment& a) {
    SetLease(a.lease_id());
    if (a.evaluate_test()) {
      RunTestEvaluation(a, EvaluationLinkFor(a));  // worker/test_evaluation.h
    } else {
      MaybeScheduleSimulatedPreemption(a);
      TrainAssigned(a);
    }
    SetLease("");
  }

  EvaluationLink EvaluationLinkFor(const v1::TrialAssignment& a) {
    EvaluationLink link;
    link.device = options.device;
    link.threads = options.threads;
    link.data = [this](const v1::DataSpec& d) { return Data(d); };
    link.fetch = [this, &a](const std::string& name, std::string* path) {
      bool missing = false;
      *path = LocalCheckpoint(a, name);
      return FetchCheckpoint(a, name, *path, &missing);
    };
    link.complete = [this, &a](const std::map<std::string, double>& metrics) {
      v1::CompleteTrialRequest req;
      req.set_worker_id(worker_id);
      req.set_lease_id(a.lease_id());
      req.mutable_final_metrics()->insert(metrics.begin(), metrics.end());
      v1::CompleteTrialResponse resp;
      Call("CompleteTrial", [&] { return stub->CompleteTrial(Context().get(), req, &resp); });
    };
    link.fail = [this, &a](const std::string& error, bool cannot_run) { Fail(a, error, cannot_run); };
    return link;
  }

  // Where checkpoint `name` lives on this machine: the shared directory, or a scratch copy that
  // is uploaded to (and downloaded from) the coordinator.
  std::string LocalCheckpoint(const v1::TrialAssignment& a, const std::string& name) {
    const std::string dir = a.checkpoint_dir().empty() ? scratch_dir : a.checkpoint_dir();
    fs::create_directories(dir);
    return dir + "/" + name;
  }

  // Saves and, without a shared directory, uploads. Returns "" or the problem.
  std::string StoreCheckpoint(Trainer& trainer, const v1::TrialAssignment& a,
                              const std::string& name) {
    const std::string path = LocalCheckpoint(a, name);
    trainer.SaveCheckpoint(path);
    if (!a.checkpoint_dir().empty()) return "";
    grpc::Status s = Call("UploadCheckpoint", [&] {
      return UploadCheckpoint(stub.get(), [this] { return Context(120); }, worker_id,
                              a.lease_id(), path, name);
    });
    std::error_code ec;
    fs::remove(path, ec);  // the coordinator holds it now (or the upload failed)
    return s.ok() ? "" : "checkpoint upload failed: " + s.error_message();
  }

  void Preempt(Trainer& trainer, const v1::TrialAssignment& a) {
    std::string name = common::PreemptCheckpointName(a.trial_number(), trainer.epoch(),
                                                          trainer.step_in_epoch());
    std::string problem;
    try {
      problem = StoreCheckpoint(trainer, a, name);
    } catch (const std::exception& e) {
      problem = e.what();
    }
    if (!problem.empty()) {
      spdlog::error("trial {}: no checkpoint on preemption ({}); it resumes from its last epoch",
                    a.trial_number(), problem);
      name.clear();
    }
    v1::PreemptTrialRequest req;
    req.set_worker_id(worker_id);
    req.set_lease_id(a.lease_id());
    req.set_checkpoint(name);
    req.set_reason(preempt_reason.empty() ? "SIGTERM" : preempt_reason);
    v1::PreemptTrialResponse resp;
    grpc::Status s = Call("PreemptTrial", [&] {
      return stub->PreemptTrial(Context().get(), req, &resp);
    });
    spdlog::warn("trial {} preempted at epoch {} step {}: {}", a.trial_number(),
                 trainer.epoch() + 1, trainer.step_in_epoch(),
                 s.ok() ? "checkpointed and handed back" : s.error_message());
  }

  // Where a resume started, when it had to pass over a damaged or missing checkpoint.
  struct Resume {
    std::string damaged;        // the newest one it could not use ("" if none)
    int64_t damaged_epoch = 0;  // epochs that one held
    double redone_seconds = 0;  // spent retraining epochs up to damaged_epoch
  };

  // Fetches the checkpoint at `name` (a download, or the shared directory). "" or the problem;
  // `missing` says that the coordinator or the directory does not have it.
  std::string FetchCheckpoint(const v1::TrialAssignment& a, const std::string& name,
                              const std::string& path, bool* missing) {
    *missing = false;
    if (!a.checkpoint_dir().empty()) {
      *missing = !fs::exists(path);
      return *missing ? "no checkpoint " + path : "";
    }
    grpc::Status s = Call("DownloadCheckpoint", [&] {
      return DownloadCheckpoint(stub.get(), [this] { return Context(120); }, worker_id,
                                a.lease_id(), name, path);
    });
    *missing = s.error_code() == grpc::StatusCode::NOT_FOUND ||
               s.error_code() == grpc::StatusCode::DATA_LOSS;
    return s.ok() ? "" : "cannot fetch checkpoint " + name + ": " + s.error_message();
  }

  // Loads the newest intact checkpoint: resume_checkpoint, else each of resume_fallbacks, else
  // none (epoch 0). A damaged or missing one is logged and passed over; the epochs it held are
  // retrained. Returns "" or why the trial cannot go on (the coordinator unreachable).
  std::string LoadNewestIntactCheckpoint(Trainer& trainer, const v1::TrialAssignment& a,
                                         Resume* resume) {
    if (a.resume_checkpoint().empty()) return "";
    std::vector<std::string> candidates = {a.resume_checkpoint()};
    candidates.insert(candidates.end(), a.resume_fallbacks().begin(), a.resume_fallbacks().end());
    for (size_t i = 0; i < candidates.size(); ++i) {
      const std::string& name = candidates[i];
      const std::string path = LocalCheckpoint(a, name);
      bool missing = false;
      std::string problem = FetchCheckpoint(a, name, path, &missing);
      if (!problem.empty() && !missing) return problem;
      if (problem.empty()) {
        try {
          trainer.LoadCheckpoint(path);  // verifies framing and checksum; unchanged if it throws
        } catch (const CheckpointError& e) {
          problem = e.what();
        }
        if (a.checkpoint_dir().empty()) fs::remove(path);
      }
      if (problem.empty()) {
        spdlog::info("trial {} resumed from {} (epoch {}, step {})", a.trial_number(), name,
                     trainer.epoch(), trainer.step_in_epoch());
        return "";
      }
      if (resume->damaged.empty()) {
        resume->damaged = name;
        const auto p = common::ParseCheckpointName(name);
        resume->damaged_epoch = p ? p->epoch : a.start_epoch();
      }
      spdlog::warn("trial {}: checkpoint {} is unusable ({}); falling back to {}",
                   a.trial_number(), name, problem,
                   i + 1 < candidates.size() ? candidates[i + 1] : "epoch 0");
    }
    return "";
  }

  void TrainAssigned(const v1::TrialAssignment& a) {
    TrainerOptions topts;
    std::string problem = ParseHParams(coordinator::FromProto(a.params()), &topts.hp);
    if (!problem.empty()) return Fail(a, "bad parameters: " + problem);
    topts.max_epochs = a.max_epochs();
    topts.seed = a.seed();
    topts.device = options.device;
    topts.num_threads = options.threads;
    // Before anything is trained or charged to the trial: is its data on this machine?
    // The IDX forms (folder or files); a CSV/NPY/NPZ study's files are checked by the loader.
    if (std::string p = DataMissingHere(a.data()); !p.empty()) {
      return Fail(a, p, /*cannot_run=*/true);
    }
    try {
      auto data = Data(a.data());
      std::optional<MicroBatchChoice> micro;
      try {
        micro = ResolveMicroBatch(&topts, options.memory_limit_mb << 20);
      } catch (const std::runtime_error& e) {
        return Fail(a, e.what());
      }
      if (micro) spdlog::info("trial {}: {}", a.trial_number(), micro->Describe());
      Trainer trainer(topts, std::move(data));
      Resume resume;
      if (std::string problem = LoadNewestIntactCheckpoint(trainer, a, &resume); !problem.empty()) {
        return Fail(a, problem);
      }
      // Never train a resumed trial from the wrong place: its curve would get a gap or a repeat.
      // A checkpoint older than the last report is fine: those epochs are retrained silently.
      if (trainer.epoch() > a.start_epoch()) {
        return Fail(a, "checkpoint '" + a.resume_checkpoint() + "' is at epoch " +
                           std::to_string(trainer.epoch()) + " but the trial resumes at epoch " +
                           std::to_string(a.start_epoch()));
      }
      const int64_t every = std::max<int64_t>(1, a.checkpoint_every_epochs());
      int64_t seq = 0;
      bool paused = false;
      double samples_per_second = 0;
      std::string checkpoint;  // of the newest reported epoch; "" if it has none
      bool diverged = false;   // the coordinator ends such a trial as DIVERGED: no model to keep
      while (trainer.epoch() < a.max_epochs()) {
        ArmReclaim(trainer.epoch() + 1);
        EpochMetrics m = trainer.TrainEpoch(stop);
        if (m.completed) {
          last_epoch_seconds = m.seconds;
          have_epoch_seconds = true;
        }
        if (revoked) {
          spdlog::warn("trial {}: lease revoked in epoch {}", a.trial_number(), trainer.epoch() + 1);
          return;
        }
        if (!m.completed) return Preempt(trainer, a);
        samples_per_second = m.samples_per_second;
        if (m.epoch <= a.start_epoch()) {
          spdlog::info("trial {}: retrained epoch {} (reported before its VM was lost)",
                       a.trial_number(), m.epoch);
          // Work the damaged checkpoint held; the rest was lost with the VM and counted then.
          if (m.epoch <= resume.damaged_epoch) resume.redone_seconds += m.seconds;
          continue;
        }
        std::map<std::string, double> reported = {
            {"val_loss", m.val_loss},
            {"train_loss", m.train_loss},
            {"epoch_seconds", m.seconds},
            {"samples_per_second", m.samples_per_second},
            {"data_wait_fraction", m.data_wait_fraction}};
        if (m.regression) {
          reported["val_rmse"] = m.val_rmse;
          reported["val_mae"] = m.val_mae;
          reported["val_r2"] = m.val_r2;
        } else {
          reported["val_accuracy"] = m.val_accuracy;
        }
        const auto objective = reported.find(a.objective_metric());
        diverged = m.diverged ||
                   (objective != reported.end() && !std::isfinite(objective->second));
        if (diverged) {
          spdlog::warn("trial {} diverged in epoch {} (train_loss {}, val_loss {}); reporting it",
                       a.trial_number(), m.epoch, m.train_loss, m.val_loss);
        }
        // Checkpoint before reporting, so a reported checkpoint always exists.
        checkpoint.clear();
        if (m.epoch % every == 0 && !diverged) {
          checkpoint = common::EpochCheckpointName(a.trial_number(), m.epoch);
          if (std::string p = StoreCheckpoint(trainer, a, checkpoint); !p.empty()) {
            return Fail(a, p);
          }
        }
        v1::ReportProgressRequest req;
        req.set_worker_id(worker_id);
        req.set_lease_id(a.lease_id());
        req.set_seq(++seq);
        req.set_epoch(m.epoch);
        req.set_checkpoint(checkpoint);
        if (!resume.damaged.empty() && seq == 1) {
          req.set_redone_seconds(std::max(resume.redone_seconds, 1e-9));
          req.set_damaged_checkpoint(resume.damaged);
        }
        auto& metrics = *req.mutable_metrics();
        metrics.insert(reported.begin(), reported.end());
        if (m.skipped_steps > 0) metrics["skipped_steps"] = static_cast<double>(m.skipped_steps);
        v1::ReportProgressResponse resp;
        grpc::Status s = Call("ReportProgress", [&] {
          return stub->ReportProgress(Context().get(), req, &resp);
        });
        if (s.error_code() == grpc::StatusCode::FAILED_PRECONDITION) {
          spdlog::warn("trial {}: {}; abandoning it", a.trial_number(), s.error_message());
          return;
        }
        if (s.error_code() == grpc::StatusCode::INVALID_ARGUMENT) {
          return Fail(a, "the coordinator refused a report: " + s.error_message());
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
      // A promotion resumes exactly here, and a finished trial's model is its last epoch's,
      // whatever the checkpoint interval.
      if (checkpoint.empty() && trainer.epoch() > a.start_epoch() && !diverged) {
        const std::string name =
            common::EpochCheckpointName(a.trial_number(), trainer.epoch());
        std::string problem;
        try {
          problem = StoreCheckpoint(trainer, a, name);
        } catch (const std::exception& e) {
          problem = e.what();
        }
        if (problem.empty()) {
          checkpoint = name;
        } else if (paused) {
          return Fail(a, problem);
        } else {  // its results stand; only the model file is missing
          spdlog::warn("trial {}: no final checkpoint: {}", a.trial_number(), problem);
        }
      }
      req.set_checkpoint(checkpoint);
      req.set_worker_id(worker_id);
      req.set_lease_id(a.lease_id());
      // No test score here: the test split is scored once, for the chosen trial (test_evaluation.h).
      auto& final_metrics = *req.mutable_final_metrics();
      final_metrics["peak_rss_mb"] = PeakRssBytes() / 1048576.0;
      final_metrics["samples_per_second"] = samples_per_second;
      if (micro) final_metrics["micro_batch"] = static_cast<double>(micro->micro_batch);
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

  // The spot simulator: with probability `simulate_preemption` a lease is reclaimed during one of
  // its first epochs (drawn from the seed), alternately with notice (SIGTERM: checkpoint and hand
  // back) and without (SIGKILL: the VM is simply gone).
  struct Reclaim {
    int64_t epoch = 0;  // 0: none for this lease
    bool hard = false;
    double fraction = 0;  // of an epoch's measured length, after it starts
  } reclaim;

  void MaybeScheduleSimulatedPreemption(const v1::TrialAssignment& a) {
    reclaim = Reclaim{};
    if (options.simulate_preemption <= 0) return;
    search::Rng rng(search::DeriveSeed(options.preemption_seed, {++leases_seen}));
    if (rng.Uniform() >= options.simulate_preemption) return;
    // One of the lease's first two epochs, which it nearly always reaches: a later one would
    // often never come, because schedulers stop most trials early.
    const int64_t epochs = std::clamp<int64_t>(a.max_epochs() - a.start_epoch(), 1, 2);
    reclaim.epoch = a.start_epoch() + 1 + static_cast<int64_t>(rng.Below(epochs));
    // Alternate with and without notice (from the seed's parity), so any run sees both kinds.
    reclaim.hard = (options.preemption_seed + reclaims_drawn++) % 2 == 1;
    reclaim.fraction = rng.Uniform();
    spdlog::info("spot simulator: trial {} will be reclaimed {} during epoch {}",
                 a.trial_number(), reclaim.hard ? "without notice" : "with notice",
                 reclaim.epoch);
  }

  // Called as epoch `epoch` starts: arms the reclaim timer when this is the chosen epoch.
  void ArmReclaim(int64_t epoch) {
    if (reclaim.epoch != epoch) return;
    const double at = reclaim.fraction * (have_epoch_seconds ? last_epoch_seconds : 0.05);
    const bool hard = reclaim.hard;
    std::string lease;
    {
      std::lock_guard<std::mutex> lock(mu);
      lease = lease_id;
    }
    std::thread([this, at, hard, lease] {
      std::this_thread::sleep_for(std::chrono::milliseconds(static_cast<int64_t>(at * 1000)));
      {
        std::lock_guard<std::mutex> lock(mu);
        if (lease_id != lease) return;  // that trial ended first
      }
      if (hard) {
        spdlog::warn("spot simulator: the VM vanishes (SIGKILL)");
        spdlog::default_logger()->flush();
        raise(SIGKILL);
      }
      spdlog::warn("spot simulator: reclaim notice (as SIGTERM)");
      preempt_reason = "simulated spot reclaim";
      *stop = true;
    }).detach();
  }};

WorkerClient::WorkerClient(WorkerOptions options) : impl_(std::make_unique<Impl>()) {
  impl_->options = std::move(options);
  impl_->stop = &stop_;
  impl_->scratch_dir = (fs::temp_directory_path() / ("sift-worker-" + std::to_string(getpid())))
                           .string();
  grpc::ChannelArguments args;
  args.SetMaxReceiveMessageSize(16 << 20);
  // gRPC waits 1 s, then up to 120 s, between reconnects: a worker would idle (billed) that
  // long after a restarted coordinator is back. At most 2 s here (with Call's wait for the
  // connection, a worker was back 0.6-1.8 s after a 3-30 s outage; 6.8-9.8 s before). The
  // minimum stays: it is also the connect timeout, and 200 ms cuts handshakes short.
  args.SetInt(GRPC_ARG_INITIAL_RECONNECT_BACKOFF_MS, 200);
  args.SetInt(GRPC_ARG_MAX_RECONNECT_BACKOFF_MS, 2000);
  impl_->channel = common::MakeChannel(impl_->options.client, args);
  impl_->stub = v1::Workers::NewStub(impl_->channel);
}

WorkerClient::~WorkerClient() {
  std::error_code ec;
  fs::remove_all(impl_->scratch_dir, ec);
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
    spdlog::error("cannot register with {}: {}", w.options.client.address, s.error_message());
    return 1;
  }
  w.heartbeat = std::thread([&w] { w.HeartbeatLoop(); });
  // The grace-period watchdog: once a stop is requested, checkpointing and handing back get
  // grace_seconds; past that the process leaves as the VM would be taken anyway.
  std::thread([this, grace = w.options.grace_seconds] {
    while (!stop_) std::this_thread::sleep_for(std::chrono::milliseconds(50));
    std::this_thread::sleep_for(std::chrono::milliseconds(static_cast<int64_t>(grace * 1000)));
    spdlog::error("grace period of {:.0f} s over; leaving now", grace);
    spdlog::default_logger()->flush();
    std::_Exit(0);
  }).detach();
  while (!stop_) {
    v1::AcquireTrialRequest req;
    req.set_worker_id(w.worker_id);
    if (w.options.exit_when_idle) req.set_idle_exit_seconds(w.options.idle_exit_seconds);
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
          spdlog::info("coordinator has no more work for this worker (idle exit after {:.0f} s, "
                       "or the run is over); exiting, no lease held",
                       w.options.idle_exit_seconds);
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
