// Helpers for the trainer tests: temporary directories, generated IDX files, small real data.
#pragma once

#include <gtest/gtest.h>
#include <unistd.h>
#include <zlib.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <memory>
#include <string>
#include <vector>

#include "common/posix_fs.h"
#include "tests/common/data_files.h"
#include "worker/trainer/data.h"
#include "worker/trainer/trainer.h"

namespace sift::worker::testing {

using sift::data::testing::IdxBytes;

class TempDir {
 public:
  TempDir() {
    std::string tmpl = (std::filesystem::temp_directory_path() / "sift-trainer-XXXXXX").string();
    path_ = ::mkdtemp(tmpl.data());
  }
  // POSIX, not std::filesystem: a pip LibTorch's exported copy of remove_all crashed here.
  ~TempDir() { common::RemoveAll(path_); }
  const std::string& path() const { return path_; }
  std::string operator/(const std::string& name) const { return path_ + "/" + name; }

 private:
  std::string path_;
};

// Expects max |got - want| <= tol * max(max |want|, min_scale): the kernel tests' tolerance.
inline void ExpectMaxRelError(const torch::Tensor& got, const torch::Tensor& want, double tol,
                              const std::string& what, double min_scale = 0) {
  ASSERT_EQ(got.sizes(), want.sizes()) << what;
  const double err = (got - want).abs().max().item<double>();
  const double scale = std::max(want.abs().max().item<double>(), min_scale);
  EXPECT_LE(err, tol * scale) << what << ": max |got - reference| " << err << " of " << scale;
}

inline std::string Gzip(const std::string& raw) {
  uLongf size = compressBound(raw.size()) + 64;
  std::string out(size, '\0');
  z_stream z{};
  deflateInit2(&z, Z_DEFAULT_COMPRESSION, Z_DEFLATED, /*windowBits=*/15 + 16, 8,
               Z_DEFAULT_STRATEGY);
  z.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(raw.data()));
  z.avail_in = raw.size();
  z.next_out = reinterpret_cast<Bytef*>(out.data());
  z.avail_out = size;
  deflate(&z, Z_FINISH);
  out.resize(z.total_out);
  deflateEnd(&z);
  return out;
}

inline void WriteFile(const std::string& path, const std::string& bytes) {
  std::ofstream(path, std::ios::binary) << bytes;
}

inline std::string ReadFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
}

// A Fashion-MNIST-shaped data set of `n_train` / `n_test` images with pixel = (i + j) % 256 and
// label = i % 10, written as the four gzip IDX files into `dir`.
inline void WriteSyntheticDataset(const std::string& dir, uint32_t n_train, uint32_t n_test) {
  auto write = [&](const std::string& prefix, uint32_t n) {
    std::vector<uint8_t> pixels(size_t{n} * 28 * 28), labels(n);
    for (uint32_t i = 0; i < n; ++i) {
      labels[i] = static_cast<uint8_t>(i % 10);
      for (uint32_t j = 0; j < 28 * 28; ++j) pixels[size_t{i} * 784 + j] = (i + j) % 256;
    }
    WriteFile(dir + "/" + prefix + "-images-idx3-ubyte.gz", Gzip(IdxBytes({n, 28, 28}, pixels)));
    WriteFile(dir + "/" + prefix + "-labels-idx1-ubyte.gz", Gzip(IdxBytes({n}, labels)));
  };
  write("train", n_train);
  write("t10k", n_test);
}

// A small slice of the real Fashion-MNIST, cached under the build directory so that tests after
// the first skip decoding.
inline std::shared_ptr<const Datasets> SmallFashionMnist(int64_t train = 2048, int64_t val = 256,
                                                         int64_t test = 512) {
  CachedDataSpec spec;
  spec.train_limit = train;
  spec.val_size = val;
  spec.test_limit = test;
  // Elsewhere than Debian's folder on a GPU host (scripts/gpu-check.sh sets it).
  if (const char* dir = std::getenv("SIFT_DATA_DIR")) spec.dir = dir;
  const char* build = std::getenv("SIFT_BUILD_DIR");
  spec.cache_dir = std::string(build ? build : "/tmp") + "/test-data-cache";
  return LoadDatasets(spec);
}

// The small MLP most trainer tests train: 784-64-32-10, batch 64, Adam at 2e-3, four epochs.
inline TrainerOptions SmallMlp(uint64_t seed) {
  TrainerOptions o;
  o.hp.model = "mlp";
  o.hp.hidden = 64;
  o.hp.depth = 2;
  o.hp.batch_size = 64;
  o.hp.lr = 2e-3;
  o.hp.precision = "fp32";  // not auto: the same figures on a CPU with and without bf16
  o.max_epochs = 4;
  o.seed = seed;
  return o;
}

}  // namespace sift::worker::testing
