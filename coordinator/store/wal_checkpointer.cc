#include "coordinator/store/wal_checkpointer.h"

#include <spdlog/spdlog.h>

#include <stdexcept>

namespace sift::coordinator {

WalCheckpointer::WalCheckpointer(sqlite3* writer, const std::string& path, int pages,
                                 int catch_up_pages)
    : writer_(writer), pages_(pages), catch_up_pages_(catch_up_pages) {
  if (sqlite3_open_v2(path.c_str(), &own_, SQLITE_OPEN_READWRITE, nullptr) != SQLITE_OK) {
    const std::string why = own_ ? sqlite3_errmsg(own_) : "out of memory";
    sqlite3_close(own_);
    throw std::runtime_error(path + ": cannot open it for checkpoints: " + why);
  }
  sqlite3_busy_timeout(own_, 5000);
  // A connection learns that its file is in WAL mode at its first read; until then a
  // checkpoint finds no log and copies nothing.
  if (sqlite3_exec(own_, "SELECT count(*) FROM sqlite_master", nullptr, nullptr, nullptr) !=
      SQLITE_OK) {
    const std::string why = sqlite3_errmsg(own_);
    sqlite3_close(own_);
    throw std::runtime_error(path + ": cannot read it for checkpoints: " + why);
  }
  thread_ = std::make_unique<TaskThread>("sift-checkpoint");  // for top -H and perf
  sqlite3_wal_hook(writer_, &WalCheckpointer::OnCommit, this);
}

WalCheckpointer::~WalCheckpointer() {
  sqlite3_wal_autocheckpoint(writer_, pages_);  // SQLite's own hook back: nothing more is posted
  thread_.reset();                              // a round already posted runs first
  sqlite3_close(own_);
  if (background_ + inline_ > 0) {
    spdlog::info("database checkpoints: {} on their own thread, {} by the writer", background_,
                 inline_);
  }
}

int WalCheckpointer::background() const {
  std::lock_guard<std::mutex> lock(mu_);
  return background_;
}

int WalCheckpointer::inline_ones() const {
  std::lock_guard<std::mutex> lock(mu_);
  return inline_;
}

// On the writer, inside its COMMIT (the transaction is committed whatever this returns), with
// `pages` frames in the log.
int WalCheckpointer::OnCommit(void* self, sqlite3* db, const char* name, int pages) {
  auto* c = static_cast<WalCheckpointer*>(self);
  {
    std::lock_guard<std::mutex> lock(c->mu_);
    if (pages < c->pages_) {
      if (!c->running_) c->ran_ = false;  // the log started over: what the thread copied is gone
      return SQLITE_OK;
    }
    if (c->running_) return SQLITE_OK;
    // The thread goes (again) unless it came close, or its last round left more than the one
    // before (a writer faster than the copying: waiting would only let the log grow).
    const int rest = c->ran_ ? pages - c->copied_ : pages;
    if (rest > c->catch_up_pages_ && (!c->ran_ || rest < c->rest_)) {
      c->ran_ = false;
      c->rest_ = rest;
      c->running_ = true;
      c->thread_->Post([c] { c->Round(); });
      return SQLITE_OK;
    }
    c->ran_ = false;
    c->rest_ = 0;
    ++c->inline_;
  }
  // The rest (or all of it, should the thread not have kept up), as SQLite's own hook would.
  sqlite3_wal_checkpoint_v2(db, name, SQLITE_CHECKPOINT_PASSIVE, nullptr, nullptr);
  return SQLITE_OK;
}

void WalCheckpointer::Round() {
  int log = 0, copied = 0;
  const int rc = sqlite3_wal_checkpoint_v2(own_, nullptr, SQLITE_CHECKPOINT_PASSIVE, &log, &copied);
  // Either way the writer's next checkpoint is then inline, all of it. BUSY: another
  // connection (another process on the file) was checkpointing.
  if (rc == SQLITE_BUSY) {
    spdlog::debug("database checkpoint on its own thread: another one was running");
  } else if (rc != SQLITE_OK) {
    spdlog::warn("database checkpoint on its own thread failed: {}", sqlite3_errstr(rc));
  }
  std::lock_guard<std::mutex> lock(mu_);
  running_ = false;
  ran_ = true;
  copied_ = rc == SQLITE_OK ? copied : 0;  // a failed round: the writer copies all of it
  ++background_;
}

}  // namespace sift::coordinator
