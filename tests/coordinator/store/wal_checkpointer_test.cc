// Checkpoints beside a writer that never pauses, on a real SQLite file: the thread does the
// copying, the writer only the short rest, and the log starts over (a checkpointer on its own
// never let it: it grew with every write).
#include "coordinator/store/wal_checkpointer.h"

#include <gtest/gtest.h>
#include <sqlite3.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>

namespace sift::coordinator {
namespace wal_checkpointer_test {

namespace fs = std::filesystem;

class WalCheckpointerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    path_ = fs::temp_directory_path() / ("sift-wal-" + std::to_string(getpid()) + ".db");
    Cleanup();
    ASSERT_EQ(sqlite3_open(path_.c_str(), &db_), SQLITE_OK);
    Exec("PRAGMA journal_mode=WAL");
    Exec("PRAGMA synchronous=NORMAL");
    Exec("CREATE TABLE rows(id INTEGER PRIMARY KEY, body BLOB)");
  }
  void TearDown() override {
    sqlite3_close(db_);
    Cleanup();
  }
  void Cleanup() {
    for (const char* s : {"", "-wal", "-shm"}) fs::remove(path_.string() + s);
  }
  void Exec(const std::string& sql) {
    char* error = nullptr;
    ASSERT_EQ(sqlite3_exec(db_, sql.c_str(), nullptr, nullptr, &error), SQLITE_OK)
        << sql << ": " << (error ? error : "");
  }
  int64_t Count() {
    sqlite3_stmt* q = nullptr;
    EXPECT_EQ(sqlite3_prepare_v2(db_, "SELECT count(*) FROM rows", -1, &q, nullptr), SQLITE_OK);
    EXPECT_EQ(sqlite3_step(q), SQLITE_ROW);
    const int64_t n = sqlite3_column_int64(q, 0);
    sqlite3_finalize(q);
    return n;
  }

  // The checkpoint sequence number in the log's header: how often the log started over.
  int LogRestarts() {
    std::ifstream wal(path_.string() + "-wal", std::ios::binary);
    unsigned char header[16] = {};
    wal.read(reinterpret_cast<char*>(header), sizeof(header));
    EXPECT_TRUE(wal) << "no log header";
    return header[12] << 24 | header[13] << 16 | header[14] << 8 | header[15];
  }

  fs::path path_;
  sqlite3* db_ = nullptr;
};

TEST_F(WalCheckpointerTest, TheThreadCopiesTheLogAndItStartsOverUnderWritesThatNeverPause) {
  constexpr int kTransactions = 3000;
  int inline_ones = 0, background = 0;
  {
    WalCheckpointer checkpointer(db_, path_.string(), /*pages=*/50, /*catch_up_pages=*/20);
    for (int i = 0; i < kTransactions; ++i) {  // each about two 4 KiB pages of log
      Exec("INSERT INTO rows(body) VALUES(zeroblob(3000))");
    }
    background = checkpointer.background();
    inline_ones = checkpointer.inline_ones();
  }
  EXPECT_GT(background, 0);
  EXPECT_GT(inline_ones, 0);
  // The writer copied only what the thread left, after one of its rounds: never a checkpoint
  // without the thread's first.
  EXPECT_LE(inline_ones, background);
  // Every catch-up copied the whole log, so the next write started it over (the log's header
  // counts restarts); a thread on its own never got there.
  EXPECT_GE(LogRestarts(), inline_ones - 1);
  EXPECT_EQ(Count(), kTransactions);
}

TEST_F(WalCheckpointerTest, ALogUnderTheThresholdIsLeftAlone) {
  WalCheckpointer checkpointer(db_, path_.string(), /*pages=*/100000);
  for (int i = 0; i < 50; ++i) Exec("INSERT INTO rows(body) VALUES(zeroblob(3000))");
  EXPECT_EQ(checkpointer.background(), 0);
  EXPECT_EQ(checkpointer.inline_ones(), 0);
  EXPECT_EQ(Count(), 50);
}

TEST_F(WalCheckpointerTest, AFileThatCannotBeOpenedAgainIsAClearError) {
  try {
    WalCheckpointer checkpointer(db_, (path_.parent_path() / "no-such-dir" / "x.db").string());
    FAIL() << "expected an error";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("cannot open it for checkpoints"), std::string::npos)
        << e.what();
  }
}

}  // namespace wal_checkpointer_test
}  // namespace sift::coordinator
