// The closest known name to a misspelt one, for "did you mean" in config and option errors.
// Here, at the bottom, so that the config reader (common/) and the option reader share it.
#pragma once

#include <string>
#include <vector>

namespace sift::search {

// The closest of `candidates` to `word` when it is a plausible typo (an edit distance, with
// transpositions, of at most a third of its length, 1 to 3), else "".
std::string ClosestName(const std::string& word, const std::vector<std::string>& candidates);

}  // namespace sift::search
