// What `precision: auto` (the default) changes for a whole search at a fixed wall-clock budget:
// the same four trials (MLP 784-512-256-10, Adam at four learning rates, batch 256) share the
// budget equally under each precision; each trial trains whole epochs while its share lasts.
// Printed per precision: what it resolved to on this machine, epochs trained in all, the best
// validation accuracy of the search, and the mean training samples/s.
//
//   precision_budget_bench --budget=40 --threads=2 --train=12800 [--precisions=auto,fp32,bf16]
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <iterator>
#include <sstream>
#include <string>
#include <vector>

#include "worker/trainer/precision.h"
#include "worker/trainer/trainer.h"

namespace {

using Clock = std::chrono::steady_clock;
using sift::worker::Trainer;
using sift::worker::TrainerOptions;

constexpr double kLearningRates[] = {3e-4, 1e-3, 3e-3, 1e-2};
constexpr int kMaxEpochs = 50;

struct Flags {
  double budget = 40.0;  // seconds per precision, the whole search
  int threads = 2;
  int64_t train = 12800;
  std::string precisions = "auto,fp32,bf16";
};

Flags Parse(int argc, char** argv) {
  Flags f;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    const auto eq = a.find('=');
    const std::string key = a.substr(0, eq),
                      value = eq == std::string::npos ? "" : a.substr(eq + 1);
    if (key == "--budget") {
      f.budget = std::atof(value.c_str());
    } else if (key == "--threads") {
      f.threads = std::atoi(value.c_str());
    } else if (key == "--train") {
      f.train = std::atoll(value.c_str());
    } else if (key == "--precisions") {
      f.precisions = value;
    } else {
      std::fprintf(stderr, "unknown flag %s\n", argv[i]);
      std::exit(2);
    }
  }
  return f;
}

double Since(Clock::time_point t) {
  return std::chrono::duration<double>(Clock::now() - t).count();
}

}  // namespace

int main(int argc, char** argv) {
  const Flags f = Parse(argc, argv);
  sift::worker::DataSpec spec;
  spec.train_limit = f.train;
  spec.val_size = 2000;
  spec.test_limit = 1000;
  spec.cache_dir = "/tmp/sift-bench-cache";
  auto data = sift::worker::LoadDatasets(spec);
  std::printf("# cpu bf16 instructions: %s; budget %.0f s per search, %zu trials, %d threads\n",
              sift::worker::CpuHasNativeBf16() ? "yes" : "no", f.budget, std::size(kLearningRates),
              f.threads);

  std::stringstream list(f.precisions);
  std::string precision;
  while (std::getline(list, precision, ',')) {
    const double share = f.budget / static_cast<double>(std::size(kLearningRates));
    int epochs = 0;
    double best = 0.0, samples = 0.0, train_seconds = 0.0;
    std::string resolved;
    for (double lr : kLearningRates) {
      TrainerOptions o;
      o.hp.model = "mlp";
      o.hp.hidden = 512;
      o.hp.depth = 2;
      o.hp.optimizer = "adam";
      o.hp.lr = lr;
      o.hp.batch_size = 256;
      o.hp.precision = precision;
      o.max_epochs = kMaxEpochs;
      o.seed = 1;
      o.num_threads = f.threads;
      const auto start = Clock::now();
      Trainer trainer(o, data);
      resolved = trainer.precision();
      double last = 0.0;  // the last epoch's seconds: the next one is expected to take as long
      while (trainer.epoch() < kMaxEpochs && Since(start) + last <= share) {
        const auto e = trainer.TrainEpoch();
        last = e.seconds;
        ++epochs;
        best = std::max(best, e.val_accuracy);
        samples += e.samples_per_second * e.seconds;
        train_seconds += e.seconds;
      }
    }
    std::printf(
        "precision=%s resolved=%s epochs=%d best_val_accuracy=%.4f samples_per_second=%.0f\n",
        precision.c_str(), resolved.c_str(), epochs, best,
        train_seconds > 0 ? samples / train_seconds : 0.0);
    std::fflush(stdout);
  }
  return 0;
}
