#include "tests/soak/soak_worker.h"

#include <algorithm>
#include <chrono>
#include <random>
#include <thread>

#include "worker/coordinator_link.h"

namespace sift::testing::soak {

void WorkerCounts::Add(const WorkerCounts& o) {
  registered += o.registered;
  trials += o.trials;
  completed += o.completed;
  preempted += o.preempted;
  vanished += o.vanished;
  left += o.left;
  abandoned += o.abandoned;
  errors += o.errors;
}

double ReportedValue(int64_t number, int64_t epoch) {
  const double rate = 0.05 + static_cast<double>((number * 7919) % 1000) / 1e4;
  return 1.0 - 0.9 / (1.0 + rate * static_cast<double>(epoch));
}

namespace {

// What one worker did, handed to the shared totals once, when it ends.
class Tally {
 public:
  explicit Tally(SoakShared* shared) : shared_(shared) {}
  ~Tally() {
    std::lock_guard<std::mutex> lock(shared_->mu);
    shared_->counts.Add(counts);
    shared_->acked.insert(shared_->acked.end(), acked.begin(), acked.end());
    if (!error.empty() && shared_->errors.size() < 8) shared_->errors.push_back(error);
  }
  std::string Fail(const std::string& what, const grpc::Status& s) {
    ++counts.errors;
    error = what + ": " + std::to_string(s.error_code()) + " " + s.error_message();
    return "error";
  }

  WorkerCounts counts;
  std::vector<AckedReport> acked;
  std::string error;

 private:
  SoakShared* shared_;
};

enum class Fate { kFinish, kPreempt, kVanish, kLeave };

}  // namespace

std::string RunSimWorker(const std::string& address, const std::string& name, bool spot,
                         const WorkerFates& fates, uint64_t seed, SoakShared* shared) {
  worker::WorkerOptions options;
  options.client.address = address;
  options.name = name;
  options.instance_type = "local-cpu";
  // Spot workers at the catalog's price, on-demand ones at their own: both kinds of segment.
  options.market = spot ? "spot" : "on-demand";
  options.price_per_hour = spot ? 0 : 1.8;
  options.retry_seconds = 60;  // longer than any restart the driver makes
  Tally tally(shared);
  // Retries end once the driver is done, as a worker's end on a stop request.
  worker::CoordinatorLink link(options, &shared->done);
  if (grpc::Status s = link.Register(); !s.ok()) return tally.Fail("RegisterWorker", s);
  ++tally.counts.registered;
  link.StartHeartbeat();
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> unit(0, 1);
  while (!shared->done) {
    v1::AcquireTrialRequest req;
    req.set_worker_id(link.worker_id());
    v1::AcquireTrialResponse resp;
    grpc::Status s = link.Call("AcquireTrial", [&] {
      return link.stub()->AcquireTrial(link.Context().get(), req, &resp);
    });
    if (s.error_code() == grpc::StatusCode::NOT_FOUND) {  // as worker_client.cc: register again
      if (grpc::Status r = link.Register(); !r.ok()) return tally.Fail("RegisterWorker", r);
      ++tally.counts.registered;
      continue;
    }
    if (shared->done) break;
    if (!s.ok()) return tally.Fail("AcquireTrial", s);
    if (resp.status() != v1::AcquireTrialResponse::ASSIGNED) {
      std::this_thread::sleep_for(std::chrono::milliseconds(std::max(50, resp.retry_after_ms())));
      continue;
    }
    const v1::TrialAssignment& a = resp.assignment();
    ++tally.counts.trials;
    link.SetLease(a.lease_id());
    const double u = unit(rng);
    const Fate fate = u < fates.preempt                                ? Fate::kPreempt
                      : u < fates.preempt + fates.vanish               ? Fate::kVanish
                      : u < fates.preempt + fates.vanish + fates.leave ? Fate::kLeave
                                                                       : Fate::kFinish;
    const int64_t first = a.start_epoch() + 1;
    const int64_t span = std::max<int64_t>(1, a.max_epochs() - a.start_epoch());
    const int64_t cut = first + static_cast<int64_t>(rng() % static_cast<uint64_t>(span));
    int64_t seq = 0;
    bool held = true;
    for (int64_t epoch = first; epoch <= a.max_epochs() && held; ++epoch) {
      if (epoch == cut && fate == Fate::kPreempt) {
        link.Preempt(a, /*checkpoint=*/"", "simulated spot reclaim");
        ++tally.counts.preempted;
        return "preempted";
      }
      if (epoch == cut && fate == Fate::kVanish) {
        ++tally.counts.vanished;
        return "vanished";  // the link's heartbeat ends with it: the lease expires
      }
      if (link.revoked()) {
        held = false;
        break;
      }
      v1::ReportProgressRequest rep;
      rep.set_seq(++seq);
      rep.set_epoch(epoch);
      (*rep.mutable_metrics())["val_accuracy"] = ReportedValue(a.trial_number(), epoch);
      v1::ReportProgressResponse decision;
      s = link.Report(a, &rep, &decision);
      if (s.error_code() == grpc::StatusCode::FAILED_PRECONDITION ||
          s.error_code() == grpc::StatusCode::NOT_FOUND) {
        held = false;  // the lease expired or was revoked meanwhile, or the worker is unknown
        break;
      }
      if (!s.ok()) {
        if (shared->done) return "done";
        return tally.Fail("ReportProgress", s);
      }
      tally.acked.push_back(
          {a.lease_id(), seq, a.trial_number(), epoch, ReportedValue(a.trial_number(), epoch)});
      ++shared->reports;
      if (decision.decision() == v1::DECISION_STOP || decision.decision() == v1::DECISION_PAUSE) {
        break;
      }
    }
    if (held) {
      v1::CompleteTrialRequest done;
      s = link.Complete(a, &done);
      if (s.error_code() == grpc::StatusCode::FAILED_PRECONDITION ||
          s.error_code() == grpc::StatusCode::NOT_FOUND) {
        held = false;
      } else if (!s.ok()) {
        if (shared->done) return "done";
        return tally.Fail("CompleteTrial", s);
      } else {
        ++tally.counts.completed;
      }
    }
    if (!held) ++tally.counts.abandoned;
    link.SetLease("");
    if (fate == Fate::kLeave) {
      ++tally.counts.left;
      return "left";
    }
  }
  return "done";
}

}  // namespace sift::testing::soak
