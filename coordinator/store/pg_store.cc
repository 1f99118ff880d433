// The Store on PostgreSQL (libpqxx), for coordinators that share one database: the same tables
// as SQLite's, JSON kept as text so both stores read back the same bytes, and the study leases
// that let a second coordinator take over a study whose coordinator died.
#include <mutex>
#include <pqxx/pqxx>

#include "common/params_json.h"
#include "coordinator/store/json.h"
#include "coordinator/store/pg_schema.h"
#include "coordinator/store/store.h"

namespace sift::coordinator {
namespace {

// The database's clock in unix seconds: lease expiry never depends on a coordinator's clock.
// clock_timestamp(), not now(): a transaction's start may be long past.
constexpr const char* kDbNow = "extract(epoch FROM clock_timestamp())::float8";

// Any key, the same in every sift: coordinators starting together create the schema in turn.
constexpr int64_t kSchemaLockKey = 0x5157'0001;

class PgStore : public Store {
 public:
  PgStore(const std::string& url, bool read_only) : conn_(url) {
    pqxx::work w(conn_);
    if (read_only) {
      if (w.exec("SELECT to_regclass('studies')")[0][0].is_null()) {
        throw std::runtime_error("not a sift database (no studies table)");
      }
      return;
    }
    w.exec_params("SELECT pg_advisory_xact_lock($1)", kSchemaLockKey);
    w.exec(kPgSchema);
    w.commit();
  }

  void Atomically(const std::function<void()>& fn) override {
    std::lock_guard<std::recursive_mutex> lock(mu_);
    if (tx_) return fn();  // nested: part of the outer transaction
    pqxx::work w(conn_);
    tx_ = &w;
    try {
      fn();
    } catch (...) {
      tx_ = nullptr;
      throw;  // w's destructor rolls back
    }
    tx_ = nullptr;
    w.commit();
  }

  int64_t CreateStudy(const StudyRecord& s) override {
    return Run([&](pqxx::work& w) {
      if (s.id == 0) {
        return w
            .exec_params1(
                "INSERT INTO studies(name, config, state, end_reason, created_at, "
                "ended_at) VALUES($1,$2,$3,$4,$5,$6) RETURNING id",
                s.name, s.config_text, ToString(s.state), s.end_reason, s.created_at, s.ended_at)[0]
            .as<int64_t>();
      }
      w.exec_params0(
          "INSERT INTO studies(id, name, config, state, end_reason, created_at, "
          "ended_at) VALUES($1,$2,$3,$4,$5,$6,$7)",
          s.id, s.name, s.config_text, ToString(s.state), s.end_reason, s.created_at, s.ended_at);
      // The identity sequence must not hand this id out again.
      w.exec(
          "SELECT setval(pg_get_serial_sequence('studies', 'id'), "
          "(SELECT max(id) FROM studies))");
      return s.id;
    });
  }

  void UpdateStudy(int64_t id, StudyState state, const std::string& end_reason,
                   double ended_at) override {
    Run([&](pqxx::work& w) {
      w.exec_params0("UPDATE studies SET state=$1, end_reason=$2, ended_at=$3 WHERE id=$4",
                     ToString(state), end_reason, ended_at, id);
    });
  }

  std::optional<StudyRecord> GetStudy(int64_t id) override {
    auto all = QueryStudies("WHERE id=" + std::to_string(id));
    if (all.empty()) return std::nullopt;
    return all.front();
  }

  std::vector<StudyRecord> ListStudies() override { return QueryStudies(""); }

  int64_t ClaimStudy(int64_t study_id, const std::string& owner, double lease_s,
                     int64_t held_epoch) override {
    // A renewal (held_epoch > 0) keeps the epoch; a take raises it.
    static const std::string claim =
        std::string(
            "INSERT INTO study_leases AS l(study_id, owner, expires_at, epoch) "
            "VALUES($1, $2, ") +
        kDbNow +
        " + $3, 1) ON CONFLICT(study_id) DO UPDATE SET "
        "owner=excluded.owner, expires_at=excluded.expires_at, "
        "epoch=CASE WHEN $4::bigint > 0 THEN l.epoch ELSE l.epoch + 1 END "
        "WHERE CASE WHEN $4::bigint > 0 THEN l.owner=excluded.owner AND l.epoch=$4::bigint "
        "ELSE l.owner=excluded.owner OR l.expires_at < " +
        kDbNow + " END RETURNING l.epoch";
    return Run([&](pqxx::work& w) {
      const pqxx::result r = w.exec_params(claim, study_id, owner, lease_s, held_epoch);
      return r.empty() ? int64_t{0} : r[0][0].as<int64_t>();
    });
  }

  void ReleaseStudy(int64_t study_id, const std::string& owner) override {
    // Expired, not deleted: the row keeps its epoch, which must never go back.
    Run([&](pqxx::work& w) {
      w.exec_params0(
          "UPDATE study_leases SET expires_at='-Infinity' "
          "WHERE study_id=$1 AND owner=$2",
          study_id, owner);
    });
  }

  void CheckStudyLease(int64_t study_id, int64_t epoch) override {
    Run([&](pqxx::work& w) {
      // FOR SHARE: a takeover (an UPDATE of this row) waits for this transaction's commit.
      const pqxx::result r =
          w.exec_params("SELECT epoch FROM study_leases WHERE study_id=$1 FOR SHARE", study_id);
      const int64_t current = r.empty() ? 0 : r[0][0].as<int64_t>();
      if (current != epoch) throw StudyFenced(study_id, epoch, current);
    });
  }

  void InsertStudyEvent(const StudyEventRecord& e) override {
    Run([&](pqxx::work& w) {
      w.exec_params0(
          "INSERT INTO study_events(study_id, at, \"user\", action, detail) "
          "VALUES($1,$2,$3,$4,$5)",
          e.study_id, e.at, e.user, e.action, e.detail);
    });
  }

  std::vector<StudyEventRecord> ListStudyEvents(int64_t study_id) override {
    return Run([&](pqxx::work& w) {
      std::vector<StudyEventRecord> out;
      for (const pqxx::row& row : w.exec_params("SELECT study_id, at, \"user\", action, detail "
                                                "FROM study_events WHERE study_id=$1 ORDER BY id",
                                                study_id)) {
        out.push_back({row[0].as<int64_t>(), row[1].as<double>(), row[2].as<std::string>(),
                       row[3].as<std::string>(), row[4].as<std::string>()});
      }
      return out;
    });
  }

  void InsertTrial(const TrialRecord& t) override {
    Run([&](pqxx::work& w) {
      w.exec_params0(
          "INSERT INTO trials(study_id, number, params, state, end_reason, "
          "created_at, ended_at, final_metrics) VALUES($1,$2,$3,$4,$5,$6,$7,$8)",
          t.study_id, t.number, common::ParamsToJsonText(t.params),
          std::string(search::ToString(t.state)), t.end_reason, t.created_at, t.ended_at,
          MetricsToJsonText(t.final_metrics));
    });
  }

  void UpdateTrialState(int64_t study_id, int64_t number, search::TrialState state,
                        const std::string& end_reason, double ended_at) override {
    Run([&](pqxx::work& w) {
      w.exec_params0(
          "UPDATE trials SET state=$1, end_reason=$2, ended_at=$3 "
          "WHERE study_id=$4 AND number=$5",
          std::string(search::ToString(state)), end_reason, ended_at, study_id, number);
    });
  }

  void SetFinalMetrics(int64_t study_id, int64_t number,
                       const std::map<std::string, double>& metrics) override {
    Run([&](pqxx::work& w) {
      w.exec_params0("UPDATE trials SET final_metrics=$1 WHERE study_id=$2 AND number=$3",
                     MetricsToJsonText(metrics), study_id, number);
    });
  }

  std::vector<TrialRecord> ListTrials(int64_t study_id) override {
    return Run([&](pqxx::work& w) {
      std::vector<TrialRecord> out;
      for (const pqxx::row& row : w.exec_params(
               "SELECT number, params, state, end_reason, created_at, ended_at, final_metrics "
               "FROM trials WHERE study_id=$1 ORDER BY number",
               study_id)) {
        TrialRecord t;
        t.study_id = study_id;
        t.number = row[0].as<int64_t>();
        t.params = common::ParamsFromJsonText(row[1].as<std::string>());
        t.state = TrialStateFromString(row[2].as<std::string>());
        t.end_reason = row[3].as<std::string>();
        t.created_at = row[4].as<double>();
        t.ended_at = row[5].as<double>();
        t.final_metrics = MetricsFromJsonText(
            row[6].as<std::string>(), "trial " + std::to_string(t.number) + " final_metrics");
        out.push_back(std::move(t));
      }
      return out;
    });
  }

  void InsertReport(const ReportRecord& r) override {
    Run([&](pqxx::work& w) {
      w.exec_params0(
          "INSERT INTO reports(study_id, number, epoch, metrics, lease_id, seq, "
          "decision, reason, created_at, checkpoint) "
          "VALUES($1,$2,$3,$4,$5,$6,$7,$8,$9,$10)",
          r.study_id, r.number, r.epoch, MetricsToJsonText(r.metrics), r.lease_id, r.seq,
          r.decision, r.reason, r.created_at, r.checkpoint);
    });
  }

  std::optional<ReportRecord> FindReport(const std::string& lease_id, int64_t seq) override {
    auto all = QueryReports("WHERE lease_id=$1 AND seq=$2", lease_id, seq);
    if (all.empty()) return std::nullopt;
    return all.front();
  }

  std::vector<ReportRecord> ListReports(int64_t study_id) override {
    // id: SQLite's rowid order among reports that tie on all three.
    return QueryReports("WHERE study_id=$1 ORDER BY number, epoch, created_at, id", study_id);
  }

  // In pages of trials: libpq holds a whole result in memory, and a million reports would be
  // hundreds of megabytes of it. Trial numbers are the list's first key, so the order is kept.
  void ForEachReport(int64_t study_id,
                     const std::function<void(const ReportRecord&)>& fn) override {
    constexpr int64_t kTrialsPerPage = 2000;
    const int64_t last = Run([&](pqxx::work& w) {
      return w
          .exec_params1("SELECT COALESCE(MAX(number), -1) FROM reports WHERE study_id=$1",
                        study_id)[0]
          .as<int64_t>();
    });
    for (int64_t from = 0; from <= last; from += kTrialsPerPage) {
      for (const auto& r : QueryReports("WHERE study_id=$1 AND number >= $2 AND number < $3 "
                                        "ORDER BY number, epoch, created_at, id",
                                        study_id, from, from + kTrialsPerPage)) {
        fn(r);
      }
    }
  }

  void UpsertWorker(const WorkerRecord& r) override {
    Run([&](pqxx::work& w) {
      w.exec_params0(
          "INSERT INTO workers(id, name, instance_type, market, price_per_hour, "
          "device, threads, registered_at) VALUES($1,$2,$3,$4,$5,$6,$7,$8) "
          "ON CONFLICT(id) DO UPDATE SET name=excluded.name, "
          "instance_type=excluded.instance_type, market=excluded.market, "
          "price_per_hour=excluded.price_per_hour, device=excluded.device, "
          "threads=excluded.threads, registered_at=excluded.registered_at",
          r.id, r.name, r.instance_type, r.market, r.price_per_hour, r.device, r.threads,
          r.registered_at);
    });
  }

  void UpsertEvaluation(const EvaluationRecord& e) override {
    Run([&](pqxx::work& w) {
      w.exec_params0(
          "INSERT INTO evaluations(study_id, number, state, requested_by, "
          "requested_at, ended_at, metrics, error) VALUES($1,$2,$3,$4,$5,$6,$7,$8) "
          "ON CONFLICT(study_id, number) DO UPDATE SET state=excluded.state, "
          "requested_by=excluded.requested_by, requested_at=excluded.requested_at, "
          "ended_at=excluded.ended_at, metrics=excluded.metrics, error=excluded.error",
          e.study_id, e.number, std::string(ToString(e.state)), e.requested_by, e.requested_at,
          e.ended_at, MetricsToJsonText(e.metrics), e.error);
    });
  }

  std::vector<EvaluationRecord> ListEvaluations(int64_t study_id) override {
    return Run([&](pqxx::work& w) {
      std::vector<EvaluationRecord> out;
      for (const pqxx::row& row :
           w.exec_params("SELECT number, state, requested_by, requested_at, ended_at, metrics, "
                         "error FROM evaluations WHERE study_id=$1 ORDER BY number",
                         study_id)) {
        EvaluationRecord e;
        e.study_id = study_id;
        e.number = row[0].as<int64_t>();
        e.state = EvaluationStateFromString(row[1].as<std::string>());
        e.requested_by = row[2].as<std::string>();
        e.requested_at = row[3].as<double>();
        e.ended_at = row[4].as<double>();
        e.metrics = MetricsFromJsonText(row[5].as<std::string>(),
                                        "evaluation of trial " + std::to_string(e.number));
        e.error = row[6].as<std::string>();
        out.push_back(std::move(e));
      }
      return out;
    });
  }

  std::vector<WorkerRecord> ListWorkers() override {
    return Run([&](pqxx::work& w) {
      std::vector<WorkerRecord> out;
      for (const pqxx::row& row : w.exec("SELECT id, name, instance_type, market, price_per_hour, "
                                         "device, threads, registered_at FROM workers "
                                         "ORDER BY registered_at, id")) {
        WorkerRecord r;
        r.id = row[0].as<std::string>();
        r.name = row[1].as<std::string>();
        r.instance_type = row[2].as<std::string>();
        r.market = row[3].as<std::string>();
        r.price_per_hour = row[4].as<double>();
        r.device = row[5].as<std::string>();
        r.threads = row[6].as<int64_t>();
        r.registered_at = row[7].as<double>();
        out.push_back(std::move(r));
      }
      return out;
    });
  }

  void OpenSegment(const SegmentRecord& s) override {
    Run([&](pqxx::work& w) {
      w.exec_params0(
          "INSERT INTO segments(lease_id, worker_id, study_id, number, start, "
          "\"end\", price_per_hour, market, end_reason, start_epoch) "
          "VALUES($1,$2,$3,$4,$5,NULL,$6,$7,'',$8)",
          s.lease_id, s.worker_id, s.study_id, s.number, s.start, s.price_per_hour, s.market,
          s.start_epoch);
    });
  }

  void CloseSegment(int64_t study_id, const std::string& lease_id, double end,
                    const std::string& reason, const std::string& checkpoint,
                    double wasted_seconds) override {
    Run([&](pqxx::work& w) {
      w.exec_params0(
          "UPDATE segments SET \"end\"=$1, end_reason=$2, checkpoint=$3, "
          "wasted_seconds=wasted_seconds+$4 WHERE lease_id=$5 AND study_id=$6 "
          "AND \"end\" IS NULL",
          end, reason, checkpoint, wasted_seconds, lease_id, study_id);
    });
  }

  void SetRedoneSeconds(int64_t study_id, const std::string& lease_id, double seconds) override {
    Run([&](pqxx::work& w) {
      w.exec_params0(
          "UPDATE segments SET wasted_seconds=$1 WHERE lease_id=$2 AND study_id=$3 "
          "AND \"end\" IS NULL",
          seconds, lease_id, study_id);
    });
  }

  std::vector<SegmentRecord> ListSegments(int64_t study_id) override {
    return Run([&](pqxx::work& w) {
      std::vector<SegmentRecord> out;
      for (const pqxx::row& row : w.exec_params(
               "SELECT lease_id, worker_id, number, start, \"end\", price_per_hour, market, "
               "end_reason, start_epoch, checkpoint, wasted_seconds FROM segments "
               "WHERE study_id=$1 ORDER BY start, lease_id",
               study_id)) {
        SegmentRecord s;
        s.lease_id = row[0].as<std::string>();
        s.worker_id = row[1].as<std::string>();
        s.study_id = study_id;
        s.number = row[2].as<int64_t>();
        s.start = row[3].as<double>();
        if (!row[4].is_null()) s.end = row[4].as<double>();
        s.price_per_hour = row[5].as<double>();
        s.market = row[6].as<std::string>();
        s.end_reason = row[7].as<std::string>();
        s.start_epoch = row[8].as<int64_t>();
        s.checkpoint = row[9].as<std::string>();
        s.wasted_seconds = row[10].as<double>();
        out.push_back(std::move(s));
      }
      return out;
    });
  }

  void InsertExploit(const ExploitRecord& e) override {
    Run([&](pqxx::work& w) {
      w.exec_params0(
          "INSERT INTO exploits(study_id, number, epoch, from_trial, params_before, "
          "params_after, reason, created_at) VALUES($1,$2,$3,$4,$5,$6,$7,$8)",
          e.study_id, e.number, e.epoch, e.from_trial, common::ParamsToJsonText(e.params_before),
          common::ParamsToJsonText(e.params_after), e.reason, e.created_at);
      w.exec_params0("UPDATE trials SET params=$1 WHERE study_id=$2 AND number=$3",
                     common::ParamsToJsonText(e.params_after), e.study_id, e.number);
    });
  }

  std::vector<ExploitRecord> ListExploits(int64_t study_id) override {
    return Run([&](pqxx::work& w) {
      std::vector<ExploitRecord> out;
      for (const pqxx::row& row :
           w.exec_params("SELECT number, epoch, from_trial, params_before, params_after, reason, "
                         "created_at FROM exploits WHERE study_id=$1 ORDER BY number, epoch",
                         study_id)) {
        ExploitRecord e;
        e.study_id = study_id;
        e.number = row[0].as<int64_t>();
        e.epoch = row[1].as<int64_t>();
        e.from_trial = row[2].as<int64_t>();
        e.params_before = common::ParamsFromJsonText(row[3].as<std::string>());
        e.params_after = common::ParamsFromJsonText(row[4].as<std::string>());
        e.reason = row[5].as<std::string>();
        e.created_at = row[6].as<double>();
        out.push_back(std::move(e));
      }
      return out;
    });
  }

  void InsertIdleSegment(const IdleSegmentRecord& s) override {
    Run([&](pqxx::work& w) {
      w.exec_params0(
          "INSERT INTO idle_segments(worker_id, after_study_id, start, \"end\", "
          "price_per_hour, market, end_reason) VALUES($1,$2,$3,$4,$5,$6,$7)",
          s.worker_id, s.after_study_id, s.start, s.end, s.price_per_hour, s.market, s.end_reason);
    });
  }

  std::vector<IdleSegmentRecord> ListIdleSegments(int64_t after_study_id) override {
    return Run([&](pqxx::work& w) {
      std::vector<IdleSegmentRecord> out;
      for (const pqxx::row& row :
           w.exec_params("SELECT worker_id, start, \"end\", price_per_hour, market, end_reason "
                         "FROM idle_segments WHERE after_study_id=$1 ORDER BY start, id",
                         after_study_id)) {
        IdleSegmentRecord s;
        s.worker_id = row[0].as<std::string>();
        s.after_study_id = after_study_id;
        s.start = row[1].as<double>();
        s.end = row[2].as<double>();
        s.price_per_hour = row[3].as<double>();
        s.market = row[4].as<std::string>();
        s.end_reason = row[5].as<std::string>();
        out.push_back(std::move(s));
      }
      return out;
    });
  }

 private:
  // Runs `fn` in the open Atomically transaction, or in one of its own.
  template <typename Fn>
  auto Run(Fn&& fn) -> decltype(fn(std::declval<pqxx::work&>())) {
    std::lock_guard<std::recursive_mutex> lock(mu_);
    if (tx_) return fn(*tx_);
    pqxx::work w(conn_);
    if constexpr (std::is_void_v<decltype(fn(w))>) {
      fn(w);
      w.commit();
    } else {
      auto out = fn(w);
      w.commit();
      return out;
    }
  }

  std::vector<StudyRecord> QueryStudies(const std::string& where) {
    return Run([&](pqxx::work& w) {
      std::vector<StudyRecord> out;
      for (const pqxx::row& row : w.exec("SELECT id, name, config, state, end_reason, created_at, "
                                         "ended_at FROM studies " +
                                         where + " ORDER BY id")) {
        StudyRecord s;
        s.id = row[0].as<int64_t>();
        s.name = row[1].as<std::string>();
        s.config_text = row[2].as<std::string>();
        s.state = StudyStateFromString(row[3].as<std::string>());
        s.end_reason = row[4].as<std::string>();
        s.created_at = row[5].as<double>();
        s.ended_at = row[6].as<double>();
        out.push_back(std::move(s));
      }
      return out;
    });
  }

  template <typename... Args>
  std::vector<ReportRecord> QueryReports(const std::string& where, const Args&... args) {
    return Run([&](pqxx::work& w) {
      std::vector<ReportRecord> out;
      for (const pqxx::row& row : w.exec_params(
               "SELECT study_id, number, epoch, metrics, lease_id, seq, decision, reason, "
               "created_at, checkpoint FROM reports " +
                   where,
               args...)) {
        ReportRecord r;
        r.study_id = row[0].as<int64_t>();
        r.number = row[1].as<int64_t>();
        r.epoch = row[2].as<int64_t>();
        r.metrics = MetricsFromJsonText(
            row[3].as<std::string>(),
            "report of trial " + std::to_string(r.number) + " epoch " + std::to_string(r.epoch));
        r.lease_id = row[4].as<std::string>();
        r.seq = row[5].as<int64_t>();
        r.decision = row[6].as<std::string>();
        r.reason = row[7].as<std::string>();
        r.created_at = row[8].as<double>();
        r.checkpoint = row[9].as<std::string>();
        out.push_back(std::move(r));
      }
      return out;
    });
  }

  std::recursive_mutex mu_;
  pqxx::connection conn_;
  pqxx::work* tx_ = nullptr;  // the open Atomically transaction, if any
};

std::unique_ptr<Store> Open(const std::string& url, bool read_only) {
  try {
    return std::make_unique<PgStore>(url, read_only);
  } catch (const std::exception& e) {
    // libpq's messages name host and port; the URL may hold a password, so it is redacted.
    throw std::runtime_error(RedactDbUrl(url) + ": cannot open the database: " + e.what());
  }
}

}  // namespace

std::unique_ptr<Store> OpenPostgresStore(const std::string& url) {
  return Open(url, /*read_only=*/false);
}

std::unique_ptr<Store> OpenPostgresStoreReadOnly(const std::string& url) {
  return Open(url, /*read_only=*/true);
}

}  // namespace sift::coordinator
