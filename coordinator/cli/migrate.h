// `sift migrate --from DB --to DB [--study N]`: moves studies between stores (SQLite to
// PostgreSQL). Kept apart from main.cc.
#pragma once

#include <CLI/CLI.hpp>

namespace sift::coordinator {

void AddMigrateCommand(CLI::App& app);
// Runs `sift migrate` when it was the command given; -1 when it was not. Returns the exit code.
int RunMigrateCommand(const CLI::App& app);

}  // namespace sift::coordinator
