// A real PostgreSQL server for tests: Debian's initdb and pg_ctl in a temporary directory, as an
// unprivileged user (PostgreSQL refuses to run as root), listening on 127.0.0.1 only with trust
// authentication. One server per test binary, started at first use and stopped at exit; each
// test gets a fresh database on it.
#pragma once

#include <cstdint>
#include <string>

namespace sift::testing {

class PgServer {
 public:
  // The binary's server; nullptr with *why set when it cannot start (no PostgreSQL server
  // installed, no unprivileged user to run it as, initdb or pg_ctl failing: their output).
  static PgServer* Get(std::string* why);

  // A fresh, empty database; returns its postgresql:// URL.
  std::string NewDatabase();
  // The size on disk of the database at `url` (pg_database_size); -1 when psql fails.
  int64_t DatabaseBytes(const std::string& url);
  int port() const { return port_; }

  ~PgServer();

 private:
  PgServer() = default;
  std::string Start();  // "" or why not

  std::string dir_, bin_, run_as_;  // run_as_: "" when not root
  int port_ = 0;
  int next_db_ = 0;
  bool started_ = false;
};

// A fresh database on the binary's server: its URL, or "" with *why when there is none (this
// sift built without libpqxx, or no server: PgServer::Get's reasons). Tests skip with *why.
std::string NewTestDatabase(std::string* why);

}  // namespace sift::testing
