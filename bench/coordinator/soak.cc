// The soak at full size (tests/soak/soak.h; tests/soak/soak_test.cc is its short version):
// a real `sift coordinator` on SQLite or PostgreSQL, simulated workers over the real Workers
// service joining, leaving, reclaimed and vanishing, and the coordinator restarted (SIGKILL and
// SIGTERM in turn) while they report. Prints the coordinator's RSS, open descriptors and
// database size at each sample and restart, then what the checks found; exits 1 when an
// invariant broke (a lost or changed report, the ledger apart from the trials' costs, growth).
//
//   coordinator_soak --store sqlite --workers 64 --reports 1000000 --restarts 5 --samples 20
#include "tests/soak/soak.h"

#include <CLI/CLI.hpp>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>
#include <thread>

#include "tests/integration/process.h"
#include "tests/pg_server.h"
#include "tests/soak/process_probe.h"

int main(int argc, char** argv) {
  using namespace sift::testing;
  CLI::App app{"Sift coordinator soak"};
  soak::Options o;
  std::string store = "sqlite";
  app.add_option("--store", store)->check(CLI::IsMember({"sqlite", "postgres"}));
  app.add_option("--workers", o.workers, "simulated worker slots")->check(CLI::PositiveNumber);
  app.add_option("--reports", o.reports, "about this many reports")->check(CLI::PositiveNumber);
  app.add_option("--epochs", o.epochs, "per trial")->check(CLI::PositiveNumber);
  app.add_option("--restarts", o.restarts, "SIGKILL, SIGTERM, ... in turn");
  app.add_option("--samples", o.samples, "samples besides the restarts' and the end's");
  app.add_option("--lease-timeout", o.lease_timeout_s, "the coordinator's, in seconds");
  app.add_option("--timeout", o.timeout_s, "give up after this many seconds");
  app.add_option("--sift", o.sift, "the coordinator binary (default: this build's)");
  CLI11_PARSE(app, argc, argv);
  if (o.sift.empty()) o.sift = BinDir() + "/sift";
  o.prices = SourceDir() + "/examples/prices.json";
  o.dir = TempDir("soak-" + store);
  if (store == "sqlite") {
    o.db = o.dir + "/sift.db";
    o.db_bytes = [db = o.db] { return soak::SqliteBytes(db); };
  } else {
    std::string why;
    PgServer* server = PgServer::Get(&why);
    if (!server) {
      std::fprintf(stderr, "%s\n", why.c_str());
      return 2;
    }
    o.db = server->NewDatabase();
    o.db_bytes = [server, url = o.db] { return server->DatabaseBytes(url); };
  }
  std::ifstream cpuinfo("/proc/cpuinfo");
  std::string cpu;
  for (std::string line; std::getline(cpuinfo, line);) {
    if (line.rfind("model name", 0) == 0) {
      cpu = line.substr(line.find(':') + 2);
      break;
    }
  }
  std::printf("# %s, %d workers, %lld reports asked, %d restarts; %s, %u cores\n", store.c_str(),
              o.workers, static_cast<long long>(o.reports), o.restarts, cpu.c_str(),
              std::thread::hardware_concurrency());
  const soak::Result r = soak::RunSoak(o);
  std::printf("%s%s", soak::SampleTable(r).c_str(), soak::Summary(r).c_str());
  const auto violations = soak::Violations(o, r);
  for (const auto& v : violations) std::printf("VIOLATION: %s\n", v.c_str());
  std::printf("logs and the study's config: %s\n", o.dir.c_str());
  return violations.empty() ? 0 : 1;
}
