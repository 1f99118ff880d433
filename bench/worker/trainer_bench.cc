// Training throughput of the Sift trainer on Fashion-MNIST: one configuration per run, printed as
// one line of key=value pairs that run.sh collects into a table.
//
//   trainer_bench --model=mlp|cnn --precision=fp32|bf16|fp16|auto --batch=256 --micro=0
//                 --threads=2 --train=12800 --epochs=2 --device=cpu|cuda --data=DIR
// --data: the Fashion-MNIST folder (the four IDX .gz files); default the Debian one.
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

#include "worker/trainer/kernels/sgemm.h"
#include "worker/trainer/models.h"
#include "worker/trainer/process_stats.h"
#include "worker/trainer/trainer.h"

namespace {

using sift::worker::Trainer;
using sift::worker::TrainerOptions;

struct Flags {
  std::string model = "mlp";
  std::string precision = "fp32";
  int64_t batch = 256;
  int64_t micro = 0;
  int threads = 2;
  int64_t train = 12800;
  int prefetch = 2;
  std::string device = "cpu";
  std::string data;  // "" : CachedDataSpec's default folder
  // The first epoch warms up (allocator, oneDNN primitive caches) and is not counted; the best of
  // the others is reported, which filters out time slices lost to other processes.
  int epochs = 4;
};

Flags ParseFlags(int argc, char** argv) {
  Flags f;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    auto value = [&a](const char* name) -> const char* {
      const size_t n = std::strlen(name);
      return a.compare(0, n, name) == 0 && a.size() > n && a[n] == '=' ? a.c_str() + n + 1
                                                                       : nullptr;
    };
    if (const char* v = value("--model"))
      f.model = v;
    else if (const char* v = value("--precision"))
      f.precision = v;
    else if (const char* v = value("--batch"))
      f.batch = std::atoll(v);
    else if (const char* v = value("--micro"))
      f.micro = std::atoll(v);
    else if (const char* v = value("--threads"))
      f.threads = std::atoi(v);
    else if (const char* v = value("--train"))
      f.train = std::atoll(v);
    else if (const char* v = value("--epochs"))
      f.epochs = std::atoi(v);
    else if (const char* v = value("--prefetch"))
      f.prefetch = std::atoi(v);
    else if (const char* v = value("--device"))
      f.device = v;
    else if (const char* v = value("--data"))
      f.data = v;
    else {
      std::fprintf(stderr, "unknown flag %s\n", argv[i]);
      std::exit(2);
    }
  }
  return f;
}

const char* Env(const char* name) {
  const char* v = std::getenv(name);
  return v ? v : "unset";
}

}  // namespace

int main(int argc, char** argv) {
  const Flags f = ParseFlags(argc, argv);
  sift::worker::DataSpec spec;
  spec.train_limit = f.train;
  spec.val_size = 1000;
  spec.test_limit = 1000;
  spec.cache_dir = "/tmp/sift-bench-cache";
  if (!f.data.empty()) spec.dir = f.data;
  auto data = sift::worker::LoadDatasets(spec);

  TrainerOptions o;
  o.hp.model = f.model;
  o.hp.hidden = 512;  // MLP 784-512-256-10
  o.hp.depth = 2;     // CNN: 2 blocks, 32 and 64 channels, 3x3
  o.hp.channels = 32;
  o.hp.kernel_size = 3;
  o.hp.optimizer = "adam";
  o.hp.batch_size = f.batch;
  o.hp.micro_batch = f.micro;
  o.hp.precision = f.precision;
  o.max_epochs = f.epochs;
  o.seed = 1;
  o.num_threads = f.threads;
  o.prefetch_depth = f.prefetch;
  o.device = f.device;
  Trainer trainer(o, data);

  sift::worker::EpochMetrics m, best;
  for (int e = 0; e < f.epochs; ++e) {
    m = trainer.TrainEpoch();
    if (e > 0 && m.samples_per_second > best.samples_per_second) best = m;
  }
  if (f.epochs == 1) best = m;
  best.val_accuracy = m.val_accuracy;
  m = best;
  double gflops = 0.0;
  if (f.model == "cnn") {
    // Training ~ 3x the forward pass (forward, input gradients, weight gradients), 2 FLOPs/MAC.
    auto* cnn = dynamic_cast<sift::worker::Cnn*>(&trainer.model());
    gflops = 3.0 * 2.0 * static_cast<double>(cnn->ForwardMacs(28)) * m.samples_per_second / 1e9;
  }
  std::printf(
      "impl=sift device=%s model=%s precision=%s batch=%lld micro=%lld threads=%d "
      "samples_per_second=%.1f data_wait_fraction=%.4f val_accuracy=%.4f gflops=%.2f "
      "peak_rss_mib=%.1f prefetch=%d torch_threads=%d sgemm=%s OMP_NUM_THREADS=%s "
      "OPENBLAS_NUM_THREADS=%s OPENBLAS_CORETYPE=%s LD_PRELOAD=%s MALLOC_CONF=%s\n",
      trainer.device().c_str(), f.model.c_str(), trainer.precision().c_str(),
      static_cast<long long>(f.batch), static_cast<long long>(f.micro), f.threads,
      m.samples_per_second, m.data_wait_fraction, m.val_accuracy, gflops,
      sift::worker::PeakRssBytes() / 1048576.0, f.prefetch, torch::get_num_threads(),
      sift::worker::SgemmUsesOneDnn() ? "onednn" : "aten", Env("OMP_NUM_THREADS"),
      Env("OPENBLAS_NUM_THREADS"), Env("OPENBLAS_CORETYPE"), Env("LD_PRELOAD"), Env("MALLOC_CONF"));
  return 0;
}
