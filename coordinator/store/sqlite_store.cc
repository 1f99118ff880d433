#include <SQLiteCpp/SQLiteCpp.h>
#include <SQLiteCpp/VariadicBind.h>
#include <spdlog/spdlog.h>

#include <filesystem>
#include <map>
#include <memory>
#include <mutex>

#include "common/params_json.h"
#include "coordinator/store/json.h"
#include "coordinator/store/sqlite_schema.h"
#include "coordinator/store/store.h"
#include "coordinator/store/wal_checkpointer.h"

namespace sift::coordinator {
namespace {

// The database's clock in unix seconds, for study leases.
constexpr const char* kDbNow = "((julianday('now') - 2440587.5) * 86400.0)";

class SqliteStore : public Store {
 public:
  SqliteStore(const std::string& path, bool read_only)
      : db_(path, read_only
                      ? SQLite::OPEN_READONLY | SQLite::OPEN_FULLMUTEX
                      : SQLite::OPEN_READWRITE | SQLite::OPEN_CREATE | SQLite::OPEN_FULLMUTEX) {
    if (read_only) {
      db_.exec("PRAGMA busy_timeout=5000");
      CheckSqliteSchema(db_, path);
      return;
    }
    const bool wal = db_.execAndGet("PRAGMA journal_mode=WAL").getString() == "wal";
    // WAL + NORMAL survives a process crash (kill -9) without losing committed transactions;
    // only a power loss can drop the last few, which the workers then re-report.
    db_.exec("PRAGMA synchronous=NORMAL");
    db_.exec("PRAGMA foreign_keys=ON");
    db_.exec("PRAGMA busy_timeout=5000");
    CreateOrUpgradeSqliteSchema(db_, path);
    if (wal) {
      try {
        checkpointer_ = std::make_unique<WalCheckpointer>(db_.getHandle(), path);
      } catch (const std::exception& e) {  // the store works without it, only with slower commits
        spdlog::warn("{}; SQLite checkpoints inside its commits instead", e.what());
      }
    }
  }

  void Atomically(const std::function<void()>& fn) override {
    std::lock_guard<std::recursive_mutex> lock(mu_);
    // BEGIN and COMMIT compiled once, like the report path's statements: a group commit runs
    // a transaction per batch, and parsing them was a visible share of its writer's CPU.
    Exec(Cached("BEGIN"));
    try {
      fn();
      Exec(Cached("COMMIT"));
    } catch (...) {
      try {
        Exec(Cached("ROLLBACK"));  // a failed COMMIT may have ended the transaction already
      } catch (...) {
      }
      throw;
    }
  }

  int64_t CreateStudy(const StudyRecord& s) override {
    std::lock_guard<std::recursive_mutex> lock(mu_);
    SQLite::Statement q(db_,
                        "INSERT INTO studies(id, name, config, state, end_reason, created_at, "
                        "ended_at) VALUES(?,?,?,?,?,?,?)");
    SQLite::bind(q, s.id, s.name, s.config_text, ToString(s.state), s.end_reason, s.created_at,
                 s.ended_at);
    if (s.id == 0) q.bind(1);  // NULL: the next id
    q.exec();
    return db_.getLastInsertRowid();
  }

  int64_t ClaimStudy(int64_t study_id, const std::string& owner, double lease_s,
                     int64_t held_epoch) override {
    // As PostgreSQL's: the database's clock (this host's, the only one a SQLite file is shared
    // on), a renewal keeps the epoch and a take raises it.
    std::lock_guard<std::recursive_mutex> lock(mu_);
    SQLite::Statement q(db_,
                        "INSERT INTO study_leases AS l(study_id, owner, expires_at, epoch) "
                        "VALUES(?1, ?2, " +
                            std::string(kDbNow) +
                            " + ?3, 1) ON CONFLICT(study_id) DO UPDATE "
                            "SET owner=excluded.owner, expires_at=excluded.expires_at, "
                            "epoch=CASE WHEN ?4 > 0 THEN l.epoch ELSE l.epoch + 1 END "
                            "WHERE CASE WHEN ?4 > 0 THEN l.owner=excluded.owner AND l.epoch=?4 "
                            "ELSE l.owner=excluded.owner OR l.expires_at < " +
                            kDbNow + " END RETURNING epoch");
    SQLite::bind(q, study_id, owner, lease_s, held_epoch);
    return q.executeStep() ? q.getColumn(0).getInt64() : 0;
  }

  void ReleaseStudy(int64_t study_id, const std::string& owner) override {
    // Expired, not deleted: the row keeps its epoch, which must never go back.
    std::lock_guard<std::recursive_mutex> lock(mu_);
    SQLite::Statement q(db_,
                        "UPDATE study_leases SET expires_at=-1e308 WHERE study_id=? AND owner=?");
    SQLite::bind(q, study_id, owner);
    q.exec();
  }

  void CheckStudyLease(int64_t study_id, int64_t epoch) override {
    // One writer at a time: a takeover's write cannot commit inside this transaction.
    std::lock_guard<std::recursive_mutex> lock(mu_);
    SQLite::Statement q(db_, "SELECT epoch FROM study_leases WHERE study_id=?");
    SQLite::bind(q, study_id);
    const int64_t current = q.executeStep() ? q.getColumn(0).getInt64() : 0;
    if (current != epoch) throw StudyFenced(study_id, epoch, current);
  }

  void UpdateStudy(int64_t id, StudyState state, const std::string& end_reason,
                   double ended_at) override {
    std::lock_guard<std::recursive_mutex> lock(mu_);
    SQLite::Statement q(db_, "UPDATE studies SET state=?, end_reason=?, ended_at=? WHERE id=?");
    SQLite::bind(q, ToString(state), end_reason, ended_at, id);
    q.exec();
  }

  std::optional<StudyRecord> GetStudy(int64_t id) override {
    std::lock_guard<std::recursive_mutex> lock(mu_);
    auto all = QueryStudies("WHERE id=" + std::to_string(id));
    if (all.empty()) return std::nullopt;
    return all.front();
  }

  std::vector<StudyRecord> ListStudies() override {
    std::lock_guard<std::recursive_mutex> lock(mu_);
    return QueryStudies("");
  }

  void InsertStudyEvent(const StudyEventRecord& e) override {
    std::lock_guard<std::recursive_mutex> lock(mu_);
    SQLite::Statement q(db_,
                        "INSERT INTO study_events(study_id, at, user, action, detail) "
                        "VALUES(?,?,?,?,?)");
    SQLite::bind(q, e.study_id, e.at, e.user, e.action, e.detail);
    q.exec();
  }

  std::vector<StudyEventRecord> ListStudyEvents(int64_t study_id) override {
    std::lock_guard<std::recursive_mutex> lock(mu_);
    SQLite::Statement q(db_,
                        "SELECT study_id, at, user, action, detail FROM study_events "
                        "WHERE study_id=? ORDER BY id");
    SQLite::bind(q, study_id);
    std::vector<StudyEventRecord> out;
    while (q.executeStep()) {
      out.push_back({q.getColumn(0).getInt64(), q.getColumn(1).getDouble(),
                     q.getColumn(2).getString(), q.getColumn(3).getString(),
                     q.getColumn(4).getString()});
    }
    return out;
  }

  void InsertTrial(const TrialRecord& t) override {
    std::lock_guard<std::recursive_mutex> lock(mu_);
    SQLite::Statement& q = Cached(
        "INSERT INTO trials(study_id, number, params, state, end_reason, "
        "created_at, ended_at, final_metrics) VALUES(?,?,?,?,?,?,?,?)");
    SQLite::bind(q, t.study_id, t.number, common::ParamsToJsonText(t.params),
                 search::ToString(t.state), t.end_reason, t.created_at, t.ended_at,
                 MetricsToJsonText(t.final_metrics));
    Exec(q);
  }

  void UpdateTrialState(int64_t study_id, int64_t number, search::TrialState state,
                        const std::string& end_reason, double ended_at) override {
    std::lock_guard<std::recursive_mutex> lock(mu_);
    SQLite::Statement& q =
        Cached("UPDATE trials SET state=?, end_reason=?, ended_at=? WHERE study_id=? AND number=?");
    SQLite::bind(q, search::ToString(state), end_reason, ended_at, study_id, number);
    Exec(q);
  }

  void SetFinalMetrics(int64_t study_id, int64_t number,
                       const std::map<std::string, double>& metrics) override {
    std::lock_guard<std::recursive_mutex> lock(mu_);
    SQLite::Statement& q =
        Cached("UPDATE trials SET final_metrics=? WHERE study_id=? AND number=?");
    SQLite::bind(q, MetricsToJsonText(metrics), study_id, number);
    Exec(q);
  }

  std::vector<TrialRecord> ListTrials(int64_t study_id) override {
    std::lock_guard<std::recursive_mutex> lock(mu_);
    SQLite::Statement q(db_,
                        "SELECT number, params, state, end_reason, created_at, ended_at, "
                        "final_metrics FROM trials WHERE study_id=? ORDER BY number");
    SQLite::bind(q, study_id);
    std::vector<TrialRecord> out;
    while (q.executeStep()) {
      TrialRecord t;
      t.study_id = study_id;
      t.number = q.getColumn(0).getInt64();
      t.params = common::ParamsFromJsonText(q.getColumn(1).getString());
      t.state = TrialStateFromString(q.getColumn(2).getString());
      t.end_reason = q.getColumn(3).getString();
      t.created_at = q.getColumn(4).getDouble();
      t.ended_at = q.getColumn(5).getDouble();
      t.final_metrics = MetricsFromJsonText(q.getColumn(6).getString(),
                                            "trial " + std::to_string(t.number) + " final_metrics");
      out.push_back(std::move(t));
    }
    return out;
  }

  void InsertReport(const ReportRecord& r) override {
    std::lock_guard<std::recursive_mutex> lock(mu_);
    SQLite::Statement& q = Cached(
        "INSERT INTO reports(study_id, number, epoch, metrics, lease_id, seq, decision, reason, "
        "created_at, checkpoint) VALUES(?,?,?,?,?,?,?,?,?,?)");
    SQLite::bind(q, r.study_id, r.number, r.epoch, MetricsToJsonText(r.metrics), r.lease_id, r.seq,
                 r.decision, r.reason, r.created_at, r.checkpoint);
    Exec(q);
  }

  std::optional<ReportRecord> FindReport(const std::string& lease_id, int64_t seq) override {
    std::lock_guard<std::recursive_mutex> lock(mu_);
    std::optional<ReportRecord> found;
    QueryReports(
        "WHERE lease_id=? AND seq=?", [&](SQLite::Statement& q) { SQLite::bind(q, lease_id, seq); },
        [&](ReportRecord& r) {
          if (!found) found = std::move(r);
        });
    return found;
  }

  std::vector<ReportRecord> ListReports(int64_t study_id) override {
    std::vector<ReportRecord> out;
    QueryStudyReports(study_id, [&](ReportRecord& r) { out.push_back(std::move(r)); });
    return out;
  }

  void ForEachReport(int64_t study_id,
                     const std::function<void(const ReportRecord&)>& fn) override {
    QueryStudyReports(study_id, [&](ReportRecord& r) { fn(r); });
  }

  void UpsertWorker(const WorkerRecord& w) override {
    std::lock_guard<std::recursive_mutex> lock(mu_);
    SQLite::Statement q(db_,
                        "INSERT OR REPLACE INTO workers(id, name, instance_type, market, "
                        "price_per_hour, device, threads, registered_at) VALUES(?,?,?,?,?,?,?,?)");
    SQLite::bind(q, w.id, w.name, w.instance_type, w.market, w.price_per_hour, w.device, w.threads,
                 w.registered_at);
    q.exec();
  }

  std::vector<WorkerRecord> ListWorkers() override {
    std::lock_guard<std::recursive_mutex> lock(mu_);
    SQLite::Statement q(db_,
                        "SELECT id, name, instance_type, market, price_per_hour, device, threads, "
                        "registered_at FROM workers ORDER BY registered_at");
    std::vector<WorkerRecord> out;
    while (q.executeStep()) {
      WorkerRecord w;
      w.id = q.getColumn(0).getString();
      w.name = q.getColumn(1).getString();
      w.instance_type = q.getColumn(2).getString();
      w.market = q.getColumn(3).getString();
      w.price_per_hour = q.getColumn(4).getDouble();
      w.device = q.getColumn(5).getString();
      w.threads = q.getColumn(6).getInt64();
      w.registered_at = q.getColumn(7).getDouble();
      out.push_back(std::move(w));
    }
    return out;
  }

  void OpenSegment(const SegmentRecord& s) override {
    std::lock_guard<std::recursive_mutex> lock(mu_);
    SQLite::Statement& q = Cached(
        "INSERT INTO segments(lease_id, worker_id, study_id, number, start, end, "
        "price_per_hour, market, end_reason, start_epoch) "
        "VALUES(?,?,?,?,?,NULL,?,?,'',?)");
    SQLite::bind(q, s.lease_id, s.worker_id, s.study_id, s.number, s.start, s.price_per_hour,
                 s.market, s.start_epoch);
    Exec(q);
  }

  void CloseSegment(int64_t study_id, const std::string& lease_id, double end,
                    const std::string& reason, const std::string& checkpoint,
                    double wasted_seconds) override {
    std::lock_guard<std::recursive_mutex> lock(mu_);
    SQLite::Statement& q = Cached(
        "UPDATE segments SET end=?, end_reason=?, checkpoint=?, "
        "wasted_seconds=wasted_seconds+? WHERE lease_id=? AND study_id=? AND end IS NULL");
    SQLite::bind(q, end, reason, checkpoint, wasted_seconds, lease_id, study_id);
    Exec(q);
  }

  void SetRedoneSeconds(int64_t study_id, const std::string& lease_id, double seconds) override {
    std::lock_guard<std::recursive_mutex> lock(mu_);
    SQLite::Statement q(db_,
                        "UPDATE segments SET wasted_seconds=? WHERE lease_id=? AND study_id=? "
                        "AND end IS NULL");
    SQLite::bind(q, seconds, lease_id, study_id);
    q.exec();
  }

  void UpsertEvaluation(const EvaluationRecord& e) override {
    std::lock_guard<std::recursive_mutex> lock(mu_);
    SQLite::Statement q(db_,
                        "INSERT OR REPLACE INTO evaluations(study_id, number, state, requested_by, "
                        "requested_at, ended_at, metrics, error) VALUES(?,?,?,?,?,?,?,?)");
    SQLite::bind(q, e.study_id, e.number, ToString(e.state), e.requested_by, e.requested_at,
                 e.ended_at, MetricsToJsonText(e.metrics), e.error);
    q.exec();
  }

  std::vector<EvaluationRecord> ListEvaluations(int64_t study_id) override {
    std::lock_guard<std::recursive_mutex> lock(mu_);
    std::vector<EvaluationRecord> out;
    if (!db_.tableExists("evaluations")) return out;  // a read-only database made before it
    SQLite::Statement q(db_,
                        "SELECT number, state, requested_by, requested_at, ended_at, metrics, "
                        "error FROM evaluations WHERE study_id=? ORDER BY number");
    SQLite::bind(q, study_id);
    while (q.executeStep()) {
      EvaluationRecord e;
      e.study_id = study_id;
      e.number = q.getColumn(0).getInt64();
      e.state = EvaluationStateFromString(q.getColumn(1).getString());
      e.requested_by = q.getColumn(2).getString();
      e.requested_at = q.getColumn(3).getDouble();
      e.ended_at = q.getColumn(4).getDouble();
      e.metrics = MetricsFromJsonText(q.getColumn(5).getString(),
                                      "evaluation of trial " + std::to_string(e.number));
      e.error = q.getColumn(6).getString();
      out.push_back(std::move(e));
    }
    return out;
  }

  void InsertExploit(const ExploitRecord& e) override {
    std::lock_guard<std::recursive_mutex> lock(mu_);
    SQLite::Statement q(db_,
                        "INSERT INTO exploits(study_id, number, epoch, from_trial, params_before, "
                        "params_after, reason, created_at) VALUES(?,?,?,?,?,?,?,?)");
    SQLite::bind(q, e.study_id, e.number, e.epoch, e.from_trial,
                 common::ParamsToJsonText(e.params_before),
                 common::ParamsToJsonText(e.params_after), e.reason, e.created_at);
    q.exec();
    SQLite::Statement t(db_, "UPDATE trials SET params=? WHERE study_id=? AND number=?");
    SQLite::bind(t, common::ParamsToJsonText(e.params_after), e.study_id, e.number);
    t.exec();
  }

  std::vector<ExploitRecord> ListExploits(int64_t study_id) override {
    std::lock_guard<std::recursive_mutex> lock(mu_);
    std::vector<ExploitRecord> out;
    if (!db_.tableExists("exploits")) return out;  // a read-only database made before it
    SQLite::Statement q(db_,
                        "SELECT number, epoch, from_trial, params_before, params_after, reason, "
                        "created_at FROM exploits WHERE study_id=? ORDER BY number, epoch");
    SQLite::bind(q, study_id);
    while (q.executeStep()) {
      ExploitRecord e;
      e.study_id = study_id;
      e.number = q.getColumn(0).getInt64();
      e.epoch = q.getColumn(1).getInt64();
      e.from_trial = q.getColumn(2).getInt64();
      e.params_before = common::ParamsFromJsonText(q.getColumn(3).getString());
      e.params_after = common::ParamsFromJsonText(q.getColumn(4).getString());
      e.reason = q.getColumn(5).getString();
      e.created_at = q.getColumn(6).getDouble();
      out.push_back(std::move(e));
    }
    return out;
  }

  void InsertIdleSegment(const IdleSegmentRecord& s) override {
    std::lock_guard<std::recursive_mutex> lock(mu_);
    SQLite::Statement q(db_,
                        "INSERT INTO idle_segments(worker_id, after_study_id, start, end, "
                        "price_per_hour, market, end_reason) VALUES(?,?,?,?,?,?,?)");
    SQLite::bind(q, s.worker_id, s.after_study_id, s.start, s.end, s.price_per_hour, s.market,
                 s.end_reason);
    q.exec();
  }

  std::vector<IdleSegmentRecord> ListIdleSegments(int64_t after_study_id) override {
    std::lock_guard<std::recursive_mutex> lock(mu_);
    std::vector<IdleSegmentRecord> out;
    if (!db_.tableExists("idle_segments")) return out;  // a read-only database made before it
    SQLite::Statement q(db_,
                        "SELECT worker_id, start, end, price_per_hour, market, end_reason "
                        "FROM idle_segments WHERE after_study_id=? ORDER BY start");
    SQLite::bind(q, after_study_id);
    while (q.executeStep()) {
      IdleSegmentRecord s;
      s.worker_id = q.getColumn(0).getString();
      s.after_study_id = after_study_id;
      s.start = q.getColumn(1).getDouble();
      s.end = q.getColumn(2).getDouble();
      s.price_per_hour = q.getColumn(3).getDouble();
      s.market = q.getColumn(4).getString();
      s.end_reason = q.getColumn(5).getString();
      out.push_back(std::move(s));
    }
    return out;
  }

  std::vector<SegmentRecord> ListSegments(int64_t study_id) override {
    std::lock_guard<std::recursive_mutex> lock(mu_);
    SQLite::Statement q(db_,
                        "SELECT lease_id, worker_id, number, start, end, price_per_hour, market, "
                        "end_reason, start_epoch, checkpoint, wasted_seconds FROM segments "
                        "WHERE study_id=? ORDER BY start");
    SQLite::bind(q, study_id);
    std::vector<SegmentRecord> out;
    while (q.executeStep()) {
      SegmentRecord s;
      s.lease_id = q.getColumn(0).getString();
      s.worker_id = q.getColumn(1).getString();
      s.study_id = study_id;
      s.number = q.getColumn(2).getInt64();
      s.start = q.getColumn(3).getDouble();
      if (!q.getColumn(4).isNull()) s.end = q.getColumn(4).getDouble();
      s.price_per_hour = q.getColumn(5).getDouble();
      s.market = q.getColumn(6).getString();
      s.end_reason = q.getColumn(7).getString();
      s.start_epoch = q.getColumn(8).getInt64();
      s.checkpoint = q.getColumn(9).getString();
      s.wasted_seconds = q.getColumn(10).getDouble();
      out.push_back(std::move(s));
    }
    return out;
  }

 private:
  // A statement compiled once for this connection, reset for reuse: the report path runs these
  // thousands of times a second. `sql` is a literal (the key is its address).
  SQLite::Statement& Cached(const char* sql) {
    std::unique_ptr<SQLite::Statement>& q = cached_[sql];
    if (!q) q = std::make_unique<SQLite::Statement>(db_, sql);
    q->tryReset();
    q->clearBindings();
    return *q;
  }
  // Runs a cached statement and leaves it reset even when it fails: a statement left pending
  // would make the enclosing transaction's ROLLBACK fail, leaving the transaction open.
  static void Exec(SQLite::Statement& q) {
    try {
      q.exec();
    } catch (...) {
      q.tryReset();
      throw;
    }
    q.tryReset();
  }

  std::vector<StudyRecord> QueryStudies(const std::string& where) {
    SQLite::Statement q(db_,
                        "SELECT id, name, config, state, end_reason, created_at, ended_at "
                        "FROM studies " +
                            where + " ORDER BY id");
    std::vector<StudyRecord> out;
    while (q.executeStep()) {
      StudyRecord s;
      s.id = q.getColumn(0).getInt64();
      s.name = q.getColumn(1).getString();
      s.config_text = q.getColumn(2).getString();
      s.state = StudyStateFromString(q.getColumn(3).getString());
      s.end_reason = q.getColumn(4).getString();
      s.created_at = q.getColumn(5).getDouble();
      s.ended_at = q.getColumn(6).getDouble();
      out.push_back(std::move(s));
    }
    return out;
  }

  // A study's reports in the list's order; `fn` may take each record (ListReports moves them).
  void QueryStudyReports(int64_t study_id, const std::function<void(ReportRecord&)>& fn) {
    std::lock_guard<std::recursive_mutex> lock(mu_);
    QueryReports(
        "WHERE study_id=? ORDER BY number, epoch, created_at",
        [&](SQLite::Statement& q) { SQLite::bind(q, study_id); }, fn);
  }

  void QueryReports(const std::string& where, const std::function<void(SQLite::Statement&)>& bind,
                    const std::function<void(ReportRecord&)>& fn) {
    SQLite::Statement q(db_,
                        "SELECT study_id, number, epoch, metrics, lease_id, seq, decision, reason,"
                        " created_at, checkpoint FROM reports " +
                            where);
    bind(q);
    while (q.executeStep()) {
      ReportRecord r;
      r.study_id = q.getColumn(0).getInt64();
      r.number = q.getColumn(1).getInt64();
      r.epoch = q.getColumn(2).getInt64();
      r.metrics = MetricsFromJsonText(
          q.getColumn(3).getString(),
          "report of trial " + std::to_string(r.number) + " epoch " + std::to_string(r.epoch));
      r.lease_id = q.getColumn(4).getString();
      r.seq = q.getColumn(5).getInt64();
      r.decision = q.getColumn(6).getString();
      r.reason = q.getColumn(7).getString();
      r.created_at = q.getColumn(8).getDouble();
      r.checkpoint = q.getColumn(9).getString();
      fn(r);
    }
  }

  // One connection: a transaction (Atomically, a group commit's batch on its writer thread) and
  // every other call take this, so no statement from another thread lands inside a transaction
  // it does not belong to, or reads what that transaction has not committed.
  std::recursive_mutex mu_;
  SQLite::Database db_;
  std::map<const char*, std::unique_ptr<SQLite::Statement>> cached_;  // before db_ goes
  std::unique_ptr<WalCheckpointer> checkpointer_;                     // before db_ goes
};

}  // namespace

std::unique_ptr<Store> OpenSqliteStore(const std::string& path) {
  try {
    return std::make_unique<SqliteStore>(path, /*read_only=*/false);
  } catch (const SQLite::Exception& e) {
    throw std::runtime_error(path + ": cannot open the database: " + e.what());
  }
}

std::unique_ptr<Store> OpenSqliteStoreReadOnly(const std::string& path) {
  // SQLite would create a missing file on a later write-mode open; a typo must not pass silently.
  std::error_code ec;
  if (!std::filesystem::is_regular_file(path, ec)) {
    throw std::runtime_error("no such database: " + path);
  }
  try {
    return std::make_unique<SqliteStore>(path, /*read_only=*/true);
  } catch (const SQLite::Exception& e) {
    throw std::runtime_error(path + ": cannot open the database: " + e.what());
  }
}

}  // namespace sift::coordinator
