#include "coordinator/core/storage_error.h"

#include <spdlog/spdlog.h>

#include "coordinator/store/fenced_store.h"

namespace sift::coordinator {

Status StorageError(const std::exception& e, const std::string& what) {
  const std::string msg = e.what();
  if (dynamic_cast<const StudyFenced*>(&e) != nullptr) {
    // The database refused it: another coordinator serves the study now. NOT_FOUND, as for
    // any study not served here, so the worker gives the trial up and looks elsewhere.
    spdlog::warn("fenced while recording {}: {}", what, msg);
    return Status::Error(
        Status::Code::kNotFound,
        "could not record " + what + ": " + msg + "; this coordinator no longer serves the study");
  }
  spdlog::error("storage error while {}: {}", what, msg);
  // UNAVAILABLE, whatever the cause (disk full, file-size limit, read-only file): the failed
  // transaction was rolled back, and the same call succeeds once the disk does, so clients retry.
  return Status::Error(Status::Code::kUnavailable, "could not record " + what +
                                                       ": database write failed (" + msg +
                                                       "); nothing was changed, retry later");
}

Status AwaitCommit(const std::shared_future<void>& committed, const std::string& what) {
  try {
    committed.get();
  } catch (const std::exception& e) {
    return StorageError(e, what);
  }
  return Status::Ok();
}

}  // namespace sift::coordinator
