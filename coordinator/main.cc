// sift: the coordinator, the embedded run and the user's CLI. Links no LibTorch.
#include <CLI/CLI.hpp>
#include <signal.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <sstream>
#include <thread>

#include "coordinator/client.h"
#include "coordinator/config.h"
#include "coordinator/coordinator.h"
#include "coordinator/embedded_run.h"
#include "coordinator/report.h"
#include "coordinator/server.h"

namespace sc = sift::coordinator;

namespace {

std::atomic<bool> g_stop{false};
void OnSignal(int) { g_stop = true; }

int Validate(const std::string& path) {
  sc::StudyConfig config;
  auto errors = sc::LoadStudyConfig(path, &config);
  std::string data;
  if (errors.empty()) errors = sc::ValidateStudyData(config, &data);
  if (!errors.empty()) {
    std::cerr << path << ": invalid config:\n";
    for (const auto& e : errors) std::cerr << "  " << e << "\n";
    return 2;
  }
  std::cout << path << ": ok: study '" << config.name << "', " << config.space.size()
            << " parameters, searcher " << config.searcher.type << ", scheduler "
            << config.scheduler.type << ", up to " << config.budget.max_trials << " trials x "
            << config.budget.max_epochs << " epochs; data: " << data << "\n";
  return 0;
}

int Submit(const std::string& path, const std::string& address, const std::string& token) {
  std::ifstream f(path);
  if (!f) {
    std::cerr << path << ": cannot read the config\n";
    return 2;
  }
  std::stringstream text;
  text << f.rdbuf();
  sift::v1::CreateStudyRequest req;
  req.set_config(text.str());
  req.set_config_path(path);
  sift::v1::CreateStudyResponse resp;
  auto stub = sift::v1::Studies::NewStub(sc::MakeChannel(address));
  grpc::Status s = stub->CreateStudy(sc::MakeContext(token).get(), req, &resp);
  if (!s.ok()) {
    std::cerr << "CreateStudy failed (" << s.error_code() << "): " << s.error_message() << "\n";
    return s.error_code() == grpc::StatusCode::INVALID_ARGUMENT ? 2 : 1;
  }
  std::cout << "study " << resp.study().id() << " '" << resp.study().name() << "' created\n";
  return 0;
}

int StatusCommand(const std::string& address, const std::string& token, int64_t study_id) {
  auto stub = sift::v1::Studies::NewStub(sc::MakeChannel(address));
  sift::v1::ListStudiesResponse studies;
  grpc::Status s =
      stub->ListStudies(sc::MakeContext(token).get(), sift::v1::ListStudiesRequest(), &studies);
  if (!s.ok()) {
    std::cerr << "cannot reach the coordinator at " << address << ": " << s.error_message()
              << "\n";
    return 1;
  }
  for (const auto& study : studies.studies()) {
    if (study_id > 0 && study.id() != study_id) continue;
    sc::StudyReport report;
    report.study = sc::FromProto(study);
    sift::v1::ListTrialsRequest req;
    req.set_study_id(study.id());
    sift::v1::ListTrialsResponse trials;
    s = stub->ListTrials(sc::MakeContext(token).get(), req, &trials);
    if (!s.ok()) {
      std::cerr << "ListTrials(" << study.id() << "): " << s.error_message() << "\n";
      return 1;
    }
    for (const auto& t : trials.trials()) report.trials.push_back(sc::FromProto(t));
    std::cout << sc::FormatSummary(report) << sc::FormatTable(report) << "\n";
  }
  return 0;
}

int ServeCommand(const std::string& listen, const std::string& db, const std::string& prices,
                 const std::string& token, const std::string& checkpoints, bool shared,
                 double lease_timeout) {
  sc::CoordinatorOptions options;
  options.lease_timeout_s = lease_timeout;
  // Frequent beats bound how much of a lost VM's time the ledger cannot see (one interval).
  options.heartbeat_interval_s = std::clamp(lease_timeout / 6, 0.2, 1.0);
  // Checkpoints live beside the database unless told otherwise.
  options.checkpoint_dir = checkpoints.empty() ? db + ".checkpoints" : checkpoints;
  options.shared_checkpoints = shared;
  if (prices.empty()) {
    options.catalog = sc::PriceCatalog::BuiltIn();
    spdlog::info("price catalog: built in, as of {} (override with --prices FILE)",
                 options.catalog.as_of());
  } else if (std::string p = options.catalog.Load(prices); !p.empty()) {
    std::cerr << p << "\n";
    return 2;
  }
  try {
    sc::Coordinator coordinator(sc::OpenSqliteStore(db), options);
    sc::Server server(&coordinator, listen, token);
    signal(SIGINT, OnSignal);
    signal(SIGTERM, OnSignal);
    spdlog::info("coordinator listening on port {} (database {})", server.port(), db);
    // Machine-readable line for scripts and tests that asked for port 0.
    std::cout << "listening on " << server.port() << std::endl;
    while (!g_stop) std::this_thread::sleep_for(std::chrono::milliseconds(100));
    spdlog::info("shutting down");
    server.Shutdown();
  } catch (const std::exception& e) {
    std::cerr << "coordinator: " << e.what() << "\n";
    return 1;
  }
  return 0;
}

int ReportCommand(const std::string& db, int64_t study_id, const std::string& out,
                  std::optional<double> target) {
  try {
    sc::Coordinator coordinator(sc::OpenSqliteStore(db), {});
    for (const auto& study : coordinator.ListStudies()) {
      if (study_id > 0 && study.record.id != study_id) continue;
      sc::StudyReport report;
      report.study = study;
      report.target = target;
      coordinator.ListTrials(study.record.id, &report.trials);
      // `sift run` keeps checkpoints beside its database; `sift coordinator` in DB.checkpoints.
      const std::string study_dir = "/study-" + std::to_string(study.record.id);
      for (const auto& dir : {(std::filesystem::path(db).parent_path() / "checkpoints").string(),
                              db + ".checkpoints"}) {
        if (std::filesystem::is_directory(dir + study_dir)) {
          report.checkpoint_dir = dir + study_dir;
          break;
        }
      }
      std::cout << sc::FormatTable(report) << "\n" << sc::FormatSummary(report) << "\n";
      if (!out.empty()) {
        if (std::string p = sc::WriteReportFiles(report, out); !p.empty()) {
          std::cerr << p << "\n";
          return 1;
        }
      }
    }
  } catch (const std::exception& e) {
    std::cerr << db << ": " << e.what() << "\n";
    return 1;
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"sift: hyperparameter search that accounts for every dollar"};
  app.require_subcommand(1);
  std::string config, address = "127.0.0.1:7070", token, db = "sift.db", prices, out;
  int64_t study_id = 0;
  double target = -1;
  if (const char* t = getenv("SIFT_TOKEN")) token = t;

  auto* validate = app.add_subcommand("validate", "check a study config and exit (2 if invalid)");
  validate->add_option("config", config, "study config (YAML or JSON)")->required();

  sc::RunOptions run_opts;
  auto* run = app.add_subcommand("run", "embedded: coordinator + local workers + SQLite");
  run->add_option("config", run_opts.config_path, "study config (YAML or JSON)")->required();
  run->add_option("--workers", run_opts.workers, "local worker processes (default: cores/threads)");
  run->add_option("--threads-per-worker", run_opts.threads_per_worker, "LibTorch threads each");
  run->add_option("--out", run_opts.out_dir, "run directory (default runs/<name>-<time>)");
  run->add_option("--prices", run_opts.prices_path, "price catalog JSON");
  run->add_option("--lease-timeout", run_opts.lease_timeout_s, "seconds without heartbeat");
  run->add_option("--target", target, "report the dollars it took to reach this objective");
  run->add_option("--worker-args", run_opts.extra_worker_args, "extra sift-worker arguments");
  run->add_option("--simulate-preemption", run_opts.simulate_preemption,
                  "spot simulator: chance in [0,1] that a lease is reclaimed")
      ->check(CLI::Range(0.0, 1.0));
  run->add_option("--preemption-seed", run_opts.preemption_seed, "seed of the spot simulator");

  auto* submit = app.add_subcommand("submit", "send a study config to a running coordinator");
  submit->add_option("config", config)->required();
  submit->add_option("--coordinator", address, "coordinator address");
  submit->add_option("--token", token, "bearer token (or SIFT_TOKEN)");

  auto* status = app.add_subcommand("status", "show studies and trials of a coordinator");
  status->add_option("--coordinator", address, "coordinator address");
  status->add_option("--study", study_id, "only this study");
  status->add_option("--token", token, "bearer token (or SIFT_TOKEN)");

  std::string listen = "127.0.0.1:7070", checkpoints;
  double lease_timeout = 30;
  bool shared_checkpoints = false;
  auto* serve = app.add_subcommand("coordinator", "run the coordinator service");
  serve->add_option("--listen", listen, "address to listen on (port 0: any free port)");
  serve->add_option("--db", db, "SQLite database (created if missing)");
  serve->add_option("--prices", prices, "price catalog JSON (default: the built-in, dated one)");
  serve->add_option("--token", token, "require this bearer token (or SIFT_TOKEN)");
  serve->add_option("--checkpoint-dir", checkpoints, "checkpoint store (default: DB.checkpoints)");
  serve->add_flag("--shared-checkpoints", shared_checkpoints,
                  "workers reach --checkpoint-dir directly (shared filesystem) instead of gRPC");
  serve->add_option("--lease-timeout", lease_timeout, "seconds without heartbeat");

  auto* report = app.add_subcommand("report", "print a study's report from its database");
  report->add_option("--db", db, "SQLite database")->required();
  report->add_option("--study", study_id, "only this study");
  report->add_option("--out", out, "also write results.csv and results.json here");
  report->add_option("--target", target, "report the dollars it took to reach this objective");

  CLI11_PARSE(app, argc, argv);
  std::optional<double> target_opt;
  if (target >= 0) target_opt = target;
  if (*validate) return Validate(config);
  if (*run) {
    run_opts.target = target_opt;
    return sc::RunEmbedded(run_opts);
  }
  if (*submit) return Submit(config, address, token);
  if (*status) return StatusCommand(address, token, study_id);
  if (*serve) return ServeCommand(listen, db, prices, token, checkpoints, shared_checkpoints, lease_timeout);
  if (*report) return ReportCommand(db, study_id, out, target_opt);
  return 1;
}
