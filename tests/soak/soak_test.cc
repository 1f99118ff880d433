// A short soak (soak.h) on SQLite and on PostgreSQL: 64 simulated workers joining, leaving,
// reclaimed and vanishing, about 30,000 reports, the coordinator killed (SIGKILL) twice and
// stopped (SIGTERM) once under them. Every acknowledged report must be in the store as sent, the
// ledger must equal the trials' costs, and memory, descriptors and the database must not grow
// past generous bounds after warm-up. bench/coordinator/soak.cc is the full run.
#include "tests/soak/soak.h"

#include <gtest/gtest.h>

#include "tests/integration/process.h"
#include "tests/pg_server.h"
#include "tests/soak/process_probe.h"

namespace sift::testing::soak {
namespace soak_test {

Options ShortSoak(const std::string& name) {
  Options o;
  o.sift = BinDir() + "/sift";
  o.prices = SourceDir() + "/examples/prices.json";
  o.dir = TempDir(name);
  o.workers = 64;
  o.reports = 30000;
  o.epochs = 10;
  o.restarts = 3;
  o.samples = 6;
  o.timeout_s = 300;
  return o;
}

void ExpectSoakHeld(const Options& o, const Result& r) {
  std::printf("%s%s", SampleTable(r).c_str(), Summary(r).c_str());
  for (const auto& v : Violations(o, r)) ADD_FAILURE() << v;
}

TEST(Soak, SqliteKeepsEveryReportAndStaysFlatThroughRestarts) {
  Options o = ShortSoak("soak-sqlite");
  o.db = o.dir + "/sift.db";
  o.db_bytes = [db = o.db] { return SqliteBytes(db); };
  ExpectSoakHeld(o, RunSoak(o));
}

TEST(Soak, PostgresKeepsEveryReportAndStaysFlatThroughRestarts) {
#ifndef SIFT_HAVE_POSTGRES
  GTEST_SKIP() << "this sift was built without libpqxx (scripts/install-deps.sh installs it)";
#endif
  std::string why;
  PgServer* server = PgServer::Get(&why);
  if (!server) GTEST_SKIP() << why;
  Options o = ShortSoak("soak-postgres");
  o.db = server->NewDatabase();
  o.db_bytes = [server, url = o.db] { return server->DatabaseBytes(url); };
  ExpectSoakHeld(o, RunSoak(o));
}

}  // namespace soak_test
}  // namespace sift::testing::soak
