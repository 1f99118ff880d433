#include "coordinator/store/sqlite_schema.h"

#include <SQLiteCpp/SQLiteCpp.h>
#include <SQLiteCpp/VariadicBind.h>

#include <stdexcept>

namespace sift::coordinator {
namespace {

constexpr int kSchemaVersion = 3;

constexpr const char* kSchema = R"sql(
CREATE TABLE IF NOT EXISTS studies(
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  name TEXT NOT NULL,
  config TEXT NOT NULL,
  state TEXT NOT NULL,
  end_reason TEXT NOT NULL DEFAULT '',
  created_at REAL NOT NULL,
  ended_at REAL NOT NULL DEFAULT 0);
CREATE TABLE IF NOT EXISTS trials(
  study_id INTEGER NOT NULL REFERENCES studies(id),
  number INTEGER NOT NULL,
  params TEXT NOT NULL,
  state TEXT NOT NULL,
  end_reason TEXT NOT NULL DEFAULT '',
  created_at REAL NOT NULL,
  ended_at REAL NOT NULL DEFAULT 0,
  final_metrics TEXT NOT NULL DEFAULT '{}',
  PRIMARY KEY(study_id, number));
CREATE TABLE IF NOT EXISTS reports(
  study_id INTEGER NOT NULL,
  number INTEGER NOT NULL,
  epoch INTEGER NOT NULL,
  metrics TEXT NOT NULL,
  lease_id TEXT NOT NULL,
  seq INTEGER NOT NULL,
  decision TEXT NOT NULL,
  reason TEXT NOT NULL DEFAULT '',
  created_at REAL NOT NULL,
  checkpoint TEXT NOT NULL DEFAULT '',
  UNIQUE(lease_id, seq));
CREATE INDEX IF NOT EXISTS reports_by_trial ON reports(study_id, number, epoch);
CREATE TABLE IF NOT EXISTS workers(
  id TEXT PRIMARY KEY,
  name TEXT NOT NULL,
  instance_type TEXT NOT NULL,
  market TEXT NOT NULL,
  price_per_hour REAL NOT NULL,
  device TEXT NOT NULL,
  threads INTEGER NOT NULL,
  registered_at REAL NOT NULL);
CREATE TABLE IF NOT EXISTS segments(
  lease_id TEXT PRIMARY KEY,
  worker_id TEXT NOT NULL,
  study_id INTEGER NOT NULL,
  number INTEGER NOT NULL,
  start REAL NOT NULL,
  end REAL,
  price_per_hour REAL NOT NULL,
  market TEXT NOT NULL,
  end_reason TEXT NOT NULL DEFAULT '',
  start_epoch INTEGER NOT NULL DEFAULT 0,
  checkpoint TEXT NOT NULL DEFAULT '',
  wasted_seconds REAL NOT NULL DEFAULT 0);
CREATE INDEX IF NOT EXISTS segments_by_trial ON segments(study_id, number);
CREATE TABLE IF NOT EXISTS idle_segments(
  worker_id TEXT NOT NULL,
  after_study_id INTEGER NOT NULL,
  start REAL NOT NULL,
  end REAL NOT NULL,
  price_per_hour REAL NOT NULL,
  market TEXT NOT NULL,
  end_reason TEXT NOT NULL DEFAULT '');
CREATE INDEX IF NOT EXISTS idle_by_study ON idle_segments(after_study_id);
CREATE TABLE IF NOT EXISTS study_events(
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  study_id INTEGER NOT NULL REFERENCES studies(id),
  at REAL NOT NULL,
  user TEXT NOT NULL,
  action TEXT NOT NULL,
  detail TEXT NOT NULL DEFAULT '');
CREATE TABLE IF NOT EXISTS study_leases(
  study_id INTEGER PRIMARY KEY,
  owner TEXT NOT NULL,
  expires_at REAL NOT NULL,
  epoch INTEGER NOT NULL DEFAULT 0);
CREATE TABLE IF NOT EXISTS evaluations(
  study_id INTEGER NOT NULL REFERENCES studies(id),
  number INTEGER NOT NULL,
  state TEXT NOT NULL,
  requested_by TEXT NOT NULL DEFAULT '',
  requested_at REAL NOT NULL,
  ended_at REAL NOT NULL DEFAULT 0,
  metrics TEXT NOT NULL DEFAULT '{}',
  error TEXT NOT NULL DEFAULT '',
  PRIMARY KEY(study_id, number));
CREATE TABLE IF NOT EXISTS exploits(
  study_id INTEGER NOT NULL REFERENCES studies(id),
  number INTEGER NOT NULL,
  epoch INTEGER NOT NULL,
  from_trial INTEGER NOT NULL,
  params_before TEXT NOT NULL,
  params_after TEXT NOT NULL,
  reason TEXT NOT NULL DEFAULT '',
  created_at REAL NOT NULL,
  PRIMARY KEY(study_id, number, epoch));
)sql";

// Adds `column` to `table` if the table is there without it; says whether it added it.
bool AddColumn(SQLite::Database& db, const std::string& table, const std::string& column,
               const std::string& decl) {
  if (!db.tableExists(table)) return false;  // kSchema creates it whole
  SQLite::Statement q(db, "SELECT 1 FROM pragma_table_info(?) WHERE name = ?");
  SQLite::bind(q, table, column);
  if (q.executeStep()) return false;
  db.exec("ALTER TABLE " + table + " ADD COLUMN " + column + " " + decl);
  return true;
}

}  // namespace

void CheckSqliteSchema(SQLite::Database& db, const std::string& path) {
  const int v = db.execAndGet("PRAGMA user_version").getInt();
  if (v == 0 || !db.tableExists("studies")) {
    throw std::runtime_error(path + ": not a sift database");
  }
  if (v != kSchemaVersion) {
    throw std::runtime_error(
        path + ": database schema version " + std::to_string(v) + ", this sift reads " +
        std::to_string(kSchemaVersion) +
        (v < kSchemaVersion ? " (`sift coordinator --db " + path + "` upgrades it)" : ""));
  }
}

void CreateOrUpgradeSqliteSchema(SQLite::Database& db, const std::string& path) {
  const int version = db.execAndGet("PRAGMA user_version").getInt();
  if (version > kSchemaVersion) {
    throw std::runtime_error(path + ": database schema version " + std::to_string(version) +
                             " is newer than this sift (" + std::to_string(kSchemaVersion) + ")");
  }
  SQLite::Transaction tx(db);
  if (version == 1 && AddColumn(db, "reports", "checkpoint", "TEXT NOT NULL DEFAULT ''")) {
    // Version 1 checkpointed every reported epoch, under the epoch's checkpoint name.
    db.exec("UPDATE reports SET checkpoint = 'trial-' || number || '-e' || epoch || '.ckpt'");
  }
  if (version >= 1 && version <= 2) {
    // The first version 1 had no preemption columns, and versions 1 and 2 both claimed the
    // schema without and with them; a segment without them had no notice and no waste.
    AddColumn(db, "segments", "checkpoint", "TEXT NOT NULL DEFAULT ''");
    AddColumn(db, "segments", "wasted_seconds", "REAL NOT NULL DEFAULT 0");
  }
  AddColumn(db, "study_leases", "epoch", "INTEGER NOT NULL DEFAULT 0");  // the fencing token
  db.exec(kSchema);
  db.exec("PRAGMA user_version=" + std::to_string(kSchemaVersion));
  tx.commit();
}

}  // namespace sift::coordinator
