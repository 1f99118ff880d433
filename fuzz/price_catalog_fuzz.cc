// The price catalog on arbitrary JSON: a problem is a returned message, never a crash.
#include <cstddef>
#include <cstdint>
#include <string>

#include "common/config/price_catalog.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  sift::common::PriceCatalog catalog;
  if (catalog.Parse(std::string(reinterpret_cast<const char*>(data), size)).empty()) {
    double price = 0;
    for (const auto& type : catalog.Types()) catalog.Lookup(type, "spot", &price);
  }
  return 0;
}
