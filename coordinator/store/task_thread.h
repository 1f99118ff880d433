// One thread that runs posted tasks in the order they were posted: for work that must leave the
// thread that has it (the group commit's writer may not take the Coordinator's lock). The
// destructor runs what is still queued, then joins.
#pragma once

#include <pthread.h>

#include <condition_variable>
#include <deque>
#include <functional>
#include <mutex>
#include <thread>

namespace sift::coordinator {

class TaskThread {
 public:
  explicit TaskThread(const char* name) : thread_([this, name] { Loop(name); }) {}
  ~TaskThread() {
    {
      std::lock_guard<std::mutex> lock(mu_);
      stop_ = true;
    }
    wake_.notify_one();
    thread_.join();
  }
  TaskThread(const TaskThread&) = delete;
  TaskThread& operator=(const TaskThread&) = delete;

  // `task` must not throw.
  void Post(std::function<void()> task) {
    {
      std::lock_guard<std::mutex> lock(mu_);
      tasks_.push_back(std::move(task));
    }
    wake_.notify_one();
  }

 private:
  void Loop(const char* name) {
    pthread_setname_np(pthread_self(), name);  // at most 15 characters
    std::unique_lock<std::mutex> lock(mu_);
    for (;;) {
      wake_.wait(lock, [&] { return stop_ || !tasks_.empty(); });
      if (tasks_.empty()) return;  // stopping, and everything posted ran
      std::function<void()> task = std::move(tasks_.front());
      tasks_.pop_front();
      lock.unlock();
      task();
      lock.lock();
    }
  }

  std::mutex mu_;
  std::condition_variable wake_;
  std::deque<std::function<void()>> tasks_;
  bool stop_ = false;
  std::thread thread_;  // last: starts once the members above exist
};

}  // namespace sift::coordinator
