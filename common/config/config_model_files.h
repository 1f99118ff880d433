// model: torchscript: the module files a study needs. A path may name search parameters
// ("models/net_{width}.pt"); each value the search can give them picks a file, so `sift validate`
// can list every file before any trial starts. Relative paths are from where sift runs, as data
// paths are (the workers of `sift run` run there too).
#pragma once

#include <string>
#include <vector>

#include "search/param_value.h"
#include "search/space.h"

namespace sift::common {

// Config errors of trainer.path, as "path: problem": a name in braces that is neither fixed
// under trainer nor searched, or one searched over floats (no file per value).
std::vector<std::string> CheckModelPath(const search::Params& fixed,
                                        const search::SearchSpace& space);

// The files that trainer.path (for every value of its names) and trainer.init_from name but that
// do not exist, as one error each for path and init_from; empty when all are there.
std::vector<std::string> MissingModelFiles(const search::Params& fixed,
                                           const search::SearchSpace& space);

}  // namespace sift::common
