#include "common/data/idx.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "tests/common/data_files.h"

namespace sift::data {
namespace idx_test {

using testing::ExpectError;
using testing::Gzip;
using testing::IdxBytes;
using testing::TempDir;
using testing::WriteFile;

TEST(IdxReaderTest, ReadsGzipIdx) {
  TempDir dir;
  WriteFile(dir / "a.gz", Gzip(IdxBytes({3, 2}, {1, 2, 3, 4, 5, 6})));
  IdxArray a = ReadIdxFile(dir / "a.gz");
  EXPECT_EQ(a.dims, (std::vector<int64_t>{3, 2}));
  EXPECT_EQ(a.data, (std::vector<uint8_t>{1, 2, 3, 4, 5, 6}));
}

TEST(IdxReaderTest, RejectsBadHeadersAndLengths) {
  ExpectError([] { ParseIdx("f", std::string("\x01\x00\x08\x01", 4)); }, {"f:", "magic"});
  ExpectError([] { ParseIdx("f", std::string("\x00\x00\x0d\x01", 4)); }, {"element type"});
  ExpectError([] { ParseIdx("f", std::string("\x00\x00\x08\x09", 4)); }, {"rank"});
  ExpectError([] { ParseIdx("f", IdxBytes({4}, {1, 2, 3})); }, {"truncated", "4 bytes"});
  ExpectError([] { ParseIdx("f", IdxBytes({2}, {1, 2, 3})); }, {"trailing"});
  ExpectError([] { ParseIdx("f", IdxBytes({0}, {})); }, {"zero"});
  // Found by fuzz/idx_fuzz: dimensions whose product overflows int64 (here to a negative number
  // that slipped past the size check) are refused as implausible before they are multiplied.
  ExpectError([] { ParseIdx("f", IdxBytes({65536, 65536, 4294967295}, {})); }, {"implausible"});
}

TEST(IdxReaderTest, TruncatedGzipNamesTheFile) {
  TempDir dir;
  std::vector<uint8_t> data(5000);
  for (size_t i = 0; i < data.size(); ++i) data[i] = static_cast<uint8_t>(i * 7);
  std::string gz = Gzip(IdxBytes({50, 100}, data));
  WriteFile(dir / "cut.gz", gz.substr(0, gz.size() / 2));
  ExpectError([&] { ReadIdxFile(dir / "cut.gz"); }, {dir / "cut.gz"});
  ExpectError([&] { ReadIdxFile(dir / "missing.gz"); }, {"missing.gz", "cannot open"});
  // Garbage after a valid gzip header: a corrupt deflate stream.
  std::string bad = gz;
  for (size_t i = 20; i < 60; ++i) bad[i] = static_cast<char>(0xff);
  WriteFile(dir / "bad.gz", bad);
  ExpectError([&] { ReadIdxFile(dir / "bad.gz"); }, {dir / "bad.gz"});
}

}  // namespace idx_test
}  // namespace sift::data
