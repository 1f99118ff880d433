#include "worker/trainer/micro_batch.h"

#include <ATen/autocast_mode.h>
#include <c10/core/CPUAllocator.h>
#include <fmt/format.h>
#include <torch/torch.h>
#ifdef SIFT_TORCH_CUDA
#include <c10/cuda/CUDACachingAllocator.h>
#include <c10/cuda/CUDAException.h>
#include <c10/cuda/CUDAFunctions.h>
#endif

#include <atomic>
#include <cstdlib>
#include <functional>
#include <new>
#include <optional>
#include <stdexcept>

#include "worker/trainer/models.h"
#include "worker/trainer/precision.h"
#include "worker/trainer/process_stats.h"
#include "worker/trainer/torch_compat.h"

namespace sift::worker {
namespace {

constexpr int64_t kProbeBatch = 16;
constexpr size_t kHeader = 64;  // keeps c10's 64-byte alignment; holds the block's size

std::atomic<int64_t> g_current{0};
std::atomic<int64_t> g_peak{0};

// Counts live CPU tensor bytes and their peak while installed (only during a probe).
class CountingAllocator final : public c10::Allocator {
 public:
  // 2.3 made allocate non-const and copy_data pure virtual.
#if SIFT_TORCH_AT_LEAST(2, 3)
  c10::DataPtr allocate(size_t n) override {
#else
  c10::DataPtr allocate(size_t n) const override {
#endif
    void* raw = nullptr;
    if (posix_memalign(&raw, kHeader, n + kHeader) != 0) throw std::bad_alloc();
    auto* block = static_cast<char*>(raw);
    *reinterpret_cast<size_t*>(block) = n;
    const int64_t now = g_current += static_cast<int64_t>(n);
    int64_t peak = g_peak.load();
    while (now > peak && !g_peak.compare_exchange_weak(peak, now)) {
    }
    void* data = block + kHeader;
    return {data, data, &Free, c10::Device(c10::DeviceType::CPU)};
  }
  c10::DeleterFnPtr raw_deleter() const override { return &Free; }
#if SIFT_TORCH_AT_LEAST(2, 3)
  void copy_data(void* dest, const void* src, std::size_t count) const override {
    default_copy_data(dest, src, count);
  }
#endif

  static void Free(void* data) {
    char* block = static_cast<char*>(data) - kHeader;
    g_current -= static_cast<int64_t>(*reinterpret_cast<size_t*>(block));
    std::free(block);
  }
};

// Installs the counting allocator for its lifetime. Tensors it allocated may outlive it: their
// deleter is a plain function.
class CountAllocations {
 public:
  CountAllocations() : previous_(c10::GetCPUAllocator()) {
    static CountingAllocator counting;
    c10::SetCPUAllocator(&counting, /*priority=*/255);
  }
  ~CountAllocations() { c10::SetCPUAllocator(previous_, /*priority=*/255); }
  CountAllocations(const CountAllocations&) = delete;
  CountAllocations& operator=(const CountAllocations&) = delete;

  int64_t Current() const { return g_current.load(); }
  // Bytes allocated at the peak of `fn` beyond what was live when it started.
  int64_t PeakOf(const std::function<void()>& fn) {
    const int64_t base = g_current.load();
    g_peak = base;
    fn();
    return g_peak.load() - base;
  }

 private:
  c10::Allocator* previous_;
};

#ifdef SIFT_TORCH_CUDA
// The same figures on a CUDA device, from the caching allocator's statistics: bytes held by live
// tensors (index 0 is StatType::AGGREGATE in every release) and their peak since a reset.
class CountCudaAllocations {
  // First: its deduced type (the allocator's Stat, which moved namespaces in 2.x) is used below.
  auto Stats() const {
    return c10::cuda::CUDACachingAllocator::getDeviceStats(device_).allocated_bytes[0];
  }

 public:
  explicit CountCudaAllocations(c10::DeviceIndex device) : device_(device) {}
  int64_t Current() const { return Stats().current; }
  int64_t PeakOf(const std::function<void()>& fn) {
    c10::cuda::device_synchronize();
    const int64_t base = Current();
    c10::cuda::CUDACachingAllocator::resetPeakStats(device_);
    fn();
    c10::cuda::device_synchronize();
    return Stats().peak - base;
  }
  // What a trial may use: the device's free memory plus what the cache holds unused.
  int64_t LimitBytes() const {
    size_t free = 0, total = 0;
    C10_CUDA_CHECK(cudaMemGetInfo(&free, &total));
    const auto stats = c10::cuda::CUDACachingAllocator::getDeviceStats(device_);
    return static_cast<int64_t>(free) + stats.reserved_bytes[0].current - Current();
  }

 private:
  c10::DeviceIndex device_;
};
#endif

// Bytes of optimizer state per parameter value, besides the weight and its gradient.
int64_t OptimizerSlots(const common::HParams& hp) {
  if (hp.optimizer == "adam" || hp.optimizer == "adamw") return 2;
  return hp.momentum > 0 ? 1 : 0;
}

}  // namespace

std::string MicroBatchChoice::Describe() const {
  constexpr double kMiB = 1 << 20;
  return fmt::format(
      "micro-batch {}, evaluation batch {} (measured {:.3f} MiB per training sample, {:.3f} MiB "
      "per evaluated sample, {:.1f} MiB for the model and optimizer; limit {:.0f} MiB)",
      micro_batch, eval_batch, sample_bytes / kMiB, eval_sample_bytes / kMiB, fixed_bytes / kMiB,
      limit_bytes / kMiB);
}

// Measures `step` with `meter` at two small batches (see the header) into c.
template <typename Meter, typename Step>
void Measure(Meter& meter, Step step, int64_t batch_size, const int64_t& forward_live,
             MicroBatchChoice* c) {
  // Per sample: the slope between two small batches, of the step's peak and of what the forward
  // pass leaves for backward. At small batches the peak is the weight gradients; at large ones
  // it is the saved activations, so the larger slope is the one that extrapolates.
  const int64_t p2 = std::min(kProbeBatch, batch_size);
  const int64_t p1 = p2 / 2;
  const int64_t peak2 = meter.PeakOf([&] { step(p2, true); });
  const int64_t live2 = forward_live;
  if (p1 > 0) {
    const int64_t peak1 = meter.PeakOf([&] { step(p1, true); });
    c->sample_bytes = std::max((peak2 - peak1), (live2 - forward_live)) / (p2 - p1);
  } else {
    c->sample_bytes = std::max(peak2, live2);
  }
  c->sample_bytes = std::max<int64_t>(1, c->sample_bytes);
  c->eval_sample_bytes = std::max<int64_t>(1, meter.PeakOf([&] { step(p2, false); }) / p2);
}

MicroBatchChoice ChooseMicroBatch(const common::HParams& hp, const std::string& device,
                                  int64_t limit_bytes, const ModelShape& shape) {
  MicroBatchChoice c;
  const bool cuda = device == "cuda" || (device == "auto" && torch::cuda::is_available());
#ifndef SIFT_TORCH_CUDA
  if (cuda) {  // this LibTorch has no CUDA allocator statistics to read
    c.limit_bytes = limit_bytes > 0 ? limit_bytes : AvailableMemoryBytes();
    c.micro_batch = hp.batch_size;
    c.eval_batch = kDefaultEvalBatch;
    return c;
  }
#endif
  const torch::Device dev = cuda ? torch::Device(torch::kCUDA, 0) : torch::Device(torch::kCPU);
  common::HParams probe_hp = hp;
  probe_hp.dropout = 0.0;  // keeps the probe off the global random generator
  auto model = MakeModel(probe_hp, shape);
  model->to(dev);
  model->train();
  // The precision the trainer will resolve to, so the probe's activations have its sizes.
  PrecisionHardware hw;
  hw.cuda = cuda;
  if (cuda) hw.capability = CudaCapability(0);
  hw.cpu_native_bf16 = !cuda && CpuHasNativeBf16();
  const Precision precision = ChoosePrecision(hp.precision, hw).precision;
  const bool autocast = precision != Precision::kFp32;
  int64_t forward_live = 0;  // bytes live after the last training forward pass
  std::function<int64_t()> current;
  auto step = [&](int64_t n, bool train) {
    const int64_t base = current();
    std::vector<int64_t> dims = {n};
    dims.insert(dims.end(), shape.sample.begin(), shape.sample.end());
    auto x = torch::randn(dims, torch::TensorOptions().device(dev));
    torch::Tensor logits;
    {
      std::optional<torch::NoGradGuard> no_grad;
      if (!train) no_grad.emplace();
      SetAutocastEnabled(dev.type(), autocast);
      SetAutocastDtype(dev.type(), precision == Precision::kFp16 ? at::kHalf : at::kBFloat16);
      logits = model->forward(x).to(torch::kFloat32);
      SetAutocastEnabled(dev.type(), false);
      at::autocast::clear_cache();
    }
    if (train) {
      forward_live = current() - base;
      auto labels = torch::zeros({n}, torch::TensorOptions().dtype(torch::kLong).device(dev));
      torch::cross_entropy_loss(logits, labels).backward();
      for (auto& p : model->parameters()) p.mutable_grad() = torch::Tensor();
    }
  };
#ifdef SIFT_TORCH_CUDA
  if (cuda) {
    CountCudaAllocations count(dev.index());
    current = [&count] { return count.Current(); };
    c.limit_bytes = count.LimitBytes();
    Measure(count, step, hp.batch_size, forward_live, &c);
  }
#endif
  if (!cuda) {
    c.limit_bytes = limit_bytes > 0 ? limit_bytes : AvailableMemoryBytes();
    CountAllocations count;
    current = [&count] { return count.Current(); };
    Measure(count, step, hp.batch_size, forward_live, &c);
  }
  int64_t values = 0;
  for (const auto& p : model->parameters()) values += p.numel();
  c.fixed_bytes = values * static_cast<int64_t>(sizeof(float)) * (2 + OptimizerSlots(hp));

  const double room = static_cast<double>(c.limit_bytes) / kMemoryMargin - c.fixed_bytes;
  const auto fits = [&](int64_t n, int64_t bytes) {
    return static_cast<double>(n) * bytes <= room;
  };
  for (int64_t m = hp.batch_size; m >= 1 && c.micro_batch == 0; --m) {
    if (hp.batch_size % m == 0 && fits(m, c.sample_bytes)) c.micro_batch = m;
  }
  c.eval_batch = room > 0 ? std::min<int64_t>(kDefaultEvalBatch, room / c.eval_sample_bytes) : 0;
  if (c.micro_batch == 0 || c.eval_batch == 0) {
    constexpr double kMiB = 1 << 20;
    throw std::runtime_error(fmt::format(
        "micro_batch auto: one sample needs {:.1f} MiB with headroom x{} ({:.1f} MiB for the model "
        "and optimizer, {:.3f} MiB per training sample), more than the {:.0f} MiB this worker may "
        "use",
        (c.fixed_bytes + std::max(c.sample_bytes, c.eval_sample_bytes)) * kMemoryMargin / kMiB,
        kMemoryMargin, c.fixed_bytes / kMiB, c.sample_bytes / kMiB, c.limit_bytes / kMiB));
  }
  return c;
}

std::optional<MicroBatchChoice> ResolveMicroBatch(TrainerOptions* o, int64_t limit_bytes,
                                                  const ModelShape& shape) {
  if (!common::MicroBatchIsAuto(o->hp)) return std::nullopt;
  MicroBatchChoice c = ChooseMicroBatch(o->hp, o->device, limit_bytes, shape);
  o->hp.micro_batch = c.micro_batch == o->hp.batch_size ? 0 : c.micro_batch;
  o->eval_batch = c.eval_batch;
  return c;
}

}  // namespace sift::worker
