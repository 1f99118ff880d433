#include "coordinator/cost/ledger.h"

#include <algorithm>

namespace sift::coordinator {

double SegmentSeconds(const SegmentRecord& seg, double now) {
  return (seg.end ? *seg.end : now) - seg.start;
}

double SegmentDollars(const SegmentRecord& seg, double now) {
  return DollarsFor(SegmentSeconds(seg, now), seg.price_per_hour);
}

double SegmentDollarsBy(const SegmentRecord& seg, double at) {
  const double end = std::min(seg.end ? *seg.end : at, at);
  return end > seg.start ? DollarsFor(end - seg.start, seg.price_per_hour) : 0.0;
}

double WastedDollars(const SegmentRecord& seg) {
  return DollarsFor(seg.wasted_seconds, seg.price_per_hour);
}

double IdleDollars(const IdleSegmentRecord& idle) {
  return DollarsFor(idle.Seconds(), idle.price_per_hour);
}

std::map<int64_t, TrialCost> TrialCosts(const std::vector<SegmentRecord>& segments, double now) {
  std::map<int64_t, TrialCost> out;
  for (const auto& seg : segments) {
    TrialCost& c = out[seg.number];
    c.dollars += SegmentDollars(seg, now);
    c.seconds += SegmentSeconds(seg, now);
    c.wasted_dollars += WastedDollars(seg);
    ++c.segments;
    c.interruptions += seg.end_reason == "preempted" || seg.end_reason == "expired";
  }
  return out;
}

StudyCost StudyCostOf(const std::vector<SegmentRecord>& segments,
                      const std::vector<IdleSegmentRecord>& idle, double now) {
  StudyCost c;
  for (const auto& seg : segments) {
    const double dollars = SegmentDollars(seg, now);
    c.dollars += dollars;
    c.wasted_dollars += WastedDollars(seg);
    if (seg.end_reason == kStudyPausedSegment) c.paused_wasted_dollars += WastedDollars(seg);
    c.dollars_by_market[seg.market] += dollars;
    c.preemptions += seg.end_reason == "preempted";
    c.expirations += seg.end_reason == "expired";
  }
  for (const auto& i : idle) {
    c.idle_seconds += i.Seconds();
    c.idle_dollars += IdleDollars(i);
  }
  return c;
}

std::map<int64_t, TrialCost> Ledger::RestoreStudy(int64_t study_id,
                                                  const std::vector<SegmentRecord>& segments,
                                                  double now) {
  DropStudy(study_id);
  Study& study = studies_[study_id];
  std::vector<SegmentRecord> closed;
  for (const auto& seg : segments) {
    if (seg.end) {
      study.closed += SegmentDollars(seg, now);
      closed.push_back(seg);
    } else {
      Open(seg);
    }
  }
  // Only closed segments are charged to their trials: an open one is charged whole when it
  // closes (Close), as on a coordinator that never restarted. Charging it to `now` here too
  // counted its first part twice.
  return TrialCosts(closed, now);
}

void Ledger::DropStudy(int64_t study_id) {
  auto it = studies_.find(study_id);
  if (it == studies_.end()) return;
  for (const auto& [lease_id, seg] : it->second.open) study_of_lease_.erase(lease_id);
  studies_.erase(it);
}

void Ledger::Open(const SegmentRecord& seg) {
  OpenSegment& open = studies_[seg.study_id].open[seg.lease_id];
  open = {seg.study_id, seg.number, seg.start, seg.price_per_hour, seg.start};
  study_of_lease_[seg.lease_id] = seg.study_id;
}

Ledger::OpenSegment* Ledger::Find(const std::string& lease_id) {
  auto s = study_of_lease_.find(lease_id);
  if (s == study_of_lease_.end()) return nullptr;
  auto& open = studies_.at(s->second).open;
  auto it = open.find(lease_id);
  return it == open.end() ? nullptr : &it->second;
}

const Ledger::OpenSegment* Ledger::Find(const std::string& lease_id) const {
  return const_cast<Ledger*>(this)->Find(lease_id);
}

std::optional<double> Ledger::Start(const std::string& lease_id) const {
  const OpenSegment* seg = Find(lease_id);
  if (!seg) return std::nullopt;
  return seg->start;
}

void Ledger::NoteCheckpoint(const std::string& lease_id, double at) {
  if (OpenSegment* seg = Find(lease_id)) seg->checkpoint_at = at;
}

double Ledger::LostSecondsAt(const std::string& lease_id, double end) const {
  const OpenSegment* seg = Find(lease_id);
  return seg ? LostSeconds(end, seg->checkpoint_at) : 0.0;
}

std::optional<Ledger::Charge> Ledger::Close(const std::string& lease_id, double end) {
  auto s = study_of_lease_.find(lease_id);
  if (s == study_of_lease_.end()) return std::nullopt;
  Study& study = studies_.at(s->second);
  auto it = study.open.find(lease_id);
  const OpenSegment seg = it->second;
  study.open.erase(it);
  study_of_lease_.erase(s);
  Charge c{seg.study_id, seg.number, 0, end - seg.start};
  c.dollars = DollarsFor(c.seconds, seg.price_per_hour);
  study.closed += c.dollars;
  return c;
}

std::optional<Ledger::Charge> Ledger::ChargeAt(const std::string& lease_id, double at) const {
  auto s = study_of_lease_.find(lease_id);
  if (s == study_of_lease_.end()) return std::nullopt;
  const OpenSegment& seg = studies_.at(s->second).open.at(lease_id);
  Charge c{seg.study_id, seg.number, 0, std::max(0.0, at - seg.start)};
  c.dollars = DollarsFor(c.seconds, seg.price_per_hour);
  return c;
}

double Ledger::StudyDollars(int64_t study_id, double now) const {
  auto it = studies_.find(study_id);
  if (it == studies_.end()) return 0;
  double total = it->second.closed;
  for (const auto& [id, seg] : it->second.open) {
    total += DollarsFor(now - seg.start, seg.price_per_hour);
  }
  return total;
}

double Ledger::StudiesDollars(const std::vector<int64_t>& study_ids, double now) const {
  double total = 0;
  for (int64_t id : study_ids) total += StudyDollars(id, now);
  return total;
}

void Ledger::OpenIdle(const std::string& worker_id, int64_t after_study_id, double start,
                      double price_per_hour, const std::string& market) {
  idle_.try_emplace(worker_id, Idle{after_study_id, start, price_per_hour, market});
}

const Ledger::Idle* Ledger::IdleOf(const std::string& worker_id) const {
  auto it = idle_.find(worker_id);
  return it == idle_.end() ? nullptr : &it->second;
}

std::optional<IdleSegmentRecord> Ledger::CloseIdle(const std::string& worker_id, double end,
                                                   const std::string& reason) {
  auto it = idle_.find(worker_id);
  if (it == idle_.end()) return std::nullopt;
  IdleSegmentRecord idle;
  idle.worker_id = worker_id;
  idle.after_study_id = it->second.after_study_id;
  idle.start = it->second.start;
  idle.end = end;
  idle.price_per_hour = it->second.price_per_hour;
  idle.market = it->second.market;
  idle.end_reason = reason;
  idle_.erase(it);
  if (idle.end <= idle.start) return std::nullopt;
  return idle;
}

}  // namespace sift::coordinator
