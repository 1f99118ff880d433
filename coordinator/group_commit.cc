#include "coordinator/group_commit.h"

#include <exception>

namespace sift::coordinator {

GroupCommit::GroupCommit(Store& store) : store_(store), writer_([this] { Loop(); }) {}

GroupCommit::~GroupCommit() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stop_ = true;
  }
  wake_.notify_one();
  writer_.join();
}

std::shared_future<void> GroupCommit::Submit(std::function<void()> write) {
  Pending p{std::move(write), {}};
  std::shared_future<void> done = p.done.get_future().share();
  {
    std::lock_guard<std::mutex> lock(mu_);
    queue_.push_back(std::move(p));
  }
  wake_.notify_one();
  return done;
}

int64_t GroupCommit::batches() const {
  std::lock_guard<std::mutex> lock(mu_);
  return batches_;
}

int64_t GroupCommit::writes() const {
  std::lock_guard<std::mutex> lock(mu_);
  return writes_;
}

void GroupCommit::Loop() {
  std::unique_lock<std::mutex> lock(mu_);
  for (;;) {
    wake_.wait(lock, [&] { return stop_ || !queue_.empty(); });
    if (queue_.empty()) return;  // stopping, and everything queued is committed
    std::deque<Pending> batch;
    batch.swap(queue_);
    ++batches_;
    writes_ += static_cast<int64_t>(batch.size());
    // Writers queue the next batch while this one commits.
    lock.unlock();
    CommitBatch(batch);
    lock.lock();
  }
}

void GroupCommit::CommitBatch(std::deque<Pending>& batch) {
  try {
    store_.Atomically([&] {
      for (auto& p : batch) p.write();
    });
    for (auto& p : batch) p.done.set_value();
    return;
  } catch (...) {
    // Rolled back whole. Either one write threw (it alone should fail) or the commit did (all
    // fail): each write in a transaction of its own tells which.
  }
  for (auto& p : batch) {
    try {
      store_.Atomically(p.write);
      p.done.set_value();
    } catch (...) {
      p.done.set_exception(std::current_exception());
    }
  }
}

}  // namespace sift::coordinator
