// The --http request reader on arbitrary bytes, as a client sends them, whole and cut at every
// point the fuzzer picks: it must accept, wait or refuse, never crash, and a request it accepts
// must be within the limits.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "coordinator/http/request.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using sift::coordinator::HttpRequestScan;
  const std::string_view bytes(reinterpret_cast<const char*>(data), size);
  sift::coordinator::HttpLimits small;  // small limits, so the fuzzer reaches them
  small.max_head_bytes = 256;
  small.max_headers = 4;
  small.max_body_bytes = 16;
  for (const auto& limits : {sift::coordinator::HttpLimits{}, small}) {
    const HttpRequestScan scan = ScanHttpRequest(bytes, limits);
    if (scan.state == HttpRequestScan::kComplete) {
      if (scan.request.headers.size() > static_cast<size_t>(limits.max_headers)) std::abort();
      if (scan.request.path.empty() || scan.request.path[0] != '/') std::abort();
    }
    if (scan.state == HttpRequestScan::kReject && scan.status != 400 && scan.status != 413 &&
        scan.status != 431) {
      std::abort();
    }
    if (auto it = scan.request.headers.find("cookie"); it != scan.request.headers.end()) {
      sift::coordinator::CookieValue(it->second, "sift_session");
    }
  }
  return 0;
}
