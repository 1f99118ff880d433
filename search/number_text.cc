#include "search/number_text.h"

#include <charconv>

namespace sift::search {

std::string G6(double value) {
  char buf[32];  // "%.6g" needs at most 13 ("-1.23457e+308")
  const auto r = std::to_chars(buf, buf + sizeof(buf), value, std::chars_format::general, 6);
  return std::string(buf, r.ptr);
}

}  // namespace sift::search
