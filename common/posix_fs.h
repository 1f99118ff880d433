// Filesystem changes through POSIX calls, for code that runs in a binary linking LibTorch.
// PyTorch's libtorch.so exports its own copy of some std::filesystem functions (PyTorch issue
// #133437); when the worker links a pip LibTorch, std::filesystem::remove_all can resolve to that
// copy and jump to address 0. Queries (exists, file_size) are unaffected in practice, but every
// mutation in sift-worker and in the tests that link the trainer goes through these functions.
#pragma once

#include <string>

namespace sift::common {

// Each returns "" on success or one line naming the path and the failed call ("rmdir /x/y:
// Directory not empty"). A missing path is success for the removals (nothing to remove).

// Removes `path` and, if it is a directory, everything under it. Symbolic links are removed,
// never followed: a link to a folder outside `path` leaves that folder's contents alone.
std::string RemoveAll(const std::string& path);
// Removes one file, link or empty directory.
std::string Remove(const std::string& path);
// Creates `path` and its missing parents (mode 0777 before the umask). An existing directory is
// success; an existing non-directory is an error.
std::string CreateDirectories(const std::string& path);
// rename(2): atomic within one filesystem; replaces an existing file at `to`.
std::string Rename(const std::string& from, const std::string& to);

}  // namespace sift::common
