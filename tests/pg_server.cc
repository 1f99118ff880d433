#include "tests/pg_server.h"

#include <pwd.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <memory>
#include <stdexcept>

#include "tests/free_port.h"

namespace sift::testing {
namespace {

namespace fs = std::filesystem;

// Runs a shell command line; returns its exit code and fills *out with stdout+stderr.
int Shell(const std::string& cmd, std::string* out) {
  out->clear();
  FILE* p = popen((cmd + " 2>&1").c_str(), "r");
  if (!p) return -1;
  std::array<char, 4096> buf;
  size_t n;
  while ((n = fread(buf.data(), 1, buf.size(), p)) > 0) out->append(buf.data(), n);
  const int status = pclose(p);
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

// SIFT_PG_BINDIR, else the newest Debian server under /usr/lib/postgresql/N/bin.
std::string FindBinDir() {
  if (const char* d = std::getenv("SIFT_PG_BINDIR"); d && *d) return d;
  std::string best;
  int best_version = -1;
  std::error_code ec;
  for (const auto& e : fs::directory_iterator("/usr/lib/postgresql", ec)) {
    const std::string v = e.path().filename().string();
    if (!fs::exists(e.path() / "bin" / "initdb") || v.find_first_not_of("0123456789") != v.npos) {
      continue;
    }
    if (std::stoi(v) > best_version) {
      best_version = std::stoi(v);
      best = (e.path() / "bin").string();
    }
  }
  return best;
}

}  // namespace

PgServer* PgServer::Get(std::string* why) {
  static std::unique_ptr<PgServer> server;
  static std::string problem;
  static bool tried = false;
  if (!tried) {
    tried = true;
    server.reset(new PgServer());
    problem = server->Start();
    if (!problem.empty()) server.reset();
  }
  if (!server) *why = "PostgreSQL server cannot start: " + problem;
  return server.get();
}

std::string PgServer::Start() {
  bin_ = FindBinDir();
  if (bin_.empty()) {
    return "no PostgreSQL server installed (no /usr/lib/postgresql/N/bin/initdb; "
           "scripts/install-deps.sh installs postgresql-15)";
  }
  char tmpl[] = "/tmp/sift-pg-XXXXXX";
  if (!mkdtemp(tmpl)) return "cannot make a temporary directory";
  dir_ = tmpl;
  std::string out;
  if (geteuid() == 0) {
    // initdb and postgres refuse root: the server runs as Debian's postgres user, or nobody.
    for (const char* user : {"postgres", "nobody"}) {
      if (getpwnam(user)) {
        run_as_ = user;
        break;
      }
    }
    if (run_as_.empty()) return "running as root and no unprivileged user (postgres, nobody)";
    chmod(dir_.c_str(), 0755);
    if (Shell("chown " + run_as_ + " " + dir_, &out) != 0) return "chown: " + out;
  }
  const std::string as = run_as_.empty() ? "" : "runuser -u " + run_as_ + " -- ";
  port_ = FreePort();
  // No fsync: a test server's data need not survive a power loss, and it is much faster.
  if (Shell(as + bin_ + "/initdb -D " + dir_ +
                "/data -U sift --auth=trust -E UTF8 --no-sync "
                "--no-instructions",
            &out) != 0) {
    return "initdb failed: " + out;
  }
  if (Shell(as + bin_ + "/pg_ctl -D " + dir_ + "/data -l " + dir_ + "/server.log -w -t 60 " +
                "-o \"-p " + std::to_string(port_) + " -k " + dir_ +
                " -c listen_addresses=127.0.0.1 -c fsync=off -c full_page_writes=off "
                "-c max_connections=200\" start",
            &out) != 0) {
    std::string log;
    Shell("tail -n 20 " + dir_ + "/server.log", &log);
    return "pg_ctl start failed: " + out + log;
  }
  started_ = true;
  return "";
}

std::string PgServer::NewDatabase() {
  const std::string name =
      "sift_test_" + std::to_string(getpid()) + "_" + std::to_string(next_db_++);
  const std::string host = "postgresql://sift@127.0.0.1:" + std::to_string(port_);
  std::string out;
  if (Shell(bin_ + "/psql -q -X " + host + "/postgres -c 'CREATE DATABASE " + name + "'", &out) !=
      0) {
    throw std::runtime_error("CREATE DATABASE " + name + ": " + out);
  }
  return host + "/" + name;
}

int64_t PgServer::DatabaseBytes(const std::string& url) {
  std::string out;
  if (Shell(bin_ + "/psql -q -X -A -t " + url + " -c 'SELECT pg_database_size(current_database())'",
            &out) != 0) {
    return -1;
  }
  try {
    return std::stoll(out);
  } catch (const std::exception&) {
    return -1;
  }
}

PgServer::~PgServer() {
  std::string out;
  if (started_) {
    const std::string as = run_as_.empty() ? "" : "runuser -u " + run_as_ + " -- ";
    Shell(as + bin_ + "/pg_ctl -D " + dir_ + "/data -m immediate -w stop", &out);
  }
  std::error_code ec;
  if (!dir_.empty()) fs::remove_all(dir_, ec);
}

std::string NewTestDatabase(std::string* why) {
#ifndef SIFT_HAVE_POSTGRES
  *why = "this sift was built without libpqxx (scripts/install-deps.sh installs it)";
  return "";
#else
  PgServer* server = PgServer::Get(why);
  return server ? server->NewDatabase() : "";
#endif
}

}  // namespace sift::testing
