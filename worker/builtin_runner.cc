#include "worker/builtin_runner.h"

#include <spdlog/spdlog.h>

#include <chrono>
#include <cmath>
#include <map>
#include <optional>
#include <vector>

#include "common/checkpoint_names.h"
#include "common/data/data_spec.h"
#include "common/hparams/hparams.h"
#include "common/metric_names.h"
#include "common/posix_fs.h"
#include "common/wire/proto_convert.h"
#include "worker/coordinator_link.h"
#include "worker/spot_simulator.h"
#include "worker/test_evaluation.h"
#include "worker/trainer/micro_batch.h"
#include "worker/trainer/process_stats.h"
#include "worker/trainer/trainer.h"

namespace sift::worker {

using Clock = std::chrono::steady_clock;

// Where a resume started, when it had to pass over a damaged or missing checkpoint.
struct Resume {
  std::string damaged;        // the newest one it could not use ("" if none)
  int64_t damaged_epoch = 0;  // epochs that one held
  double redone_seconds = 0;  // spent retraining epochs up to damaged_epoch
};

std::shared_ptr<const Datasets> BuiltinRunner::Data(const v1::DataSpec& d) {
  CachedDataSpec spec;
  if (!d.spec_json().empty()) {
    static_cast<sift::data::DataSpec&>(spec) = sift::data::DataSpecFromJson(d.spec_json());
  } else {  // a coordinator that predates spec_json: the idx form
    spec.dir = d.dir();
    spec.train_limit = d.train_limit();
    spec.val_size = d.val_size();
    spec.test_limit = d.test_limit();
  }
  spec.cache_dir = link_->options().cache_dir;
  // Kept while the study's spec and its files' bytes are the same: an edited file between
  // trials is read again (hashing is far cheaper than decoding).
  const std::string key = sift::data::ToJson(spec) + "|" + DataContentKey(spec);
  if (!cached_data_ || key != cached_key_) {
    const auto t0 = Clock::now();
    cached_data_ = LoadDatasets(spec);
    cached_key_ = key;
    const LoadedDataSummary s = Summarize(*cached_data_);
    spdlog::info("data {} loaded in {:.2f} s: {} train, {} val, {} test",
                 spec.is_idx() ? spec.dir : spec.ResolvedFormat() + " files",
                 std::chrono::duration<double>(Clock::now() - t0).count(), s.train, s.val, s.test);
  }
  return cached_data_;
}

void BuiltinRunner::Fail(const v1::TrialAssignment& a, const std::string& error, bool cannot_run) {
  link_->Fail(a, error, cannot_run);
}

// Saves and, without a shared directory, uploads. Returns "" or the problem.
std::string BuiltinRunner::StoreCheckpoint(Trainer& trainer, const v1::TrialAssignment& a,
                                           const std::string& name) {
  trainer.SaveCheckpoint(link_->LocalCheckpoint(a, name));
  return link_->StoreCheckpoint(a, name);
}

void BuiltinRunner::Preempt(Trainer& trainer, const v1::TrialAssignment& a) {
  std::string name =
      common::PreemptCheckpointName(a.trial_number(), trainer.epoch(), trainer.step_in_epoch());
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
  const std::string reason = spot_->reason();
  grpc::Status s = link_->Preempt(a, name, reason.empty() ? "SIGTERM" : reason);
  spdlog::warn("trial {} preempted at epoch {} step {}: {}", a.trial_number(), trainer.epoch() + 1,
               trainer.step_in_epoch(),
               s.ok() ? "checkpointed and handed back" : s.error_message());
}

// Loads the newest intact checkpoint: resume_checkpoint, else each of resume_fallbacks, else
// none (epoch 0). A damaged or missing one is logged and passed over; the epochs it held are
// retrained. Returns "" or why the trial cannot go on (the coordinator unreachable).
std::string BuiltinRunner::LoadNewestIntactCheckpoint(Trainer& trainer,
                                                      const v1::TrialAssignment& a,
                                                      Resume* resume) {
  if (a.resume_checkpoint().empty()) return "";
  std::vector<std::string> candidates = {a.resume_checkpoint()};
  candidates.insert(candidates.end(), a.resume_fallbacks().begin(), a.resume_fallbacks().end());
  for (size_t i = 0; i < candidates.size(); ++i) {
    const std::string& name = candidates[i];
    const std::string path = link_->LocalCheckpoint(a, name);
    bool missing = false;
    std::string problem = link_->FetchCheckpoint(a, name, path, &missing);
    if (!problem.empty() && !missing) return problem;
    if (problem.empty()) {
      try {
        trainer.LoadCheckpoint(path);  // verifies framing and checksum; unchanged if it throws
      } catch (const CheckpointError& e) {
        problem = e.what();
      }
      if (a.checkpoint_dir().empty()) common::Remove(path);
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
    spdlog::warn("trial {}: checkpoint {} is unusable ({}); falling back to {}", a.trial_number(),
                 name, problem, i + 1 < candidates.size() ? candidates[i + 1] : "epoch 0");
  }
  return "";
}

void BuiltinRunner::TrainAssigned(const v1::TrialAssignment& a) {
  TrainerOptions topts;
  std::string problem = common::ParseHParams(common::FromProto(a.params()), &topts.hp);
  if (!problem.empty()) return Fail(a, "bad parameters: " + problem);
  topts.max_epochs = a.max_epochs();
  topts.seed = a.seed();
  topts.device = link_->options().device;
  topts.num_threads = link_->options().threads;
  // Before anything is trained or charged to the trial: is its data on this machine?
  // The IDX forms (folder or files); a CSV/NPY/NPZ study's files are checked by the loader.
  if (std::string p = DataMissingHere(a.data()); !p.empty()) {
    return Fail(a, p, /*cannot_run=*/true);
  }
  try {
    auto data = Data(a.data());
    std::optional<MicroBatchChoice> micro;
    try {
      // The probe feeds samples of this data's shape (a CSV row, a 32x32 colour image).
      micro =
          ResolveMicroBatch(&topts, link_->options().memory_limit_mb << 20, Summarize(*data).shape);
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
      spot_->ArmReclaim(trainer.epoch() + 1);
      EpochMetrics m = trainer.TrainEpoch(stop_);
      if (m.completed) spot_->EpochDone(m.seconds);
      if (link_->revoked()) {
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
      std::map<std::string, double> reported = {{common::kValLoss, m.val_loss},
                                                {common::kTrainLoss, m.train_loss},
                                                {common::kEpochSeconds, m.seconds},
                                                {common::kSamplesPerSecond, m.samples_per_second},
                                                {common::kDataWaitFraction, m.data_wait_fraction},
                                                {common::kParams, static_cast<double>(m.params)}};
      // Measured once per trainer, reported every epoch so a scheduler sees it at every rung.
      if (std::isfinite(m.inference_ms)) reported[common::kInferenceMs] = m.inference_ms;
      if (m.regression) {
        reported[common::kValRmse] = m.val_rmse;
        reported[common::kValMae] = m.val_mae;
        reported[common::kValR2] = m.val_r2;
      } else {
        reported[common::kValAccuracy] = m.val_accuracy;
        reported[common::kValBalancedAccuracy] = m.val_balanced_accuracy;
        reported[common::kValMacroF1] = m.val_macro_f1;
        if (std::isfinite(m.val_roc_auc)) reported[common::kValRocAuc] = m.val_roc_auc;
      }
      const auto objective = reported.find(a.objective_metric());
      diverged = m.diverged || (objective != reported.end() && !std::isfinite(objective->second));
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
      grpc::Status s = link_->Report(a, &req, &resp);
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
      const std::string name = common::EpochCheckpointName(a.trial_number(), trainer.epoch());
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
    // No test score here: the test split is scored once, for the chosen trial (Evaluate).
    auto& final_metrics = *req.mutable_final_metrics();
    final_metrics["peak_rss_mb"] = PeakRssBytes() / 1048576.0;
    final_metrics[common::kSamplesPerSecond] = samples_per_second;
    // What `precision: auto` (the default) resolved to on this worker: precision_bf16 = 1, etc.
    final_metrics["precision_" + trainer.precision()] = 1;
    if (micro) final_metrics["micro_batch"] = static_cast<double>(micro->micro_batch);
    // Chosen from the data when the config set none (the trainer logged it).
    if (topts.hp.batch_size_auto) {
      final_metrics["batch_size"] = static_cast<double>(trainer.batch_size());
    }
    grpc::Status s = link_->Complete(a, &req);
    if (!s.ok())
      spdlog::warn("trial {}: completion not recorded: {}", a.trial_number(), s.error_message());
  } catch (const std::exception& e) {
    Fail(a, e.what());
  }
}

void BuiltinRunner::Evaluate(const v1::TrialAssignment& a) {
  EvaluationLink eval;
  eval.device = link_->options().device;
  eval.threads = link_->options().threads;
  eval.data = [this](const v1::DataSpec& d) { return Data(d); };
  eval.fetch = [this, &a](const std::string& name, std::string* path) {
    bool missing = false;
    *path = link_->LocalCheckpoint(a, name);
    return link_->FetchCheckpoint(a, name, *path, &missing);
  };
  eval.complete = [this, &a](const std::map<std::string, double>& metrics) {
    v1::CompleteTrialRequest req;
    req.mutable_final_metrics()->insert(metrics.begin(), metrics.end());
    link_->Complete(a, &req);
  };
  eval.fail = [this, &a](const std::string& error, bool cannot_run) { Fail(a, error, cannot_run); };
  RunTestEvaluation(a, eval);
}

}  // namespace sift::worker
