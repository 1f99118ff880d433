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

#include "common/data/dataset.h"
#include "common/data/idx.h"
#include "common/data/permutation.h"
#include "common/data_files.h"
#include "common/framed_file.h"
#include "common/posix_fs.h"

namespace sift::worker {

using common::FramedFileError;
using common::ReadFramedFile;
using common::WriteFramedFile;
namespace {

constexpr char kCacheMagic[] = "SIFTDATA";
// 2: any sample shape and label type, after a header with the task and the sample shape.
// 3: the target's mean and deviation after the class names.
// 4: the input's preparation (InputPrep) after those, so that an export can apply it.
constexpr uint32_t kCacheVersion = 4;
constexpr int64_t kIdxClasses = 10;
constexpr int64_t kMaxCachedRank = 8;

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
TensorSplit DecodeSplit(const std::string& images_path, const std::string& labels_path) {
  sift::data::IdxArray images = sift::data::ReadIdxFile(images_path);
  sift::data::IdxArray labels = sift::data::ReadIdxFile(labels_path);
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
    if (labels.data[i] >= kIdxClasses) {
      throw std::runtime_error(labels_path + ": label " + std::to_string(labels.data[i]) +
                               " at index " + std::to_string(i) + " is not a class in [0, 10)");
    }
  }
  const int64_t n = images.count(), rows = images.dims[1], cols = images.dims[2];
  TensorSplit s;
  s.images = torch::from_blob(images.data.data(), {n, 1, rows, cols}, torch::kUInt8)
                 .to(torch::kFloat32)
                 .div_(255.0)
                 .sub_(kPixelMean)
                 .div_(kPixelStd);
  s.labels = torch::from_blob(labels.data.data(), {n}, torch::kUInt8).to(torch::kInt64);
  return s;
}

TensorSplit Slice(const TensorSplit& s, int64_t start, int64_t length) {
  return {s.images.narrow(0, start, length).clone(), s.labels.narrow(0, start, length).clone()};
}

// Cache payload: the task and sample shape, then each split's dims, features and labels.
void PutInt(int64_t v, std::string* out) {
  out->append(reinterpret_cast<const char*>(&v), sizeof(v));
}
void PutString(const std::string& v, std::string* out) {
  PutInt(static_cast<int64_t>(v.size()), out);
  out->append(v);
}

void PutDoubles(const std::vector<double>& v, std::string* out) {
  PutInt(static_cast<int64_t>(v.size()), out);
  out->append(reinterpret_cast<const char*>(v.data()), v.size() * sizeof(double));
}

void PutInput(const sift::data::InputPrep& p, std::string* out) {
  PutString(p.format, out);
  PutInt(static_cast<int64_t>(p.columns.size()), out);
  for (const auto& c : p.columns) {
    PutString(c.name, out);
    PutInt(static_cast<int64_t>(c.vocabulary.size()), out);
    for (const auto& v : c.vocabulary) PutString(v, out);
  }
  out->append(reinterpret_cast<const char*>(&p.divisor), sizeof(double));
  PutDoubles(p.mean, out);
  PutDoubles(p.std, out);
}

void PutSplit(const TensorSplit& s, std::string* out) {
  PutInt(s.images.dim(), out);
  for (int64_t d : s.images.sizes()) PutInt(d, out);
  out->append(static_cast<const char*>(s.images.data_ptr()), s.images.nbytes());
  PutInt(s.labels.scalar_type() == torch::kFloat32 ? 1 : 0, out);
  out->append(static_cast<const char*>(s.labels.data_ptr()), s.labels.nbytes());
}

class PayloadReader {
 public:
  PayloadReader(const std::string& path, const std::string& in) : path_(path), in_(in) {}
  void Take(void* dst, size_t n) {
    if (at_ + n > in_.size()) throw FramedFileError(path_ + ": cache payload too short");
    std::memcpy(dst, in_.data() + at_, n);
    at_ += n;
  }
  int64_t Int(int64_t max) {
    int64_t v;
    Take(&v, sizeof(v));
    if (v < 0 || v > max) throw FramedFileError(path_ + ": bad number in cache");
    return v;
  }
  std::string String() {
    std::string v(static_cast<size_t>(Int(1 << 20)), '\0');
    Take(v.data(), v.size());
    return v;
  }
  std::vector<double> Doubles() {
    const auto n = static_cast<size_t>(Int(int64_t{1} << 31));
    if (n * sizeof(double) > in_.size() - at_) throw FramedFileError(path_ + ": cache too short");
    std::vector<double> v(n);
    Take(v.data(), v.size() * sizeof(double));
    return v;
  }
  sift::data::InputPrep Input() {
    sift::data::InputPrep p;
    p.format = String();
    p.columns.resize(static_cast<size_t>(Int(int64_t{1} << 31)));
    for (auto& c : p.columns) {
      c.name = String();
      c.vocabulary.resize(static_cast<size_t>(Int(int64_t{1} << 31)));
      for (auto& v : c.vocabulary) v = String();
    }
    Take(&p.divisor, sizeof(double));
    p.mean = Doubles();
    p.std = Doubles();
    return p;
  }
  TensorSplit GetSplit() {
    std::vector<int64_t> dims(static_cast<size_t>(Int(kMaxCachedRank)));
    for (int64_t& d : dims) d = Int(int64_t{1} << 31);
    TensorSplit s;
    s.images = torch::empty(dims, torch::kFloat32);
    Take(s.images.data_ptr(), s.images.nbytes());
    s.labels = torch::empty({dims.at(0)}, Int(1) == 1 ? torch::kFloat32 : torch::kInt64);
    Take(s.labels.data_ptr(), s.labels.nbytes());
    return s;
  }
  bool done() const { return at_ == in_.size(); }

 private:
  const std::string& path_;
  const std::string& in_;
  size_t at_ = 0;
};

std::string CachePayload(const Datasets& d) {
  std::string payload;
  PutString(d.task, &payload);
  PutInt(d.outputs, &payload);
  PutInt(static_cast<int64_t>(d.sample.size()), &payload);
  for (int64_t v : d.sample) PutInt(v, &payload);
  PutInt(static_cast<int64_t>(d.class_names.size()), &payload);
  for (const auto& name : d.class_names) PutString(name, &payload);
  payload.append(reinterpret_cast<const char*>(&d.target_mean), sizeof(double));
  payload.append(reinterpret_cast<const char*>(&d.target_std), sizeof(double));
  PutInput(d.input, &payload);
  for (const TensorSplit* s : {&d.train, &d.val, &d.test}) PutSplit(*s, &payload);
  return payload;
}

std::shared_ptr<Datasets> FromCachePayload(const std::string& path, const std::string& payload) {
  PayloadReader in(path, payload);
  auto d = std::make_shared<Datasets>();
  d->task = in.String();
  d->outputs = in.Int(int64_t{1} << 31);
  d->sample.resize(static_cast<size_t>(in.Int(kMaxCachedRank)));
  for (int64_t& v : d->sample) v = in.Int(int64_t{1} << 31);
  d->class_names.resize(static_cast<size_t>(in.Int(int64_t{1} << 31)));
  for (auto& name : d->class_names) name = in.String();
  in.Take(&d->target_mean, sizeof(double));
  in.Take(&d->target_std, sizeof(double));
  if (!(d->target_std > 0)) throw FramedFileError(path + ": bad target scale in cache");
  d->input = in.Input();
  if (!(d->input.divisor > 0) || d->input.mean.size() != d->input.std.size()) {
    throw FramedFileError(path + ": bad input preparation in cache");
  }
  d->train = in.GetSplit();
  d->val = in.GetSplit();
  d->test = in.GetSplit();
  if (!in.done()) throw FramedFileError(path + ": trailing bytes in cache");
  return d;
}

// IDX images and labels: the folder form (Fashion-MNIST's four names in `dir`), or explicit
// train/val/test pairs. Without a val pair the validation set is the end of the training file;
// without a test pair there is no test split.
std::shared_ptr<Datasets> DecodeIdx(const CachedDataSpec& spec) {
  const bool folder = spec.uses_dir();
  TensorSplit train_file =
      folder ? DecodeSplit(JoinPath(spec.dir, kTrainImages), JoinPath(spec.dir, kTrainLabels))
             : DecodeSplit(spec.train.path, spec.train.labels);
  TensorSplit test_file;
  if (folder) {
    test_file = DecodeSplit(JoinPath(spec.dir, kTestImages), JoinPath(spec.dir, kTestLabels));
  } else if (!spec.test.empty()) {
    test_file = DecodeSplit(spec.test.path, spec.test.labels);
  }
  const int64_t n = train_file.size();
  const bool val_given = !folder && !spec.val.empty();
  const int64_t val_size = val_given ? 0 : spec.val_size;
  if (val_size < 0 || val_size >= n) {
    throw std::runtime_error("val_size " + std::to_string(val_size) +
                             " leaves no training samples out of " + std::to_string(n));
  }
  const int64_t available = n - val_size;
  const int64_t n_train = spec.train_limit > 0 ? std::min(spec.train_limit, available) : available;
  auto d = std::make_shared<Datasets>();
  d->input.format = "idx";
  d->input.divisor = 255.0;
  d->input.mean = {kPixelMean};
  d->input.std = {kPixelStd};
  d->train = Slice(train_file, 0, n_train);
  d->val = val_given ? DecodeSplit(spec.val.path, spec.val.labels)
                     : Slice(train_file, available, val_size);
  if (test_file.images.defined()) {
    const int64_t n_test =
        spec.test_limit > 0 ? std::min(spec.test_limit, test_file.size()) : test_file.size();
    d->test = Slice(test_file, 0, n_test);
  } else {  // no test files: an empty split of the same shape
    d->test = Slice(train_file, 0, 0);
  }
  d->sample = train_file.images.sizes().slice(1).vec();
  for (const TensorSplit* other : {&d->val, &d->test}) {
    if (other->size() > 0 && other->images.sizes().slice(1).vec() != d->sample) {
      throw std::runtime_error("idx: the val/test images' size differs from the training images'");
    }
  }
  return d;
}

// A common/data split as tensors: [N, ...sample] features and the task's label type.
TensorSplit ToTensors(const sift::data::Split& s, const std::vector<int64_t>& sample,
                      bool regression) {
  std::vector<int64_t> shape{s.size};
  shape.insert(shape.end(), sample.begin(), sample.end());
  TensorSplit out;
  out.images = torch::empty(shape, torch::kFloat32);
  std::memcpy(out.images.data_ptr(), s.x.data(), s.x.size() * sizeof(float));
  if (regression) {
    out.labels = torch::empty({s.size}, torch::kFloat32);
    std::memcpy(out.labels.data_ptr(), s.targets.data(), s.targets.size() * sizeof(float));
  } else {
    out.labels = torch::empty({s.size}, torch::kInt64);
    std::memcpy(out.labels.data_ptr(), s.classes.data(), s.classes.size() * sizeof(int64_t));
  }
  return out;
}

std::shared_ptr<Datasets> DecodeFiles(const CachedDataSpec& spec) {
  const sift::data::Dataset loaded = sift::data::LoadDataset(spec);
  auto d = std::make_shared<Datasets>();
  d->task = loaded.task;
  d->outputs = loaded.num_outputs();
  d->class_names = loaded.class_names;
  d->target_mean = loaded.target_mean;
  d->target_std = loaded.target_std;
  d->input = loaded.input;
  d->sample = loaded.feature_shape;
  if (d->sample.size() == 2) d->sample.insert(d->sample.begin(), 1);  // [H, W] images: one channel
  d->train = ToTensors(loaded.train, d->sample, d->regression());
  d->val = ToTensors(loaded.val, d->sample, d->regression());
  d->test = ToTensors(loaded.test, d->sample, d->regression());
  return d;
}

std::shared_ptr<Datasets> Decode(const CachedDataSpec& spec) {
  return spec.is_idx() ? DecodeIdx(spec) : DecodeFiles(spec);
}

// The spec as the cache sees it: the preprocessing without the paths (the files' bytes stand
// for them), and the idx settings only for idx data.
std::string CacheKeySpec(const CachedDataSpec& spec) {
  sift::data::DataSpec k = spec;
  k.format = spec.ResolvedFormat();
  k.dir.clear();
  for (sift::data::FileRef* f : {&k.file, &k.train, &k.val, &k.test}) {
    if (!f->path.empty()) f->path = "given";
    if (!f->labels.empty()) f->labels = "given";
  }
  if (k.format != "idx") k.train_limit = k.val_size = k.test_limit = 0;
  return sift::data::ToJson(k);
}

}  // namespace

std::string DataContentKey(const CachedDataSpec& spec) {
  Fnv64 h;
  h.Add(std::string(kCacheMagic));
  h.Add(int64_t{kCacheVersion});
  for (const std::string& file : spec.SourceFiles()) h.AddFile(file);
  h.Add(CacheKeySpec(spec));
  h.Add(kPixelMean);
  h.Add(kPixelStd);
  char hex[17];
  std::snprintf(hex, sizeof(hex), "%016llx", static_cast<unsigned long long>(h.h));
  return hex;
}

std::string DatasetCachePath(const CachedDataSpec& spec) {
  if (spec.cache_dir.empty()) return "";
  return JoinPath(spec.cache_dir,
                  (spec.is_idx() ? "fashion-mnist-" : "data-") + DataContentKey(spec) + ".sift");
}

namespace {

std::shared_ptr<Datasets> ReadCache(const std::string& cache) {
  if (cache.empty() || !std::filesystem::exists(cache)) return nullptr;
  try {
    auto d = FromCachePayload(cache, ReadFramedFile(cache, kCacheMagic, kCacheVersion));
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
    common::CreateDirectories(std::filesystem::path(cache).parent_path().string());
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

std::shared_ptr<const Datasets> LoadDatasets(const CachedDataSpec& spec) {
  const std::string cache = DatasetCachePath(spec);
  if (auto d = ReadCache(cache)) return d;
  // Local workers start together: one decodes and writes the entry while the others wait and
  // then read it, rather than each decoding the same files at once on the same cores.
  CacheBuildLock lock(cache);
  if (auto d = ReadCache(cache)) return d;
  auto d = Decode(spec);
  if (!cache.empty()) {
    try {
      if (std::string p = common::CreateDirectories(spec.cache_dir); !p.empty()) {
        throw std::runtime_error(p);
      }
      WriteFramedFile(cache, kCacheMagic, kCacheVersion, CachePayload(*d));
    } catch (const std::exception& e) {
      spdlog::warn("data: could not write cache {}: {}", cache, e.what());
    }
  }
  return d;
}

LoadedDataSummary Summarize(const Datasets& data) {
  return {{data.sample, data.outputs, data.target_mean, data.target_std},
          data.class_names,
          data.train.size(),
          data.val.size(),
          data.test.size()};
}

std::vector<int64_t> EpochPermutation(int64_t n, uint64_t seed, int64_t epoch) {
  return sift::data::SplitMixPermutation(
      n, seed * 0x9e3779b97f4a7c15ull + static_cast<uint64_t>(epoch) + 1);
}

BatchLoader::BatchLoader(const TensorSplit& split, std::vector<int64_t> order, int64_t batch_size,
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
          torch::empty({count}, options.dtype(split_.labels.scalar_type()))};
  const int64_t sample_floats = split_.images.numel() / std::max<int64_t>(split_.size(), 1);
  const float* src = split_.images.data_ptr<float>();
  const auto* src_labels = static_cast<const char*>(split_.labels.data_ptr());
  float* dst = b.images.data_ptr<float>();
  auto* dst_labels = static_cast<char*>(b.labels.data_ptr());
  const size_t label_bytes = split_.labels.element_size();  // int64 classes or float targets
  for (int64_t i = 0; i < count; ++i) {
    const int64_t s = order_[start + i];
    std::memcpy(dst + i * sample_floats, src + s * sample_floats, sample_floats * sizeof(float));
    std::memcpy(dst_labels + i * label_bytes, src_labels + s * label_bytes, label_bytes);
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
