// Runs the commands of cost alerts (a webhook's curl, a chat message) off the RPC path: one
// thread, in order, each with the alert as JSON on stdin and killed (its whole process group)
// after its timeout. A failing or hanging command is logged; it never stops the coordinator.
#pragma once

#include <condition_variable>
#include <deque>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

namespace sift::coordinator {

// Runs `argv` with `input` on its stdin and waits up to `timeout_s`; `output` gets what it
// wrote (stdout and stderr, the first 4 KiB). Returns "" when it exited 0, else what happened
// ("exited with 3", "killed after 10 s (timeout)", "cannot start: ...").
std::string RunWithInput(const std::vector<std::string>& argv, const std::string& input,
                         double timeout_s, std::string* output);

class AlertCommands {
 public:
  AlertCommands() = default;
  // Waits for the commands queued and running (each bounded by its timeout), so an alert fired
  // as the study ends still reaches its webhook when the coordinator exits right after.
  ~AlertCommands();
  AlertCommands(const AlertCommands&) = delete;
  AlertCommands& operator=(const AlertCommands&) = delete;

  // Queues the command; returns at once. `what` names it in the log ("study 3 budget:80").
  void Run(std::vector<std::string> argv, std::string input, double timeout_s, std::string what);

 private:
  struct Job {
    std::vector<std::string> argv;
    std::string input;
    double timeout_s = 10;
    std::string what;
  };
  void Loop();

  std::mutex mu_;
  std::condition_variable cv_;
  std::deque<Job> jobs_;
  bool stopping_ = false;
  std::thread thread_;  // started by the first Run
};

}  // namespace sift::coordinator
