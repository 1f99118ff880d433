// `sift export --run DIR --trial N --out model.pt`: a trial's trained model as TorchScript.
// `sift` has no LibTorch: it finds the trial's latest checkpoint and runs
// `sift-worker export --checkpoint FILE --out model.pt` (the sift-worker beside it, or
// --worker-binary). Kept apart from main.cc.
#pragma once

#include <CLI/CLI.hpp>
#include <cstdint>
#include <string>

namespace sift::coordinator {

void AddExportCommand(CLI::App& app);
// Runs `sift export` when it was given; -1 when it was not. Returns the exit code.
int RunExportCommand(const CLI::App& app);

// The latest checkpoint of trial `trial` (the trial's number within its study) under
// `checkpoints` (a coordinator's checkpoint directory: study-<id>/trial-<n>-e<k>[-s<j>].ckpt);
// study 0 means the one study that has checkpoints of that trial. Returns "" and sets `error`
// naming what is missing or ambiguous.
std::string FindTrialCheckpoint(const std::string& checkpoints, int64_t study, int64_t trial,
                                std::string* error);

}  // namespace sift::coordinator
