# sift_fmt_first(target): the fmt headers that spdlog was built against come before any other fmt
# on the target's include path.
#
# PyTorch's LibTorch ships fmt headers (fmt 12 in 2.11) in its include folder. spdlog from the
# distribution (SPDLOG_FMT_EXTERNAL) was built against the distribution's fmt in /usr/include,
# which the compiler searches after every -isystem folder, so LibTorch's fmt shadowed it and
# spdlog's headers failed ("'basic_runtime' is not a member of 'fmt'"); code that calls
# fmt::format would also link against the wrong fmt. CMake drops implicit folders such as
# /usr/include from include flags, so a link to the right fmt folder is made in the build tree
# and put first. Harmless with Debian's LibTorch (both name the same headers).
find_package(fmt CONFIG QUIET)
set(SIFT_FMT_FIRST_DIR "")
if(fmt_FOUND)
  get_target_property(_sift_fmt_dirs fmt::fmt INTERFACE_INCLUDE_DIRECTORIES)
  foreach(_dir IN LISTS _sift_fmt_dirs)
    if(EXISTS "${_dir}/fmt/core.h")
      set(SIFT_FMT_FIRST_DIR "${PROJECT_BINARY_DIR}/fmt-first")
      file(MAKE_DIRECTORY "${SIFT_FMT_FIRST_DIR}")
      file(CREATE_LINK "${_dir}/fmt" "${SIFT_FMT_FIRST_DIR}/fmt" SYMBOLIC)
      message(STATUS "fmt for spdlog: ${_dir}/fmt, searched before LibTorch's includes")
      break()
    endif()
  endforeach()
endif()

function(sift_fmt_first target)
  if(SIFT_FMT_FIRST_DIR)
    target_include_directories(${target} SYSTEM BEFORE PUBLIC "${SIFT_FMT_FIRST_DIR}")
  endif()
endfunction()
