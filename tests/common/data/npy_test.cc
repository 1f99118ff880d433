#include "common/data/npy.h"

#include <gtest/gtest.h>

#include <stdexcept>

#include "common/data/file_bytes.h"
#include "tests/common/data_files.h"

namespace sift::data {
namespace npy_test {

using testing::Npy;
using testing::Zip;

TEST(NpyTest, ReadsEveryNumericDtype) {
  EXPECT_EQ(ParseNpy("a", Npy<float>("<f4", {3}, {1.5f, -2, 0})).ToDoubles(),
            (std::vector<double>{1.5, -2, 0}));
  EXPECT_EQ(ParseNpy("a", Npy<double>("<f8", {2}, {0.25, 1e300})).ToDoubles(),
            (std::vector<double>{0.25, 1e300}));
  EXPECT_EQ(ParseNpy("a", Npy<uint16_t>("<f2", {2}, {0x3c00, 0xc000})).ToDoubles(),
            (std::vector<double>{1, -2}));
  EXPECT_EQ(ParseNpy("a", Npy<uint8_t>("|u1", {2}, {0, 255})).ToDoubles(),
            (std::vector<double>{0, 255}));
  EXPECT_EQ(ParseNpy("a", Npy<int8_t>("|i1", {2}, {-128, 7})).ToDoubles(),
            (std::vector<double>{-128, 7}));
  EXPECT_EQ(ParseNpy("a", Npy<int16_t>("<i2", {1}, {-300})).ToDoubles(),
            (std::vector<double>{-300}));
  EXPECT_EQ(ParseNpy("a", Npy<uint32_t>("<u4", {1}, {4000000000u})).ToDoubles(),
            (std::vector<double>{4e9}));
  EXPECT_EQ(ParseNpy("a", Npy<int64_t>("<i8", {2}, {-5, 9007199254740992})).ToDoubles(),
            (std::vector<double>{-5, 9007199254740992.0}));
  EXPECT_EQ(ParseNpy("a", Npy<uint8_t>("|b1", {2}, {1, 0})).ToDoubles(),
            (std::vector<double>{1, 0}));
}

TEST(NpyTest, KeepsTheShape) {
  const NpyArray a = ParseNpy("a", Npy<float>("<f4", {2, 1, 2, 3}, std::vector<float>(12, 1.0f)));
  EXPECT_EQ(a.shape, (std::vector<int64_t>{2, 1, 2, 3}));
  EXPECT_EQ(a.count(), 12);
}

void ExpectNpyError(const std::string& bytes, const std::string& want) {
  try {
    ParseNpy("x.npy", bytes);
    FAIL() << "no error, want " << want;
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find(want), std::string::npos) << e.what();
  }
}

TEST(NpyTest, RejectsWhatItCannotRead) {
  ExpectNpyError("PK\x03\x04 not npy", "x.npy: not a .npy file (bad magic)");
  ExpectNpyError(Npy<float>(">f4", {1}, {1.0f}), "big-endian dtype '>f4' is not supported");
  ExpectNpyError(Npy<float>("<c8", {1}, {1.0f}), "unsupported dtype '<c8'");
  std::string fortran = Npy<float>("<f4", {1}, {1.0f});
  fortran.replace(fortran.find("False"), 5, "True ");
  ExpectNpyError(fortran, "Fortran-ordered arrays are not supported");
  std::string cut = Npy<float>("<f4", {4}, {1, 2, 3, 4});
  cut.resize(cut.size() - 3);
  ExpectNpyError(cut, "truncated: shape needs 16 bytes, file has 13");
}

TEST(NpyTest, ReadsNpzStoredAndDeflated) {
  const std::map<std::string, std::string> members = {
      {"x.npy", Npy<float>("<f4", {2, 2}, {1, 2, 3, 4})},
      {"y.npy", Npy<int64_t>("<i8", {2}, {0, 1})}};
  for (bool deflate : {false, true}) {
    const auto read = ReadZipMembers("d.npz", Zip(members, deflate));
    EXPECT_EQ(NpzArray("d.npz", read, "x").ToFloats(), (std::vector<float>{1, 2, 3, 4}));
    EXPECT_EQ(NpzArray("d.npz", read, "y").ToDoubles(), (std::vector<double>{0, 1}));
    try {
      NpzArray("d.npz", read, "labels");
      FAIL();
    } catch (const std::runtime_error& e) {
      EXPECT_EQ(std::string(e.what()), "d.npz: has no array 'labels' (arrays: x, y)");
    }
  }
}

TEST(NpyTest, RejectsACorruptZip) {
  std::string payload;
  for (int i = 0; i < 200; ++i) payload += static_cast<char>((i * i * 31) % 251);
  std::string zip = Zip({{"x.npy", payload}}, /*deflate=*/true);
  EXPECT_THROW(ReadZipMembers("d.npz", "not a zip at all, no directory"), std::runtime_error);
  zip[60] ^= 0x55;  // inside the deflated data
  EXPECT_THROW(ReadZipMembers("d.npz", zip), std::runtime_error);
}

// Found by npy_fuzz: a dimension past int64 threw out of stoll; huge dimensions overflowed.
TEST(NpyTest, AShapeTooLargeIsANamedError) {
  for (const std::string shape : {"(99999999999999999999,)", "(4000000000, 4000000000, 8)"}) {
    std::string header = "{'descr': '<f4', 'fortran_order': False, 'shape': " + shape + ", }";
    header += std::string(63 - (10 + header.size()) % 64, ' ') + "\n";
    std::string npy = std::string("\x93NUMPY\x01\x00", 8);
    npy += static_cast<char>(header.size() & 0xff);
    npy += static_cast<char>(header.size() >> 8);
    npy += header + std::string(16, '\0');
    try {
      ParseNpy("big.npy", npy);
      ADD_FAILURE() << shape << ": no error";
    } catch (const std::runtime_error& e) {
      EXPECT_NE(std::string(e.what()).find("too large"), std::string::npos) << e.what();
    }
  }
}

// Found by npy_fuzz: a member claiming gigabytes from a few bytes was allocated before inflating.
TEST(NpyTest, ADeflatedSizeNoDeflateCanReachIsRefusedBeforeAllocating) {
  const std::string empty_stream("\x03\x00", 2);  // a valid, empty deflate stream
  try {
    InflateRaw("d.npz:x.npy", empty_stream, 3'892'576'393ULL);
    FAIL() << "no error";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("claims 3892576393 bytes from 2 compressed"),
              std::string::npos)
        << e.what();
  }
}

}  // namespace npy_test
}  // namespace sift::data
