// The study config parser on arbitrary text: it must return errors, never crash, hang or grow
// without bound (ConfigLimits).
#include <cstddef>
#include <cstdint>
#include <string>

#include "common/config/config.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  sift::common::StudyConfig config;
  sift::common::ParseStudyConfig(std::string(reinterpret_cast<const char*>(data), size),
                                 "fuzz.yaml", &config);
  return 0;
}
