#include "common/posix_fs.h"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <fstream>
#include <string>

namespace sift::common {
namespace posix_fs_test {

bool Exists(const std::string& path) {
  struct stat st;
  return ::lstat(path.c_str(), &st) == 0;
}

void Touch(const std::string& path) { std::ofstream(path) << "x"; }

class PosixFsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string tmpl = "/tmp/sift-posix-fs-XXXXXX";
    ASSERT_NE(::mkdtemp(tmpl.data()), nullptr);
    root_ = tmpl;
  }
  void TearDown() override {
    ::chmod(root_.c_str(), 0700);
    EXPECT_EQ(RemoveAll(root_), "");
  }
  std::string root_;
};

TEST_F(PosixFsTest, RemoveAllTakesNestedDirectoriesAndFiles) {
  ASSERT_EQ(CreateDirectories(root_ + "/a/b/c"), "");
  Touch(root_ + "/a/f");
  Touch(root_ + "/a/b/c/g");
  ASSERT_EQ(CreateDirectories(root_ + "/a/empty"), "");
  EXPECT_EQ(RemoveAll(root_ + "/a"), "");
  EXPECT_FALSE(Exists(root_ + "/a"));
  EXPECT_TRUE(Exists(root_));
}

TEST_F(PosixFsTest, RemoveAllRemovesLinksWithoutFollowingThem) {
  ASSERT_EQ(CreateDirectories(root_ + "/outside"), "");
  Touch(root_ + "/outside/keep");
  ASSERT_EQ(CreateDirectories(root_ + "/tree"), "");
  ASSERT_EQ(::symlink((root_ + "/outside").c_str(), (root_ + "/tree/link").c_str()), 0);
  ASSERT_EQ(::symlink((root_ + "/outside").c_str(), (root_ + "/top-link").c_str()), 0);
  EXPECT_EQ(RemoveAll(root_ + "/tree"), "");
  EXPECT_EQ(RemoveAll(root_ + "/top-link"), "");  // the link itself, not the folder it names
  EXPECT_FALSE(Exists(root_ + "/tree"));
  EXPECT_FALSE(Exists(root_ + "/top-link"));
  EXPECT_TRUE(Exists(root_ + "/outside/keep"));
}

TEST_F(PosixFsTest, MissingPathsAreNothingToRemove) {
  EXPECT_EQ(RemoveAll(root_ + "/missing"), "");
  EXPECT_EQ(Remove(root_ + "/missing"), "");
  Touch(root_ + "/file");
  EXPECT_EQ(RemoveAll(root_ + "/file"), "");  // a plain file is removed too
  EXPECT_FALSE(Exists(root_ + "/file"));
}

TEST_F(PosixFsTest, RemoveNamesTheDirectoryThatIsNotEmpty) {
  ASSERT_EQ(CreateDirectories(root_ + "/d"), "");
  Touch(root_ + "/d/f");
  const std::string error = Remove(root_ + "/d");
  EXPECT_NE(error.find("rmdir " + root_ + "/d:"), std::string::npos) << error;
  EXPECT_TRUE(Exists(root_ + "/d/f"));
}

// Runs as root too (where permissions do not stop a removal): a file where a folder should be.
TEST_F(PosixFsTest, RemovalsNameThePathTheyCouldNotLookAt) {
  Touch(root_ + "/file");
  const std::string all = RemoveAll(root_ + "/file/sub");
  EXPECT_EQ(all, "lstat " + root_ + "/file/sub: Not a directory");
  EXPECT_EQ(Remove(root_ + "/file/sub"), all);
  EXPECT_TRUE(Exists(root_ + "/file"));
}

TEST_F(PosixFsTest, RemoveAllNamesWhatItCouldNotRemove) {
  if (::geteuid() == 0) GTEST_SKIP() << "root ignores directory permissions";
  ASSERT_EQ(CreateDirectories(root_ + "/locked/inner"), "");
  Touch(root_ + "/locked/inner/f");
  ASSERT_EQ(::chmod((root_ + "/locked/inner").c_str(), 0500), 0);  // entries cannot be unlinked
  const std::string error = RemoveAll(root_ + "/locked");
  EXPECT_NE(error.find("unlink " + root_ + "/locked/inner/f:"), std::string::npos) << error;
  ASSERT_EQ(::chmod((root_ + "/locked/inner").c_str(), 0700), 0);
}

TEST_F(PosixFsTest, CreateDirectoriesIsIdempotentAndRefusesAFileInTheWay) {
  EXPECT_EQ(CreateDirectories(root_ + "/x/y/z/"), "");
  EXPECT_EQ(CreateDirectories(root_ + "/x/y/z"), "");
  struct stat st;
  ASSERT_EQ(::stat((root_ + "/x/y/z").c_str(), &st), 0);
  EXPECT_TRUE(S_ISDIR(st.st_mode));
  Touch(root_ + "/file");
  const std::string error = CreateDirectories(root_ + "/file/sub");
  EXPECT_NE(error.find(root_ + "/file"), std::string::npos) << error;
  EXPECT_EQ(CreateDirectories(""), "mkdir: empty path");
}

TEST_F(PosixFsTest, RenameReplacesAndNamesBothPathsOnFailure) {
  Touch(root_ + "/a");
  std::ofstream(root_ + "/b") << "old";
  EXPECT_EQ(Rename(root_ + "/a", root_ + "/b"), "");
  EXPECT_FALSE(Exists(root_ + "/a"));
  std::string content;
  std::ifstream(root_ + "/b") >> content;
  EXPECT_EQ(content, "x");
  const std::string error = Rename(root_ + "/missing", root_ + "/c");
  EXPECT_NE(error.find("rename " + root_ + "/missing -> " + root_ + "/c:"), std::string::npos)
      << error;
}

}  // namespace posix_fs_test
}  // namespace sift::common
