// The Store as a coordinator writes through it: every write for a study whose lease this
// coordinator holds carries the lease's epoch, the fencing token, and the database refuses it
// in the same transaction when the epoch is no longer current (Store::CheckStudyLease). A
// coordinator that stalled past its lease (a long pause, SIGSTOP, a frozen VM) and wakes after
// another took the study over can then write nothing for it, whatever its clock says; it finds
// the refusals in TakeFenced and drops the study. One check per study per transaction, so a
// group commit's batch pays one per study it touches, not one per write.
//
// Studies without a lease held here (every study without study leases, and ended studies,
// which every coordinator serves) are written as before. Thread-safe: a transaction, with its
// checks, is one caller's at a time.
#pragma once

#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <utility>
#include <vector>

#include "coordinator/store/store.h"

namespace sift::coordinator {

class FencedStore : public Store {
 public:
  explicit FencedStore(std::unique_ptr<Store> inner) : inner_(std::move(inner)) {}

  // The study's lease is held here at `epoch`: its writes are fenced by it from now on.
  void Hold(int64_t study_id, int64_t epoch);
  // The study is no longer served here: its writes are refused without asking the database.
  void LetGo(int64_t study_id);
  // The studies whose writes the database refused since the last call (each once).
  std::vector<StudyFenced> TakeFenced();

  void Atomically(const std::function<void()>& fn) override;

  int64_t CreateStudy(const StudyRecord& study) override { return inner_->CreateStudy(study); }
  void UpdateStudy(int64_t id, StudyState state, const std::string& end_reason,
                   double ended_at) override {
    Write(id, [&] { inner_->UpdateStudy(id, state, end_reason, ended_at); });
  }
  std::optional<StudyRecord> GetStudy(int64_t id) override { return inner_->GetStudy(id); }
  std::vector<StudyRecord> ListStudies() override { return inner_->ListStudies(); }

  void InsertStudyEvent(const StudyEventRecord& event) override {
    Write(event.study_id, [&] { inner_->InsertStudyEvent(event); });
  }
  std::vector<StudyEventRecord> ListStudyEvents(int64_t study_id) override {
    return inner_->ListStudyEvents(study_id);
  }

  void InsertTrial(const TrialRecord& trial) override {
    Write(trial.study_id, [&] { inner_->InsertTrial(trial); });
  }
  void UpdateTrialState(int64_t study_id, int64_t number, search::TrialState state,
                        const std::string& end_reason, double ended_at) override {
    Write(study_id,
          [&] { inner_->UpdateTrialState(study_id, number, state, end_reason, ended_at); });
  }
  void SetFinalMetrics(int64_t study_id, int64_t number,
                       const std::map<std::string, double>& metrics) override {
    Write(study_id, [&] { inner_->SetFinalMetrics(study_id, number, metrics); });
  }
  std::vector<TrialRecord> ListTrials(int64_t study_id) override {
    return inner_->ListTrials(study_id);
  }

  void InsertReport(const ReportRecord& report) override {
    Write(report.study_id, [&] { inner_->InsertReport(report); });
  }
  std::optional<ReportRecord> FindReport(const std::string& lease_id, int64_t seq) override {
    return inner_->FindReport(lease_id, seq);
  }
  std::vector<ReportRecord> ListReports(int64_t study_id) override {
    return inner_->ListReports(study_id);
  }
  void ForEachReport(int64_t study_id,
                     const std::function<void(const ReportRecord&)>& fn) override {
    inner_->ForEachReport(study_id, fn);
  }

  // Workers are shared by every study and coordinator: not fenced.
  void UpsertWorker(const WorkerRecord& worker) override { inner_->UpsertWorker(worker); }
  std::vector<WorkerRecord> ListWorkers() override { return inner_->ListWorkers(); }

  void OpenSegment(const SegmentRecord& segment) override {
    Write(segment.study_id, [&] { inner_->OpenSegment(segment); });
  }
  void CloseSegment(int64_t study_id, const std::string& lease_id, double end,
                    const std::string& reason, const std::string& checkpoint = "",
                    double wasted_seconds = 0) override {
    Write(study_id, [&] {
      inner_->CloseSegment(study_id, lease_id, end, reason, checkpoint, wasted_seconds);
    });
  }
  std::vector<SegmentRecord> ListSegments(int64_t study_id) override {
    return inner_->ListSegments(study_id);
  }
  void SetRedoneSeconds(int64_t study_id, const std::string& lease_id, double seconds) override {
    Write(study_id, [&] { inner_->SetRedoneSeconds(study_id, lease_id, seconds); });
  }

  int64_t ClaimStudy(int64_t study_id, const std::string& owner, double lease_s,
                     int64_t held_epoch) override {
    return inner_->ClaimStudy(study_id, owner, lease_s, held_epoch);
  }
  void ReleaseStudy(int64_t study_id, const std::string& owner) override {
    inner_->ReleaseStudy(study_id, owner);
  }
  void CheckStudyLease(int64_t study_id, int64_t epoch) override {
    inner_->CheckStudyLease(study_id, epoch);
  }

  void UpsertEvaluation(const EvaluationRecord& evaluation) override {
    Write(evaluation.study_id, [&] { inner_->UpsertEvaluation(evaluation); });
  }
  std::vector<EvaluationRecord> ListEvaluations(int64_t study_id) override {
    return inner_->ListEvaluations(study_id);
  }

  void InsertExploit(const ExploitRecord& exploit) override {
    Write(exploit.study_id, [&] { inner_->InsertExploit(exploit); });
  }
  std::vector<ExploitRecord> ListExploits(int64_t study_id) override {
    return inner_->ListExploits(study_id);
  }

  // A worker's idle time between trials is the worker's bill, not the study's record.
  void InsertIdleSegment(const IdleSegmentRecord& idle) override {
    inner_->InsertIdleSegment(idle);
  }
  std::vector<IdleSegmentRecord> ListIdleSegments(int64_t after_study_id) override {
    return inner_->ListIdleSegments(after_study_id);
  }

 private:
  // Runs `write` after the study's check, in the open transaction or in one of its own; as it
  // is when the study is not fenced.
  template <typename Fn>
  void Write(int64_t study_id, Fn&& write) {
    if (!Fenced(study_id)) return write();
    Atomically([&] {
      Check(study_id);
      write();
    });
  }
  bool Fenced(int64_t study_id) const;
  // Inside a transaction: the study's check, once per transaction.
  void Check(int64_t study_id);

  std::unique_ptr<Store> inner_;
  std::recursive_mutex tx_mu_;  // the open transaction: held by its caller throughout
  int depth_ = 0;
  std::set<int64_t> checked_;        // studies checked in the open transaction
  mutable std::mutex mu_;            // the three below
  std::map<int64_t, int64_t> held_;  // study -> epoch
  // Studies no longer served here, with what the database last said (current -1: not asked).
  std::map<int64_t, StudyFenced> let_go_;
  std::map<int64_t, StudyFenced> fenced_;  // refused since the last TakeFenced
};

}  // namespace sift::coordinator
