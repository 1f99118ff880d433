// Lease and worker ids: unique, not secret (tokens come from common::RandomToken).
#pragma once

#include <string>

namespace sift::coordinator {

// `prefix` and 16 hex digits from a process-wide generator; safe from any thread.
std::string RandomId(const char* prefix);

}  // namespace sift::coordinator
