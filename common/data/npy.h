// NumPy's .npy arrays (format 1.0-3.0, little-endian or byte-sized numbers, C order) and .npz
// archives (a zip of .npy members, stored or deflated). Torch-free.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace sift::data {

struct NpyArray {
  std::string name;            // for error messages: "train.npz:y"
  std::string descr;           // NumPy's dtype string, e.g. "<f4", "|u1"
  std::vector<int64_t> shape;  // C order
  std::string bytes;           // the elements, shape's product of them
  int64_t count() const;       // elements
  // Every element as a double (exact for every integer up to 2^53) or a float.
  std::vector<double> ToDoubles() const;
  std::vector<float> ToFloats() const;
  bool is_float() const { return descr.size() > 1 && descr[1] == 'f'; }
};

// Parses the bytes of a .npy file. Throws std::runtime_error "<name>: <problem>" for a bad
// magic or header, a Fortran-ordered or big-endian array, an unsupported dtype (anything but
// bool, signed or unsigned integers and float16/32/64) or a length that disagrees with the shape.
NpyArray ParseNpy(const std::string& name, const std::string& bytes);

// The members of a zip archive by name (inflated); `name` is the archive in error messages.
std::map<std::string, std::string> ReadZipMembers(const std::string& name,
                                                  const std::string& bytes);

// The array `key` of an .npz archive's bytes (member "<key>.npy"). Throws naming the archive
// and the arrays it does hold when `key` is absent.
NpyArray NpzArray(const std::string& name, const std::map<std::string, std::string>& members,
                  const std::string& key);

}  // namespace sift::data
