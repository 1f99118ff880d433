#include "coordinator/core/worker_table.h"

#include <spdlog/spdlog.h>

#include <algorithm>

namespace sift::coordinator {

void WorkerTable::Add(const WorkerRecord& record, double now) {
  workers_[record.id] = Worker{record, now, 0, {}};
}

void WorkerTable::AddIfAbsent(const WorkerRecord& record, double now) {
  workers_.try_emplace(record.id, Worker{record, now, 0, {}});
}

Status WorkerTable::Touch(const std::string& worker_id, double now, Worker** out) {
  auto it = workers_.find(worker_id);
  if (it == workers_.end()) {
    return Status::Error(Status::Code::kNotFound,
                         "unknown worker '" + worker_id + "': register first");
  }
  it->second.last_seen = now;
  *out = &it->second;
  return Status::Ok();
}

const WorkerTable::Worker* WorkerTable::Find(const std::string& worker_id) const {
  auto it = workers_.find(worker_id);
  return it == workers_.end() ? nullptr : &it->second;
}

void WorkerTable::NoteStudy(const std::string& worker_id, int64_t study_id) {
  if (auto it = workers_.find(worker_id); it != workers_.end()) {
    it->second.last_study_id = study_id;
  }
}

void WorkerTable::Refuse(const std::string& worker_id, int64_t study_id) {
  if (auto it = workers_.find(worker_id); it != workers_.end()) {
    it->second.cannot_run.insert(study_id);
  }
}

double WorkerTable::HeardUntil(const std::string& worker_id, double now) const {
  const Worker* w = Find(worker_id);
  return !w || Live(*w, now) ? now : w->last_seen;
}

bool WorkerTable::SomeLiveCanRun(int64_t study_id, double now, const std::string& except) const {
  for (const auto& [id, w] : workers_) {
    if (id != except && Live(w, now) && !w.cannot_run.count(study_id)) return true;
  }
  return false;
}

std::vector<std::pair<std::string, double>> WorkerTable::LostIdle(const Ledger& ledger,
                                                                  double now) const {
  std::vector<std::pair<std::string, double>> lost;
  for (const auto& [id, w] : workers_) {
    const Ledger::Idle* idle = ledger.IdleOf(id);
    if (idle && !Live(w, now)) lost.emplace_back(id, std::max(idle->start, w.last_seen));
  }
  return lost;
}

size_t WorkerTable::ForgetLost(const std::set<std::string>& holding, const Ledger& ledger,
                               double now) {
  // A crash-looping or hostile client registers again and again; every registration ever was
  // also reloaded at each start.
  std::vector<std::pair<double, std::string>> lost;  // (last seen, id)
  for (const auto& [id, w] : workers_) {
    if (!Live(w, now) && !ledger.IdleOf(id) && !holding.count(id)) {
      lost.emplace_back(w.last_seen, id);
    }
  }
  if (lost.size() <= max_lost_) return 0;
  const size_t forget = lost.size() - max_lost_;
  std::partial_sort(lost.begin(), lost.begin() + static_cast<std::ptrdiff_t>(forget), lost.end());
  for (size_t i = 0; i < forget; ++i) workers_.erase(lost[i].second);
  spdlog::info("forgot {} workers silent for more than {:.0f} s (kept the {} heard from last)",
               forget, timeout_s_, max_lost_);
  return forget;
}

}  // namespace sift::coordinator
