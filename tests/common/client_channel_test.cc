// Who a client says it is (x-sift-user): $USER, else the passwd name, from any thread.
#include "common/client_channel.h"

#include <gtest/gtest.h>
#include <pwd.h>
#include <unistd.h>

#include <cstdlib>
#include <string>
#include <thread>
#include <vector>

namespace sift::common {
namespace client_channel_test {

// Restores $USER when the test ends.
class UserEnv {
 public:
  UserEnv() {
    if (const char* u = getenv("USER")) {
      saved_ = u;
      had_ = true;
    }
  }
  ~UserEnv() {
    if (had_) {
      setenv("USER", saved_.c_str(), 1);
    } else {
      unsetenv("USER");
    }
  }

 private:
  std::string saved_;
  bool had_ = false;
};

TEST(CurrentUser, FollowsUserThenThePasswdNameFromManyThreadsAtOnce) {
  UserEnv restore;
  setenv("USER", "alice", 1);
  EXPECT_EQ(CurrentUser(), "alice");

  unsetenv("USER");
  const passwd* pw = getpwuid(getuid());  // single-threaded here
  const std::string expected = pw && pw->pw_name ? pw->pw_name : "uid " + std::to_string(getuid());
  std::vector<std::string> seen(8);
  std::vector<std::thread> threads;
  for (size_t i = 0; i < seen.size(); ++i) {
    threads.emplace_back([&seen, i] {
      std::string last;
      for (int k = 0; k < 200; ++k) {
        const std::string u = CurrentUser();
        if (k > 0 && u != last) return;  // leaves seen[i] empty: a torn answer
        last = u;
      }
      seen[i] = last;
    });
  }
  for (auto& t : threads) t.join();
  for (const auto& s : seen) EXPECT_EQ(s, expected);
}

}  // namespace client_channel_test
}  // namespace sift::common
