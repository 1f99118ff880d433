// The credentials file and token files: what is accepted, and errors that name file and line.
#include "common/credentials.h"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

namespace sift::common {
namespace credentials_test {

std::string Write(const std::string& name, const std::string& text) {
  const auto path = std::filesystem::temp_directory_path() /
                    ("sift-creds-" + std::to_string(getpid()) + "-" + name);
  std::ofstream(path) << text;
  chmod(path.c_str(), 0600);
  return path.string();
}

TEST(Credentials, FileGivesEachTokenItsRole) {
  Credentials c;
  const std::string path = Write("ok",
                                 "# sift credentials\n"
                                 "worker  aaaaaaaaaaaaaaaaaaaa  # the fleet\n"
                                 "\n"
                                 "user    bbbbbbbbbbbbbbbbbbbb\n"
                                 "viewer  cccccccccccccccccccc\n"
                                 "viewer  dddddddddddddddddddd\n");
  ASSERT_EQ(c.LoadFile(path), "");
  EXPECT_EQ(c.Find("aaaaaaaaaaaaaaaaaaaa"), Role::kWorker);
  EXPECT_EQ(c.Find("bbbbbbbbbbbbbbbbbbbb"), Role::kUser);
  EXPECT_EQ(c.Find("dddddddddddddddddddd"), Role::kViewer);
  EXPECT_EQ(c.Find("aaaaaaaaaaaaaaaaaaa"), std::nullopt);  // a prefix is not the token
  EXPECT_EQ(c.Find(""), std::nullopt);
  std::filesystem::remove(path);
}

TEST(Credentials, BadLinesAreNamedWithFileAndLine) {
  const struct {
    const char* text;
    const char* error;
  } cases[] = {
      {"worker aaaaaaaaaaaaaaaaaaaa\nadmin bbbbbbbbbbbbbbbbbbbb\n", ":2: unknown role 'admin'"},
      {"user short\n", ":1: token too short"},
      {"user\n", ":1: expected 'ROLE TOKEN'"},
      {"user aaaaaaaaaaaaaaaaaaaa extra\n", ":1: expected 'ROLE TOKEN'"},
      {"user aaaaaaaaaaaaaaaaaaaa\nworker aaaaaaaaaaaaaaaaaaaa\n",
       ":2: this token is already given to the user role"},
      {"# nothing\n", "no credentials"},
  };
  for (const auto& c : cases) {
    Credentials creds;
    const std::string path = Write("bad", c.text);
    const std::string error = creds.LoadFile(path);
    EXPECT_NE(error.find(path), std::string::npos) << error;
    EXPECT_NE(error.find(c.error), std::string::npos) << c.text << " -> " << error;
    std::filesystem::remove(path);
  }
  Credentials missing;
  EXPECT_NE(missing.LoadFile("/nonexistent/creds").find("/nonexistent/creds: cannot read"),
            std::string::npos);
}

TEST(Credentials, TokenFileIsItsFirstLineTrimmed) {
  std::string token;
  const std::string path = Write("token", "  0123456789abcdef0123  \nignored\n");
  ASSERT_EQ(ReadTokenFile(path, &token), "");
  EXPECT_EQ(token, "0123456789abcdef0123");
  const std::string empty = Write("empty", "\n");
  EXPECT_NE(ReadTokenFile(empty, &token).find("empty"), std::string::npos);
  std::filesystem::remove(path);
  std::filesystem::remove(empty);
}

TEST(Credentials, RandomTokensAreLongAndDistinct) {
  const std::string a = RandomToken(), b = RandomToken();
  EXPECT_EQ(a.size(), 64u);
  EXPECT_NE(a, b);
  Credentials c;
  EXPECT_EQ(c.Add(Role::kWorker, a, "test"), "");
}

}  // namespace credentials_test
}  // namespace sift::common
