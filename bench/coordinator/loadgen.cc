// Load generator: N simulated workers over gRPC against a running coordinator. Each registers,
// acquires trials and reports every epoch with made-up metrics and no think time (a heartbeat
// thread renews its lease), then completes the trial. Prints reports/s, latency percentiles and
// the coordinator's CPU per report (from /proc/PID/stat), and the number of acknowledged reports
// so the caller can count rows in the database against it.
//
//   loadgen --coordinator 127.0.0.1:PORT --workers 64 --coordinator-pid PID [--token-file F]
#include <absl/synchronization/mutex.h>
#include <grpcpp/grpcpp.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
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

double CpuSeconds(int pid) { return CpuSecondsOf("/proc/" + std::to_string(pid) + "/stat"); }

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
};

std::unique_ptr<grpc::ClientContext> Ctx(const std::string& token) {
  auto c = std::make_unique<grpc::ClientContext>();
  c->set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(60));
  if (!token.empty()) c->AddMetadata("authorization", "Bearer " + token);
  return c;
}

void Worker(int index, std::shared_ptr<grpc::Channel> channel, const std::string& token,
            Shared* shared) {
  auto stub = v1::Workers::NewStub(channel);
  v1::RegisterWorkerRequest reg;
  reg.set_name("loadgen-" + std::to_string(index));
  reg.set_instance_type("local-cpu");
  reg.set_device("cpu");
  reg.set_threads(1);
  v1::RegisterWorkerResponse reg_resp;
  if (!stub->RegisterWorker(Ctx(token).get(), reg, &reg_resp).ok()) {
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
      rep.set_worker_id(worker_id);
      rep.set_lease_id(t.lease_id());
      rep.set_seq(++seq);
      rep.set_epoch(epoch);
      (*rep.mutable_metrics())["val_accuracy"] = 1.0 - 0.9 / (1.0 + rate * epoch);
      (*rep.mutable_metrics())["train_loss"] = 1.0 / (1.0 + rate * epoch);
      v1::ReportProgressResponse r;
      const auto t0 = Clock::now();
      grpc::Status s = stub->ReportProgress(Ctx(token).get(), rep, &r);
      if (!s.ok()) {
        ++shared->errors;
        lost = true;
        break;
      }
      mine.push_back(std::chrono::duration<double, std::micro>(Clock::now() - t0).count());
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
  int pid = 0;
  int64_t trials = 0;
  app.add_option("--coordinator", address)->required();
  app.add_option("--workers", workers)->check(CLI::PositiveNumber);
  app.add_option("--channels", channels_n, "connections the workers share (at most one each)")
      ->check(CLI::PositiveNumber);
  app.add_option("--coordinator-pid", pid, "for the coordinator's CPU time")->required();
  app.add_option("--trials", trials, "the study's max_trials: stop once that many completed")
      ->required();
  app.add_option("--token-file", token_file);
  app.add_option("--label", label, "first column of the printed row");
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
  for (int i = 0; i < workers; ++i) {
    threads.emplace_back(Worker, i, channels[static_cast<size_t>(i) % channels.size()], token,
                         &shared);
  }
  std::thread watcher([&] {
    // Looks every 10 ms (the end of the load is timed to that), says where it is every 2 s.
    int64_t last = -1;
    for (int tick = 1; shared.completed < trials && shared.errors == 0; ++tick) {
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
      if (tick % 200 != 0) continue;
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
  const auto n = static_cast<double>(shared.reports.load());
  const std::string cpu_per_report =
      alive ? std::to_string(static_cast<long long>(cpu / n * 1e6 + 0.5)) + " us" : "-";
  std::printf("| %s | %d | %lld | %.0f | %s | %.1f ms | %.1f ms | %lld |\n", label.c_str(),
              workers, static_cast<long long>(trials), n / seconds, cpu_per_report.c_str(),
              Percentile(shared.latencies_us, 0.5) / 1000, Percentile(shared.latencies_us, 0.99) / 1000,
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
  std::fprintf(stderr, "[loadgen] acknowledged %lld reports in %.1f s, %lld errors\n",
               static_cast<long long>(shared.reports.load()), seconds,
               static_cast<long long>(shared.errors.load()));
  return shared.errors == 0 ? 0 : 1;
}
