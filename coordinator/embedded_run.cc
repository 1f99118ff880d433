#include "coordinator/embedded_run.h"

#include <signal.h>
#include <spdlog/spdlog.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <sstream>
#include <thread>

#include "coordinator/coordinator.h"
#include "coordinator/local_workers.h"
#include "coordinator/report.h"
#include "coordinator/server.h"

namespace sift::coordinator {
namespace {

namespace fs = std::filesystem;

std::atomic<int> g_interrupts{0};

void OnInterrupt(int) { g_interrupts.fetch_add(1); }

std::string Timestamp() {
  std::time_t t = std::time(nullptr);
  char buf[32];
  std::strftime(buf, sizeof(buf), "%Y%m%d-%H%M%S", std::localtime(&t));
  return buf;
}

std::string ExeDir() {
  std::error_code ec;
  auto exe = fs::read_symlink("/proc/self/exe", ec);
  return ec ? "." : exe.parent_path().string();
}

// A prices.json beside the config wins; "" means the built-in catalog.
std::string DefaultPrices(const std::string& config_path) {
  const fs::path beside = fs::path(config_path).parent_path() / "prices.json";
  return fs::exists(beside) ? beside.string() : "";
}

std::string CacheDir() {
  if (const char* x = getenv("XDG_CACHE_HOME"); x && *x) return std::string(x) + "/sift";
  if (const char* h = getenv("HOME"); h && *h) return std::string(h) + "/.cache/sift";
  return "/tmp/sift-cache";
}

StudyReport Collect(Coordinator& c, int64_t id, std::optional<double> target) {
  StudyReport r;
  c.GetStudy(id, &r.study);
  c.ListTrials(id, &r.trials);
  r.target = target;
  return r;
}

// MemAvailable in MiB (0 if unknown): split among the local workers, so that each one's
// `micro_batch: auto` leaves room for the others.
int64_t AvailableMiB() {
  std::ifstream in("/proc/meminfo");
  std::string line;
  while (std::getline(in, line) && line.rfind("MemAvailable:", 0) != 0) {
  }
  return line.empty() ? 0 : std::stoll(line.substr(13)) / 1024;
}

}  // namespace

int RunEmbedded(const RunOptions& o) {
  StudyConfig config;
  std::string text;
  auto errors = LoadStudyConfig(o.config_path, &config, &text);
  // Bad data fails here, once, rather than in every trial on every worker.
  if (errors.empty()) errors = ValidateStudyData(config);
  if (!errors.empty()) {
    std::cerr << o.config_path << ": invalid config:\n";
    for (const auto& e : errors) std::cerr << "  " << e << "\n";
    return 2;
  }
  const int cores = std::max(1u, std::thread::hardware_concurrency());
  const int threads = o.threads_per_worker > 0 ? o.threads_per_worker
                      : config.worker.threads > 0 ? static_cast<int>(config.worker.threads)
                                                  : 1;
  int workers = o.workers > 0 ? o.workers : std::max(1, cores / threads);
  if (config.parallelism > 0) workers = std::min<int>(workers, config.parallelism);

  const std::string out_dir =
      o.out_dir.empty() ? "runs/" + config.name + "-" + Timestamp() : o.out_dir;
  std::error_code ec;
  fs::create_directories(out_dir + "/workers", ec);
  if (ec) {
    std::cerr << out_dir << ": cannot create the run directory: " << ec.message() << "\n";
    return 1;
  }

  CoordinatorOptions copts;
  copts.lease_timeout_s = o.lease_timeout_s;
  // Frequent beats bound how much of a lost VM's time the ledger cannot see (one interval).
  copts.heartbeat_interval_s = std::clamp(o.lease_timeout_s / 6, 0.2, 1.0);
  copts.shutdown_when_idle = true;
  copts.checkpoint_dir = fs::absolute(out_dir + "/checkpoints").string();
  copts.shared_checkpoints = true;  // local workers share this machine's filesystem
  const std::string prices = o.prices_path.empty() ? DefaultPrices(o.config_path) : o.prices_path;
  if (config.worker.price_per_hour <= 0) {
    std::string problem;
    if (prices.empty()) {
      copts.catalog = PriceCatalog::BuiltIn();
    } else {
      problem = copts.catalog.Load(prices);
    }
    if (!problem.empty()) {
      std::cerr << problem << "\n";
      return 2;
    }
    double price = 0;
    if (std::string p = copts.catalog.Lookup(config.worker.instance_type, config.worker.market,
                                             &price);
        !p.empty()) {
      std::cerr << o.config_path << ": worker.instance_type: " << p << "\n";
      return 2;
    }
  }

  std::unique_ptr<Coordinator> coordinator;
  std::unique_ptr<Server> server;
  int64_t study_id = 0;
  try {
    coordinator = std::make_unique<Coordinator>(OpenSqliteStore(out_dir + "/sift.db"), copts);
    server = std::make_unique<Server>(coordinator.get(), "127.0.0.1:0", "");
    if (Status s = coordinator->CreateStudy(text, o.config_path, &study_id, &errors); !s.ok()) {
      std::cerr << s.message << "\n";
      return s.code == Status::Code::kInvalidArgument ? 2 : 1;
    }
  } catch (const std::exception& e) {
    std::cerr << "cannot start the coordinator: " << e.what() << "\n";
    return 1;
  }
  const std::string address = "127.0.0.1:" + std::to_string(server->port());
  const int64_t memory_per_worker_mb = AvailableMiB() / workers;
  spdlog::info("run directory {}; coordinator on {}; {} workers x {} threads on {} cores, "
               "{} MiB of memory each",
               out_dir, address, workers, threads, cores, memory_per_worker_mb);
  std::string settings;
  for (const auto& [k, v] : WorkerEnvironment(threads)) settings += " " + k + "=" + v;
  spdlog::info("worker settings:{}", settings);

  const std::string worker_bin =
      o.worker_binary.empty() ? ExeDir() + "/sift-worker" : o.worker_binary;
  // Worker `slot`, incarnation `generation`: a replacement after a reclaimed VM gets a new name,
  // log and simulator seed, like a new VM from a managed instance group.
  auto start_worker = [&](LocalWorkers& pool, int slot, int generation) {
    const std::string name = "local-" + std::to_string(slot) +
                             (generation ? "." + std::to_string(generation) : "");
    std::vector<std::string> argv = {worker_bin,
                                     "--coordinator", address,
                                     "--name", name,
                                     "--instance-type", config.worker.instance_type,
                                     "--market", config.worker.market,
                                     "--threads", std::to_string(threads),
                                     "--cache-dir", CacheDir(),
                                     "--exit-when-idle"};
    if (memory_per_worker_mb > 0) {
      argv.push_back("--memory-limit-mb");
      argv.push_back(std::to_string(memory_per_worker_mb));
    }
    if (config.worker.price_per_hour > 0) {
      argv.push_back("--price-per-hour");
      argv.push_back(std::to_string(config.worker.price_per_hour));
    }
    if (o.simulate_preemption > 0) {
      argv.push_back("--simulate-preemption");
      argv.push_back(std::to_string(o.simulate_preemption));
      argv.push_back("--preemption-seed");
      argv.push_back(std::to_string(o.preemption_seed * 1000003 + slot * 1009 + generation));
    }
    std::istringstream extra(o.extra_worker_args);
    for (std::string a; extra >> a;) argv.push_back(a);
    pool.Spawn(argv, WorkerEnvironment(threads), out_dir + "/workers/" + name + ".log", slot);
  };
  LocalWorkers local;
  std::vector<int> generation(workers, 0);
  int replacements = 0;
  const int max_replacements = 20 + 10 * workers;  // beyond that it is a crash loop, not spot
  try {
    for (int i = 0; i < workers; ++i) start_worker(local, i, 0);
  } catch (const std::exception& e) {
    std::cerr << e.what() << "\n";
    local.StopAll(0);
    return 1;
  }

  signal(SIGINT, OnInterrupt);
  signal(SIGTERM, OnInterrupt);
  const auto started = std::chrono::steady_clock::now();
  auto last_progress = started;
  bool cancelled = false, workers_lost = false;
  while (!coordinator->AllStudiesFinished()) {
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
    if (g_interrupts > 0 && !cancelled) {
      spdlog::warn("interrupted: cancelling the study (Ctrl-C again to stop at once)");
      coordinator->CancelStudy(study_id);
      cancelled = true;
    }
    if (g_interrupts > 1) break;
    local.Poll();
    for (int slot : local.TakeExited()) {
      if (coordinator->AllStudiesFinished() || cancelled) continue;
      if (++replacements > max_replacements) {
        workers_lost = true;
        break;
      }
      spdlog::warn("worker local-{} is gone; starting a replacement", slot);
      try {
        start_worker(local, slot, ++generation[slot]);
      } catch (const std::exception& e) {
        spdlog::error("{}", e.what());
        workers_lost = true;
      }
    }
    if (workers_lost || (local.Poll() == 0 && !coordinator->AllStudiesFinished())) {
      workers_lost = true;
      break;
    }
    const auto now = std::chrono::steady_clock::now();
    if (now - last_progress >= std::chrono::seconds(15)) {
      last_progress = now;
      StudySummary s;
      coordinator->GetStudy(study_id, &s);
      spdlog::info("progress: {}/{} trials finished, {} running, best {} {}, ${:.4f} spent, {:.0f} s",
                   s.finished, s.max_trials, s.running, s.metric,
                   s.best_trial ? fmt::format("{:.4f} (trial {})", s.best_value, *s.best_trial)
                                : "-",
                   s.dollars, std::chrono::duration<double>(now - started).count());
    }
  }
  local.StopAll(/*grace_s=*/g_interrupts > 1 ? 0 : 15);
  server->Shutdown();
  signal(SIGINT, SIG_DFL);
  signal(SIGTERM, SIG_DFL);

  StudyReport report = Collect(*coordinator, study_id, o.target);
  report.environment = WorkerEnvironment(threads);
  report.environment["workers"] = std::to_string(workers);
  report.environment["threads_per_worker"] = std::to_string(threads);
  report.environment["cores"] = std::to_string(cores);
  report.checkpoint_dir = copts.checkpoint_dir + "/study-" + std::to_string(study_id);
  std::cout << "\n" << FormatTable(report) << "\n" << FormatSummary(report);
  if (std::string problem = WriteReportFiles(report, out_dir); !problem.empty()) {
    std::cerr << problem << "\n";
    return 1;
  }
  std::cout << "results: " << out_dir << "/results.csv, " << out_dir << "/results.json, database "
            << out_dir << "/sift.db\n";
  if (workers_lost) {
    std::cerr << "workers kept exiting (" << replacements
              << " replacements) before the study finished; see " << out_dir
              << "/workers/*.log\n";
    return 1;
  }
  return report.study.record.state == StudyState::kCompleted ? 0 : 1;
}

}  // namespace sift::coordinator
