// The trainer's hyperparameters and data settings, parsed from a trial's flat parameter map.
// Torch-free on purpose: the coordinator links it to reject unknown names when a config is
// validated, long before any worker sees the trial.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "search/param_value.h"

namespace sift::common {

inline constexpr int64_t kAutoMicroBatch = -1;
inline constexpr int64_t kMaxDepth = 8;  // MLP hidden layers and CNN blocks

struct HParams {
  // Model.
  std::string model = "mlp";  // mlp | cnn | resnet | torchscript
  // model: torchscript: the module's file (torch.jit.save), "{name}" filled from the trial's
  // parameters (model_path.h); and the values of the names that are not trainer settings, set
  // as module attributes (or used by the path).
  std::string path;
  search::Params attributes;
  // Starting weights for every trial: a TorchScript file or a Sift checkpoint ("" for none).
  std::string init_from;
  int64_t hidden = 256;     // MLP: width of the first hidden layer
  int64_t depth = 2;        // MLP: hidden layers; CNN: conv blocks
  int64_t channels = 32;    // CNN: channels of the first block (doubles per block); resnet: stem
  int64_t kernel_size = 3;  // CNN
  double dropout = 0.0;
  std::string activation = "relu";  // relu | gelu | silu | tanh (every model)
  // MLP widths: layer i (0-based) is widths[i] when set (> 0), else hidden * taper^i rounded
  // down, never below min(hidden, 32). taper 0.5 halves per layer: 512, 256, 128, ...
  double taper = 0.5;
  std::vector<int64_t> widths = std::vector<int64_t>(kMaxDepth, 0);  // width1..width8; 0: unset
  std::string norm = "none";    // MLP, after each hidden linear layer: none | batch | layer
  std::string pooling = "max";  // CNN: 2x2 pool after each block: max | avg
  bool batch_norm = true;       // CNN and resnet: batch norm after each convolution
  int64_t blocks = 2;           // resnet: residual blocks per stage
  int64_t stages = 3;           // resnet: stages (width doubles, resolution halves, per stage)
  // Optimisation.
  std::string optimizer = "adam";  // sgd | adam | adamw
  double lr = 1e-3;
  double momentum = 0.9;  // sgd only
  int64_t nesterov = 0;   // sgd only; 0 or 1
  double weight_decay = 0.0;
  std::string lr_schedule = "constant";  // constant | cosine | step
  int64_t warmup_epochs = 0;
  int64_t step_epochs = 3;  // step schedule: decay every this many epochs
  double step_gamma = 0.1;  // step schedule: multiply lr by this
  // Regression loss: mse | huber (quadratic within huber_delta of the target, linear beyond).
  // Classification always trains on cross-entropy.
  std::string loss = "mse";
  double huber_delta = 1.0;
  // Batching and precision.
  int64_t batch_size = 128;  // effective batch per optimizer step
  // No batch_size, micro_batch nor accumulation_steps in the parameters: the trainer sets
  // batch_size to DefaultBatchSize of the training rows (ParseHParams sets this; HParams{} does
  // not).
  bool batch_size_auto = false;
  // 0: the whole batch at once; kAutoMicroBatch: the largest divisor of batch_size that fits the
  // worker's memory (resolved by the worker, see micro_batch.h); else it must divide batch_size.
  // `accumulation_steps: k` in a config sets it to batch_size / k.
  int64_t micro_batch = 0;
  int64_t accumulation_steps = 0;  // as set in the config (0: not set); micro_batch says it all
  // fp32 | bf16 | fp16 | auto; auto: mixed precision where the hardware has it (precision.h)
  std::string precision = "auto";
  // End the trial (DIVERGED) as soon as its training loss is NaN or infinite: what diverged once
  // never comes back, and every further step is paid for. true/false (or 1/0).
  bool stop_on_divergence = true;
};

// Names accepted as trial parameters (search space entries or fixed trainer settings).
const std::vector<std::string>& KnownHParamNames();

// Fills `out` from defaults overridden by `params`. Under model: torchscript, names that are
// not trainer settings go to `attributes` instead of being an error. Returns "" or the first
// problem, naming the parameter ("optimizer: 'rmsprop' is not one of sgd, adam, adamw").
std::string ParseHParams(const search::Params& params, HParams* out);

// The settings that shape the model (model, widths, activation, ...), each under its parameter
// name: what an exported checkpoint needs to rebuild it with ParseHParams.
search::Params ModelParams(const HParams& hp);

// The batch size a trial gets when its config sets none: the largest power of two no more than a
// tenth of the training rows (a small table gets tens of steps an epoch, not three), at least 2
// (batch norm needs two) and at most kMaxDefaultBatch (large data keeps the old default).
inline constexpr int64_t kMaxDefaultBatch = 128;
int64_t DefaultBatchSize(int64_t train_rows);

// Micro-batches per optimizer step implied by batch_size and micro_batch.
inline int64_t AccumulationSteps(const HParams& hp) {
  return hp.micro_batch > 0 ? hp.batch_size / hp.micro_batch : 1;
}

// Whether the micro-batch is still to be chosen from the worker's memory.
inline bool MicroBatchIsAuto(const HParams& hp) { return hp.micro_batch == kAutoMicroBatch; }

}  // namespace sift::common
