// Store: the single source of truth for studies, trials, reports, workers and ledger segments.
// Every change the coordinator answers for is written here first; a restarted coordinator
// rebuilds its in-memory state from it.
#pragma once

#include <functional>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "coordinator/store/records.h"

namespace sift::coordinator {

// A write refused because the study's lease is no longer at the writer's epoch: another
// coordinator took the study over (or this one let it go). `current` -1: not asked of the
// database (the writer had already let the study go).
class StudyFenced : public std::runtime_error {
 public:
  StudyFenced(int64_t study, int64_t held_epoch, int64_t current_epoch)
      : std::runtime_error("study " + std::to_string(study) + ": write refused, " +
                           (current_epoch < 0
                                ? "this coordinator no longer serves it"
                                : "its lease is at epoch " + std::to_string(current_epoch) +
                                      " in the database and this coordinator holds epoch " +
                                      std::to_string(held_epoch) +
                                      " (another coordinator took it over)")),
        study_id(study),
        held(held_epoch),
        current(current_epoch) {}
  int64_t study_id, held, current;
};

class Store {
 public:
  virtual ~Store() = default;

  // Runs `fn` in one transaction: all its writes land, or none (fn or a write threw).
  virtual void Atomically(const std::function<void()>& fn) = 0;

  // Returns the new id; a nonzero study.id is kept (`sift migrate`), and throws when taken.
  virtual int64_t CreateStudy(const StudyRecord& study) = 0;
  virtual void UpdateStudy(int64_t id, StudyState state, const std::string& end_reason,
                           double ended_at) = 0;
  virtual std::optional<StudyRecord> GetStudy(int64_t id) = 0;
  virtual std::vector<StudyRecord> ListStudies() = 0;

  // The audit trail of user actions on studies, oldest first.
  virtual void InsertStudyEvent(const StudyEventRecord& event) = 0;
  virtual std::vector<StudyEventRecord> ListStudyEvents(int64_t study_id) = 0;

  virtual void InsertTrial(const TrialRecord& trial) = 0;
  virtual void UpdateTrialState(int64_t study_id, int64_t number, search::TrialState state,
                                const std::string& end_reason, double ended_at) = 0;
  virtual void SetFinalMetrics(int64_t study_id, int64_t number,
                               const std::map<std::string, double>& metrics) = 0;
  virtual std::vector<TrialRecord> ListTrials(int64_t study_id) = 0;

  // A report keyed by (lease_id, seq); the caller checks FindReport first to apply retries once.
  virtual void InsertReport(const ReportRecord& report) = 0;
  virtual std::optional<ReportRecord> FindReport(const std::string& lease_id, int64_t seq) = 0;
  virtual std::vector<ReportRecord> ListReports(int64_t study_id) = 0;
  // The same reports in the same order, one at a time: a restart replays a million of them
  // without holding them all (about 300 bytes each as records) at once.
  virtual void ForEachReport(int64_t study_id, const std::function<void(const ReportRecord&)>& fn) {
    for (const auto& r : ListReports(study_id)) fn(r);
  }

  virtual void UpsertWorker(const WorkerRecord& worker) = 0;
  virtual std::vector<WorkerRecord> ListWorkers() = 0;

  virtual void OpenSegment(const SegmentRecord& segment) = 0;
  // Closes study `study_id`'s open segment (a closed one is left as it is).
  virtual void CloseSegment(int64_t study_id, const std::string& lease_id, double end,
                            const std::string& reason, const std::string& checkpoint = "",
                            double wasted_seconds = 0) = 0;
  virtual std::vector<SegmentRecord> ListSegments(int64_t study_id) = 0;
  // Work an open segment redid (a resume past a damaged checkpoint): it becomes the segment's
  // wasted_seconds, to which CloseSegment adds what the segment's end loses. Setting it twice
  // (a retried report) counts it once.
  virtual void SetRedoneSeconds(int64_t study_id, const std::string& lease_id, double seconds) = 0;

  // The study's serving lease, so that two coordinators on one database never both serve it,
  // for `lease_s` seconds of the database's clock (never the coordinators'). `held_epoch` 0
  // takes it when it is free, expired, or already `owner`'s (a restart on the same address),
  // and its epoch goes up by one; `held_epoch` > 0 renews the lease `owner` holds at that epoch
  // and nothing else. Returns the epoch held, 0 when another owner holds it (or took it over).
  // The epoch never goes back, so a write fenced by it (CheckStudyLease) stays refused.
  virtual int64_t ClaimStudy(int64_t study_id, const std::string& owner, double lease_s,
                             int64_t held_epoch) = 0;
  // Gives the lease up (a clean shutdown) so another coordinator can take the study at once.
  virtual void ReleaseStudy(int64_t study_id, const std::string& owner) = 0;
  // The fencing token: throws StudyFenced unless the study's lease is at `epoch`. Called inside
  // the writing transaction (Atomically), before its writes: PostgreSQL keeps the lease row
  // share-locked until the commit, so a takeover waits for the transaction to end.
  virtual void CheckStudyLease(int64_t study_id, int64_t epoch) = 0;
  // Test evaluations, one per (study, trial): inserted or replaced whole.
  virtual void UpsertEvaluation(const EvaluationRecord& evaluation) = 0;
  virtual std::vector<EvaluationRecord> ListEvaluations(int64_t study_id) = 0;

  // Records a PBT exploit and makes its params_after the trial's params, in one write.
  virtual void InsertExploit(const ExploitRecord& exploit) = 0;
  // The study's exploits by trial, then epoch.
  virtual std::vector<ExploitRecord> ListExploits(int64_t study_id) = 0;

  virtual void InsertIdleSegment(const IdleSegmentRecord& idle) = 0;
  // The idle stretches that followed a trial of `after_study_id` (0: before any trial).
  virtual std::vector<IdleSegmentRecord> ListIdleSegments(int64_t after_study_id) = 0;
};

// SQLite in WAL mode. `path` ":memory:" gives a private in-memory database (tests).
// Throws std::runtime_error naming the file when it cannot be opened or migrated.
std::unique_ptr<Store> OpenSqliteStore(const std::string& path);
// For commands that only read (`sift report`): never creates or migrates the file; throws
// "no such database: PATH" when it is not there.
std::unique_ptr<Store> OpenSqliteStoreReadOnly(const std::string& path);

// PostgreSQL (libpqxx); `url` is a libpq connection URI (postgresql://user@host:port/db).
// Creates the schema when missing. Throws std::runtime_error naming the database (never its
// password) when it cannot connect, and when this sift was built without libpqxx.
std::unique_ptr<Store> OpenPostgresStore(const std::string& url);
std::unique_ptr<Store> OpenPostgresStoreReadOnly(const std::string& url);

// --db: a postgresql:// or postgres:// URL picks PostgreSQL, anything else is a SQLite file.
bool IsPostgresUrl(const std::string& db);
std::unique_ptr<Store> OpenStore(const std::string& db);
std::unique_ptr<Store> OpenStoreReadOnly(const std::string& db);
// The URL without its password, for logs and messages.
std::string RedactDbUrl(const std::string& db);
// Where study `study_id`'s checkpoints lie beside SQLite database `db`: `sift run` keeps them in
// the database's folder (checkpoints/), `sift coordinator` in DB.checkpoints/ by default; ""
// when neither exists (or `db` is PostgreSQL's).
std::string CheckpointDirBeside(const std::string& db, int64_t study_id);

}  // namespace sift::coordinator
