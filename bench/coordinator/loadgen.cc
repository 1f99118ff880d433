// Load generator: N simulated workers over gRPC against a running coordinator. Each registers,
// acquires trials and reports every epoch with made-up metrics and no think time (a heartbeat
// thread renews its lease), then completes the trial. Prints reports/s, latency percentiles and
// the coordinator's CPU per report (its CPU clock; by thread from /proc), and the number of
// acknowledged reports so the caller can count rows in the database against it.
//
//   loadgen --coordinator 127.0.0.1:PORT --workers 64 --coordinator-pid PID [--token-file F]
#include <absl/synchronization/mutex.h>
#include <grpcpp/grpcpp.h>
#include <time.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <future>
#include <map>
#include <mutex>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "sift/v1/workers_service.grpc.pb.h"

namespace {

using Clock = std::chrono::steady_clock;
namespace v1 = sift::v1;

// utime + stime in seconds from a /proc stat file (a process's or one thread's); `name` gets
// the command name (a thread's name) when given.
double CpuSecondsOf(const std::string& stat_path, std::string* name = nullptr) {
  std::ifstream in(stat_path);
  std::string stat((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  const size_t open = stat.find('('), close = stat.rfind(')');
  if (open == std::string::npos || close == std::string::npos) return 0;
  if (name) *name = stat.substr(open + 1, close - open - 1);
  std::istringstream fields(stat.substr(close + 2));
  std::string f;
  double ticks = 0;
  for (int i = 3; fields >> f; ++i) {
    if (i == 14 || i == 15) ticks += std::stod(f);
    if (i == 15) break;
  }
  return ticks / static_cast<double>(sysconf(_SC_CLK_TCK));
}

// A process's CPU seconds to the nanosecond (the scheduler's runtime, not /proc's 10 ms ticks:
// the early and late windows are a few tenths of a second of CPU each); /proc where refused.
double CpuSeconds(int pid) {
  clockid_t clock;
  timespec t{};
  if (clock_getcpuclockid(pid, &clock) != 0 || clock_gettime(clock, &t) != 0) {
    return CpuSecondsOf("/proc/" + std::to_string(pid) + "/stat");
  }
  return static_cast<double>(t.tv_sec) + static_cast<double>(t.tv_nsec) * 1e-9;
}

// CPU seconds of a process's threads, summed by thread name (threads that ended are not in it).
std::map<std::string, double> CpuByThreadName(int pid) {
  std::map<std::string, double> out;
  const std::string dir = "/proc/" + std::to_string(pid) + "/task";
  std::error_code ec;
  for (const auto& task : std::filesystem::directory_iterator(dir, ec)) {
    std::string name;
    const double s = CpuSecondsOf(task.path().string() + "/stat", &name);
    out[name] += s;
  }
  return out;
}

struct Shared {
  std::atomic<int64_t> reports{0};
  std::atomic<int64_t> completed{0};
  std::atomic<int64_t> errors{0};
  std::atomic<bool> done{false};
  std::mutex mu;
  std::vector<double> latencies_us;  // every acknowledged report
  std::vector<std::string> acked;    // and its "lease_id seq", for --acked
};

std::unique_ptr<grpc::ClientContext> Ctx(const std::string& token) {
  auto c = std::make_unique<grpc::ClientContext>();
  c->set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(60));
  if (!token.empty()) c->AddMetadata("authorization", "Bearer " + token);
  return c;
}

// What every simulated worker registers as.
v1::RegisterWorkerRequest Registration(int index) {
  v1::RegisterWorkerRequest reg;
  reg.set_name("loadgen-" + std::to_string(index));
  reg.set_instance_type("local-cpu");
  reg.set_device("cpu");
  reg.set_threads(1);
  return reg;
}

// A report of a made-up curve that rises with epochs at a trial-specific rate, so schedulers
// can rank.
void FillReport(const std::string& worker_id, const std::string& lease_id, int64_t seq,
                int64_t epoch, double rate, v1::ReportProgressRequest* rep) {
  rep->set_worker_id(worker_id);
  rep->set_lease_id(lease_id);
  rep->set_seq(seq);
  rep->set_epoch(epoch);
  const double x = rate * static_cast<double>(epoch);
  (*rep->mutable_metrics())["val_accuracy"] = 1.0 - 0.9 / (1.0 + x);
  (*rep->mutable_metrics())["train_loss"] = 1.0 / (1.0 + x);
}

void Worker(int index, std::shared_ptr<grpc::Channel> channel, const std::string& token,
            Shared* shared) {
  auto stub = v1::Workers::NewStub(channel);
  v1::RegisterWorkerResponse reg_resp;
  if (!stub->RegisterWorker(Ctx(token).get(), Registration(index), &reg_resp).ok()) {
    ++shared->errors;
    return;
  }
  const std::string worker_id = reg_resp.worker_id();
  std::mutex lease_mu;
  std::string lease;
  std::atomic<bool> quit{false};
  std::thread heartbeat([&] {
    const auto every = std::chrono::milliseconds(std::max(100, reg_resp.heartbeat_interval_ms()));
    while (!quit) {
      std::this_thread::sleep_for(every);
      v1::HeartbeatRequest hb;
      hb.set_worker_id(worker_id);
      {
        std::lock_guard<std::mutex> l(lease_mu);
        if (lease.empty()) continue;
        hb.add_lease_ids(lease);
      }
      v1::HeartbeatResponse r;
      stub->Heartbeat(Ctx(token).get(), hb, &r);
    }
  });
  std::vector<double> mine;
  std::vector<std::string> acked;
  uint64_t draw = 0x9e3779b97f4a7c15ULL * static_cast<uint64_t>(index + 1);
  while (!shared->done) {
    v1::AcquireTrialRequest acq;
    acq.set_worker_id(worker_id);
    v1::AcquireTrialResponse a;
    if (!stub->AcquireTrial(Ctx(token).get(), acq, &a).ok()) {
      ++shared->errors;
      break;
    }
    if (a.status() == v1::AcquireTrialResponse::SHUTDOWN) break;
    if (a.status() != v1::AcquireTrialResponse::ASSIGNED) {
      std::this_thread::sleep_for(std::chrono::milliseconds(std::max(5, a.retry_after_ms())));
      continue;
    }
    const auto& t = a.assignment();
    {
      std::lock_guard<std::mutex> l(lease_mu);
      lease = t.lease_id();
    }
    int64_t seq = 0;
    bool paused = false;
    bool lost = false;
    // A made-up curve that rises with epochs at a trial-specific rate, so schedulers can rank.
    draw ^= draw << 13, draw ^= draw >> 7, draw ^= draw << 17;
    const double rate = 0.05 + static_cast<double>(draw % 1000) / 1e4;
    for (int64_t epoch = t.start_epoch() + 1; epoch <= t.max_epochs(); ++epoch) {
      v1::ReportProgressRequest rep;
      FillReport(worker_id, t.lease_id(), ++seq, epoch, rate, &rep);
      v1::ReportProgressResponse r;
      const auto t0 = Clock::now();
      grpc::Status s = stub->ReportProgress(Ctx(token).get(), rep, &r);
      if (!s.ok()) {
        ++shared->errors;
        lost = true;
        break;
      }
      mine.push_back(std::chrono::duration<double, std::micro>(Clock::now() - t0).count());
      acked.push_back(t.lease_id() + " " + std::to_string(seq));
      ++shared->reports;
      if (r.decision() == v1::DECISION_STOP) break;
      if (r.decision() == v1::DECISION_PAUSE) {
        paused = true;
        break;
      }
    }
    if (!lost) {
      v1::CompleteTrialRequest c;
      c.set_worker_id(worker_id);
      c.set_lease_id(t.lease_id());
      v1::CompleteTrialResponse cr;
      if (stub->CompleteTrial(Ctx(token).get(), c, &cr).ok() && !paused) ++shared->completed;
    }
    std::lock_guard<std::mutex> l(lease_mu);
    lease.clear();
  }
  quit = true;
  heartbeat.join();
  std::lock_guard<std::mutex> l(shared->mu);
  shared->latencies_us.insert(shared->latencies_us.end(), mine.begin(), mine.end());
  shared->acked.insert(shared->acked.end(), acked.begin(), acked.end());
}

// The same simulated worker on gRPC's callback client: no thread per worker blocks in a call;
// each answer starts the worker's next call from gRPC's callback threads. Every report is still
// one ReportProgress RPC, answered only after the coordinator committed it.
class CallbackWorker {
 public:
  CallbackWorker(int index, std::shared_ptr<grpc::Channel> channel, std::string token,
                 Shared* shared)
      : index_(index),
        stub_(v1::Workers::NewStub(channel)),
        token_(std::move(token)),
        shared_(shared),
        draw_(0x9e3779b97f4a7c15ULL * static_cast<uint64_t>(index + 1)) {}

  // Registers (blocking), then runs until the load is done; Wait returns then.
  void Start() {
    v1::RegisterWorkerResponse resp;
    if (!stub_->RegisterWorker(Ctx(token_).get(), Registration(index_), &resp).ok()) {
      ++shared_->errors;
      Finish();
      return;
    }
    worker_id_ = resp.worker_id();
    heartbeat_every_ = std::chrono::milliseconds(std::max(100, resp.heartbeat_interval_ms()));
    Acquire();
  }
  void Wait() { finished_.get_future().wait(); }
  // One heartbeat for the lease held now, if any (blocking; called from the heartbeat thread).
  void Heartbeat() {
    v1::HeartbeatRequest hb;
    {
      std::lock_guard<std::mutex> l(lease_mu_);
      if (lease_.empty()) return;
      hb.add_lease_ids(lease_);
    }
    hb.set_worker_id(worker_id_);
    v1::HeartbeatResponse r;
    stub_->Heartbeat(Ctx(token_).get(), hb, &r);
  }
  std::chrono::milliseconds heartbeat_every() const { return heartbeat_every_; }
  // For the retry thread: acquire again once `at` has passed.
  Clock::time_point retry_at() const { return retry_at_; }
  void Retry() { Acquire(); }
  std::vector<double>& latencies() { return mine_; }
  std::vector<std::string>& acked() { return acked_; }

  std::function<void(CallbackWorker*)> schedule_retry;  // set by the owner before Start

 private:
  void Acquire() {
    if (shared_->done) return Finish();
    acq_.set_worker_id(worker_id_);
    ctx_ = Ctx(token_);
    stub_->async()->AcquireTrial(ctx_.get(), &acq_, &acq_resp_, [this](grpc::Status s) {
      if (!s.ok()) {
        ++shared_->errors;
        return Finish();
      }
      if (acq_resp_.status() == v1::AcquireTrialResponse::SHUTDOWN) return Finish();
      if (acq_resp_.status() != v1::AcquireTrialResponse::ASSIGNED) {
        retry_at_ =
            Clock::now() + std::chrono::milliseconds(std::max(5, acq_resp_.retry_after_ms()));
        return schedule_retry(this);
      }
      trial_ = acq_resp_.assignment();
      {
        std::lock_guard<std::mutex> l(lease_mu_);
        lease_ = trial_.lease_id();
      }
      seq_ = 0;
      paused_ = false;
      draw_ ^= draw_ << 13, draw_ ^= draw_ >> 7, draw_ ^= draw_ << 17;
      rate_ = 0.05 + static_cast<double>(draw_ % 1000) / 1e4;
      epoch_ = trial_.start_epoch() + 1;
      if (epoch_ > trial_.max_epochs()) return Complete();
      Report();
    });
  }

  void Report() {
    rep_.Clear();
    FillReport(worker_id_, trial_.lease_id(), ++seq_, epoch_, rate_, &rep_);
    ctx_ = Ctx(token_);
    t0_ = Clock::now();
    stub_->async()->ReportProgress(ctx_.get(), &rep_, &rep_resp_, [this](grpc::Status s) {
      if (!s.ok()) {
        ++shared_->errors;
        return Finish();  // the lease is lost: no CompleteTrial, as the blocking worker
      }
      mine_.push_back(std::chrono::duration<double, std::micro>(Clock::now() - t0_).count());
      acked_.push_back(trial_.lease_id() + " " + std::to_string(seq_));
      ++shared_->reports;
      if (rep_resp_.decision() == v1::DECISION_PAUSE) paused_ = true;
      const bool stop = rep_resp_.decision() == v1::DECISION_STOP;
      if (stop || paused_ || ++epoch_ > trial_.max_epochs()) return Complete();
      Report();
    });
  }

  void Complete() {
    comp_.set_worker_id(worker_id_);
    comp_.set_lease_id(trial_.lease_id());
    ctx_ = Ctx(token_);
    stub_->async()->CompleteTrial(ctx_.get(), &comp_, &comp_resp_, [this](grpc::Status s) {
      if (s.ok() && !paused_) ++shared_->completed;
      {
        std::lock_guard<std::mutex> l(lease_mu_);
        lease_.clear();
      }
      Acquire();
    });
  }

  void Finish() { finished_.set_value(); }

  int index_;
  std::unique_ptr<v1::Workers::Stub> stub_;
  std::string token_;
  Shared* shared_;
  uint64_t draw_;
  std::string worker_id_;
  std::chrono::milliseconds heartbeat_every_{1000};
  std::unique_ptr<grpc::ClientContext> ctx_;  // one call in flight at a time
  v1::AcquireTrialRequest acq_;
  v1::AcquireTrialResponse acq_resp_;
  v1::ReportProgressRequest rep_;
  v1::ReportProgressResponse rep_resp_;
  v1::CompleteTrialRequest comp_;
  v1::CompleteTrialResponse comp_resp_;
  v1::TrialAssignment trial_;
  int64_t seq_ = 0, epoch_ = 0;
  double rate_ = 0;
  bool paused_ = false;
  Clock::time_point t0_, retry_at_;
  std::mutex lease_mu_;
  std::string lease_;
  std::vector<double> mine_;
  std::vector<std::string> acked_;
  std::promise<void> finished_;
};

// Runs `workers` CallbackWorkers: one thread sends their heartbeats, one retries their acquires.
void RunCallbackWorkers(int workers, const std::vector<std::shared_ptr<grpc::Channel>>& channels,
                        const std::string& token, Shared* shared) {
  std::vector<std::unique_ptr<CallbackWorker>> sims;
  std::mutex retry_mu;
  std::condition_variable retry_cv;
  std::vector<CallbackWorker*> retries;
  bool stop = false;
  for (int i = 0; i < workers; ++i) {
    sims.push_back(std::make_unique<CallbackWorker>(
        i, channels[static_cast<size_t>(i) % channels.size()], token, shared));
    sims.back()->schedule_retry = [&](CallbackWorker* w) {
      std::lock_guard<std::mutex> l(retry_mu);
      retries.push_back(w);
      retry_cv.notify_one();
    };
  }
  std::thread retrier([&] {
    std::unique_lock<std::mutex> l(retry_mu);
    while (!stop) {
      retry_cv.wait_for(l, std::chrono::milliseconds(5));
      const auto now = Clock::now();
      std::vector<CallbackWorker*> due;
      for (auto it = retries.begin(); it != retries.end();) {
        if ((*it)->retry_at() <= now) {
          due.push_back(*it);
          it = retries.erase(it);
        } else {
          ++it;
        }
      }
      l.unlock();
      for (auto* w : due) w->Retry();
      l.lock();
    }
  });
  for (auto& w : sims) w->Start();
  std::atomic<bool> beating{true};
  std::thread heartbeats([&] {
    while (beating) {
      std::this_thread::sleep_for(sims.front()->heartbeat_every());
      for (auto& w : sims) w->Heartbeat();
    }
  });
  for (auto& w : sims) w->Wait();
  beating = false;
  heartbeats.join();
  {
    std::lock_guard<std::mutex> l(retry_mu);
    stop = true;
  }
  retrier.join();
  std::lock_guard<std::mutex> l(shared->mu);
  for (auto& w : sims) {
    shared->latencies_us.insert(shared->latencies_us.end(), w->latencies().begin(),
                                w->latencies().end());
    shared->acked.insert(shared->acked.end(), w->acked().begin(), w->acked().end());
  }
}

double Percentile(std::vector<double>& v, double p) {
  if (v.empty()) return 0;
  const size_t k = std::min(v.size() - 1, static_cast<size_t>(p * static_cast<double>(v.size())));
  std::nth_element(v.begin(), v.begin() + static_cast<std::ptrdiff_t>(k), v.end());
  return v[k];
}

}  // namespace

int main(int argc, char** argv) {
  // As the coordinator: Debian's Abseil checks every gRPC mutex for deadlocks otherwise.
  absl::SetMutexDeadlockDetectionMode(absl::OnDeadlockCycle::kIgnore);
  CLI::App app{"Sift coordinator load generator"};
  std::string address, token_file, label;
  int workers = 16;
  int channels_n = 8;
  std::string client = "sync";
  int pid = 0;
  int64_t trials = 0;
  app.add_option("--coordinator", address)->required();
  app.add_option("--workers", workers)->check(CLI::PositiveNumber);
  app.add_option("--channels", channels_n, "connections the workers share (at most one each)")
      ->check(CLI::PositiveNumber);
  app.add_option("--coordinator-pid", pid, "for the coordinator's CPU time")->required();
  app.add_option("--trials", trials, "the study's max_trials: stop once that many completed")
      ->required();
  app.add_option("--client", client,
                 "sync: a blocking thread per worker; callback: gRPC's callback client")
      ->check(CLI::IsMember({"sync", "callback"}));
  app.add_option("--token-file", token_file);
  app.add_option("--label", label, "first column of the printed row");
  std::string acked_file;
  app.add_option("--acked", acked_file,
                 "write every acknowledged report's 'lease_id seq' there, one a line");
  CLI11_PARSE(app, argc, argv);
  std::string token;
  if (!token_file.empty()) {
    std::ifstream in(token_file);
    std::getline(in, token);
  }
  grpc::ChannelArguments args;
  args.SetInt(GRPC_ARG_USE_LOCAL_SUBCHANNEL_POOL, 1);
  Shared shared;
  // A few channels, as separate worker processes would have their own connections.
  std::vector<std::shared_ptr<grpc::Channel>> channels;
  for (int i = 0; i < std::min(workers, channels_n); ++i) {
    grpc::ChannelArguments a = args;
    a.SetInt("sift.loadgen.channel", i);  // distinct args: distinct connections
    channels.push_back(grpc::CreateCustomChannel(address, grpc::InsecureChannelCredentials(), a));
  }
  const double cpu0 = CpuSeconds(pid);
  const auto threads0 = CpuByThreadName(pid);
  const auto t0 = Clock::now();
  std::vector<std::thread> threads;
  if (client == "callback") {
    threads.emplace_back([&] { RunCallbackWorkers(workers, channels, token, &shared); });
  } else {
    for (int i = 0; i < workers; ++i) {
      threads.emplace_back(Worker, i, channels[static_cast<size_t>(i) % channels.size()], token,
                           &shared);
    }
  }
  // The coordinator's CPU per report early in the study and late in it (issue 14: the
  // 10,000th trial's reports within 1.5x of the 100th's): CPU and reports when the completed
  // trials pass each mark, so each window covers the reports made while 200 trials completed.
  const int64_t marks[4] = {100, 300, trials - 300, trials - 100};
  struct Snapshot {
    double cpu = 0;
    int64_t reports = 0;
  } at[4];
  int next_mark = trials >= 2000 ? 0 : 4;
  std::thread watcher([&] {
    // Looks every millisecond (the end of the load and the windows' edges are timed to that),
    // says where it is every 2 s.
    int64_t last = -1;
    for (int tick = 1; shared.completed < trials && shared.errors == 0; ++tick) {
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
      while (next_mark < 4 && shared.completed >= marks[next_mark]) {
        at[next_mark++] = {CpuSeconds(pid), shared.reports.load()};
      }
      if (tick % 2000 != 0) continue;
      const int64_t r = shared.reports;
      if (r != last) {
        std::fprintf(stderr, "[loadgen] %lld reports, %lld trials done\n",
                     static_cast<long long>(r), static_cast<long long>(shared.completed.load()));
      }
      last = r;
    }
    shared.done = true;
  });
  watcher.join();
  const double seconds = std::chrono::duration<double>(Clock::now() - t0).count();
  // A coordinator killed during the load is gone or a zombie (state Z): its CPU is unknown.
  const bool alive = [&] {
    std::ifstream in("/proc/" + std::to_string(pid) + "/stat");
    std::string stat((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    const size_t close = stat.rfind(')');
    return close != std::string::npos && close + 2 < stat.size() && stat[close + 2] != 'Z';
  }();
  const double cpu = CpuSeconds(pid) - cpu0;
  const auto threads1 = CpuByThreadName(pid);
  const double own = CpuSeconds(getpid());
  for (auto& t : threads) t.join();
  if (!acked_file.empty()) {
    std::ofstream out(acked_file);
    for (const auto& a : shared.acked) out << a << '\n';
  }
  const auto n = static_cast<double>(shared.reports.load());
  const std::string cpu_per_report =
      alive ? std::to_string(static_cast<long long>(cpu / n * 1e6 + 0.5)) + " us" : "-";
  std::printf("| %s | %d | %lld | %.0f | %s | %.1f ms | %.1f ms | %lld |\n", label.c_str(), workers,
              static_cast<long long>(trials), n / seconds, cpu_per_report.c_str(),
              Percentile(shared.latencies_us, 0.5) / 1000,
              Percentile(shared.latencies_us, 0.99) / 1000,
              static_cast<long long>(shared.reports.load()));
  // Where the coordinator's CPU went (threads alive at the end), and the generator's own.
  std::string by_thread;
  for (const auto& [name, s] : threads1) {
    auto before = threads0.find(name);
    const double d = s - (before == threads0.end() ? 0 : before->second);
    if (d > 0) by_thread += " " + name + "=" + std::to_string(static_cast<int>(d / n * 1e6)) + "us";
  }
  std::fprintf(stderr, "[loadgen] coordinator CPU per report by thread:%s\n", by_thread.c_str());
  std::fprintf(stderr, "[loadgen] load generator CPU per report: %.0f us\n", own / n * 1e6);
  if (next_mark == 4 && alive) {
    auto per_report = [&](int a, int b) {
      const auto reports = static_cast<double>(at[b].reports - at[a].reports);
      return reports > 0 ? (at[b].cpu - at[a].cpu) / reports * 1e6 : 0.0;
    };
    const double early = per_report(0, 1), late = per_report(2, 3);
    std::fprintf(stderr,
                 "[loadgen] coordinator CPU per report while trials %lld-%lld completed: %.0f us, "
                 "while trials %lld-%lld completed: %.0f us (%.2fx)\n",
                 static_cast<long long>(marks[0]), static_cast<long long>(marks[1]), early,
                 static_cast<long long>(marks[2]), static_cast<long long>(marks[3]), late,
                 early > 0 ? late / early : 0.0);
  }
  std::fprintf(stderr, "[loadgen] acknowledged %lld reports in %.1f s, %lld errors\n",
               static_cast<long long>(shared.reports.load()), seconds,
               static_cast<long long>(shared.errors.load()));
  return shared.errors == 0 ? 0 : 1;
}
