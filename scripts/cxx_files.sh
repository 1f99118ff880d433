# cxx_files: the repository's own C++ sources, NUL-separated (git's list in a clone, else find;
# third_party/ and build folders excluded). Sourced by scripts/format.sh and the format test.
cxx_files() {
  if git rev-parse --is-inside-work-tree >/dev/null 2>&1; then
    git ls-files -z -- '*.cc' '*.h' ':!:third_party/*'
  else
    find . \( -path './build*' -o -path './third_party' -o -path './.git' \) -prune -o \
      \( -name '*.cc' -o -name '*.h' \) -print0
  fi
}
