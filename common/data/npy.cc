#include "common/data/npy.h"

#include <zlib.h>

#include <cmath>
#include <cstdlib>
#include <cstring>
#include <stdexcept>

#include "common/data/file_bytes.h"

namespace sift::data {
namespace {

[[noreturn]] void NpyFail(const std::string& name, const std::string& problem) {
  throw std::runtime_error(name + ": " + problem);
}

// Bounds-checked: offsets come from the file, and a corrupt one must not read past its end
// (found by npy_fuzz).
uint64_t LittleEndian(const std::string& name, const std::string& b, size_t at, int bytes) {
  if (at > b.size() || b.size() - at < static_cast<size_t>(bytes)) {
    NpyFail(name, "corrupt: a " + std::to_string(bytes) + "-byte field at offset " +
                      std::to_string(at) + " lies past the end (" + std::to_string(b.size()) +
                      " bytes)");
  }
  uint64_t v = 0;
  for (int i = bytes - 1; i >= 0; --i) v = (v << 8) | static_cast<uint8_t>(b[at + i]);
  return v;
}

// The value of `key` in NumPy's header, a Python dict literal: "{'descr': '<f4', ...}".
std::string HeaderValue(const std::string& name, const std::string& header,
                        const std::string& key) {
  const std::string quoted = "'" + key + "'";
  size_t at = header.find(quoted);
  if (at == std::string::npos) NpyFail(name, "npy header has no '" + key + "'");
  at = header.find(':', at + quoted.size());
  if (at == std::string::npos) NpyFail(name, "bad npy header");
  ++at;
  while (at < header.size() && header[at] == ' ') ++at;
  if (at < header.size() && header[at] == '(') {
    const size_t end = header.find(')', at);
    if (end == std::string::npos) NpyFail(name, "bad shape in npy header");
    return header.substr(at, end - at + 1);
  }
  if (at < header.size() && header[at] == '\'') {
    const size_t end = header.find('\'', at + 1);
    if (end == std::string::npos) NpyFail(name, "bad npy header");
    return header.substr(at + 1, end - at - 1);
  }
  size_t end = at;
  while (end < header.size() && header[end] != ',' && header[end] != '}') ++end;
  return header.substr(at, end - at);
}

std::vector<int64_t> ParseShape(const std::string& name, const std::string& tuple) {
  std::vector<int64_t> shape;
  std::string digits;
  for (size_t i = 1; i < tuple.size(); ++i) {
    const char c = tuple[i];
    if (c >= '0' && c <= '9') {
      digits += c;
    } else if (c == ',' || c == ')') {
      // No real array has a dimension of more than 12 digits; longer is corrupt (and would
      // overflow stoll: found by npy_fuzz).
      if (digits.size() > 12) NpyFail(name, "dimension " + digits + " too large in npy header");
      if (!digits.empty()) shape.push_back(std::stoll(digits));
      digits.clear();
    } else if (c != ' ' && c != 'L') {
      NpyFail(name, "bad shape " + tuple + " in npy header");
    }
  }
  return shape;
}

int ElementSize(const std::string& name, const std::string& descr) {
  if (descr.size() < 3) NpyFail(name, "unsupported dtype '" + descr + "'");
  const char order = descr[0], kind = descr[1];
  if (order == '>')
    NpyFail(name, "big-endian dtype '" + descr + "' is not supported; save it as '<'");
  const int size = std::atoi(descr.c_str() + 2);
  const bool ok =
      (kind == 'f' && (size == 2 || size == 4 || size == 8)) ||
      ((kind == 'i' || kind == 'u') && (size == 1 || size == 2 || size == 4 || size == 8)) ||
      (kind == 'b' && size == 1);
  if (!ok || (order != '<' && order != '|' && order != '=')) {
    NpyFail(name, "unsupported dtype '" + descr + "' (want bool, int, uint or float)");
  }
  return size;
}

float HalfToFloat(uint16_t h) {
  const uint32_t sign = (h >> 15) & 1, exp = (h >> 10) & 0x1f, mant = h & 0x3ff;
  float v;
  if (exp == 0) {
    v = std::ldexp(static_cast<float>(mant), -24);
  } else if (exp == 31) {
    v = mant == 0 ? INFINITY : NAN;
  } else {
    v = std::ldexp(static_cast<float>(mant | 0x400), static_cast<int>(exp) - 25);
  }
  return sign ? -v : v;
}

template <typename T>
std::vector<T> Convert(const NpyArray& a) {
  const int size = std::atoi(a.descr.c_str() + 2);
  const char kind = a.descr[1];
  const int64_t n = a.count();
  std::vector<T> out(static_cast<size_t>(n));
  const char* p = a.bytes.data();
  for (int64_t i = 0; i < n; ++i, p += size) {
    double v = 0;
    if (kind == 'f' && size == 2) {
      uint16_t h;
      std::memcpy(&h, p, 2);
      v = HalfToFloat(h);
    } else if (kind == 'f' && size == 4) {
      float f;
      std::memcpy(&f, p, 4);
      v = f;
    } else if (kind == 'f') {
      std::memcpy(&v, p, 8);
    } else if (kind == 'i') {
      int64_t x = 0;
      if (size == 1) x = static_cast<int8_t>(*p);
      if (size == 2) {
        int16_t y;
        std::memcpy(&y, p, 2);
        x = y;
      }
      if (size == 4) {
        int32_t y;
        std::memcpy(&y, p, 4);
        x = y;
      }
      if (size == 8) std::memcpy(&x, p, 8);
      v = static_cast<double>(x);
    } else {
      uint64_t x = 0;
      std::memcpy(&x, p, static_cast<size_t>(size));  // little-endian host
      v = static_cast<double>(x);
    }
    out[static_cast<size_t>(i)] = static_cast<T>(v);
  }
  return out;
}

uint64_t Crc32(const std::string& data) {
  return crc32(0, reinterpret_cast<const Bytef*>(data.data()), static_cast<uInt>(data.size()));
}

}  // namespace

int64_t NpyArray::count() const {
  int64_t n = 1;
  for (int64_t d : shape) n *= d;
  return n;
}

std::vector<double> NpyArray::ToDoubles() const { return Convert<double>(*this); }
std::vector<float> NpyArray::ToFloats() const { return Convert<float>(*this); }

NpyArray ParseNpy(const std::string& name, const std::string& bytes) {
  if (bytes.size() < 10 || bytes.compare(0, 6, "\x93NUMPY") != 0) {
    NpyFail(name, "not a .npy file (bad magic)");
  }
  const int major = static_cast<uint8_t>(bytes[6]);
  if (major < 1 || major > 3) NpyFail(name, "unsupported .npy version " + std::to_string(major));
  const int len_bytes = major == 1 ? 2 : 4;
  const size_t header_len = LittleEndian(name, bytes, 8, len_bytes);
  const size_t data_at = 8 + static_cast<size_t>(len_bytes) + header_len;
  if (data_at > bytes.size()) NpyFail(name, "truncated .npy header");
  const std::string header = bytes.substr(8 + static_cast<size_t>(len_bytes), header_len);
  NpyArray a;
  a.name = name;
  a.descr = HeaderValue(name, header, "descr");
  if (HeaderValue(name, header, "fortran_order") != "False") {
    NpyFail(name, "Fortran-ordered arrays are not supported; save with np.ascontiguousarray");
  }
  a.shape = ParseShape(name, HeaderValue(name, header, "shape"));
  const int size = ElementSize(name, a.descr);
  uint64_t want = static_cast<uint64_t>(size);
  for (int64_t d : a.shape) {
    if (__builtin_mul_overflow(want, static_cast<uint64_t>(d), &want)) {
      NpyFail(name, "shape " + HeaderValue(name, header, "shape") + " is too large");
    }
  }
  const uint64_t have = bytes.size() - data_at;
  if (have != want) {
    NpyFail(name, (have < want ? "truncated: " : "trailing bytes: ") + std::string("shape needs ") +
                      std::to_string(want) + " bytes, file has " + std::to_string(have));
  }
  a.bytes = bytes.substr(data_at);
  return a;
}

std::map<std::string, std::string> ReadZipMembers(const std::string& name,
                                                  const std::string& bytes) {
  // The end-of-central-directory record: within the last 64 KiB + 22 bytes (its comment).
  constexpr uint32_t kEocd = 0x06054b50, kCentral = 0x02014b50, kLocal = 0x04034b50;
  if (bytes.size() < 22) NpyFail(name, "not a zip archive (too short)");
  size_t eocd = std::string::npos;
  const size_t lowest = bytes.size() > 65557 ? bytes.size() - 65557 : 0;
  for (size_t at = bytes.size() - 22 + 1; at-- > lowest;) {
    if (LittleEndian(name, bytes, at, 4) == kEocd) {
      eocd = at;
      break;
    }
  }
  if (eocd == std::string::npos) NpyFail(name, "not a zip archive (no end of central directory)");
  const uint64_t entries = LittleEndian(name, bytes, eocd + 10, 2);
  size_t at = LittleEndian(name, bytes, eocd + 16, 4);
  std::map<std::string, std::string> out;
  for (uint64_t e = 0; e < entries; ++e) {
    if (at + 46 > bytes.size() || LittleEndian(name, bytes, at, 4) != kCentral) {
      NpyFail(name, "corrupt zip central directory");
    }
    const int method = static_cast<int>(LittleEndian(name, bytes, at + 10, 2));
    const uint64_t crc = LittleEndian(name, bytes, at + 16, 4);
    uint64_t packed = LittleEndian(name, bytes, at + 20, 4),
             size = LittleEndian(name, bytes, at + 24, 4);
    const size_t name_len = LittleEndian(name, bytes, at + 28, 2),
                 extra_len = LittleEndian(name, bytes, at + 30, 2),
                 comment_len = LittleEndian(name, bytes, at + 32, 2);
    uint64_t local = LittleEndian(name, bytes, at + 42, 4);
    if (at + 46 + name_len + extra_len > bytes.size())
      NpyFail(name, "corrupt zip central directory");
    const std::string member = bytes.substr(at + 46, name_len);
    // Zip64 (NumPy writes it): the 0xFFFFFFFF fields come, in order, from extra field 0x0001.
    for (size_t x = at + 46 + name_len; x + 4 <= at + 46 + name_len + extra_len;) {
      const uint64_t id = LittleEndian(name, bytes, x, 2),
                     len = LittleEndian(name, bytes, x + 2, 2);
      if (id == 1) {
        size_t f = x + 4;
        if (size == 0xFFFFFFFFu) {
          size = LittleEndian(name, bytes, f, 8);
          f += 8;
        }
        if (packed == 0xFFFFFFFFu) {
          packed = LittleEndian(name, bytes, f, 8);
          f += 8;
        }
        if (local == 0xFFFFFFFFu) local = LittleEndian(name, bytes, f, 8);
      }
      x += 4 + len;
    }
    at += 46 + name_len + extra_len + comment_len;
    if (local + 30 > bytes.size() || LittleEndian(name, bytes, local, 4) != kLocal) {
      NpyFail(name, "corrupt zip local header for " + member);
    }
    const size_t data_at = local + 30 + LittleEndian(name, bytes, local + 26, 2) +
                           LittleEndian(name, bytes, local + 28, 2);
    if (packed > bytes.size() || data_at > bytes.size() - packed)
      NpyFail(name, member + " is truncated");
    const std::string raw = bytes.substr(data_at, packed);
    if (method != 0 && method != 8) {
      NpyFail(name, member + " uses zip compression method " + std::to_string(method) +
                        " (want stored or deflate)");
    }
    std::string data = method == 0 ? raw : InflateRaw(name + ":" + member, raw, size);
    if (data.size() != size || Crc32(data) != crc)
      NpyFail(name, member + ": CRC mismatch (corrupt archive)");
    out[member] = std::move(data);
  }
  return out;
}

NpyArray NpzArray(const std::string& name, const std::map<std::string, std::string>& members,
                  const std::string& key) {
  auto it = members.find(key + ".npy");
  if (it == members.end()) {
    std::string have;
    for (const auto& [m, bytes] : members) {
      have += (have.empty() ? "" : ", ") + (m.size() > 4 ? m.substr(0, m.size() - 4) : m);
    }
    NpyFail(name, "has no array '" + key + "' (arrays: " + (have.empty() ? "none" : have) + ")");
  }
  return ParseNpy(name + ":" + key, it->second);
}

}  // namespace sift::data
