// Copies a SQLite database's write-ahead log back into the database (a checkpoint) mostly on a
// thread and connection of its own, so that the connection that commits (the group commit's
// writer, the one thread every report waits for) does little of it. SQLite would run the whole
// checkpoint inside the commit that fills the log (wal_autocheckpoint, 1,000 pages): the pages
// it copies and two fsyncs, 7-25 ms here during which every report waits, the tail of the
// report latency at 64 workers.
//
// A passive checkpoint on the thread copies what was committed when it started, beside the
// writer's next transactions (it takes no lock a writer needs). But the log starts over from
// its beginning only at a write that finds all of it copied, which a thread racing a writer
// that never pauses never achieves (the log grew to 82 MB so). So once the thread has caught up
// to within `catch_up_pages`, the committing connection copies that short rest itself, and its
// next transaction starts the log over. (A writer faster than the thread's copying: it copies
// the rest once a round of the thread's left more than the round before.)
#pragma once

#include <sqlite3.h>

#include <memory>
#include <mutex>
#include <string>

#include "coordinator/store/task_thread.h"

namespace sift::coordinator {

class WalCheckpointer {
 public:
  static constexpr int kPages = 1000;        // SQLite's wal_autocheckpoint default
  static constexpr int kCatchUpPages = 200;  // about 1-2 ms of copying and fsyncs here

  // `writer`: the committing connection, in WAL mode; `path`: its file, opened again here.
  // Takes over `writer`'s WAL hook (which also turns its automatic checkpoints off).
  WalCheckpointer(sqlite3* writer, const std::string& path, int pages = kPages,
                  int catch_up_pages = kCatchUpPages);
  // Stops the thread, closes its connection and gives the writer its automatic checkpoints back.
  ~WalCheckpointer();
  WalCheckpointer(const WalCheckpointer&) = delete;
  WalCheckpointer& operator=(const WalCheckpointer&) = delete;

  // Checkpoints run on the thread, and by the writer (its catch-ups), so far.
  int background() const;
  int inline_ones() const;

 private:
  static int OnCommit(void* self, sqlite3* db, const char* name, int pages);
  void Round();  // one checkpoint on the thread

  sqlite3* const writer_;
  const int pages_, catch_up_pages_;
  sqlite3* own_ = nullptr;
  mutable std::mutex mu_;
  bool running_ = false;  // a round is posted or running
  bool ran_ = false;      // the thread finished a round the writer has not followed up yet
  int copied_ = 0;        // frames of the log copied when it finished
  int rest_ = 0;          // frames left to copy when the thread last went
  int background_ = 0, inline_ = 0;
  std::unique_ptr<TaskThread> thread_;  // where the rounds run; made once the above exist
};

}  // namespace sift::coordinator
