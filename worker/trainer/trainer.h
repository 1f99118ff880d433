// Trains one trial: model and optimiser from HParams, one epoch at a time, with checkpoints.
// No gRPC here: the worker's client loop and `sift-worker train` both drive this class. No torch
// either: those callers compile without LibTorch's headers.
#pragma once

#include <atomic>
#include <cstdint>
#include <limits>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "common/hparams/hparams.h"
#include "worker/trainer/checkpoint_error.h"
#include "worker/trainer/data_load.h"

namespace torch::nn {
class Module;  // model() only; callers that use it include torch
}  // namespace torch::nn

namespace sift::worker {

inline constexpr int64_t kDefaultEvalBatch = 1000;

struct TrainerOptions {
  common::HParams hp;
  int64_t max_epochs = 10;
  uint64_t seed = 0;
  std::string device = "cpu";  // cpu | cuda | auto
  int num_threads = 0;         // intra-op threads (torch::set_num_threads); 0 leaves them as is
  int prefetch_depth = 2;      // batches assembled ahead on a background thread; 0: inline
  int64_t eval_batch = kDefaultEvalBatch;  // samples per evaluation forward pass
  // The training split kept on the device and shuffled there (resident_data.h). kAuto: on CUDA
  // when it fits kResidentMaxBytes; kAlways also on the CPU (tests: the same batches either way).
  enum class Resident { kAuto, kNever, kAlways } resident_data = Resident::kAuto;
};

// Scores over one split: the mean loss, and accuracy, balanced accuracy, macro F1 and (two
// classes) ROC AUC, or rmse, mae and the coefficient of determination r2 (regression). Regression
// losses and errors are in the target's units, whatever scale the model was fitted in.
struct EvalMetrics {
  double loss = 0.0, accuracy = 0.0, rmse = 0.0, mae = 0.0, r2 = 0.0;
  double balanced_accuracy = 0.0, macro_f1 = 0.0;
  double roc_auc = std::numeric_limits<double>::quiet_NaN();  // NaN: not two classes
  // Classification, per class index: samples predicted right, and samples of that class.
  std::vector<int64_t> class_correct, class_total;
};

struct EpochMetrics {
  int64_t epoch = 0;      // epochs completed, 1-based
  bool completed = true;  // false: interrupted by a stop request mid-epoch
  double train_loss = 0.0;
  double val_loss = 0.0;
  double val_accuracy = 0.0;  // classification
  double val_balanced_accuracy = 0.0, val_macro_f1 = 0.0;
  double val_roc_auc = std::numeric_limits<double>::quiet_NaN();  // two classes only
  bool regression = false;  // regression: val_loss is the training loss (mse or huber), and these
  double val_rmse = 0.0;
  double val_mae = 0.0;
  double val_r2 = 0.0;
  double seconds = 0.0;  // wall time of the epoch (train + eval)
  double samples_per_second = 0.0;
  double data_wait_fraction = 0.0;  // share of train time spent waiting for batches
  int64_t skipped_steps = 0;        // fp16: steps skipped on inf/NaN gradients
  // stop_on_divergence: the training loss became NaN or infinite and the epoch was cut short
  // there (it counts as done: the trial ends, so nothing resumes it).
  bool diverged = false;
  // Measured by the trainer (measure.h), the same every epoch: the model's trainable parameters,
  // and its forward milliseconds per validation sample, timed once per Trainer at its first
  // completed epoch (NaN: no validation split, or an epoch interrupted before any completed).
  int64_t params = 0;
  double inference_ms = std::numeric_limits<double>::quiet_NaN();
};

// Determinism: the constructor seeds the global torch generator (weight init) with `seed`; data
// order is a function of (seed, epoch) and dropout draws from the trainer's own CPU generator, so
// on the CPU a run resumed from a checkpoint is bitwise identical to an uninterrupted one (fp32 and
// bf16, any fixed thread count). On CUDA dropout uses the global CUDA generator (not checkpointed).
// Cosine schedules decay over max_epochs: resuming with another max_epochs changes the rates.
class Trainer {
 public:
  Trainer(const TrainerOptions& options, std::shared_ptr<const Datasets> data);
  ~Trainer();

  // Trains one epoch and evaluates on the validation split. When `stop` becomes true it returns
  // after the current optimizer step with completed=false; a checkpoint then resumes mid-epoch.
  // Under hp.stop_on_divergence a non-finite training loss ends the epoch early (diverged=true).
  EpochMetrics TrainEpoch(const std::atomic<bool>* stop = nullptr);

  int64_t epoch() const;  // epochs completed
  double TestAccuracy();
  // The test split's scores under their report names: test_accuracy, test_balanced_accuracy,
  // test_macro_f1, test_roc_auc (two classes), per-class counts (test_class_<name or index>_
  // correct and _total), or test_rmse, test_mae and test_r2 for regression.
  std::map<std::string, double> TestMetrics();

  // Writes atomically (temp file, fsync, rename) with a checksum; throws on I/O failure.
  void SaveCheckpoint(const std::string& path);
  // Restores everything needed for a bitwise-identical continuation; throws CheckpointError.
  void LoadCheckpoint(const std::string& path);

  // What the options resolved to: "cpu" or "cuda"; "fp32", "bf16" or "fp16".
  std::string device() const;
  std::string precision() const;
  int64_t steps_per_epoch() const;  // optimizer steps in a full epoch
  int64_t batch_size() const;       // as set, or common::DefaultBatchSize when hp.batch_size_auto
  int64_t step_in_epoch() const;    // optimizer steps taken in the current, unfinished epoch
  double learning_rate() const;     // rate of the next optimizer step
  double loss_scale() const;        // fp16: the current loss scale; else 1
  torch::nn::Module& model();       // for tests and tools: parameters, FLOP counts

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace sift::worker
