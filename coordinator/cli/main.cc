// sift: the coordinator, the embedded run and the user's CLI. Links no LibTorch.
#include <absl/synchronization/mutex.h>
#include <signal.h>
#include <spdlog/spdlog.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <atomic>
#include <chrono>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <sstream>
#include <thread>

#include "common/client_channel.h"
#include "common/config/config.h"
#include "common/data_files.h"
#include "common/main_guard.h"
#include "coordinator/cli/control.h"
#include "coordinator/cli/evaluate.h"
#include "coordinator/cli/export.h"
#include "coordinator/cli/migrate.h"
#include "coordinator/cli/report_tags.h"
#include "coordinator/cli/security_flags.h"
#include "coordinator/core/coordinator.h"
#include "coordinator/http/live.h"
#include "coordinator/report/html/html_report.h"
#include "coordinator/report/report.h"
#include "coordinator/report/study_reports.h"
#include "coordinator/rpc/client.h"
#include "coordinator/rpc/server.h"
#include "coordinator/run/embedded_run.h"

namespace sc = sift::coordinator;

namespace {

std::atomic<bool> g_stop{false};
// `--shutdown-when-idle`: batch-scheduled workers (a Slurm array) should end once the work does.
bool g_shutdown_when_idle = false;
void OnSignal(int) { g_stop = true; }

int Validate(const std::string& path, bool check_data) {
  sift::common::StudyConfig config;
  auto errors = sift::common::LoadStudyConfig(path, &config);
  // Where the data lives only on the workers, --no-data-check skips this; they check it anyway.
  std::string data = "not checked (--no-data-check)";
  if (errors.empty() && check_data) {
    errors = sift::common::ValidateStudyData(config, &data);
    if (!errors.empty())
      errors.push_back("(--no-data-check if the data exists only on the workers)");
  }
  if (!errors.empty()) {
    std::cerr << path << ": invalid config:\n";
    for (const auto& e : errors) std::cerr << "  " << e << "\n";
    return 2;
  }
  std::cout << path << ": ok: study '" << config.name << "', " << config.space.size()
            << " parameters, searcher " << config.searcher.type << ", scheduler "
            << config.scheduler.type << ", up to " << config.budget.max_trials << " trials x "
            << config.budget.max_epochs << " epochs; data: " << data << "\n";
  for (const auto& note : config.notes) std::cout << "  note: " << note << "\n";
  return 0;
}

int Submit(const std::string& path, const sift::common::ClientOptions& client) {
  // Read as `sift run` reads it (a config without a name is named after its file); the
  // coordinator checks it again and answers with every error.
  sift::common::StudyConfig parsed;
  std::string text;
  const auto errors = sift::common::LoadStudyConfig(path, &parsed, &text);
  if (text.empty() && !errors.empty()) {
    std::cerr << errors[0] << "\n";
    return 2;
  }
  sift::v1::CreateStudyRequest req;
  req.set_config(text);
  // Absolute: the coordinator takes relative data paths from the config's folder.
  req.set_config_path(std::filesystem::absolute(path).string());
  sift::v1::CreateStudyResponse resp;
  auto stub = sift::v1::Studies::NewStub(sift::common::MakeChannel(client));
  grpc::Status s = stub->CreateStudy(sc::MakeContext(client.token).get(), req, &resp);
  if (!s.ok()) {
    std::cerr << "CreateStudy failed (" << s.error_code() << "): " << s.error_message() << "\n";
    return s.error_code() == grpc::StatusCode::INVALID_ARGUMENT ? 2 : 1;
  }
  std::cout << "study " << resp.study().id() << " '" << resp.study().name() << "' created\n";
  return 0;
}

// One status screen into `out`; `open` tells whether any shown study is still running or paused.
int StatusOnce(sift::v1::Studies::Stub& stub, const sift::common::ClientOptions& client,
               int64_t study_id, std::ostream& out, bool* open) {
  sift::v1::ListStudiesResponse studies;
  grpc::Status s = stub.ListStudies(sc::MakeContext(client.token).get(),
                                    sift::v1::ListStudiesRequest(), &studies);
  if (!s.ok()) {
    std::cerr << "cannot reach the coordinator at " << client.address << ": " << s.error_message()
              << "\n";
    return 1;
  }
  *open = false;
  for (const auto& study : studies.studies()) {
    if (study_id > 0 && study.id() != study_id) continue;
    *open = *open || study.state() == sift::v1::STUDY_RUNNING ||
            study.state() == sift::v1::STUDY_PAUSED;
    sc::StudyReport report;
    report.study = sc::FromProto(study);
    report.objectives = report.study.objectives;  // several: the frontier (empty for one)
    report.constraints = report.study.constraints;
    sift::v1::ListTrialsRequest req;
    req.set_study_id(study.id());
    sift::v1::ListTrialsResponse trials;
    s = stub.ListTrials(sc::MakeContext(client.token).get(), req, &trials);
    if (!s.ok()) {
      std::cerr << "ListTrials(" << study.id() << "): " << s.error_message() << "\n";
      return 1;
    }
    for (const auto& t : trials.trials()) report.trials.push_back(sc::FromProto(t));
    out << sc::FormatSummary(report) << sc::FormatStudyEvents(report.study)
        << sc::FormatTable(report) << "\n";
  }
  return 0;
}

// `watch_s` > 0 redraws the screen in place every so many seconds until no shown study is
// running or paused (or Ctrl-C).
int StatusCommand(const sift::common::ClientOptions& client, int64_t study_id, double watch_s) {
  auto stub = sift::v1::Studies::NewStub(sift::common::MakeChannel(client));
  while (true) {
    std::ostringstream screen;
    bool open = false;
    if (int rc = StatusOnce(*stub, client, study_id, screen, &open); rc != 0) return rc;
    if (watch_s <= 0) {
      std::cout << screen.str();
      return 0;
    }
    const std::time_t now = std::time(nullptr);
    char stamp[32];
    std::strftime(stamp, sizeof stamp, "%H:%M:%S", std::localtime(&now));
    // Home and clear, then the whole screen at once: no flicker of a half-drawn table.
    std::cout << "\x1b[H\x1b[2J"
              << "sift status  " << client.address << "  " << stamp << "  (every " << watch_s
              << " s; Ctrl-C to leave)\n\n"
              << screen.str() << std::flush;
    if (!open) return 0;
    std::this_thread::sleep_for(std::chrono::milliseconds(static_cast<int64_t>(watch_s * 1000)));
  }
}

int ServeCommand(const std::string& listen, const std::string& db, const std::string& prices,
                 sc::SecurityFlags security, const std::string& checkpoints, bool shared,
                 double lease_timeout, const sc::CoordinatorOptions& limits,
                 const std::string& http, bool http_plaintext) {
  sc::CoordinatorOptions options = sc::SharedDatabaseOptions(db, listen, limits.study_lease_s);
  options.max_running_studies = limits.max_running_studies;
  options.quotas = limits.quotas;
  for (const auto& q : options.quotas) {
    spdlog::info("quota {}: ${:.4f} across the studies tagged so", q.Name(), q.dollars);
  }
  options.config_limits = limits.config_limits;
  // A file-size limit (RLIMIT_FSIZE) must fail the write, not kill the coordinator.
  signal(SIGXFSZ, SIG_IGN);
  options.lease_timeout_s = lease_timeout;
  // Frequent beats bound how much of a lost VM's time the ledger cannot see (one interval).
  options.heartbeat_interval_s = std::clamp(lease_timeout / 6, 0.2, 1.0);
  // Checkpoints live beside the database unless told otherwise.
  options.checkpoint_dir = !checkpoints.empty()    ? checkpoints
                           : sc::IsPostgresUrl(db) ? "sift-checkpoints"
                                                   : db + ".checkpoints";
  options.shared_checkpoints = shared;
  options.shutdown_when_idle = g_shutdown_when_idle;
  if (prices.empty()) {
    options.catalog = sift::common::PriceCatalog::BuiltIn();
    spdlog::info("price catalog: built in, as of {} (override with --prices FILE)",
                 options.catalog.as_of());
  } else if (std::string p = options.catalog.Load(prices); !p.empty()) {
    std::cerr << p << "\n";
    return 2;
  }
  try {
    sc::Coordinator coordinator(sc::OpenStore(db), options);
    sc::LogSecurity(security.server, listen);
    // The HTTP port serves with the gRPC port's certificate.
    sc::HttpOptions http_options;
    http_options.tls_cert = security.server.tls_cert;
    http_options.tls_key = security.server.tls_key;
    http_options.plaintext_off_loopback = http_plaintext;
    sc::Server server(&coordinator, listen, std::move(security.server));
    signal(SIGINT, OnSignal);
    signal(SIGTERM, OnSignal);
    spdlog::info("coordinator listening on port {} (database {})", server.port(),
                 sc::RedactDbUrl(db));
    // Machine-readable lines for scripts and tests that asked for port 0.
    std::cout << "listening on " << server.port() << std::endl;
    std::unique_ptr<sc::LiveHttp> live;
    if (!http.empty()) {
      live = std::make_unique<sc::LiveHttp>(http, &coordinator, &server, sc::HtmlReportPage(db),
                                            http_options);
      spdlog::info("live report on {}://{}:{}/ and Prometheus metrics on /metrics",
                   http_options.tls_cert.empty() ? "http" : "https",
                   http.substr(0, http.rfind(':')), live->port());
      std::cout << "http on " << live->port() << std::endl;
    }
    while (!g_stop) std::this_thread::sleep_for(std::chrono::milliseconds(100));
    spdlog::info("shutting down");
    server.Shutdown();
    coordinator.ReleaseStudyLeases();
  } catch (const std::exception& e) {
    std::cerr << "coordinator: " << e.what() << "\n";
    return 1;
  }
  return 0;
}

int ReportCommand(const std::string& db, int64_t study_id, const std::string& out,
                  std::optional<double> target, const std::string& html) {
  if (!html.empty()) return sc::HtmlReportCommand(db, study_id, target, html);
  try {
    for (const auto& report : sc::LoadStudyReports(db, study_id, target)) {
      std::cout << sc::FormatTable(report) << "\n" << sc::FormatSummary(report) << "\n";
      if (!out.empty()) {
        if (std::string p = sc::WriteReportFiles(report, out); !p.empty()) {
          std::cerr << p << "\n";
          return 1;
        }
      }
    }
  } catch (const std::exception& e) {
    const std::string what = e.what();
    const std::string name = sc::RedactDbUrl(db);
    std::cerr << (what.find(name) == std::string::npos ? name + ": " : "") << what << "\n";
    return 1;
  }
  return 0;
}

}  // namespace

int Main(int argc, char** argv) {
  CLI::App app{"sift: hyperparameter search that accounts for every dollar"};
  app.require_subcommand(1);
  std::string config, db = "sift.db", prices, out;
  int64_t study_id = 0;
  double target = -1;
  sift::common::ClientOptions client;

  auto* validate = app.add_subcommand("validate", "check a study config and exit (2 if invalid)");
  validate->add_option("config", config, "study config (YAML or JSON)")->required();
  bool no_data_check = false;
  validate->add_flag("--no-data-check", no_data_check,
                     "do not check data.dir here (the data exists only on the workers)");

  sc::RunOptions run_opts;
  auto* run = app.add_subcommand("run", "embedded: coordinator + local workers + SQLite");
  run->add_option("config", run_opts.config_path, "study config (YAML or JSON)");
  run->add_option("--resume", run_opts.out_dir, "resume the unfinished study of this run directory")
      ->each([&](const std::string&) { run_opts.resume = true; });
  run->add_flag("--new", run_opts.start_new, "start a new study even where --out holds one");
  run->add_option("--workers", run_opts.workers, "local worker processes (default: cores/threads)");
  run->add_option("--threads-per-worker", run_opts.threads_per_worker, "LibTorch threads each");
  run->add_option("--out", run_opts.out_dir,
                  "run directory (default runs/<name>-<time>); one holding an unfinished study "
                  "of the same config resumes it");
  run->add_option("--prices", run_opts.prices_path, "price catalog JSON");
  run->add_option("--lease-timeout", run_opts.lease_timeout_s, "seconds without heartbeat");
  run->add_option("--target", target, "report the dollars it took to reach this objective");
  run->add_option("--worker-args", run_opts.extra_worker_args, "extra sift-worker arguments");
  run->add_option("--simulate-preemption", run_opts.simulate_preemption,
                  "spot simulator: chance in [0,1] that a lease is reclaimed")
      ->check(CLI::Range(0.0, 1.0));
  run->add_option("--preemption-seed", run_opts.preemption_seed, "seed of the spot simulator");
  run->add_option("--http", run_opts.http, "serve the live report and /metrics on HOST:PORT");
  run->add_flag("--http-plaintext", run_opts.http_plaintext,
                "serve --http off loopback anyway (plaintext: tokens and cookies in the clear)");

  auto* submit = app.add_subcommand("submit", "send a study config to a running coordinator");
  submit->add_option("config", config)->required();
  sift::common::AddClientFlags(submit, &client);

  auto* status = app.add_subcommand("status", "show studies and trials of a coordinator");
  sift::common::AddClientFlags(status, &client);
  status->add_option("--study", study_id, "only this study");
  std::string status_run;
  status->add_option("--run", status_run, "the run directory of a running `sift run`");
  double watch_s = 0;
  status->add_option("--watch", watch_s, "redraw every SECONDS until the studies end")
      ->expected(0, 1)
      ->default_str("2")
      ->check(CLI::Range(0.1, 3600.0));
  sc::AddControlCommands(app);
  sc::AddExportCommand(app);
  sc::AddEvaluateCommand(app);

  std::string listen = "127.0.0.1:7070", checkpoints;
  double lease_timeout = 30;
  bool shared_checkpoints = false;
  auto* serve = app.add_subcommand("coordinator", "run the coordinator service");
  serve->add_option("--listen", listen, "address to listen on (port 0: any free port)");
  serve->add_option("--db", db,
                    "SQLite database (created if missing) or postgresql://USER@HOST:PORT/DB");
  serve->add_option("--prices", prices, "price catalog JSON (default: the built-in, dated one)");
  sc::SecurityFlags security;
  sc::AddSecurityFlags(serve, &security);
  serve->add_option("--checkpoint-dir", checkpoints, "checkpoint store (default: DB.checkpoints)");
  serve->add_flag("--shared-checkpoints", shared_checkpoints,
                  "workers reach --checkpoint-dir directly (shared filesystem) instead of gRPC");
  serve->add_option("--lease-timeout", lease_timeout, "seconds without heartbeat");
  sc::CoordinatorOptions limits;
  serve
      ->add_option("--max-running-studies", limits.max_running_studies,
                   "studies running at once at most (default 64)")
      ->check(CLI::PositiveNumber);
  serve
      ->add_option("--max-config-bytes", limits.config_limits.max_bytes,
                   "largest study config accepted (default 131072)")
      ->check(CLI::PositiveNumber);
  std::string http;
  serve->add_option("--http", http,
                    "serve the live report and /metrics on HOST:PORT (TLS with --tls-cert)");
  bool http_plaintext = false;
  serve->add_flag("--http-plaintext", http_plaintext,
                  "serve --http without TLS off loopback (tokens and cookies in the clear)");
  serve->add_flag("--shutdown-when-idle", g_shutdown_when_idle,
                  "tell workers (--exit-when-idle) to exit once every study has ended");
  serve
      ->add_option("--study-lease", limits.study_lease_s,
                   "postgresql:// --db: seconds a study's lease lasts unrenewed before another "
                   "coordinator on the database takes it over (default 15)")
      ->check(CLI::PositiveNumber);
  std::vector<std::string> quotas;
  serve->add_option("--quota", quotas,
                    "KEY=VALUE:DOLLARS: a dollar limit on all studies tagged KEY=VALUE together, "
                    "enforced as a study's own max_dollars (repeatable)");
  sc::AddMigrateCommand(app);

  auto* report = app.add_subcommand("report", "print a study's report from its database");
  std::string report_run, html;
  auto* report_db = report->add_option("--db", db, "SQLite database or postgresql:// URL");
  report->add_option("--run", report_run, "a `sift run` directory (reads its sift.db)")
      ->excludes(report_db);
  report->add_option("--html", html, "write a self-contained HTML report (charts) to this file");
  report->add_option("--study", study_id, "only this study");
  report->add_option("--out", out, "also write results.csv and results.json here");
  report->add_option("--target", target, "report the dollars it took to reach this objective");
  std::string by;
  report->add_option("--by", by,
                     "roll studies up: 'tag' (every tag) or 'tag:KEY' (dollars, trials, best)");

  CLI11_PARSE(app, argc, argv);
  sift::common::GuardedProgram() = "sift " + app.get_subcommands().front()->get_name();
  std::optional<double> target_opt;
  if (target >= 0) target_opt = target;
  if (*validate) return Validate(config, !no_data_check);
  if (*run) {
    run_opts.target = target_opt;
    return sc::RunEmbedded(run_opts);
  }
  if (*submit) return Submit(config, client);
  if (*status) {
    if (int rc = sc::ResolveRunDir(status_run, &client); rc != 0) return rc;
    return StatusCommand(client, study_id, watch_s);
  }
  if (int rc = sc::RunControlCommand(app); rc >= 0) return rc;
  if (int rc = sc::RunMigrateCommand(app); rc >= 0) return rc;
  if (int rc = sc::RunExportCommand(app); rc >= 0) return rc;
  if (int rc = sc::RunEvaluateCommand(app); rc >= 0) return rc;
  if (*serve) {
    for (const auto& text : quotas) {
      sc::Quota q;
      if (std::string problem = sc::ParseQuota(text, &q); !problem.empty()) {
        std::cerr << "sift coordinator: " << problem << "\n";
        return 2;
      }
      limits.quotas.push_back(q);
    }
    return ServeCommand(listen, db, prices, std::move(security), checkpoints, shared_checkpoints,
                        lease_timeout, limits, http, http_plaintext);
  }
  if (*report) {
    if (report_run.empty() && report_db->count() == 0) {
      std::cerr << "sift report: --db FILE or --run DIR is required\n";
      return 2;
    }
    if (!report_run.empty()) db = report_run + "/sift.db";
    if (!by.empty()) return sc::TagReportCommand(db, by, out);
    return ReportCommand(db, study_id, out, target_opt, html);
  }
  return 1;
}

int main(int argc, char** argv) {
  // Debian builds Abseil without NDEBUG, so every absl::Mutex lock inside gRPC ran its deadlock
  // detector (a lock graph, GraphCycles): 2-3% of the RPC threads' CPU under load
  // (bench/coordinator/README.md). gRPC's own locks are not ours to debug.
  absl::SetMutexDeadlockDetectionMode(absl::OnDeadlockCycle::kIgnore);
  return sift::common::GuardedMain("sift", [&] { return Main(argc, argv); });
}
