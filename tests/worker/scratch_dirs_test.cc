// The sweep of scratch folders that killed workers leave under the temp directory
// (worker/scratch_dirs.h): only a gone process's folders, only once they are idle, never a
// look-alike name, a file or a link.
#include "worker/scratch_dirs.h"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <csignal>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>

#include "common/posix_fs.h"

namespace sift::worker {
namespace scratch_dirs_test {

namespace fs = std::filesystem;

// A pid whose process has ended and been reaped.
pid_t DeadPid() {
  const pid_t pid = fork();
  if (pid == 0) _exit(0);
  int status = 0;
  waitpid(pid, &status, 0);
  return pid;
}

class ScratchDirsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string t = (fs::temp_directory_path() / "sift-scratch-test-XXXXXX").string();
    ASSERT_NE(mkdtemp(t.data()), nullptr);
    dir_ = t;
  }
  void TearDown() override {
    if (live_ > 0) {
      kill(live_, SIGKILL);
      waitpid(live_, nullptr, 0);
    }
    common::RemoveAll(dir_);
  }
  // A folder with one file in it, last changed `age` seconds ago.
  std::string Folder(const std::string& name, int age = 3600) {
    const std::string path = dir_ + "/" + name;
    fs::create_directories(path);
    std::ofstream(path + "/trial-5-e2.ckpt.tmp") << "partial";
    const auto then = fs::file_time_type::clock::now() - std::chrono::seconds(age);
    fs::last_write_time(path, then);
    return path;
  }
  std::string dir_;
  pid_t live_ = 0;
};

TEST_F(ScratchDirsTest, RemovesOnlyIdleFoldersOfProcessesThatAreGone) {
  const std::string dead = std::to_string(DeadPid());
  live_ = fork();
  if (live_ == 0) {
    pause();
    _exit(0);
  }
  const std::string live = std::to_string(live_), self = std::to_string(getpid());
  const std::string gone_old = Folder("sift-worker-" + dead);
  const std::string gone_numbered = Folder("sift-worker-" + dead + "-3");
  const std::string gone_recent = Folder("sift-worker-" + dead + "-4", 5);
  const std::string running = Folder("sift-worker-" + live);
  const std::string mine = Folder("sift-worker-" + self + "-0");
  const std::string other_kind = Folder("sift-worker-client-" + dead + "-Test");
  const std::string other_prefix = Folder("sift-command-" + dead + "-0-study-1-trial-2");
  std::ofstream(dir_ + "/sift-worker-" + dead + "9") << "a file, not a folder";
  fs::create_directory_symlink(other_prefix, dir_ + "/sift-worker-" + dead + "-7");

  // Another user's, where this test may hand one over (as root).
  const std::string others = Folder("sift-worker-" + dead + "-8");
  const bool handed = geteuid() == 0 && chown(others.c_str(), 65534, 65534) == 0;

  EXPECT_EQ(SweepDeadScratch(dir_, "sift-worker-", 600), handed ? 2 : 3);
  if (handed) {
    EXPECT_TRUE(fs::exists(others + "/trial-5-e2.ckpt.tmp")) << "another user's";
  }
  EXPECT_FALSE(fs::exists(gone_old));
  EXPECT_FALSE(fs::exists(gone_numbered));
  EXPECT_TRUE(fs::exists(gone_recent + "/trial-5-e2.ckpt.tmp")) << "changed 5 s ago";
  EXPECT_TRUE(fs::exists(running + "/trial-5-e2.ckpt.tmp")) << "its process runs";
  EXPECT_TRUE(fs::exists(mine + "/trial-5-e2.ckpt.tmp")) << "this process's own";
  EXPECT_TRUE(fs::exists(other_kind + "/trial-5-e2.ckpt.tmp")) << "not <prefix><pid>";
  EXPECT_TRUE(fs::exists(dir_ + "/sift-worker-" + dead + "9"));
  EXPECT_TRUE(fs::is_symlink(dir_ + "/sift-worker-" + dead + "-7"));
  EXPECT_TRUE(fs::exists(other_prefix + "/trial-5-e2.ckpt.tmp")) << "behind a link: not followed";

  // The command runner's folders, by their own prefix.
  EXPECT_EQ(SweepDeadScratch(dir_, "sift-command-", 600), 1);
  EXPECT_FALSE(fs::exists(other_prefix));
  // A missing folder to sweep is nothing to do.
  EXPECT_EQ(SweepDeadScratch(dir_ + "/missing", "sift-worker-", 0), 0);
}

TEST_F(ScratchDirsTest, EachPathIsNewAndNamesThisProcess) {
  const std::string a = ScratchPath("sift-worker-"), b = ScratchPath("sift-worker-");
  const std::string c = ScratchPath("sift-command-", "-study-1-trial-2");
  EXPECT_NE(a, b);
  const std::string pid = std::to_string(getpid());
  EXPECT_EQ(fs::path(a).filename().string().rfind("sift-worker-" + pid + "-", 0), 0u) << a;
  EXPECT_EQ(fs::path(a).parent_path(), fs::temp_directory_path());
  EXPECT_NE(c.find("sift-command-" + pid + "-"), std::string::npos) << c;
  EXPECT_EQ(c.substr(c.size() - 16), "-study-1-trial-2");
  EXPECT_FALSE(fs::exists(a));
}

}  // namespace scratch_dirs_test
}  // namespace sift::worker
