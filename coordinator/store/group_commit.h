// Group commit: writes from concurrent RPCs share one Store transaction. A single writer thread
// takes everything queued, runs it in one transaction and commits, then answers each waiter; a
// write is acknowledged only once its transaction committed. Writes run in the order they were
// submitted, so a caller that submits under its own lock gets commits in that lock's order.
//
// Under concurrent load the writer waits a little for a batch to fill: callers that submitted
// and wait outside their locks (Submit) come back with their next write soon after they are
// answered, so the writer waits until as many writes are queued as its last transaction
// carried. A transaction costs far more than a row (WAL frames, file locks, the waiters'
// wake-ups), and on a machine whose cores are all busy a writer that commits whatever is queued
// at once carries 2-3 writes per transaction. It waits only while writes keep coming (no gap
// over `max_gap`: some callers may not come back soon, an acquisition still deciding its trial)
// and at most `max_delay` in all. Run (a caller that waits, often under its own lock) is never
// delayed: it commits what is queued at once.
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <exception>
#include <functional>
#include <future>
#include <mutex>
#include <thread>

#include "coordinator/store/store.h"

namespace sift::coordinator {

class GroupCommit {
 public:
  static constexpr std::chrono::microseconds kDefaultMaxDelay{2000};
  // A few reports' worth of arrivals at thousands a second; the full max_delay was idle time
  // whenever fewer callers came back (TPE+ASHA at 16 workers: 2,435-2,984 -> 3,320 reports/s).
  static constexpr std::chrono::microseconds kDefaultMaxGap{150};

  explicit GroupCommit(Store& store, std::chrono::microseconds max_delay = kDefaultMaxDelay,
                       std::chrono::microseconds max_gap = kDefaultMaxGap);
  // Commits what is queued, then stops the writer.
  ~GroupCommit();
  GroupCommit(const GroupCommit&) = delete;
  GroupCommit& operator=(const GroupCommit&) = delete;

  // Queues `write` (Store calls, run on the writer thread inside its batch's transaction). The
  // future becomes ready once the transaction committed, or holds the exception that failed it:
  // a write that throws fails only itself; a commit that fails fails every write of the batch,
  // and none of them is in the Store. The commit may wait up to `max_delay` for more writes.
  std::shared_future<void> Submit(std::function<void()> write) {
    return Enqueue(std::move(write), /*urgent=*/false, nullptr);
  }
  // Submit, and call `done` once the write's transaction committed (with nullptr) or failed
  // (with what failed it), on the writer thread, after the future became ready and in the
  // order the writes were submitted. So nothing waits: a caller answers from `done`. It runs
  // before the writer takes its next batch: keep it short, never let it throw, and never wait
  // in it for this GroupCommit (Run, a future of a write not yet committed) or for a lock that
  // a caller of Run may hold while it waits.
  using Done = std::function<void(std::exception_ptr)>;
  std::shared_future<void> Submit(std::function<void()> write, Done done) {
    return Enqueue(std::move(write), /*urgent=*/false, std::move(done));
  }
  // Submit and wait: returns once committed, throws what failed it. Not delayed: it commits
  // what is queued with it at once.
  void Run(std::function<void()> write) {
    Enqueue(std::move(write), /*urgent=*/true, nullptr).get();
  }
  // Returns once every write queued before it is committed and answered. Not a write itself:
  // no transaction and not counted (a read-only `sift report` logs no writes).
  void Drain() { Enqueue(nullptr, /*urgent=*/true, nullptr).get(); }

  // Transactions committed or tried so far, and writes in them (for tests and metrics).
  int64_t batches() const;
  int64_t writes() const;

 private:
  struct Pending {
    std::function<void()> write;
    std::promise<void> done;
    Done then;  // may be empty
  };
  std::shared_future<void> Enqueue(std::function<void()> write, bool urgent, Done then);
  // Makes the write's future ready (error: nullptr once committed), then calls its Done.
  static void Answer(Pending& p, std::exception_ptr error);
  void Loop();
  void CommitBatch(std::deque<Pending>& batch);

  Store& store_;
  const std::chrono::microseconds max_delay_, max_gap_;
  mutable std::mutex mu_;
  std::condition_variable wake_;
  std::deque<Pending> queue_;
  bool urgent_ = false;  // a Run is queued: commit now
  size_t wake_at_ = 1;   // queued writes that make the writer go (it waits for a fuller batch)
  bool stop_ = false;
  int64_t batches_ = 0, writes_ = 0;
  int64_t fill_waits_ = 0, gave_up_ = 0;  // waits for a fuller batch; those that ended in a gap
  std::thread writer_;                    // last: starts once the members above exist
};

}  // namespace sift::coordinator
