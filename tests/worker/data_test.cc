#include "worker/trainer/data.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <filesystem>
#include <set>
#include <thread>

#include "tests/worker/test_util.h"

namespace sift::worker {
namespace data_test {

using sift::data::testing::ExpectError;
using testing::Gzip;
using testing::IdxBytes;
using testing::TempDir;
using testing::WriteFile;

// A spec over `dir`'s generated files, cached in dir/cache.
CachedDataSpec CachedSpec(const TempDir& dir, int64_t val_size) {
  CachedDataSpec spec;
  spec.dir = dir.path();
  spec.val_size = val_size;
  spec.cache_dir = dir / "cache";
  return spec;
}

TEST(DataTest, SplitsAndNormalisesGeneratedFiles) {
  TempDir dir;
  testing::WriteSyntheticDataset(dir.path(), /*n_train=*/100, /*n_test=*/30);
  CachedDataSpec spec;
  spec.dir = dir.path();
  spec.val_size = 20;
  spec.train_limit = 50;
  spec.test_limit = 25;
  auto d = LoadDatasets(spec);
  EXPECT_EQ(d->train.size(), 50);
  EXPECT_EQ(d->val.size(), 20);
  EXPECT_EQ(d->test.size(), 25);
  EXPECT_EQ(d->train.images.sizes(), (std::vector<int64_t>{50, 1, 28, 28}));
  // Validation is the last 20 of the training file: sample 80 has label 0, pixel (80 + j) % 256.
  EXPECT_EQ(d->val.labels[0].item<int64_t>(), 0);
  EXPECT_NEAR(d->val.images[0][0][0][0].item<float>(), (80 / 255.0 - kPixelMean) / kPixelStd, 1e-5);
  EXPECT_EQ(d->train.labels[13].item<int64_t>(), 3);
}

TEST(DataTest, LabelsMustMatchImages) {
  TempDir dir;
  testing::WriteSyntheticDataset(dir.path(), 100, 30);
  WriteFile(dir / "t10k-labels-idx1-ubyte.gz", Gzip(IdxBytes({29}, std::vector<uint8_t>(29))));
  CachedDataSpec spec;
  spec.dir = dir.path();
  spec.val_size = 20;
  ExpectError([&] { LoadDatasets(spec); }, {"t10k-labels", "29 labels for 30 images"});
}

TEST(DataTest, TruncatedSourceFileIsAnError) {
  TempDir dir;
  testing::WriteSyntheticDataset(dir.path(), 100, 30);
  const std::string path = dir / "train-images-idx3-ubyte.gz";
  std::string gz = testing::ReadFile(path);
  WriteFile(path, gz.substr(0, gz.size() - 100));
  CachedDataSpec spec;
  spec.dir = dir.path();
  spec.val_size = 20;
  ExpectError([&] { LoadDatasets(spec); }, {path});
}

TEST(DataTest, CacheIsReusedAndRebuiltWhenCorrupt) {
  TempDir dir;
  testing::WriteSyntheticDataset(dir.path(), 100, 30);
  const CachedDataSpec spec = CachedSpec(dir, 20);
  auto first = LoadDatasets(spec);
  const std::string cache = DatasetCachePath(spec);
  ASSERT_TRUE(std::filesystem::exists(cache));

  auto second = LoadDatasets(spec);  // from the cache
  EXPECT_TRUE(torch::equal(first->train.images, second->train.images));
  EXPECT_TRUE(torch::equal(first->test.labels, second->test.labels));

  std::string bytes = testing::ReadFile(cache);
  bytes[bytes.size() / 2] ^= 0x5a;
  WriteFile(cache, bytes);
  auto third = LoadDatasets(spec);  // corrupt: detected, rebuilt, rewritten
  EXPECT_TRUE(torch::equal(first->train.images, third->train.images));
  EXPECT_EQ(testing::ReadFile(cache).size(), bytes.size());
  EXPECT_NE(testing::ReadFile(cache), bytes);

  // Another spec is another entry.
  CachedDataSpec other = spec;
  other.train_limit = 10;
  EXPECT_NE(DatasetCachePath(other), cache);
}

TEST(DataTest, WorkersStartingTogetherDecodeOnceAndShareTheCache) {
  TempDir dir;
  testing::WriteSyntheticDataset(dir.path(), 6000, 1000);
  const CachedDataSpec spec = CachedSpec(dir, 500);
  // Three loaders released at once, as `sift run` starts its workers (flock excludes separate
  // opens of the lock file, so threads stand in for processes).
  std::vector<std::shared_ptr<const Datasets>> got(3);
  std::atomic<int> ready{0};
  std::vector<std::thread> threads;
  for (size_t i = 0; i < got.size(); ++i) {
    threads.emplace_back([&, i] {
      ready.fetch_add(1);
      while (ready.load() < 3) std::this_thread::yield();
      got[i] = LoadDatasets(spec);
    });
  }
  for (auto& t : threads) t.join();
  int decoded = 0;
  for (const auto& d : got) {
    decoded += !d->from_cache;
    EXPECT_TRUE(torch::equal(d->train.images, got[0]->train.images));
    EXPECT_TRUE(torch::equal(d->val.labels, got[0]->val.labels));
  }
  EXPECT_EQ(decoded, 1) << "each loader decoded the files itself";
  std::set<std::string> files;
  for (const auto& e : std::filesystem::directory_iterator(dir / "cache")) {
    files.insert(e.path().filename().string());
  }
  const std::string entry = std::filesystem::path(DatasetCachePath(spec)).filename().string();
  EXPECT_EQ(files, (std::set<std::string>{entry, entry + ".lock"}));
}

TEST(DataTest, CacheIsKeyedByTheSourceBytesNotTheirPathOrTime) {
  TempDir dir;
  ASSERT_EQ(common::CreateDirectories(dir / "a"), "");
  testing::WriteSyntheticDataset(dir / "a", 100, 30);
  // The same bytes, another path, a newer mtime.
  ASSERT_EQ(common::CreateDirectories(dir / "b"), "");
  for (const char* prefix : {"train", "t10k"}) {
    for (const char* kind : {"-images-idx3-ubyte.gz", "-labels-idx1-ubyte.gz"}) {
      const std::string name = std::string("/") + prefix + kind;
      testing::WriteFile(dir / "b" + name, testing::ReadFile(dir / "a" + name));
    }
  }
  CachedDataSpec a;
  a.dir = dir / "a";
  a.val_size = 20;
  a.cache_dir = dir / "cache";
  CachedDataSpec b = a;
  b.dir = dir / "b";
  EXPECT_EQ(DatasetCachePath(a), DatasetCachePath(b));
  // One pixel changed, same size and name: another entry.
  const std::string images = dir / "b/train-images-idx3-ubyte.gz";
  std::string bytes = testing::ReadFile(images);
  bytes[bytes.size() - 10] ^= 0x01;
  WriteFile(images, bytes);
  EXPECT_NE(DatasetCachePath(a), DatasetCachePath(b));
}

TEST(DataTest, EpochPermutationIsAPermutationFixedBySeedAndEpoch) {
  auto a = EpochPermutation(1000, /*seed=*/7, /*epoch=*/0);
  EXPECT_EQ(std::set<int64_t>(a.begin(), a.end()).size(), 1000u);
  EXPECT_EQ(a, EpochPermutation(1000, 7, 0));
  EXPECT_NE(a, EpochPermutation(1000, 7, 1));
  EXPECT_NE(a, EpochPermutation(1000, 8, 0));
}

TEST(DataTest, BatchLoaderGathersInOrderFromAnyStart) {
  TensorSplit s{torch::arange(10 * 4, torch::kFloat32).reshape({10, 1, 2, 2}),
                torch::arange(10, torch::kInt64)};
  std::vector<int64_t> order = {9, 3, 1, 0, 2, 8, 7, 4, 5, 6};
  BatchLoader loader(s, order, /*batch_size=*/4, /*first=*/1, /*pin_memory=*/false);
  EXPECT_EQ(loader.num_batches(), 3);
  Batch b;
  ASSERT_TRUE(loader.Next(&b));
  EXPECT_TRUE(torch::equal(b.labels, torch::tensor({2, 8, 7, 4}, torch::kInt64)));
  EXPECT_TRUE(torch::equal(b.images[1], s.images[8]));
  ASSERT_TRUE(loader.Next(&b));
  EXPECT_TRUE(torch::equal(b.labels, torch::tensor({5, 6}, torch::kInt64)));
  EXPECT_FALSE(loader.Next(&b));
}

// The consumer makes a batch itself when the producer has nothing queued or in hand; with uneven
// consumer pauses both paths interleave, and the order must still be the epoch's.
TEST(DataTest, BatchLoaderKeepsOrderWhenTheConsumerHelps) {
  const int64_t n = 600;
  TensorSplit s{torch::arange(n, torch::kFloat32).reshape({n, 1, 1, 1}),
                torch::arange(n, torch::kInt64)};
  const std::vector<int64_t> order = EpochPermutation(n, /*seed=*/3, /*epoch=*/0);
  for (int depth : {1, 2, 4}) {
    BatchLoader loader(s, order, /*batch_size=*/2, /*first=*/0, /*pin_memory=*/false, depth);
    std::vector<int64_t> seen;
    Batch b;
    for (int i = 0; loader.Next(&b); ++i) {
      for (int64_t j = 0; j < b.labels.size(0); ++j) seen.push_back(b.labels[j].item<int64_t>());
      if (i % 7 == 0) std::this_thread::sleep_for(std::chrono::microseconds(50 * (i % 3)));
    }
    EXPECT_EQ(seen, order) << "depth " << depth;
  }
}

TEST(DataTest, RealFashionMnistSlice) {
  auto d = testing::SmallFashionMnist(/*train=*/512, /*val=*/256, /*test=*/128);
  EXPECT_EQ(d->train.size(), 512);
  EXPECT_EQ(d->val.size(), 256);
  EXPECT_EQ(d->test.size(), 128);
  // Normalised with the data set's own statistics: roughly zero mean, unit spread.
  EXPECT_NEAR(d->train.images.mean().item<double>(), 0.0, 0.1);
  EXPECT_NEAR(d->train.images.std().item<double>(), 1.0, 0.1);
  EXPECT_EQ(d->train.labels.max().item<int64_t>(), 9);
}

// `data: {format: idx, train: {images, labels}, test: {...}}`: any IDX pair, not Fashion-MNIST's
// four names in one folder; the validation set is the end of train unless a val pair is given.
TEST(DataTest, ExplicitIdxFilesAreReadAsTheirSplits) {
  TempDir dir;
  testing::WriteSyntheticDataset(dir.path(), 100, 30);
  CachedDataSpec spec;
  spec.format = "idx";
  spec.dir = dir / "not-used";
  spec.train = {dir / "train-images-idx3-ubyte.gz", dir / "train-labels-idx1-ubyte.gz"};
  spec.test = {dir / "t10k-images-idx3-ubyte.gz", dir / "t10k-labels-idx1-ubyte.gz"};
  spec.val_size = 20;
  auto d = LoadDatasets(spec);
  EXPECT_EQ(d->train.size(), 80);
  EXPECT_EQ(d->val.size(), 20);
  EXPECT_EQ(d->test.size(), 30);
  EXPECT_EQ(d->val.labels[0].item<int64_t>(), 0);  // sample 80
  // An explicit val pair replaces the held-out end; no test pair: no test split.
  spec.val = spec.test;
  spec.test = {};
  d = LoadDatasets(spec);
  EXPECT_EQ(d->train.size(), 100);
  EXPECT_EQ(d->val.size(), 30);
  EXPECT_EQ(d->test.size(), 0);
  spec.train.labels = dir / "missing-labels.gz";
  ExpectError([&] { LoadDatasets(spec); }, {"missing-labels.gz"});
}

}  // namespace data_test
}  // namespace sift::worker
