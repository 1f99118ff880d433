// Small text helpers the parsers share (header-only: the fuzz targets compile single sources).
#pragma once

#include <string>
#include <string_view>

namespace sift::common {

// `s` without the leading and trailing characters in `chars`.
inline std::string Trim(std::string_view s, std::string_view chars = " \t\r\n") {
  const size_t b = s.find_first_not_of(chars);
  if (b == std::string_view::npos) return "";
  return std::string(s.substr(b, s.find_last_not_of(chars) - b + 1));
}

}  // namespace sift::common
