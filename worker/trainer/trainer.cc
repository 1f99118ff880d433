#include "worker/trainer/trainer.h"

#include <ATen/CPUGeneratorImpl.h>
#include <ATen/autocast_mode.h>
#include <spdlog/spdlog.h>

#include <chrono>
#include <cmath>
#include <set>
#include <sstream>

#include "common/class_scores.h"
#include "common/per_class_key.h"
#include "worker/trainer/checkpoint.h"
#include "worker/trainer/data.h"
#include "worker/trainer/export.h"
#include "worker/trainer/init_from.h"
#include "worker/trainer/kernels/fused_optimizer.h"
#include "worker/trainer/loss_scaler.h"
#include "worker/trainer/lr_schedule.h"
#include "worker/trainer/measure.h"
#include "worker/trainer/models.h"
#include "worker/trainer/precision.h"
#include "worker/trainer/resident_data.h"
#include "worker/trainer/torch_compat.h"

namespace sift::worker {
namespace {

using Clock = std::chrono::steady_clock;

// stop_on_divergence looks at the running loss this often: at most this many steps are wasted.
constexpr int64_t kDivergenceCheckSteps = 8;

double Seconds(Clock::time_point since) {
  return std::chrono::duration<double>(Clock::now() - since).count();
}

torch::Device ResolveDevice(const std::string& device) {
  if (device == "cpu") return torch::kCPU;
  if (device == "cuda" || device == "auto") {
    if (torch::cuda::is_available()) return torch::kCUDA;
    if (device == "cuda") throw std::invalid_argument("device: cuda requested but unavailable");
    return torch::kCPU;
  }
  throw std::invalid_argument("device: '" + device + "' is not one of cpu, cuda, auto");
}

// The request resolved on this device, logged with its reason when it was not asked for exactly.
Precision ResolvePrecision(const std::string& requested, const torch::Device& device) {
  PrecisionHardware hw;
  hw.cuda = device.is_cuda();
  if (hw.cuda) hw.capability = CudaCapability(device.has_index() ? device.index() : 0);
  hw.cpu_native_bf16 = !hw.cuda && CpuHasNativeBf16();
  const PrecisionChoice c = ChoosePrecision(requested, hw);
  if (!c.reason.empty()) {
    spdlog::info("trainer: precision {} -> {} ({})", requested, PrecisionName(c.precision),
                 c.reason);
  }
  return c.precision;
}

// Autocast for one forward pass, entered and left as torch.autocast's context manager does:
// the cast cache is cleared when the outermost region ends.
class AutocastRegion {
 public:
  AutocastRegion(Precision precision, const torch::Device& device)
      : active_(precision != Precision::kFp32), type_(device.type()) {
    if (!active_) return;
    previous_ = AutocastEnabled(type_);
    previous_dtype_ = AutocastDtype(type_);
    SetAutocastEnabled(type_, true);
    // LibTorch 1.13 autocasts CPU ops to bfloat16 only (ResolvePrecision never picks fp16 there).
    SetAutocastDtype(type_, precision == Precision::kFp16 ? at::kHalf : at::kBFloat16);
    at::autocast::increment_nesting();
  }
  ~AutocastRegion() {
    if (!active_) return;
    if (at::autocast::decrement_nesting() == 0) at::autocast::clear_cache();
    SetAutocastEnabled(type_, previous_);
    SetAutocastDtype(type_, previous_dtype_);
  }
  AutocastRegion(const AutocastRegion&) = delete;
  AutocastRegion& operator=(const AutocastRegion&) = delete;

 private:
  bool active_;
  c10::DeviceType type_;
  bool previous_ = false;
  at::ScalarType previous_dtype_ = at::kFloat;
};

std::unique_ptr<FusedOptimizer> MakeOptimizer(const common::HParams& hp,
                                              std::vector<torch::Tensor> params) {
  FusedOptimizerOptions o;
  o.lr = hp.lr;
  o.weight_decay = hp.weight_decay;
  if (hp.optimizer == "sgd") {
    o.kind = OptimizerKind::kSgd;
    o.momentum = hp.momentum;
    o.nesterov = hp.nesterov != 0;
  } else if (hp.optimizer == "adam") {
    o.kind = OptimizerKind::kAdam;
  } else if (hp.optimizer == "adamw") {
    o.kind = OptimizerKind::kAdamW;
  } else {
    throw std::invalid_argument("optimizer: unknown '" + hp.optimizer + "'");
  }
  return std::make_unique<FusedOptimizer>(std::move(params), o);
}

// Everything that shapes the model, optimiser and data order: a checkpoint must match it.
std::string Fingerprint(const common::HParams& hp) {
  std::ostringstream s;
  s << "model=" << hp.model << " hidden=" << hp.hidden << " depth=" << hp.depth
    << " channels=" << hp.channels << " kernel_size=" << hp.kernel_size
    << " optimizer=" << hp.optimizer << " nesterov=" << hp.nesterov
    << " batch_size=" << hp.batch_size;
  // The zoo's later settings, only where they differ from their defaults: a checkpoint of a
  // model that had none of them keeps its fingerprint.
  static const std::set<std::string> kAbove = {"model",    "hidden",      "depth",
                                               "channels", "kernel_size", "dropout"};
  const search::Params defaults = common::ModelParams(common::HParams{});
  for (const auto& [name, value] : common::ModelParams(hp)) {
    if (kAbove.count(name)) continue;
    const auto d = defaults.find(name);
    if (d == defaults.end() || d->second != value)
      s << " " << name << "=" << search::ToString(value);
  }
  // A TorchScript model's shape is its file's: the path and the values that pick it.
  if (!hp.path.empty()) s << " path=" << hp.path << " " << search::ToString(hp.attributes);
  return s.str();
}

}  // namespace

struct Trainer::Impl {
  TrainerOptions options;
  std::shared_ptr<const Datasets> data;
  torch::Device device = torch::kCPU;
  Precision precision = Precision::kFp32;
  int64_t accumulation = 1;
  int64_t micro_batch = 0;

  std::shared_ptr<Net> model;
  std::unique_ptr<FusedOptimizer> optimizer;
  std::vector<torch::Tensor> params;
  GradScaler scaler;
  at::Generator generator;  // dropout's randomness (CPU)

  // Position: epochs completed, optimizer steps taken in the current epoch.
  int64_t epoch = 0;
  int64_t step = 0;
  // Partial sums of the current epoch (checkpointed, so an interrupted epoch reports fully).
  torch::Tensor loss_sum;  // float64 scalar on the device: no host sync per step
  int64_t samples = 0;
  // fp16: the scaler's count of skipped steps when this epoch began (the count stays on the
  // device; it is read at the epoch's end and at checkpoints).
  int64_t skipped_base = 0;
  double train_seconds = 0.0;
  double wait_seconds = 0.0;
  int64_t trainable_params = 0;                                    // counted in Build()
  double inference_ms = std::numeric_limits<double>::quiet_NaN();  // NaN: not measured yet

  // The training split on the device, made at the first epoch that wants it (nullptr: batches
  // come from the host loader). Shared by the Impl a checkpoint load builds.
  std::shared_ptr<ResidentSplit> resident;
  bool resident_decided = false;

  ResidentSplit* Resident() {
    if (resident_decided) return resident.get();
    resident_decided = true;
    using R = TrainerOptions::Resident;
    const int64_t bytes = SplitBytes(data->train);
    const bool want =
        options.resident_data == R::kAlways ||
        (options.resident_data == R::kAuto && device.is_cuda() && bytes <= kResidentMaxBytes);
    if (!want) return nullptr;
    try {
      resident = std::make_shared<ResidentSplit>(data->train, device);
      spdlog::info("trainer: training split ({:.0f} MB) kept on {}", bytes / 1e6, device.str());
    } catch (const c10::Error& e) {
      spdlog::warn("trainer: training split ({:.0f} MB) stays on the host: {}", bytes / 1e6,
                   e.what_without_backtrace());
    }
    return resident.get();
  }

  int64_t StepsPerEpoch() const {
    return (data->train.size() + options.hp.batch_size - 1) / options.hp.batch_size;
  }

  double LearningRateAt(int64_t e, int64_t s) const {
    return LearningRate(options.hp, {e, s, StepsPerEpoch(), options.max_epochs});
  }

  double LossSum() const { return loss_sum.item<double>(); }

  ModelShape Shape() const {
    return {data->sample, data->outputs,     data->target_mean, data->target_std,
            data->task,   data->class_names, data->input};
  }

  void Build() {
    loss_sum = torch::zeros({}, torch::dtype(torch::kFloat64).device(device));
    torch::manual_seed(options.seed);
    model = MakeModel(options.hp, Shape());
    if (data->regression()) {  // the first predictions are the training mean (in fitted units)
      torch::NoGradGuard no_grad;
      for (auto& p : model->named_parameters()) {
        if (p.key() == "head.bias") p.value().zero_();
      }
    }
    model->to(device);
    generator = at::make_generator<at::CPUGeneratorImpl>(options.seed);
    if (device.is_cpu()) model->set_generator(generator);
    params = model->parameters();
    trainable_params = TrainableParams(*model);
    optimizer = MakeOptimizer(options.hp, params);
    GradScalerOptions scaler_options;
    scaler_options.enabled = precision == Precision::kFp16;
    scaler = GradScaler(scaler_options);
  }

  // Steps skipped on fp16 overflow in the current epoch (a host read of the scaler's count).
  int64_t SkippedInEpoch() const {
    return scaler.enabled() ? scaler.skipped_steps() - skipped_base : 0;
  }

  // One optimizer step over `batch`, split into micro-batches. Returns false when skipped
  // (true when the decision stayed on the device: SkippedInEpoch() counts those).
  bool Step(const Batch& batch) {
    const double lr = LearningRateAt(epoch, step);
    for (auto& group : optimizer->param_groups()) group.options().set_lr(lr);
    optimizer->ClearGrads();
    const int64_t n = batch.labels.size(0);
    const int64_t m = micro_batch > 0 ? micro_batch : n;
    for (int64_t start = 0; start < n; start += m) {
      const int64_t count = std::min(m, n - start);
      auto x = batch.images.narrow(0, start, count).to(device, /*non_blocking=*/true);
      auto y = batch.labels.narrow(0, start, count).to(device, /*non_blocking=*/true);
      torch::Tensor logits;
      {
        AutocastRegion autocast(precision, device);
        logits = model->forward(x);
      }
      // Mean over the micro-batch, weighted by its share of the batch: the gradients sum to
      // those of the whole batch's mean loss.
      auto loss = Loss(logits.to(torch::kFloat32), y, at::Reduction::Mean) *
                  (static_cast<double>(count) / static_cast<double>(n));
      scaler.Scale(loss).backward();
      loss_sum.add_(loss.detach().to(torch::kFloat64) * static_cast<double>(n));
    }
    samples += n;
    const bool stepped = scaler.Step(*optimizer);
    scaler.Update();
    return stepped;
  }

  // The training loss: cross-entropy over the classes, or for a regression model's single
  // output the squared error (loss: mse) or the Huber loss (loss: huber, quadratic within
  // huber_delta of the target and linear beyond, so outliers pull less), against the target in
  // its fitted scale, (y - target_mean) / target_std: huber_delta (in the target's units) is
  // scaled with it, and LossUnits() turns either loss back into the target's units.
  torch::Tensor Loss(const torch::Tensor& out, const torch::Tensor& y, int64_t reduction) const {
    if (data->regression()) {
      const double mean = data->target_mean, sd = data->target_std;
      const torch::Tensor fitted = mean == 0.0 && sd == 1.0 ? y : (y - mean) / sd;
      if (options.hp.loss == "huber") {
        return torch::huber_loss(out.squeeze(1), fitted, reduction, options.hp.huber_delta / sd);
      }
      return torch::mse_loss(out.squeeze(1), fitted, reduction);
    }
    return torch::cross_entropy_loss(out, y, /*weight=*/{}, reduction);
  }

  // Squared error and Huber loss both scale with the target's variance.
  double LossUnits() const { return data->regression() ? data->target_std * data->target_std : 1; }

  // Forward time per validation sample as Evaluate runs the model (eval mode, the trial's
  // autocast). Once per Trainer: the model's shape cannot change mid-trial, and forward passes
  // in eval mode draw no randomness and update no state, so training is unchanged.
  double InferenceMs() {
    if (!std::isnan(inference_ms) || data->val.size() == 0) return inference_ms;
    model->eval();
    inference_ms = InferenceMsPerSample(data->val, options.eval_batch, device, [this](auto& x) {
      AutocastRegion autocast(precision, device);
      model->forward(x);
    });
    model->train();
    spdlog::info("trainer: {} trainable parameters; forward {:.4g} ms per validation sample ({})",
                 trainable_params, inference_ms, PrecisionName(precision));
    return inference_ms;
  }

  // Mean loss and the task's scores over `split`, in eval mode; regression in the target's units.
  EvalMetrics Evaluate(const TensorSplit& split) {
    EvalMetrics e;
    if (split.size() == 0) return e;
    torch::NoGradGuard no_grad;
    model->eval();
    double loss = 0.0, squared_error = 0.0, abs_error = 0.0, sum_y = 0.0, sum_y2 = 0.0;
    int64_t correct = 0;
    torch::Tensor class_correct, class_predicted, class_total;  // per class, int64 on the CPU
    std::vector<double> margins;   // two classes: logit of class 1 minus class 0, for ROC AUC
    std::vector<int64_t> classes;  // and the labels they go with
    const int64_t batch = std::max<int64_t>(1, options.eval_batch);
    for (int64_t start = 0; start < split.size(); start += batch) {
      const int64_t count = std::min(batch, split.size() - start);
      auto x = split.images.narrow(0, start, count).to(device);
      auto y = split.labels.narrow(0, start, count).to(device);
      torch::Tensor out;
      {
        AutocastRegion autocast(precision, device);
        out = model->forward(x).to(torch::kFloat32);
      }
      loss += Loss(out, y, at::Reduction::Sum).item<double>();
      if (data->regression()) {
        const auto y64 = y.to(torch::kFloat64);
        const auto error =
            out.squeeze(1).to(torch::kFloat64) * data->target_std + data->target_mean - y64;
        squared_error += error.square().sum().item<double>();
        abs_error += error.abs().sum().item<double>();
        sum_y += y64.sum().item<double>();
        sum_y2 += y64.square().sum().item<double>();
        continue;
      }
      const auto predicted = out.argmax(/*dim=*/1).to(torch::kCPU);
      const auto labels = y.to(torch::kCPU).contiguous();
      correct += predicted.eq(labels).sum().item<int64_t>();
      const int64_t k = out.size(1);
      const auto hits = labels.masked_select(predicted.eq(labels));
      const auto add = [](torch::Tensor& sum, const torch::Tensor& part) {
        sum = sum.defined() ? sum + part : part;
      };
      add(class_total, torch::bincount(labels, /*weights=*/{}, k));
      add(class_correct, torch::bincount(hits, /*weights=*/{}, k));
      add(class_predicted, torch::bincount(predicted, /*weights=*/{}, k));
      if (k == 2) {
        const auto margin =
            (out.select(1, 1) - out.select(1, 0)).to(torch::kCPU, torch::kFloat64).contiguous();
        margins.insert(margins.end(), margin.data_ptr<double>(), margin.data_ptr<double>() + count);
        classes.insert(classes.end(), labels.data_ptr<int64_t>(),
                       labels.data_ptr<int64_t>() + count);
      }
    }
    model->train();
    const auto n = static_cast<double>(split.size());
    e.loss = loss / n * LossUnits();
    e.accuracy = static_cast<double>(correct) / n;
    if (data->regression()) {
      e.rmse = std::sqrt(squared_error / n);
      e.mae = abs_error / n;
      const double total = sum_y2 - sum_y * sum_y / n;  // n x the targets' variance
      e.r2 = total > 0 ? 1.0 - squared_error / total : 0.0;
    } else if (class_total.defined()) {
      common::ClassCounts c;
      for (int64_t k = 0; k < class_total.size(0); ++k) {
        c.correct.push_back(class_correct[k].item<int64_t>());
        c.predicted.push_back(class_predicted[k].item<int64_t>());
        c.total.push_back(class_total[k].item<int64_t>());
      }
      e.balanced_accuracy = common::BalancedAccuracy(c);
      e.macro_f1 = common::MacroF1(c);
      if (!margins.empty()) e.roc_auc = common::BinaryRocAuc(margins, classes);
      e.class_correct = std::move(c.correct);
      e.class_total = std::move(c.total);
    }
    return e;
  }
};

Trainer::Trainer(const TrainerOptions& options, std::shared_ptr<const Datasets> data)
    : impl_(std::make_unique<Impl>()) {
  Impl& s = *impl_;
  s.options = options;
  s.data = std::move(data);
  if (!s.data || s.data->train.size() == 0)
    throw std::invalid_argument("trainer: no training data");
  if (options.hp.batch_size_auto) {
    s.options.hp.batch_size = common::DefaultBatchSize(s.data->train.size());
    spdlog::info("trainer: batch_size {} (none set; {} training rows, about a tenth, at most {})",
                 s.options.hp.batch_size, s.data->train.size(), common::kMaxDefaultBatch);
  }
  const common::HParams& hp = s.options.hp;
  if (hp.batch_size <= 0) throw std::invalid_argument("batch_size: must be positive");
  if (hp.loss != "mse" && !s.data->regression()) {
    throw std::invalid_argument("loss: " + hp.loss +
                                " is for regression; classification trains on cross-entropy");
  }
  if (hp.micro_batch > 0 && hp.batch_size % hp.micro_batch != 0) {
    throw std::invalid_argument("micro_batch: does not divide batch_size");
  }
  if (options.num_threads > 0) torch::set_num_threads(options.num_threads);
  s.device = ResolveDevice(options.device);
  s.precision = ResolvePrecision(hp.precision, s.device);
  s.accumulation = common::AccumulationSteps(hp);
  s.micro_batch = hp.micro_batch;
  s.Build();
  // Once, not in Build: a checkpoint that is loaded next replaces these weights anyway.
  if (!hp.init_from.empty()) InitFrom(*s.model, hp.init_from);
  spdlog::debug("trainer: {} on {} in {}, {} x {} samples per step, {} threads", hp.model,
                s.device.str(), PrecisionName(s.precision), s.accumulation,
                hp.batch_size / s.accumulation, torch::get_num_threads());
}

Trainer::~Trainer() = default;

EpochMetrics Trainer::TrainEpoch(const std::atomic<bool>* stop) {
  Impl& s = *impl_;
  const auto epoch_start = Clock::now();
  bool diverged = false;
  s.model->train();
  {
    const int64_t batch_size = s.options.hp.batch_size;
    std::vector<int64_t> order = EpochPermutation(s.data->train.size(), s.options.seed, s.epoch);
    std::unique_ptr<BatchLoader> loader;
    ResidentSplit* resident = s.Resident();
    if (resident != nullptr) {
      resident->Begin(order, batch_size, /*first=*/s.step);
    } else {
      loader = std::make_unique<BatchLoader>(s.data->train, std::move(order), batch_size,
                                             /*first=*/s.step, /*pin_memory=*/s.device.is_cuda(),
                                             s.options.prefetch_depth);
    }
    const int64_t num_batches = loader ? loader->num_batches() : resident->num_batches();
    Batch batch;
    while (loader ? loader->Next(&batch) : resident->Next(&batch)) {
      s.Step(batch);
      ++s.step;
      if (stop != nullptr && stop->load() && s.step < num_batches) break;
      // Every few steps only: reading the loss waits for the device.
      if (s.options.hp.stop_on_divergence && s.step % kDivergenceCheckSteps == 0 &&
          !std::isfinite(s.LossSum())) {
        diverged = true;
        break;
      }
    }
    if (loader) s.wait_seconds += loader->wait_seconds();
  }
  // CUDA runs asynchronously: without waiting, the clock stops while the last steps are still
  // queued and samples_per_second reads high (10.7% on an H100). The CPU is already done.
  if (s.device.is_cuda()) torch::cuda::synchronize(s.device.index());
  s.train_seconds += Seconds(epoch_start);

  EpochMetrics m;
  m.train_loss = s.samples > 0 ? s.LossSum() / s.samples * s.LossUnits() : 0.0;
  m.diverged = diverged || (s.options.hp.stop_on_divergence && !std::isfinite(m.train_loss));
  m.completed = m.diverged || s.step >= s.StepsPerEpoch();
  m.samples_per_second = s.train_seconds > 0 ? s.samples / s.train_seconds : 0.0;
  m.data_wait_fraction = s.train_seconds > 0 ? s.wait_seconds / s.train_seconds : 0.0;
  m.skipped_steps = s.SkippedInEpoch();
  m.params = s.trainable_params;
  m.inference_ms = s.inference_ms;
  if (!m.completed) {
    m.epoch = s.epoch;
    m.seconds = Seconds(epoch_start);
    return m;  // interrupted: save a checkpoint now; evaluation waits for the full epoch
  }
  ++s.epoch;
  s.step = 0;
  s.loss_sum.zero_();
  s.samples = 0;
  s.skipped_base = s.scaler.enabled() ? s.scaler.skipped_steps() : 0;
  s.train_seconds = 0.0;
  s.wait_seconds = 0.0;
  const EvalMetrics val = s.Evaluate(s.data->val);
  m.val_loss = val.loss;
  m.val_accuracy = val.accuracy;
  m.val_balanced_accuracy = val.balanced_accuracy;
  m.val_macro_f1 = val.macro_f1;
  m.val_roc_auc = val.roc_auc;
  m.regression = s.data->regression();
  m.val_rmse = val.rmse;
  m.val_mae = val.mae;
  m.val_r2 = val.r2;
  m.epoch = s.epoch;
  m.seconds = Seconds(epoch_start);  // train + eval: the measurement below is not the epoch's
  m.inference_ms = s.InferenceMs();
  return m;
}

int64_t Trainer::epoch() const { return impl_->epoch; }

double Trainer::TestAccuracy() { return impl_->Evaluate(impl_->data->test).accuracy; }

std::map<std::string, double> Trainer::TestMetrics() {
  const EvalMetrics e = impl_->Evaluate(impl_->data->test);
  if (impl_->data->regression()) {
    return {{"test_rmse", e.rmse}, {"test_mae", e.mae}, {"test_r2", e.r2}};
  }
  std::map<std::string, double> out = {{"test_accuracy", e.accuracy},
                                       {"test_balanced_accuracy", e.balanced_accuracy},
                                       {"test_macro_f1", e.macro_f1}};
  if (std::isfinite(e.roc_auc)) out["test_roc_auc"] = e.roc_auc;
  const auto& names = impl_->data->class_names;
  for (size_t k = 0; k < e.class_total.size(); ++k) {
    const std::string prefix = common::PerClassPrefix(k < names.size() ? names[k] : "", k);
    out[prefix + "_correct"] = static_cast<double>(e.class_correct[k]);
    out[prefix + "_total"] = static_cast<double>(e.class_total[k]);
  }
  return out;
}

std::string Trainer::device() const { return impl_->device.is_cuda() ? "cuda" : "cpu"; }
std::string Trainer::precision() const { return PrecisionName(impl_->precision); }
int64_t Trainer::steps_per_epoch() const { return impl_->StepsPerEpoch(); }
int64_t Trainer::batch_size() const { return impl_->options.hp.batch_size; }
int64_t Trainer::step_in_epoch() const { return impl_->step; }
double Trainer::learning_rate() const { return impl_->LearningRateAt(impl_->epoch, impl_->step); }
double Trainer::loss_scale() const { return impl_->scaler.enabled() ? impl_->scaler.scale() : 1.0; }
torch::nn::Module& Trainer::model() { return *impl_->model; }

void Trainer::SaveCheckpoint(const std::string& path) {
  Impl& s = *impl_;
  torch::serialize::OutputArchive a;
  WriteString(a, "fingerprint", Fingerprint(s.options.hp));
  WriteString(a, "model_spec", ModelSpecJson(s.options.hp, s.Shape()));
  WriteInt(a, "seed", static_cast<int64_t>(s.options.seed));
  WriteInt(a, "train_size", s.data->train.size());
  WriteInt(a, "epoch", s.epoch);
  WriteInt(a, "step", s.step);
  WriteDouble(a, "loss_sum", s.LossSum());
  WriteInt(a, "samples", s.samples);
  WriteInt(a, "skipped", s.SkippedInEpoch());
  WriteDouble(a, "train_seconds", s.train_seconds);
  WriteDouble(a, "wait_seconds", s.wait_seconds);
  {
    std::lock_guard<std::mutex> lock(s.generator.mutex());
    a.write("generator", s.generator.get_state());
  }
  torch::serialize::OutputArchive model, optimizer, scaler;
  s.model->save(model);
  s.optimizer->save(optimizer);
  s.scaler.Save(scaler);
  a.write("model", model);
  a.write("optimizer", optimizer);
  a.write("scaler", scaler);
  WriteCheckpointFile(path, a);
}

void Trainer::LoadCheckpoint(const std::string& path) {
  Impl& s = *impl_;
  torch::serialize::InputArchive a;
  ReadCheckpointFile(path, s.device, &a);
  auto fail = [&path](const std::string& problem) {
    throw CheckpointError("bad checkpoint: " + path + ": " + problem);
  };
  try {
    const std::string fingerprint = ReadString(a, "fingerprint");
    if (fingerprint != Fingerprint(s.options.hp)) {
      fail("written for another configuration (" + fingerprint + "; this trial has " +
           Fingerprint(s.options.hp) + ")");
    }
    const int64_t train_size = ReadInt(a, "train_size");
    if (train_size != s.data->train.size()) {
      fail("written for " + std::to_string(train_size) + " training samples, this trial has " +
           std::to_string(s.data->train.size()));
    }
    // Restore into fresh objects first, so a failure leaves this trainer as it was.
    Impl fresh;
    fresh.options = s.options;
    fresh.options.seed = static_cast<uint64_t>(ReadInt(a, "seed"));
    fresh.data = s.data;
    fresh.device = s.device;
    fresh.precision = s.precision;
    fresh.accumulation = s.accumulation;
    fresh.micro_batch = s.micro_batch;
    fresh.resident = s.resident;
    fresh.resident_decided = s.resident_decided;
    fresh.inference_ms = s.inference_ms;  // the same model shape (fingerprint) on this machine
    fresh.Build();
    torch::serialize::InputArchive model, optimizer, scaler;
    a.read("model", model);
    a.read("optimizer", optimizer);
    a.read("scaler", scaler);
    fresh.model->load(model);
    fresh.optimizer->load(optimizer);
    if (fresh.scaler.enabled()) fresh.scaler.Load(scaler);
    torch::Tensor generator_state;
    a.read("generator", generator_state);
    {
      std::lock_guard<std::mutex> lock(fresh.generator.mutex());
      fresh.generator.set_state(generator_state.to(torch::kCPU));
    }
    fresh.epoch = ReadInt(a, "epoch");
    fresh.step = ReadInt(a, "step");
    fresh.loss_sum.fill_(ReadDouble(a, "loss_sum"));
    fresh.samples = ReadInt(a, "samples");
    // The scaler's total was restored above (fp16 only): the epoch's own count is the rest.
    fresh.skipped_base =
        (fresh.scaler.enabled() ? fresh.scaler.skipped_steps() : 0) - ReadInt(a, "skipped");
    fresh.train_seconds = ReadDouble(a, "train_seconds");
    fresh.wait_seconds = ReadDouble(a, "wait_seconds");
    if (fresh.epoch < 0 || fresh.step < 0 || fresh.step >= fresh.StepsPerEpoch()) {
      fail("position epoch " + std::to_string(fresh.epoch) + " step " + std::to_string(fresh.step) +
           " is out of range");
    }
    s = std::move(fresh);
  } catch (const c10::Error& e) {
    fail(e.what_without_backtrace());
  }
}

}  // namespace sift::worker
