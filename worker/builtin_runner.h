// Trials of the built-in LibTorch trainer: the data cache, micro-batch sizing, checkpoint resume
// (with fallbacks past damaged ones), and the epoch loop. Torch stays behind this header.
#pragma once

#include <atomic>
#include <memory>
#include <string>

#include "worker/trial_runner.h"

namespace sift::worker {

class CoordinatorLink;
class SpotSimulator;
class Trainer;
struct Datasets;
struct Resume;

class BuiltinRunner : public TrialRunner {
 public:
  BuiltinRunner(CoordinatorLink* link, SpotSimulator* spot, std::atomic<bool>* stop)
      : link_(link), spot_(spot), stop_(stop) {}
  // A test evaluation (evaluate_test) scores a trained trial's checkpoint; nothing is trained.
  void Run(const v1::TrialAssignment& a) override {
    a.evaluate_test() ? Evaluate(a) : TrainAssigned(a);
  }

 private:
  void TrainAssigned(const v1::TrialAssignment& a);
  void Evaluate(const v1::TrialAssignment& a);
  std::shared_ptr<const Datasets> Data(const v1::DataSpec& d);
  std::string StoreCheckpoint(Trainer& trainer, const v1::TrialAssignment& a,
                              const std::string& name);
  void Preempt(Trainer& trainer, const v1::TrialAssignment& a);
  std::string LoadNewestIntactCheckpoint(Trainer& trainer, const v1::TrialAssignment& a,
                                         Resume* resume);
  void Fail(const v1::TrialAssignment& a, const std::string& error, bool cannot_run = false);

  CoordinatorLink* link_;
  SpotSimulator* spot_;
  std::atomic<bool>* stop_;
  std::string cached_key_;  // the spec and content hash cached_data_ was loaded for
  std::shared_ptr<const Datasets> cached_data_;
};

}  // namespace sift::worker
