// Group commit on the real SQLite Store: concurrent writes share transactions, each is answered
// only once committed, a write that throws fails alone, and a commit that fails (a real file-size
// limit) fails every write of its batch and leaves none of them behind.
#include "coordinator/store/group_commit.h"

#include <gtest/gtest.h>
#include <signal.h>
#include <sys/resource.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <filesystem>
#include <future>
#include <mutex>
#include <thread>
#include <vector>

namespace sift::coordinator {
namespace group_commit_test {

namespace fs = std::filesystem;

ReportRecord Report(const std::string& lease, int64_t seq, size_t reason_bytes = 0) {
  ReportRecord r;
  r.study_id = 1;
  r.number = seq;
  r.epoch = 1;
  r.metrics = {{"val_accuracy", 0.5}};
  r.lease_id = lease;
  r.seq = seq;
  r.decision = "CONTINUE";
  r.reason = std::string(reason_bytes, 'r');
  return r;
}

// Holds the writer inside a batch until released, so that what is submitted meanwhile queues.
struct Gate {
  std::promise<void> open;
  std::shared_future<void> opened = open.get_future().share();
  std::function<void()> Write() {
    return [f = opened] { f.wait(); };
  }
  // Submits the gate's write and returns once the writer is inside its batch.
  std::shared_future<void> Hold(GroupCommit& commit) {
    auto held = commit.Submit(Write());
    while (commit.batches() == 0) std::this_thread::yield();
    return held;
  }
};

// While it lives, no file of this process may grow past 64 KB more than the database's files
// are now: a commit's new WAL frames hit a real EFBIG.
class FileSizeLimit {
 public:
  explicit FileSizeLimit(const fs::path& db) {
    std::error_code ec;
    uintmax_t largest = 0;
    for (const char* s : {"", "-wal", "-shm"}) {
      const uintmax_t size = fs::file_size(db.string() + s, ec);
      if (!ec) largest = std::max(largest, size);
    }
    EXPECT_EQ(getrlimit(RLIMIT_FSIZE, &old_), 0);
    struct rlimit tight = old_;
    tight.rlim_cur = static_cast<rlim_t>(largest + 64 * 1024);
    signal(SIGXFSZ, SIG_IGN);
    EXPECT_EQ(setrlimit(RLIMIT_FSIZE, &tight), 0);
  }
  ~FileSizeLimit() { EXPECT_EQ(setrlimit(RLIMIT_FSIZE, &old_), 0); }

 private:
  struct rlimit old_ {};
};

class GroupCommitTest : public ::testing::Test {
 protected:
  void SetUp() override {
    db_ = fs::temp_directory_path() /
          ("sift-group-" + std::to_string(getpid()) + "-" +
           ::testing::UnitTest::GetInstance()->current_test_info()->name() + ".db");
    Cleanup();
    store_ = OpenSqliteStore(db_.string());
  }
  void TearDown() override {
    store_.reset();
    Cleanup();
  }
  void Cleanup() {
    for (const char* s : {"", "-wal", "-shm"}) fs::remove(db_.string() + s);
  }
  // What another process would find in the file: committed rows only.
  size_t CommittedReports() { return OpenSqliteStoreReadOnly(db_.string())->ListReports(1).size(); }

  fs::path db_;
  std::unique_ptr<Store> store_;
};

TEST_F(GroupCommitTest, ConcurrentWritesAreAllCommittedWhenAnswered) {
  GroupCommit commit(*store_);
  constexpr int kThreads = 8, kEach = 150;
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < kEach; ++i) {
        const ReportRecord r = Report("L-" + std::to_string(t), i + 1);
        commit.Run([&] { store_->InsertReport(r); });
        // Answered: another connection must already see it.
        EXPECT_TRUE(OpenSqliteStoreReadOnly(db_.string())->FindReport(r.lease_id, r.seq))
            << r.lease_id << " " << r.seq;
      }
    });
  }
  for (auto& t : threads) t.join();
  EXPECT_EQ(CommittedReports(), size_t{kThreads * kEach});
  EXPECT_EQ(commit.writes(), kThreads * kEach);
  EXPECT_LE(commit.batches(), commit.writes());
}

TEST_F(GroupCommitTest, WritesQueuedDuringACommitShareTheNextTransaction) {
  GroupCommit commit(*store_);
  Gate gate;
  auto first = gate.Hold(commit);
  std::vector<std::shared_future<void>> waiting;
  for (int i = 1; i <= 50; ++i) {
    waiting.push_back(commit.Submit([this, i] { store_->InsertReport(Report("L", i)); }));
  }
  EXPECT_EQ(CommittedReports(), 0u);
  gate.open.set_value();
  first.get();
  for (auto& w : waiting) w.get();
  EXPECT_EQ(commit.batches(), 2);  // the gate's, then all 50 in one transaction
  EXPECT_EQ(CommittedReports(), 50u);
}

// Regression: a read-only `sift report` logged "group commit: 1 writes" (the Coordinator's
// closing flush was an empty write).
TEST_F(GroupCommitTest, ADrainWaitsForQueuedWritesAndIsNoWriteItself) {
  GroupCommit commit(*store_);
  commit.Drain();
  EXPECT_EQ(commit.writes(), 0);
  EXPECT_EQ(commit.batches(), 0);
  Gate gate;
  auto first = gate.Hold(commit);
  auto queued = commit.Submit([this] { store_->InsertReport(Report("L", 1)); });
  std::thread opener([&] { gate.open.set_value(); });
  commit.Drain();  // returns only after the write queued before it
  EXPECT_EQ(queued.wait_for(std::chrono::seconds(0)), std::future_status::ready);
  EXPECT_EQ(CommittedReports(), 1u);
  EXPECT_EQ(commit.writes(), 2);  // the gate's and the report
  opener.join();
  first.get();
}

TEST_F(GroupCommitTest, AWriteThatThrowsFailsAloneAndTheOthersCommit) {
  store_->InsertReport(Report("L", 7));
  GroupCommit commit(*store_);
  Gate gate;
  gate.Hold(commit);
  auto before = commit.Submit([this] { store_->InsertReport(Report("L", 1)); });
  auto duplicate = commit.Submit([this] { store_->InsertReport(Report("L", 7)); });
  auto after = commit.Submit([this] { store_->InsertReport(Report("L", 2)); });
  gate.open.set_value();
  EXPECT_NO_THROW(before.get());
  EXPECT_THROW(duplicate.get(), std::exception);  // UNIQUE(lease_id, seq)
  EXPECT_NO_THROW(after.get());
  EXPECT_EQ(CommittedReports(), 3u);
}

TEST_F(GroupCommitTest, AFailingCommitAnswersEveryWaiterWithAnErrorAndKeepsNone) {
  store_->InsertReport(Report("L-before", 1));
  GroupCommit commit(*store_);
  Gate gate;
  gate.Hold(commit);
  std::vector<std::shared_future<void>> waiting;
  for (int i = 1; i <= 20; ++i) {
    waiting.push_back(commit.Submit([this, i] {
      store_->InsertReport(Report("L-big", i, 200 * 1024));  // 4 MB in all: new WAL frames
    }));
  }
  int failed = 0;
  {
    FileSizeLimit limit(db_);
    gate.open.set_value();
    for (auto& w : waiting) {
      try {
        w.get();
      } catch (const std::exception&) {
        ++failed;
      }
    }
  }
  EXPECT_EQ(failed, 20);
  EXPECT_EQ(CommittedReports(), 1u);
  // The disk has room again: the same writer commits.
  commit.Run([this] { store_->InsertReport(Report("L-after", 1)); });
  EXPECT_EQ(CommittedReports(), 2u);
}

TEST_F(GroupCommitTest, ACallbackIsCalledOnceAfterItsWriteCommittedInTheOrderSubmitted) {
  GroupCommit commit(*store_);
  Gate gate;
  gate.Hold(commit);
  std::mutex mu;
  std::vector<int> called;           // by the writer, in its order
  std::vector<bool> committed_then;  // whether another connection saw the row at the call
  std::vector<std::shared_future<void>> futures(5);
  for (int i = 1; i <= 5; ++i) {
    futures[i - 1] = commit.Submit(
        [this, i] { store_->InsertReport(Report("L", i)); },
        [&, i](std::exception_ptr error) {
          EXPECT_EQ(error, nullptr);
          EXPECT_EQ(futures[i - 1].wait_for(std::chrono::seconds(0)), std::future_status::ready);
          const bool seen = OpenSqliteStoreReadOnly(db_.string())->FindReport("L", i).has_value();
          std::lock_guard<std::mutex> lock(mu);
          called.push_back(i);
          committed_then.push_back(seen);
        });
  }
  std::this_thread::sleep_for(std::chrono::milliseconds(50));
  {
    std::lock_guard<std::mutex> lock(mu);
    EXPECT_TRUE(called.empty());  // not before the commit
  }
  gate.open.set_value();
  commit.Run([] {});  // answered after every write submitted before it, callbacks included
  std::lock_guard<std::mutex> lock(mu);
  EXPECT_EQ(called, (std::vector<int>{1, 2, 3, 4, 5}));
  EXPECT_EQ(committed_then, std::vector<bool>(5, true));
  EXPECT_EQ(CommittedReports(), 5u);
}

TEST_F(GroupCommitTest, ACallbackGetsWhatFailedItsWriteOrItsCommit) {
  store_->InsertReport(Report("L", 7));
  GroupCommit commit(*store_);
  std::atomic<int> ok{0}, failed{0};
  auto count = [&](std::exception_ptr error) { ++(error ? failed : ok); };
  Gate gate;
  gate.Hold(commit);
  commit.Submit([this] { store_->InsertReport(Report("L", 1)); }, count);
  auto duplicate = commit.Submit([this] { store_->InsertReport(Report("L", 7)); },
                                 [&](std::exception_ptr error) {
                                   ASSERT_NE(error, nullptr);  // UNIQUE(lease_id, seq)
                                   EXPECT_THROW(std::rethrow_exception(error), std::exception);
                                   ++failed;
                                 });
  gate.open.set_value();
  commit.Run([] {});
  EXPECT_THROW(duplicate.get(), std::exception);
  EXPECT_EQ(ok.load(), 1);
  EXPECT_EQ(failed.load(), 1);

  // A commit that fails (the file may not grow): every callback of the batch hears it, once.
  Gate full;
  full.Hold(commit);
  for (int i = 1; i <= 20; ++i) {
    commit.Submit([this, i] { store_->InsertReport(Report("L-big", i, 200 * 1024)); }, count);
  }
  {
    FileSizeLimit limit(db_);
    full.open.set_value();
    try {
      commit.Run([] {});
    } catch (const std::exception&) {  // the empty write may share the failed transaction
    }
  }
  EXPECT_EQ(ok.load(), 1);
  EXPECT_EQ(failed.load(), 21);
  EXPECT_EQ(CommittedReports(), 2u);
}

// Makes the writer's last transaction carry `n` writes (the gate's own transaction, then the
// `n` queued behind it), and waits until they are committed.
void LastBatchCarries(GroupCommit& commit, Store& store, int n) {
  Gate gate;
  auto held = gate.Hold(commit);
  std::vector<std::shared_future<void>> queued;
  for (int i = 1; i <= n; ++i) {
    queued.push_back(commit.Submit([&store, i] { store.InsertReport(Report("L-warm", i)); }));
  }
  gate.open.set_value();
  held.get();
  for (auto& q : queued) q.get();
}

bool Ready(const std::shared_future<void>& f, std::chrono::milliseconds within) {
  return f.wait_for(within) == std::future_status::ready;
}

TEST_F(GroupCommitTest, ASubmitWaitsForAsManyWritesAsTheLastTransactionCarried) {
  GroupCommit commit(*store_, std::chrono::seconds(60), std::chrono::seconds(60));
  LastBatchCarries(commit, *store_, 3);
  const int64_t before = commit.batches();
  auto a = commit.Submit([this] { store_->InsertReport(Report("L", 1)); });
  auto b = commit.Submit([this] { store_->InsertReport(Report("L", 2)); });
  EXPECT_FALSE(Ready(a, std::chrono::milliseconds(100)));  // two of the three callers back
  auto c = commit.Submit([this] { store_->InsertReport(Report("L", 3)); });
  EXPECT_TRUE(Ready(a, std::chrono::seconds(30)));  // the third: the batch goes, long before 60 s
  b.get();
  c.get();
  EXPECT_EQ(commit.batches(), before + 1);  // one transaction for the three
  EXPECT_EQ(CommittedReports(), 6u);
}

TEST_F(GroupCommitTest, ABatchThatDoesNotFillGoesAfterTheDelay) {
  GroupCommit commit(*store_, std::chrono::milliseconds(50), std::chrono::seconds(60));
  LastBatchCarries(commit, *store_, 3);
  auto alone = commit.Submit([this] { store_->InsertReport(Report("L", 1)); });
  EXPECT_TRUE(Ready(alone, std::chrono::seconds(30)));
  EXPECT_NO_THROW(alone.get());
  EXPECT_EQ(CommittedReports(), 4u);
}

TEST_F(GroupCommitTest, ABatchThatStopsFillingGoesWithoutWaitingOutTheDelay) {
  // Writes stop coming (the other callers are still deciding): the writer waited out the whole
  // max_delay before, idle.
  GroupCommit commit(*store_, std::chrono::seconds(60), std::chrono::milliseconds(200));
  LastBatchCarries(commit, *store_, 3);
  const int64_t before = commit.batches();
  auto a = commit.Submit([this] { store_->InsertReport(Report("L", 1)); });
  auto b = commit.Submit([this] { store_->InsertReport(Report("L", 2)); });
  EXPECT_TRUE(Ready(a, std::chrono::seconds(30)));  // long before 60 s
  EXPECT_TRUE(Ready(b, std::chrono::seconds(30)));  // (answered right after a)
  EXPECT_EQ(commit.batches(), before + 1);          // the two that came, together
  EXPECT_EQ(CommittedReports(), 5u);
}

TEST_F(GroupCommitTest, RunIsNotDelayedAndTakesTheWaitingWritesWithIt) {
  // Run is what callers use under their own lock: a delay there would stall everyone behind it.
  GroupCommit commit(*store_, std::chrono::seconds(60), std::chrono::seconds(60));
  LastBatchCarries(commit, *store_, 5);
  const int64_t before = commit.batches();
  auto waiting = commit.Submit([this] { store_->InsertReport(Report("L", 1)); });
  EXPECT_FALSE(Ready(waiting, std::chrono::milliseconds(50)));
  commit.Run([this] { store_->InsertReport(Report("L", 2)); });
  EXPECT_TRUE(Ready(waiting, std::chrono::seconds(0)));
  EXPECT_EQ(commit.batches(), before + 1);
  EXPECT_EQ(CommittedReports(), 7u);
}

TEST_F(GroupCommitTest, StoppingCommitsAWriteThatWaitsForItsBatch) {
  std::shared_future<void> waiting;
  {
    GroupCommit commit(*store_, std::chrono::seconds(60), std::chrono::seconds(60));
    LastBatchCarries(commit, *store_, 3);
    waiting = commit.Submit([this] { store_->InsertReport(Report("L", 1)); });
  }
  EXPECT_TRUE(Ready(waiting, std::chrono::seconds(0)));
  EXPECT_EQ(CommittedReports(), 4u);
}

}  // namespace group_commit_test
}  // namespace sift::coordinator
