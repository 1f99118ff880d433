#include "worker/standalone.h"

#include <spdlog/spdlog.h>

#include <cmath>
#include <iostream>

#include "common/config/config.h"
#include "common/hparams/hparams.h"
#include "common/params_json.h"
#include "worker/trainer/micro_batch.h"
#include "worker/trainer/process_stats.h"
#include "worker/trainer/trainer.h"

namespace sift::worker {

int RunStandalone(const StandaloneOptions& o) {
  common::StudyConfig config;
  auto errors = common::LoadStudyConfig(o.config_path, &config);
  if (!errors.empty()) {
    std::cerr << o.config_path << ": invalid config:\n";
    for (const auto& e : errors) std::cerr << "  " << e << "\n";
    return 2;
  }
  search::Params params = config.fixed;
  try {
    for (auto& [name, v] : common::ParamsFromJsonText(o.params_json)) params[name] = v;
  } catch (const std::exception& e) {
    std::cerr << "--params: " << e.what() << "\n";
    return 2;
  }
  TrainerOptions topts;
  if (std::string p = common::ParseHParams(params, &topts.hp); !p.empty()) {
    std::cerr << "--params: " << p << "\n";
    return 2;
  }
  topts.max_epochs = o.epochs > 0 ? o.epochs : config.budget.max_epochs;
  topts.seed = config.seed;
  topts.device = o.device;
  // As `sift run` gives its workers: --threads, else the config's worker.threads, else 1.
  const int threads = o.threads > 0               ? o.threads
                      : config.worker.threads > 0 ? static_cast<int>(config.worker.threads)
                                                  : 1;
  topts.num_threads = threads;
  try {
    CachedDataSpec spec;
    static_cast<sift::data::DataSpec&>(spec) = config.data;
    spec.cache_dir = o.cache_dir;
    auto data = LoadDatasets(spec);
    if (auto c = ResolveMicroBatch(&topts, o.memory_limit_mb << 20, Summarize(*data).shape)) {
      spdlog::info("micro_batch auto: {}", c->Describe());
    }
    Trainer trainer(topts, std::move(data));
    if (!o.resume_path.empty()) trainer.LoadCheckpoint(o.resume_path);
    spdlog::info("training {} on {} in {} with {} threads: {}", topts.hp.model, trainer.device(),
                 trainer.precision(), threads, search::ToString(params));
    // The task's headline score: accuracy (higher is better) or rmse (lower is better).
    double best = std::nan(""), sps = 0;
    std::string best_name = "val_accuracy";
    while (trainer.epoch() < topts.max_epochs) {
      EpochMetrics m = trainer.TrainEpoch();
      if (m.diverged) {
        spdlog::warn("epoch {}: training loss {} (diverged); stopping (stop_on_divergence)",
                     m.epoch, m.train_loss);
        break;
      }
      if (!o.checkpoint_path.empty()) trainer.SaveCheckpoint(o.checkpoint_path);
      const double score = m.regression ? m.val_rmse : m.val_accuracy;
      if (m.regression) best_name = "val_rmse";
      if (!(m.regression ? score >= best : score <= best)) best = score;  // NaN: the first
      sps = m.samples_per_second;
      spdlog::info(
          "epoch {}/{}: train_loss {:.4f} val_loss {:.4f} {} {:.4f} | {:.1f} s, "
          "{:.0f} samples/s, data wait {:.1f}%",
          m.epoch, topts.max_epochs, m.train_loss, m.val_loss, best_name, score, m.seconds,
          m.samples_per_second, 100 * m.data_wait_fraction);
    }
    std::cout << "best " << best_name << " " << best;
    for (const auto& [name, value] : trainer.TestMetrics())
      std::cout << ", " << name << " " << value;
    std::cout << ", " << sps << " samples/s, peak RSS " << PeakRssBytes() / 1048576.0 << " MiB\n";
  } catch (const std::exception& e) {
    std::cerr << "train: " << e.what() << "\n";
    return 1;
  }
  return 0;
}

}  // namespace sift::worker
