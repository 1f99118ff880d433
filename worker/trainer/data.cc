#include "worker/trainer/data.h"

#include <fcntl.h>
#include <spdlog/spdlog.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <stdexcept>
#include <vector>

#include "common/data_files.h"
#include "common/framed_file.h"
#include "worker/trainer/idx_reader.h"

namespace sift::worker {

using common::FramedFileError;
using common::ReadFramedFile;
using common::WriteFramedFile;
namespace {

constexpr char kCacheMagic[] = "SIFTDATA";
constexpr uint32_t kCacheVersion = 1;
constexpr int64_t kNumClasses = 10;

using common::kTestImages;
using common::kTestLabels;
using common::kTrainImages;
using common::kTrainLabels;

// FNV-1a, 64 bits: a stable content key (std::hash is not stable across builds).
struct Fnv64 {
  uint64_t h = 1469598103934665603ull;
  void Add(const void* data, size_t size) {
    const auto* p = static_cast<const uint8_t*>(data);
    for (size_t i = 0; i < size; ++i) h = (h ^ p[i]) * 1099511628211ull;
  }
  void Add(const std::string& s) { Add(s.data(), s.size() + 1); }
  void Add(int64_t v) { Add(&v, sizeof(v)); }
  void Add(double v) { Add(&v, sizeof(v)); }
  // A file's bytes, eight at a time (FNV-1a over 64-bit words: 8x fewer serial multiplies).
  void AddFile(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    if (!in) throw std::runtime_error(path + ": cannot read");
    std::vector<char> buf(1 << 20);
    int64_t total = 0;
    while (in.read(buf.data(), static_cast<std::streamsize>(buf.size())) || in.gcount() > 0) {
      const size_t n = static_cast<size_t>(in.gcount());
      size_t i = 0;
      for (; i + 8 <= n; i += 8) {
        uint64_t word;
        std::memcpy(&word, buf.data() + i, 8);
        h = (h ^ word) * 1099511628211ull;
      }
      Add(buf.data() + i, n - i);
      total += static_cast<int64_t>(n);
    }
    if (in.bad()) throw std::runtime_error(path + ": read error");
    Add(total);
  }
};

std::string JoinPath(const std::string& dir, const std::string& name) {
  return (std::filesystem::path(dir) / name).string();
}

// Decodes an images file and its labels file into a normalised Split, checking they agree.
Split DecodeSplit(const std::string& images_path, const std::string& labels_path) {
  IdxArray images = ReadIdxFile(images_path);
  IdxArray labels = ReadIdxFile(labels_path);
  if (images.dims.size() != 3) {
    throw std::runtime_error(images_path + ": expected 3 dimensions [N, rows, cols], got " +
                             std::to_string(images.dims.size()));
  }
  if (labels.dims.size() != 1) {
    throw std::runtime_error(labels_path + ": expected 1 dimension [N], got " +
                             std::to_string(labels.dims.size()));
  }
  if (labels.count() != images.count()) {
    throw std::runtime_error(labels_path + ": " + std::to_string(labels.count()) + " labels for " +
                             std::to_string(images.count()) + " images in " + images_path);
  }
  for (size_t i = 0; i < labels.data.size(); ++i) {
    if (labels.data[i] >= kNumClasses) {
      throw std::runtime_error(labels_path + ": label " + std::to_string(labels.data[i]) +
                               " at index " + std::to_string(i) + " is not a class in [0, 10)");
    }
  }
  const int64_t n = images.count(), rows = images.dims[1], cols = images.dims[2];
  Split s;
  s.images = torch::from_blob(images.data.data(), {n, 1, rows, cols}, torch::kUInt8)
                 .to(torch::kFloat32)
                 .div_(255.0)
                 .sub_(kPixelMean)
                 .div_(kPixelStd);
  s.labels = torch::from_blob(labels.data.data(), {n}, torch::kUInt8).to(torch::kInt64);
  return s;
}

Split Slice(const Split& s, int64_t start, int64_t length) {
  return {s.images.narrow(0, start, length).clone(), s.labels.narrow(0, start, length).clone()};
}

void PutSplit(const Split& s, std::string* out) {
  for (int64_t d : s.images.sizes()) out->append(reinterpret_cast<const char*>(&d), sizeof(d));
  out->append(static_cast<const char*>(s.images.data_ptr()), s.images.nbytes());
  out->append(static_cast<const char*>(s.labels.data_ptr()), s.labels.nbytes());
}

Split GetSplit(const std::string& path, const std::string& in, size_t* at) {
  auto take = [&](void* dst, size_t n) {
    if (*at + n > in.size()) throw FramedFileError(path + ": cache payload too short");
    std::memcpy(dst, in.data() + *at, n);
    *at += n;
  };
  int64_t dims[4];
  take(dims, sizeof(dims));
  for (int64_t d : dims) {
    if (d < 0 || d > (int64_t{1} << 31)) throw FramedFileError(path + ": bad dims in cache");
  }
  Split s;
  s.images = torch::empty({dims[0], dims[1], dims[2], dims[3]}, torch::kFloat32);
  s.labels = torch::empty({dims[0]}, torch::kInt64);
  take(s.images.data_ptr(), s.images.nbytes());
  take(s.labels.data_ptr(), s.labels.nbytes());
  return s;
}

std::shared_ptr<Datasets> Decode(const DataSpec& spec) {
  Split train_file =
      DecodeSplit(JoinPath(spec.dir, kTrainImages), JoinPath(spec.dir, kTrainLabels));
  Split test_file = DecodeSplit(JoinPath(spec.dir, kTestImages), JoinPath(spec.dir, kTestLabels));
  const int64_t n = train_file.size();
  if (spec.val_size < 0 || spec.val_size >= n) {
    throw std::runtime_error("val_size " + std::to_string(spec.val_size) +
                             " leaves no training samples out of " + std::to_string(n));
  }
  const int64_t available = n - spec.val_size;
  const int64_t n_train = spec.train_limit > 0 ? std::min(spec.train_limit, available) : available;
  const int64_t n_test =
      spec.test_limit > 0 ? std::min(spec.test_limit, test_file.size()) : test_file.size();
  auto d = std::make_shared<Datasets>();
  d->train = Slice(train_file, 0, n_train);
  d->val = Slice(train_file, available, spec.val_size);
  d->test = Slice(test_file, 0, n_test);
  return d;
}

}  // namespace

std::string DatasetCachePath(const DataSpec& spec) {
  if (spec.cache_dir.empty()) return "";
  Fnv64 h;
  h.Add(std::string(kCacheMagic));
  h.Add(int64_t{kCacheVersion});
  for (const char* name : {kTrainImages, kTrainLabels, kTestImages, kTestLabels}) {
    h.AddFile(JoinPath(spec.dir, name));
  }
  h.Add(spec.train_limit);
  h.Add(spec.val_size);
  h.Add(spec.test_limit);
  h.Add(kPixelMean);
  h.Add(kPixelStd);
  char hex[17];
  std::snprintf(hex, sizeof(hex), "%016llx", static_cast<unsigned long long>(h.h));
  return JoinPath(spec.cache_dir, std::string("fashion-mnist-") + hex + ".sift");
}

namespace {

std::shared_ptr<Datasets> ReadCache(const std::string& cache) {
  if (cache.empty() || !std::filesystem::exists(cache)) return nullptr;
  try {
    const std::string payload = ReadFramedFile(cache, kCacheMagic, kCacheVersion);
    size_t at = 0;
    auto d = std::make_shared<Datasets>();
    d->train = GetSplit(cache, payload, &at);
    d->val = GetSplit(cache, payload, &at);
    d->test = GetSplit(cache, payload, &at);
    if (at != payload.size()) throw FramedFileError(cache + ": trailing bytes in cache");
    d->from_cache = true;
    spdlog::debug("data: loaded {} from cache", cache);
    return d;
  } catch (const FramedFileError& e) {
    spdlog::warn("data: ignoring unusable cache entry ({}); rebuilding", e.what());
    return nullptr;
  }
}

// An exclusive flock on "<cache>.lock" for building the cache entry; holds nothing if the lock
// file cannot be made (a read-only cache directory), and everyone then builds for themselves.
class CacheBuildLock {
 public:
  explicit CacheBuildLock(const std::string& cache) {
    if (cache.empty()) return;
    std::error_code ec;
    std::filesystem::create_directories(std::filesystem::path(cache).parent_path(), ec);
    fd_ = ::open((cache + ".lock").c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
    if (fd_ >= 0 && ::flock(fd_, LOCK_EX) != 0) {
      ::close(fd_);
      fd_ = -1;
    }
  }
  ~CacheBuildLock() {
    if (fd_ >= 0) ::close(fd_);  // releases the flock
  }
  CacheBuildLock(const CacheBuildLock&) = delete;
  CacheBuildLock& operator=(const CacheBuildLock&) = delete;

 private:
  int fd_ = -1;
};

}  // namespace

std::shared_ptr<const Datasets> LoadDatasets(const DataSpec& spec) {
  const std::string cache = DatasetCachePath(spec);
  if (auto d = ReadCache(cache)) return d;
  // Local workers start together: one decodes and writes the entry while the others wait and
  // then read it, rather than each decoding the same files at once on the same cores.
  CacheBuildLock lock(cache);
  if (auto d = ReadCache(cache)) return d;
  auto d = Decode(spec);
  if (!cache.empty()) {
    std::string payload;
    for (const Split* s : {&d->train, &d->val, &d->test}) PutSplit(*s, &payload);
    try {
      std::filesystem::create_directories(spec.cache_dir);
      WriteFramedFile(cache, kCacheMagic, kCacheVersion, payload);
    } catch (const std::exception& e) {
      spdlog::warn("data: could not write cache {}: {}", cache, e.what());
    }
  }
  return d;
}

std::vector<int64_t> EpochPermutation(int64_t n, uint64_t seed, int64_t epoch) {
  // splitmix64 seeded from (seed, epoch), then Fisher-Yates: portable, unlike std::shuffle.
  uint64_t state = seed * 0x9e3779b97f4a7c15ull + static_cast<uint64_t>(epoch) + 1;
  auto next = [&state] {
    uint64_t z = (state += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
  };
  std::vector<int64_t> order(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) order[i] = i;
  for (int64_t i = n - 1; i > 0; --i) {
    const auto j = static_cast<int64_t>(next() % static_cast<uint64_t>(i + 1));
    std::swap(order[i], order[j]);
  }
  return order;
}

BatchLoader::BatchLoader(const Split& split, std::vector<int64_t> order, int64_t batch_size,
                         int64_t first, bool pin_memory, int depth)
    : split_{split.images.contiguous(), split.labels.contiguous()},
      order_(std::move(order)),
      batch_size_(batch_size),
      num_batches_((static_cast<int64_t>(order_.size()) + batch_size - 1) / batch_size),
      next_to_make_(first),
      pin_memory_(pin_memory),
      depth_(static_cast<size_t>(std::max(depth, 0))) {
  if (depth_ > 0) thread_ = std::thread([this] { Run(); });
}

BatchLoader::~BatchLoader() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    cancel_ = true;
  }
  cv_.notify_all();
  if (thread_.joinable()) thread_.join();
}

Batch BatchLoader::Assemble(int64_t index) const {
  const int64_t start = index * batch_size_;
  const int64_t count = std::min<int64_t>(batch_size_, static_cast<int64_t>(order_.size()) - start);
  auto image_shape = split_.images.sizes().vec();
  image_shape[0] = count;
  const auto options = torch::TensorOptions().pinned_memory(pin_memory_);
  Batch b{torch::empty(image_shape, options.dtype(torch::kFloat32)),
          torch::empty({count}, options.dtype(torch::kInt64))};
  const int64_t sample_floats = split_.images.numel() / std::max<int64_t>(split_.size(), 1);
  const float* src = split_.images.data_ptr<float>();
  const int64_t* src_labels = split_.labels.data_ptr<int64_t>();
  float* dst = b.images.data_ptr<float>();
  int64_t* dst_labels = b.labels.data_ptr<int64_t>();
  for (int64_t i = 0; i < count; ++i) {
    const int64_t s = order_[start + i];
    std::memcpy(dst + i * sample_floats, src + s * sample_floats, sample_floats * sizeof(float));
    dst_labels[i] = src_labels[s];
  }
  return b;
}

void BatchLoader::Run() {
  try {
    for (;;) {
      int64_t index;
      {
        std::unique_lock<std::mutex> lock(mu_);
        cv_.wait(lock, [this] { return cancel_ || ready_.size() < depth_; });
        if (cancel_ || next_to_make_ >= num_batches_) break;
        index = next_to_make_++;
        ++in_flight_;
      }
      Batch b = Assemble(index);
      {
        std::lock_guard<std::mutex> lock(mu_);
        ready_.push_back(std::move(b));
        --in_flight_;
      }
      cv_.notify_all();
    }
  } catch (...) {
    std::lock_guard<std::mutex> lock(mu_);
    error_ = std::current_exception();
  }
  {
    std::lock_guard<std::mutex> lock(mu_);
    done_ = true;
  }
  cv_.notify_all();
}

bool BatchLoader::Next(Batch* out) {
  const auto start = std::chrono::steady_clock::now();
  if (depth_ == 0) {
    if (next_to_make_ >= num_batches_) return false;
    *out = Assemble(next_to_make_++);
    wait_seconds_ +=
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    return true;
  }
  std::unique_lock<std::mutex> lock(mu_);
  // Nothing queued and nothing being made: the producer has not been scheduled yet (a new
  // epoch's thread, or both cores busy with compute threads). Make the next batch here rather
  // than wait a scheduler time slice for it; order is kept since all earlier ones are consumed.
  if (ready_.empty() && in_flight_ == 0 && next_to_make_ < num_batches_) {
    const int64_t index = next_to_make_++;
    lock.unlock();
    *out = Assemble(index);
    cv_.notify_all();
    wait_seconds_ +=
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    return true;
  }
  cv_.wait(lock, [this] { return !ready_.empty() || done_; });
  wait_seconds_ += std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  if (!ready_.empty()) {
    *out = std::move(ready_.front());
    ready_.pop_front();
    lock.unlock();
    cv_.notify_all();
    return true;
  }
  if (error_) std::rethrow_exception(error_);
  return false;
}

}  // namespace sift::worker
