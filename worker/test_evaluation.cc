#include "worker/test_evaluation.h"

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include <chrono>
#include <filesystem>

#include "common/data/data_spec.h"
#include "common/data_files.h"
#include "common/hparams/hparams.h"
#include "common/per_class_key.h"
#include "common/posix_fs.h"
#include "common/wire/proto_convert.h"
#include "worker/trainer/trainer.h"

namespace sift::worker {

std::string DataMissingHere(const v1::DataSpec& d) {
  if (d.spec_json().empty()) return common::CheckDataDir(d.dir());  // an older coordinator's
  const sift::data::DataSpec spec = sift::data::DataSpecFromJson(d.spec_json());
  return spec.is_idx() ? sift::data::CheckSourceFilesPresent(spec) : "";
}

void RunTestEvaluation(const v1::TrialAssignment& a, const EvaluationLink& link) {
  const auto t0 = std::chrono::steady_clock::now();
  try {
    TrainerOptions topts;
    if (std::string p = common::ParseHParams(common::FromProto(a.params()), &topts.hp);
        !p.empty()) {
      return link.fail("bad parameters: " + p, false);
    }
    // Scoring needs no micro-batches (evaluation has its own batch), and an `auto` one would
    // need the worker's memory limit: the whole batch is fine here.
    topts.hp.micro_batch = 0;
    topts.max_epochs = a.max_epochs();
    topts.seed = a.seed();
    topts.device = link.device;
    topts.num_threads = link.threads;
    if (std::string p = DataMissingHere(a.data()); !p.empty()) {
      return link.fail(p, /*cannot_run=*/true);
    }
    auto data = link.data(a.data());
    const LoadedDataSummary summary = Summarize(*data);
    if (summary.test == 0) return link.fail("the data has no test split to score", false);
    std::string path;
    if (std::string p = link.fetch(a.resume_checkpoint(), &path); !p.empty()) {
      return link.fail(p, false);
    }
    const std::vector<std::string>& class_names = summary.class_names;
    Trainer trainer(topts, std::move(data));
    trainer.LoadCheckpoint(path);  // verifies the checksum: a damaged model is never scored
    if (a.checkpoint_dir().empty()) common::Remove(path);
    auto metrics = trainer.TestMetrics();
    // The counts go out keyed by class name (by index where the data has no names).
    std::string per_class;
    for (size_t k = 0; k < class_names.size(); ++k) {
      const std::string key = common::PerClassPrefix(class_names[k], k);
      const auto correct = metrics.find(key + "_correct"), total = metrics.find(key + "_total");
      if (correct == metrics.end() || total == metrics.end()) continue;
      per_class += fmt::format("{}{} {}/{}", per_class.empty() ? "" : ", ", class_names[k],
                               correct->second, total->second);
    }
    if (!per_class.empty()) {
      spdlog::info("trial {}: test split per class (correct/total): {}", a.trial_number(),
                   per_class);
    }
    metrics["test_seconds"] =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    spdlog::info("trial {}: test split scored from {} (epoch {})", a.trial_number(),
                 a.resume_checkpoint(), trainer.epoch());
    link.complete(metrics);
  } catch (const std::exception& e) {
    link.fail(std::string("test evaluation: ") + e.what(), false);
  }
}

}  // namespace sift::worker
