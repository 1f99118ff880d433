#include "coordinator/store/fenced_store.h"

namespace sift::coordinator {

void FencedStore::Hold(int64_t study_id, int64_t epoch) {
  std::lock_guard<std::mutex> lock(mu_);
  held_[study_id] = epoch;
  let_go_.erase(study_id);
}

void FencedStore::LetGo(int64_t study_id) {
  std::lock_guard<std::mutex> lock(mu_);
  // Only a study once held: one served without a lease stays unfenced.
  auto it = held_.find(study_id);
  if (it == held_.end()) return;
  let_go_.try_emplace(study_id, study_id, it->second, -1);
  held_.erase(it);
}

std::vector<StudyFenced> FencedStore::TakeFenced() {
  std::lock_guard<std::mutex> lock(mu_);
  std::vector<StudyFenced> out;
  for (auto& [id, fenced] : fenced_) out.push_back(fenced);
  fenced_.clear();
  return out;
}

bool FencedStore::Fenced(int64_t study_id) const {
  std::lock_guard<std::mutex> lock(mu_);
  return held_.count(study_id) > 0 || let_go_.count(study_id) > 0;
}

void FencedStore::Atomically(const std::function<void()>& fn) {
  std::lock_guard<std::recursive_mutex> lock(tx_mu_);
  if (depth_ > 0) return fn();  // nested: part of the outer transaction
  inner_->Atomically([&] {
    checked_.clear();
    ++depth_;
    try {
      fn();
    } catch (...) {
      --depth_;
      throw;
    }
    --depth_;
  });
}

void FencedStore::Check(int64_t study_id) {
  if (checked_.count(study_id)) return;
  int64_t epoch = 0;
  {
    std::lock_guard<std::mutex> lock(mu_);
    auto it = held_.find(study_id);
    if (it == held_.end()) throw let_go_.at(study_id);
    epoch = it->second;
  }
  try {
    inner_->CheckStudyLease(study_id, epoch);
  } catch (const StudyFenced& fenced) {
    std::lock_guard<std::mutex> lock(mu_);
    fenced_.insert_or_assign(study_id, fenced);
    // Its next writes are refused here, without asking the database again.
    held_.erase(study_id);
    let_go_.insert_or_assign(study_id, fenced);
    throw;
  }
  checked_.insert(study_id);
}

}  // namespace sift::coordinator
