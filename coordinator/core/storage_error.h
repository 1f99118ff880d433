// What a failed Store write tells the caller: shared by the Coordinator and the classes it is
// made of (cost watching, checkpoints, lease endings), none of which needs a Coordinator for it.
#pragma once

#include <exception>
#include <future>
#include <string>

#include "coordinator/core/status.h"

namespace sift::coordinator {

// NOT_FOUND when the database fenced the write (another coordinator serves the study now),
// else UNAVAILABLE (the transaction was rolled back: the same call succeeds once the disk does).
// Logs it, naming `what` could not be recorded.
Status StorageError(const std::exception& e, const std::string& what);
// Waits for a queued write: OK once committed, else StorageError for what failed it.
Status AwaitCommit(const std::shared_future<void>& committed, const std::string& what);

}  // namespace sift::coordinator
