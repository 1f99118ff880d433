// Domain errors, mapped to gRPC status codes only in the service adapters.
#pragma once

#include <string>

namespace sift::coordinator {

struct Status {
  enum class Code {
    kOk,
    kInvalidArgument,     // bad config, bad report
    kNotFound,            // unknown study, trial or worker
    kFailedPrecondition,  // a lease that is no longer the caller's
    kUnauthenticated,
    kResourceExhausted,  // a limit: checkpoint disk full, too many studies, config too big
    kUnavailable,        // the database write failed (disk full, read-only); retry later
    kInternal,
  };
  Code code = Code::kOk;
  std::string message;

  bool ok() const { return code == Code::kOk; }
  static Status Ok() { return {}; }
  static Status Error(Code code, std::string message) { return {code, std::move(message)}; }
};

}  // namespace sift::coordinator
