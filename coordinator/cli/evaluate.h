// `sift evaluate --run DIR | --coordinator ADDR --study S --trial N`: asks for a finished trial's
// held-out test score (a worker scores its checkpoint once) and waits for it. The study's best
// trial is scored when the study completes; this is for any other.
#pragma once

#include <CLI/CLI.hpp>

namespace sift::coordinator {

void AddEvaluateCommand(CLI::App& app);
// Runs `sift evaluate` if it was given; -1 when it was not. Returns the exit code.
int RunEvaluateCommand(const CLI::App& app);

}  // namespace sift::coordinator
