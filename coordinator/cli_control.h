// `sift cancel | pause | resume | budget`, and `--run DIR` (the coordinator of a running
// `sift run`, found through the files it leaves in DIR). Kept apart from main.cc.
#pragma once

#include <CLI/CLI.hpp>

#include <string>

#include "coordinator/coordinator.h"

namespace sift::coordinator {

// Adds the control subcommands; `address` and `token` are main's defaults (token: SIFT_TOKEN).
void AddControlCommands(CLI::App& app, std::string* address, std::string* token);
// Runs the control subcommand that was given; -1 when none was. Returns the exit code.
int RunControlCommand(const CLI::App& app);
// With a run directory, sets *address and (when `token` is not null) *token from its files;
// returns 0, or 1 after saying why it cannot. An empty `run_dir` leaves both alone.
int ResolveRunDir(const std::string& run_dir, std::string* address, std::string* token);
// "history: <when> <who> <what>" lines of the study's audit trail ("" when it has none).
std::string FormatStudyEvents(const StudySummary& study);

}  // namespace sift::coordinator
