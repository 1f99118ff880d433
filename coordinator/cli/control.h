// `sift cancel | pause | resume | budget`, and `--run DIR` (the coordinator of a running
// `sift run`, found through the files it leaves in DIR). Kept apart from main.cc.
#pragma once

#include <CLI/CLI.hpp>
#include <string>

#include "common/client_channel.h"
#include "coordinator/core/coordinator.h"

namespace sift::coordinator {

// Adds the control subcommands, each with the client flags (common/client_channel.h).
void AddControlCommands(CLI::App& app);
// Runs the control subcommand that was given; -1 when none was. Returns the exit code.
int RunControlCommand(const CLI::App& app);
// With a run directory, sets the client's address and (unless --token-file named one) its token
// from the run's files; returns 0, or 1 after saying why it cannot. An empty `run_dir` does
// nothing.
int ResolveRunDir(const std::string& run_dir, common::ClientOptions* client);
// "history: <when> <who> <what>" lines of the study's audit trail ("" when it has none).
std::string FormatStudyEvents(const StudySummary& study);

}  // namespace sift::coordinator
