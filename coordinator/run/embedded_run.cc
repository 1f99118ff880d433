#include "coordinator/run/embedded_run.h"

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
#include <map>
#include <sstream>
#include <thread>

#include "common/data_files.h"
#include "common/metric_json.h"
#include "common/per_class_key.h"
#include "coordinator/core/coordinator.h"
#include "coordinator/http/live.h"
#include "coordinator/report/html/html_report.h"
#include "coordinator/report/report.h"
#include "coordinator/rpc/client.h"
#include "coordinator/rpc/server.h"
#include "coordinator/run/files.h"
#include "coordinator/run/local_workers.h"
#include "coordinator/run/plan.h"

namespace sift::coordinator {
namespace {

namespace fs = std::filesystem;

std::atomic<int> g_interrupts{0};
std::atomic<int> g_last_signal{0};

void OnInterrupt(int sig) {
  g_last_signal = sig;
  g_interrupts.fetch_add(1);
}

const char* SignalName(int sig) {
  return sig == SIGINT    ? "SIGINT"
         : sig == SIGTERM ? "SIGTERM"
         : sig == SIGHUP  ? "SIGHUP"
                          : "signal";
}

// Reads DIR's studies, for the resume rule; none when DIR has no database yet.
std::vector<StudyRecord> StudiesIn(const std::string& db) {
  if (!fs::exists(db)) return {};
  return OpenSqliteStore(db)->ListStudies();
}

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

StudyReport Collect(Coordinator& c, int64_t id, std::optional<double> target,
                    const common::StudyConfig& config) {
  StudyReport r;
  c.GetStudy(id, &r.study);
  c.ListTrials(id, &r.trials);
  r.exploits = c.ListExploits(id);
  r.target = target;
  r.objectives = config.objectives;
  r.constraints = config.constraints;
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
  if (o.resume && o.start_new) {
    std::cerr << "sift run: --resume and --new contradict each other\n";
    return 2;
  }
  if (!o.resume && o.config_path.empty()) {
    std::cerr << "sift run: give a study config (or --resume DIR)\n";
    return 2;
  }
  common::StudyConfig config;
  std::string text;
  std::vector<std::string> errors;
  if (!o.config_path.empty()) {
    errors = common::LoadStudyConfig(o.config_path, &config, &text);
    if (!errors.empty()) {
      std::cerr << o.config_path << ": invalid config:\n";
      for (const auto& e : errors) std::cerr << "  " << e << "\n";
      return 2;
    }
  }
  if (o.resume && !fs::exists(o.out_dir + "/sift.db")) {
    std::cerr << o.out_dir << ": no study to resume here (no " << o.out_dir
              << "/sift.db); start one with: sift run CONFIG --out " << o.out_dir << "\n";
    return 2;
  }
  const std::string out_dir =
      o.out_dir.empty() ? "runs/" + config.name + "-" + Timestamp() : o.out_dir;
  const std::string db_path = out_dir + "/sift.db";
  RunPlan plan;
  try {
    plan = PlanRun(StudiesIn(db_path), text, o.config_path, out_dir, o.resume, o.start_new);
  } catch (const std::exception& e) {
    std::cerr << db_path << ": " << e.what() << "\n";
    return 1;
  }
  if (!plan.problem.empty()) {
    std::cerr << plan.problem << "\n";
    return 2;
  }
  const std::string origin = o.config_path.empty() ? db_path : o.config_path;
  if (plan.resume_id > 0 && o.config_path.empty()) {
    std::string base_dir;
    try {
      base_dir = CreatedFromDir(OpenSqliteStoreReadOnly(db_path)->ListStudyEvents(plan.resume_id));
    } catch (const std::exception& e) {
      spdlog::warn("{}: {}; relative data paths are taken from the current directory", db_path,
                   e.what());
    }
    errors = common::ParseStudyConfig(plan.config_text, origin, &config, {}, base_dir);
    if (!errors.empty()) {
      std::cerr << origin << ": study " << plan.resume_id << " cannot be resumed:\n";
      for (const auto& e : errors) std::cerr << "  " << e << "\n";
      return 2;
    }
  }
  for (const auto& note : config.notes) spdlog::info("{}: note: {}", origin, note);
  // The local workers read the data here: bad data is a config error, once, not N failures.
  if (auto data_errors = common::ValidateStudyData(config); !data_errors.empty()) {
    std::cerr << origin << ": invalid data:\n";
    for (const auto& e : data_errors) std::cerr << "  " << e << "\n";
    return 2;
  }
  const int cores = std::max(1u, std::thread::hardware_concurrency());
  const int threads = o.threads_per_worker > 0    ? o.threads_per_worker
                      : config.worker.threads > 0 ? static_cast<int>(config.worker.threads)
                                                  : 1;
  int workers = o.workers > 0 ? o.workers : std::max(1, cores / threads);
  if (config.parallelism > 0) workers = std::min<int>(workers, config.parallelism);

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
  copts.fail_unrunnable_studies = true;  // every local worker refused it: nobody else will come
  copts.checkpoint_dir = fs::absolute(out_dir + "/checkpoints").string();
  copts.shared_checkpoints = true;  // local workers share this machine's filesystem
  const std::string prices = o.prices_path.empty() ? DefaultPrices(origin) : o.prices_path;
  if (config.worker.price_per_hour <= 0) {
    std::string problem;
    if (prices.empty()) {
      copts.catalog = common::PriceCatalog::BuiltIn();
    } else {
      problem = copts.catalog.Load(prices);
    }
    if (!problem.empty()) {
      std::cerr << problem << "\n";
      return 2;
    }
    double price = 0;
    if (std::string p =
            copts.catalog.Lookup(config.worker.instance_type, config.worker.market, &price);
        !p.empty()) {
      std::cerr << origin << ": worker.instance_type: " << p << "\n";
      return 2;
    }
  }

  const std::string user = CurrentUser();
  // From here a signal pauses the study instead of killing the run halfway.
  for (int sig : {SIGINT, SIGTERM, SIGHUP}) signal(sig, OnInterrupt);
  // The run's coordinator takes a token only this user can read (DIR/coordinator.token).
  const RunEndpoint endpoint{"", common::RandomToken()};
  std::unique_ptr<Coordinator> coordinator;
  std::unique_ptr<Server> server;
  std::unique_ptr<LiveHttp> http;
  int64_t study_id = plan.resume_id;
  // The local workers get a token of their own (in their environment, not argv), so other users
  // of this machine cannot call the run's loopback port as a worker; DIR/coordinator.token
  // (owner-only) is the run's user credential for `sift status/pause/... --run DIR`.
  const std::string worker_token = common::RandomToken();
  try {
    coordinator = std::make_unique<Coordinator>(OpenSqliteStore(db_path), copts);
    for (int64_t id : plan.cancel) coordinator->CancelStudy(id, user, "replaced: sift run --new");
    for (int64_t id : plan.pause) {
      coordinator->PauseStudy(id, user, "not the study this run resumes");
    }
    if (study_id > 0) {
      if (Status s = coordinator->ResumeStudy(study_id, user, "sift run"); !s.ok()) {
        std::cerr << s.message << "\n";
        return 1;
      }
    } else if (Status s =
                   coordinator->CreateStudy(plan.config_text, fs::absolute(o.config_path).string(),
                                            &study_id, &errors, user);
               !s.ok()) {
      std::cerr << s.message << "\n";
      return s.code == Status::Code::kInvalidArgument ? 2 : 1;
    }
    ServerSecurity security;
    security.credentials.Add(common::Role::kWorker, worker_token, "the run's worker token");
    security.credentials.Add(common::Role::kUser, endpoint.token, "the run's user token");
    server = std::make_unique<Server>(coordinator.get(), "127.0.0.1:0", std::move(security));
    if (!o.http.empty()) {
      HttpOptions http_options;
      http_options.plaintext_off_loopback = o.http_plaintext;
      http = std::make_unique<LiveHttp>(o.http, coordinator.get(), server.get(),
                                        HtmlReportPage(db_path), std::move(http_options));
      // As Jupyter does, the link carries the run's user token (traded for a cookie on first
      // use), but only on a terminal: redirected output is a log file, which keeps no tokens.
      const std::string page = "http://" + o.http.substr(0, o.http.rfind(':')) + ":" +
                               std::to_string(http->port()) + "/";
      if (isatty(STDERR_FILENO)) {
        spdlog::info("live report: {}?token={}  (Prometheus: /metrics)", page, endpoint.token);
      } else {
        spdlog::info("live report: {}?token=<{}/{}>  (Prometheus: /metrics)", page, out_dir,
                     kTokenFile);
      }
    }
  } catch (const std::exception& e) {
    std::cerr << "cannot start the coordinator: " << e.what() << "\n";
    return 1;
  }
  const std::string address = "127.0.0.1:" + std::to_string(server->port());
  if (std::string p = WriteRunEndpoint(out_dir, {address, endpoint.token}); !p.empty()) {
    spdlog::warn("{} (sift status --run {} will not find this run)", p, out_dir);
  }
  if (plan.resume_id > 0) {
    StudySummary s;
    coordinator->GetStudy(study_id, &s);
    spdlog::info(
        "resuming study {} '{}' from {}: {}/{} trials finished, ${:.4f} spent so far; "
        "recorded epochs are not retrained",
        study_id, s.record.name, out_dir, s.finished, s.max_trials, s.dollars);
  }
  const int64_t memory_per_worker_mb = AvailableMiB() / workers;
  spdlog::info(
      "run directory {}; coordinator on {}; {} workers x {} threads on {} cores, "
      "{} MiB of memory each",
      out_dir, address, workers, threads, cores, memory_per_worker_mb);
  std::map<std::string, std::string> worker_env = WorkerEnvironment(threads);
  std::string settings;
  for (const auto& [k, v] : worker_env) settings += " " + k + "=" + v;
  spdlog::info("worker settings:{}", settings);
  worker_env["SIFT_TOKEN"] = worker_token;  // in the environment, not on a command line

  const std::string worker_bin =
      o.worker_binary.empty() ? ExeDir() + "/sift-worker" : o.worker_binary;
  // Worker `slot`, incarnation `generation`: a replacement after a reclaimed VM gets a new name,
  // log and simulator seed, like a new VM from a managed instance group.
  auto start_worker = [&](LocalWorkers& pool, int slot, int generation) {
    const std::string name =
        "local-" + std::to_string(slot) + (generation ? "." + std::to_string(generation) : "");
    std::vector<std::string> argv = {worker_bin,
                                     "--coordinator",
                                     address,
                                     "--name",
                                     name,
                                     "--instance-type",
                                     config.worker.instance_type,
                                     "--market",
                                     config.worker.market,
                                     "--threads",
                                     std::to_string(threads),
                                     "--cache-dir",
                                     CacheDir(),
                                     "--trial-log-dir",
                                     out_dir + "/trials",
                                     "--exit-when-idle",
                                     "--idle-exit-seconds",
                                     "0"};
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
    pool.Spawn(argv, worker_env, out_dir + "/workers/" + name + ".log", slot);
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
    RemoveRunEndpoint(out_dir);
    return 1;
  }

  const auto started = std::chrono::steady_clock::now();
  auto last_progress = started;
  bool workers_lost = false;
  StudyState shown_state = StudyState::kRunning;
  for (int tick = 0; !coordinator->AllStudiesFinished() && g_interrupts == 0; ++tick) {
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
    if (g_interrupts > 0) break;
    local.Poll();
    for (int slot : local.TakeExited()) {
      if (coordinator->AllStudiesFinished()) continue;
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
    StudySummary s;
    if (tick % 5 == 0 && coordinator->GetStudy(study_id, &s).ok() &&
        s.record.state != shown_state) {
      // Paused or resumed from another terminal (sift pause/resume --run DIR).
      shown_state = s.record.state;
      spdlog::info("study {} is {}{}", study_id, ToString(shown_state),
                   shown_state == StudyState::kPaused
                       ? fmt::format(" ({}); `sift resume --run {}` continues it, Ctrl-C leaves",
                                     s.record.end_reason, out_dir)
                       : "");
    }
    if (now - last_progress >= std::chrono::seconds(15)) {
      last_progress = now;
      coordinator->GetStudy(study_id, &s);
      spdlog::info(
          "progress: {}/{} trials finished, {} running, best {} {}, ${:.4f} spent, {:.0f} s",
          s.finished, s.max_trials, s.running, s.metric,
          s.best_trial ? fmt::format("{:.4f} (trial {})", s.best_value, *s.best_trial) : "-",
          s.dollars, std::chrono::duration<double>(now - started).count());
    }
  }
  const bool paused = g_interrupts > 0;
  if (paused) {
    // Paused first, so the workers' hand-backs are recorded as a pause, not as preemptions.
    const char* why = SignalName(g_last_signal);
    spdlog::warn("{}: pausing study {}; workers checkpoint and stop ({} again to stop at once)",
                 why, study_id, why);
    if (Status s = coordinator->PauseStudy(study_id, user, why); !s.ok()) {
      spdlog::error("cannot pause study {}: {}", study_id, s.message);
    }
    local.SignalAll(SIGTERM);
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
    while (local.Poll() > 0 && g_interrupts < 2 && std::chrono::steady_clock::now() < deadline) {
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
    if (g_interrupts >= 2) {
      spdlog::warn("{} again: stopping the workers at once", SignalName(g_last_signal));
      local.SignalAll(SIGKILL);
    }
    local.StopAll(/*grace_s=*/0);
    // Workers killed before they handed back: their trials resume from their last checkpoint.
    if (int n = coordinator->InterruptLeases(study_id); n > 0) {
      spdlog::warn(
          "{} trials stopped before their workers handed them back; they resume from "
          "their last checkpoint",
          n);
    }
  } else {
    local.StopAll(/*grace_s=*/15);
  }
  server->Shutdown();
  RemoveRunEndpoint(out_dir);
  for (int sig : {SIGINT, SIGTERM, SIGHUP}) signal(sig, SIG_DFL);
  StudyReport report = Collect(*coordinator, study_id, o.target, config);
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
  // The same study as a page to look at (docs/report.md); without it the run still succeeded.
  std::string html_problem;
  try {
    auto store = OpenSqliteStoreReadOnly(db_path);
    html_problem =
        WriteHtmlReport(HtmlReportFor({report}, *store, db_path), out_dir + "/report.html");
  } catch (const std::exception& e) {
    html_problem = e.what();
  }
  if (!html_problem.empty()) spdlog::warn("report.html not written: {}", html_problem);
  std::cout << "results: " << out_dir << "/results.csv, " << out_dir << "/results.json, "
            << (html_problem.empty() ? out_dir + "/report.html (open it in a browser), " : "")
            << "database " << out_dir << "/sift.db\n";
  if (paused) {
    std::cout << "study " << study_id << " paused; resume it with: sift run --resume " << out_dir
              << "\n";
    return 130;
  }
  if (workers_lost) {
    std::cerr << "workers kept exiting (" << replacements
              << " replacements) before the study finished; see " << out_dir << "/workers/*.log\n";
    return 1;
  }
  // Exit 0 only for a result: a FAILED or cancelled study, or one where no trial reported a
  // value, must fail a CI job.
  if (report.study.record.state == StudyState::kCompleted && report.study.best_trial) return 0;
  std::cerr << "study " << study_id << " produced no result ("
            << ToString(report.study.record.state) << ": " << report.study.record.end_reason
            << ")\n";
  return 1;
}

int EvaluateInRunDir(const std::string& run_dir, int64_t study_id, int64_t trial,
                     double timeout_s) {
  const std::string db_path = run_dir + "/sift.db";
  if (!fs::exists(db_path)) {
    std::cerr << run_dir << ": no run here (no " << db_path << ")\n";
    return 2;
  }
  CoordinatorOptions copts;
  copts.heartbeat_interval_s = 1;
  copts.catalog = common::PriceCatalog::BuiltIn();
  copts.checkpoint_dir = fs::absolute(run_dir + "/checkpoints").string();
  copts.shared_checkpoints = true;
  std::unique_ptr<Coordinator> coordinator;
  std::unique_ptr<Server> server;
  const std::string worker_token = common::RandomToken();
  TrialSummary summary;
  try {
    coordinator = std::make_unique<Coordinator>(OpenSqliteStore(db_path), copts);
    if (Status s = coordinator->RequestEvaluation(study_id, trial, CurrentUser(), &summary);
        !s.ok()) {
      std::cerr << "sift evaluate: " << s.message << "\n";
      return s.code == Status::Code::kUnavailable ? 1 : 2;
    }
    ServerSecurity security;
    security.credentials.Add(common::Role::kWorker, worker_token, "the evaluation's worker");
    server = std::make_unique<Server>(coordinator.get(), "127.0.0.1:0", std::move(security));
  } catch (const std::exception& e) {
    std::cerr << "cannot start the coordinator: " << e.what() << "\n";
    return 1;
  }
  LocalWorkers local;
  auto finished = [&] {
    std::vector<TrialSummary> trials;
    coordinator->ListTrials(study_id, &trials);
    for (const auto& t : trials) {
      if (t.record.number != trial || !t.evaluation) continue;
      summary = t;
      return t.evaluation->state == EvaluationState::kDone ||
             t.evaluation->state == EvaluationState::kFailed;
    }
    return false;
  };
  if (!finished()) {
    std::map<std::string, std::string> env = WorkerEnvironment(1);
    env["SIFT_TOKEN"] = worker_token;
    fs::create_directories(run_dir + "/workers");
    try {
      local.Spawn(
          {ExeDir() + "/sift-worker", "--coordinator",
           "127.0.0.1:" + std::to_string(server->port()), "--name", "evaluate", "--instance-type",
           "local-cpu", "--market", "on-demand", "--threads", "1", "--cache-dir", CacheDir()},
          env, run_dir + "/workers/evaluate.log");
    } catch (const std::exception& e) {
      std::cerr << e.what() << "\n";
      return 1;
    }
    const auto deadline = std::chrono::steady_clock::now() +
                          std::chrono::milliseconds(static_cast<int64_t>(timeout_s * 1000));
    while (!finished() && local.Poll() > 0 && std::chrono::steady_clock::now() < deadline) {
      std::this_thread::sleep_for(std::chrono::milliseconds(200));
    }
    local.StopAll(/*grace_s=*/5);
  }
  server->Shutdown();
  const EvaluationRecord& e = *summary.evaluation;
  if (e.state != EvaluationState::kDone) {
    std::cerr << "trial " << trial << ": test evaluation "
              << (e.state == EvaluationState::kFailed
                      ? "failed: " + e.error
                      : std::string("did not finish; see ") + run_dir + "/workers/evaluate.log")
              << "\n";
    return 1;
  }
  std::cout << "trial " << trial << " held-out test score (scored once):";
  for (const auto& [k, v] : e.metrics) {
    if (common::IsPerClassKey(k) || k == "test_seconds") continue;
    std::cout << " " << k << " " << common::FormatMetric(v, 4);
  }
  std::cout << "\n";
  return 0;
}

}  // namespace sift::coordinator
