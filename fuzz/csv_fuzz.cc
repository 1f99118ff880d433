// The CSV reader on arbitrary text: a bad table is a std::runtime_error naming line and column.
#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <string>

#include "common/data/csv.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  try {
    sift::data::ParseCsv("fuzz.csv", std::string(reinterpret_cast<const char*>(data), size));
  } catch (const std::runtime_error&) {
  }
  return 0;
}
