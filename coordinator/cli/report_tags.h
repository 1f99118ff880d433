// `sift report --by tag` (every tag) or `--by tag:KEY`: studies' dollars, trials and best results
// rolled up per tag, from the database.
#pragma once

#include <string>

namespace sift::coordinator {

// Prints the rollup of every study in `db` (and writes by_tag.json into `out_dir` when given);
// returns the exit code (2: a bad --by).
int TagReportCommand(const std::string& db, const std::string& by, const std::string& out_dir);

}  // namespace sift::coordinator
