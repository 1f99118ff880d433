#include "worker/trainer/resident_data.h"

#include <algorithm>

namespace sift::worker {

int64_t SplitBytes(const TensorSplit& split) {
  return static_cast<int64_t>(split.images.nbytes() + split.labels.nbytes());
}

ResidentSplit::ResidentSplit(const TensorSplit& split, const torch::Device& device) {
  split_.images = split.images.to(device).contiguous();
  split_.labels = split.labels.to(device).contiguous();
}

void ResidentSplit::Begin(const std::vector<int64_t>& order, int64_t batch_size, int64_t first) {
  // from_blob does not own `order`: the copy to the device (or clone on the CPU) does.
  order_ = torch::from_blob(const_cast<int64_t*>(order.data()),
                            {static_cast<int64_t>(order.size())}, torch::kInt64)
               .to(split_.images.device(), /*non_blocking=*/false, /*copy=*/true);
  batch_size_ = batch_size;
  num_batches_ = (static_cast<int64_t>(order.size()) + batch_size - 1) / batch_size;
  next_ = first;
}

bool ResidentSplit::Next(Batch* out) {
  if (next_ >= num_batches_) return false;
  const int64_t start = next_ * batch_size_;
  const int64_t count = std::min(batch_size_, order_.size(0) - start);
  const auto index = order_.narrow(0, start, count);
  out->images = split_.images.index_select(0, index);
  out->labels = split_.labels.index_select(0, index);
  ++next_;
  return true;
}

}  // namespace sift::worker
