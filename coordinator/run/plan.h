// The resume rule of `sift run --out DIR`: which study of DIR's database a run drives.
//   - no study there: a new one (with --resume: an error, nothing to resume);
//   - an unfinished (running or paused) study: resumed if the config is the same, refused with
//     the first difference otherwise; never a second study beside it;
//   - only ended studies: refused (their results stand), unless --new;
//   - --new: a new study; unfinished ones there are cancelled, so no two share the workers.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "coordinator/store/records.h"

namespace sift::coordinator {

struct RunPlan {
  std::string problem;          // set: refuse, with this message (exit 2)
  int64_t resume_id = 0;        // 0: create a study from the given config
  std::string config_text;      // the config to run: the resumed study's own, or the given one
  std::vector<int64_t> cancel;  // unfinished studies a --new run replaces
  std::vector<int64_t> pause;   // older unfinished studies beside the resumed one
};

// `studies`: DIR's studies by id. `config_text`/`config_path`: the config given ("" with a bare
// --resume). `dir` names the directory in messages.
RunPlan PlanRun(const std::vector<StudyRecord>& studies, const std::string& config_text,
                const std::string& config_path, const std::string& dir, bool resume,
                bool start_new);

}  // namespace sift::coordinator
