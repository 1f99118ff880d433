#include "coordinator/store/group_commit.h"

#include <pthread.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <exception>

#include "common/main_guard.h"

namespace sift::coordinator {

GroupCommit::GroupCommit(Store& store, std::chrono::microseconds max_delay,
                         std::chrono::microseconds max_gap)
    : store_(store), max_delay_(max_delay), max_gap_(max_gap), writer_([this] { Loop(); }) {}

GroupCommit::~GroupCommit() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stop_ = true;
  }
  wake_.notify_one();
  writer_.join();
  if (batches_ > 0) {
    spdlog::info("group commit: {} writes in {} transactions ({:.1f} per transaction){}", writes_,
                 batches_, static_cast<double>(writes_) / static_cast<double>(batches_),
                 fill_waits_ == 0 ? std::string()
                                  : fmt::format("; {} waits for a fuller batch, {} of them ended "
                                                "when writes stopped coming",
                                                fill_waits_, gave_up_));
  }
}

std::shared_future<void> GroupCommit::Enqueue(std::function<void()> write, bool urgent, Done then) {
  Pending p{std::move(write), {}, std::move(then)};
  std::shared_future<void> done = p.done.get_future().share();
  bool wake = false;
  {
    std::lock_guard<std::mutex> lock(mu_);
    queue_.push_back(std::move(p));
    urgent_ = urgent_ || urgent;
    // Wake the writer only when it would go: not once per write of a batch that is filling.
    wake = urgent || queue_.size() >= wake_at_;
  }
  if (wake) wake_.notify_one();
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
  pthread_setname_np(pthread_self(), "sift-commit");  // for top -H and perf
  std::unique_lock<std::mutex> lock(mu_);
  size_t last = 1;  // writes the last transaction carried: about how many callers are in flight
  for (;;) {
    wake_at_ = 1;
    wake_.wait(lock, [&] { return stop_ || !queue_.empty(); });
    if (queue_.empty()) return;  // stopping, and everything queued is committed
    if (last > 1 && queue_.size() < last && !urgent_ && !stop_) {
      // The callers the last transaction answered are coming back: wait for them while they
      // keep coming, not longer than max_delay_ (fewer callers now: the batch goes with those
      // that came).
      ++fill_waits_;
      wake_at_ = last;
      const auto deadline = std::chrono::steady_clock::now() + max_delay_;
      for (size_t seen = queue_.size();; seen = queue_.size()) {
        const auto until = std::min(deadline, std::chrono::steady_clock::now() + max_gap_);
        if (wake_.wait_until(lock, until,
                             [&] { return stop_ || urgent_ || queue_.size() >= last; })) {
          break;
        }
        if (queue_.size() == seen || std::chrono::steady_clock::now() >= deadline) {
          gave_up_ += queue_.size() == seen;
          break;
        }
      }
    }
    std::deque<Pending> batch;
    batch.swap(queue_);
    urgent_ = false;
    last = batch.size();
    const auto writes = std::count_if(batch.begin(), batch.end(),
                                      [](const Pending& p) { return p.write != nullptr; });
    batches_ += writes > 0;
    writes_ += writes;
    // Writers queue the next batch while this one commits.
    lock.unlock();
    if (writes > 0) {
      CommitBatch(batch);
    } else {
      for (auto& p : batch) Answer(p, nullptr);  // drains only
    }
    lock.lock();
  }
}

void GroupCommit::CommitBatch(std::deque<Pending>& batch) {
  try {
    store_.Atomically([&] {
      for (auto& p : batch) {
        if (p.write) p.write();
      }
    });
    for (auto& p : batch) Answer(p, nullptr);
    return;
  } catch (...) {
    // Rolled back whole. Either one write threw (it alone should fail) or the commit did (all
    // fail): each write in a transaction of its own tells which.
  }
  for (auto& p : batch) {
    try {
      if (p.write) store_.Atomically(p.write);
    } catch (...) {
      Answer(p, std::current_exception());
      continue;
    }
    Answer(p, nullptr);
  }
}

void GroupCommit::Answer(Pending& p, std::exception_ptr error) {
  if (error) {
    p.done.set_exception(error);
  } else {
    p.done.set_value();
  }
  if (!p.then) return;
  try {
    p.then(error);
  } catch (...) {  // the writer must go on: the write is answered, whatever its caller did
    spdlog::error("a group commit's completion threw: {}", common::DescribeCurrentException());
  }
}

}  // namespace sift::coordinator
