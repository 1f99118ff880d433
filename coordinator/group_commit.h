// Group commit: writes from concurrent RPCs share one Store transaction. A single writer thread
// takes everything queued, runs it in one transaction and commits, then answers each waiter; a
// write is acknowledged only once its transaction committed. Writes run in the order they were
// submitted, so a caller that submits under its own lock gets commits in that lock's order.
#pragma once

#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <future>
#include <mutex>
#include <thread>

#include "coordinator/store.h"

namespace sift::coordinator {

class GroupCommit {
 public:
  explicit GroupCommit(Store& store);
  // Commits what is queued, then stops the writer.
  ~GroupCommit();
  GroupCommit(const GroupCommit&) = delete;
  GroupCommit& operator=(const GroupCommit&) = delete;

  // Queues `write` (Store calls, run on the writer thread inside its batch's transaction). The
  // future becomes ready once the transaction committed, or holds the exception that failed it:
  // a write that throws fails only itself; a commit that fails fails every write of the batch,
  // and none of them is in the Store.
  std::shared_future<void> Submit(std::function<void()> write);
  // Submit and wait: returns once committed, throws what failed it.
  void Run(std::function<void()> write) { Submit(std::move(write)).get(); }

  // Transactions committed or tried so far, and writes in them (for tests and metrics).
  int64_t batches() const;
  int64_t writes() const;

 private:
  struct Pending {
    std::function<void()> write;
    std::promise<void> done;
  };
  void Loop();
  void CommitBatch(std::deque<Pending>& batch);

  Store& store_;
  mutable std::mutex mu_;
  std::condition_variable wake_;
  std::deque<Pending> queue_;
  bool stop_ = false;
  int64_t batches_ = 0, writes_ = 0;
  std::thread writer_;  // last: starts once the members above exist
};

}  // namespace sift::coordinator
