#include "coordinator/rpc/services.h"

#include <spdlog/spdlog.h>

#include <algorithm>

#include "common/main_guard.h"
#include "common/wire/proto_convert.h"
#include "coordinator/core/checkpoint_store.h"
#include "coordinator/rpc/cost_proto.h"

namespace sift::coordinator {

// The shared conversions (common/wire) beside this file's overloads for summaries.
using common::FromProto;
using common::ToProto;
namespace {

grpc::Status ToGrpc(const Status& s) {
  using C = Status::Code;
  switch (s.code) {
    case C::kOk:
      return grpc::Status::OK;
    case C::kInvalidArgument:
      return {grpc::StatusCode::INVALID_ARGUMENT, s.message};
    case C::kNotFound:
      return {grpc::StatusCode::NOT_FOUND, s.message};
    case C::kFailedPrecondition:
      return {grpc::StatusCode::FAILED_PRECONDITION, s.message};
    case C::kUnauthenticated:
      return {grpc::StatusCode::UNAUTHENTICATED, s.message};
    case C::kResourceExhausted:
      return {grpc::StatusCode::RESOURCE_EXHAUSTED, s.message};
    case C::kUnavailable:
      return {grpc::StatusCode::UNAVAILABLE, s.message};
    case C::kInternal:
      return {grpc::StatusCode::INTERNAL, s.message};
  }
  return {grpc::StatusCode::UNKNOWN, s.message};
}

// An exception in a handler (an unreadable record, a failed conversion) answers INTERNAL with
// what went wrong, not gRPC's bare "Unexpected error in RPC handling"; the coordinator serves on.
grpc::Status HandlerError(const char* rpc) {
  const std::string what = common::DescribeCurrentException();
  spdlog::error("{} failed: {}", rpc, what);
  return {grpc::StatusCode::INTERNAL, std::string(rpc) + ": " + what};
}

std::map<std::string, double> ToMap(const google::protobuf::Map<std::string, double>& m) {
  return {m.begin(), m.end()};
}

}  // namespace

std::string CallerUser(const grpc::ServerContext* ctx) {
  auto it = ctx->client_metadata().find("x-sift-user");
  if (it == ctx->client_metadata().end() || it->second.empty()) return "unknown";
  return std::string(it->second.data(), std::min<size_t>(it->second.size(), 128));
}

namespace {

// A control RPC answers with the study as it is now.
grpc::Status StudyAnswer(Coordinator* coordinator, int64_t id, v1::Study* resp) {
  StudySummary summary;
  if (Status s = coordinator->GetStudy(id, &summary); !s.ok()) return ToGrpc(s);
  ToProto(summary, resp);
  return grpc::Status::OK;
}

}  // namespace

grpc::Status StudiesService::CreateStudy(grpc::ServerContext* ctx,
                                         const v1::CreateStudyRequest* req,
                                         v1::CreateStudyResponse* resp) try {
  if (auto s = auth_->Authorize(ctx, "/sift.v1.Studies/CreateStudy"); !s.ok()) return s;
  int64_t id = 0;
  std::vector<std::string> errors;
  const std::string origin = req->config_path().empty() ? "config" : req->config_path();
  Status s = coordinator_->CreateStudy(req->config(), origin, &id, &errors, CallerUser(ctx));
  if (!s.ok()) return ToGrpc(s);
  StudySummary summary;
  coordinator_->GetStudy(id, &summary);
  ToProto(summary, resp->mutable_study());
  return grpc::Status::OK;
} catch (...) {
  return HandlerError("CreateStudy");
}

grpc::Status StudiesService::GetStudy(grpc::ServerContext* ctx, const v1::GetStudyRequest* req,
                                      v1::Study* resp) try {
  if (auto s = auth_->Authorize(ctx, "/sift.v1.Studies/GetStudy"); !s.ok()) return s;
  StudySummary summary;
  if (Status s = coordinator_->GetStudy(req->study_id(), &summary); !s.ok()) return ToGrpc(s);
  ToProto(summary, resp);
  return grpc::Status::OK;
} catch (...) {
  return HandlerError("GetStudy");
}

grpc::Status StudiesService::ListStudies(grpc::ServerContext* ctx, const v1::ListStudiesRequest*,
                                         v1::ListStudiesResponse* resp) try {
  if (auto s = auth_->Authorize(ctx, "/sift.v1.Studies/ListStudies"); !s.ok()) return s;
  for (const auto& summary : coordinator_->ListStudies()) ToProto(summary, resp->add_studies());
  return grpc::Status::OK;
} catch (...) {
  return HandlerError("ListStudies");
}

grpc::Status StudiesService::ListTrials(grpc::ServerContext* ctx, const v1::ListTrialsRequest* req,
                                        v1::ListTrialsResponse* resp) try {
  if (auto s = auth_->Authorize(ctx, "/sift.v1.Studies/ListTrials"); !s.ok()) return s;
  std::vector<TrialSummary> trials;
  if (Status s = coordinator_->ListTrials(req->study_id(), &trials); !s.ok()) return ToGrpc(s);
  for (const auto& t : trials) ToProto(t, req->include_reports(), resp->add_trials());
  return grpc::Status::OK;
} catch (...) {
  return HandlerError("ListTrials");
}

grpc::Status StudiesService::CancelStudy(grpc::ServerContext* ctx,
                                         const v1::CancelStudyRequest* req, v1::Study* resp) try {
  if (auto s = auth_->Authorize(ctx, "/sift.v1.Studies/CancelStudy"); !s.ok()) return s;
  if (Status s = coordinator_->CancelStudy(req->study_id(), CallerUser(ctx)); !s.ok()) {
    return ToGrpc(s);
  }
  return StudyAnswer(coordinator_, req->study_id(), resp);
} catch (...) {
  return HandlerError("CancelStudy");
}

grpc::Status StudiesService::PauseStudy(grpc::ServerContext* ctx, const v1::PauseStudyRequest* req,
                                        v1::Study* resp) try {
  if (auto s = auth_->Authorize(ctx, "/sift.v1.Studies/PauseStudy"); !s.ok()) return s;
  if (Status s = coordinator_->PauseStudy(req->study_id(), CallerUser(ctx)); !s.ok()) {
    return ToGrpc(s);
  }
  return StudyAnswer(coordinator_, req->study_id(), resp);
} catch (...) {
  return HandlerError("PauseStudy");
}

grpc::Status StudiesService::ResumeStudy(grpc::ServerContext* ctx,
                                         const v1::ResumeStudyRequest* req, v1::Study* resp) try {
  if (auto s = auth_->Authorize(ctx, "/sift.v1.Studies/ResumeStudy"); !s.ok()) return s;
  if (Status s = coordinator_->ResumeStudy(req->study_id(), CallerUser(ctx)); !s.ok()) {
    return ToGrpc(s);
  }
  return StudyAnswer(coordinator_, req->study_id(), resp);
} catch (...) {
  return HandlerError("ResumeStudy");
}

grpc::Status StudiesService::UpdateBudget(grpc::ServerContext* ctx,
                                          const v1::UpdateBudgetRequest* req, v1::Study* resp) try {
  if (auto s = auth_->Authorize(ctx, "/sift.v1.Studies/UpdateBudget"); !s.ok()) return s;
  BudgetChange change;
  if (req->has_max_dollars()) change.max_dollars = req->max_dollars();
  if (req->has_max_hours()) change.max_hours = req->max_hours();
  if (req->has_max_trials()) change.max_trials = req->max_trials();
  if (Status s = coordinator_->UpdateBudget(req->study_id(), change, CallerUser(ctx)); !s.ok()) {
    return ToGrpc(s);
  }
  return StudyAnswer(coordinator_, req->study_id(), resp);
} catch (...) {
  return HandlerError("UpdateBudget");
}

grpc::Status StudiesService::EvaluateTrial(grpc::ServerContext* ctx,
                                           const v1::EvaluateTrialRequest* req,
                                           v1::Trial* resp) try {
  if (auto s = auth_->Authorize(ctx, "/sift.v1.Studies/EvaluateTrial"); !s.ok()) return s;
  TrialSummary trial;
  if (Status s = coordinator_->RequestEvaluation(req->study_id(), req->trial_number(),
                                                 CallerUser(ctx), &trial);
      !s.ok()) {
    return ToGrpc(s);
  }
  ToProto(trial, /*include_reports=*/false, resp);
  return grpc::Status::OK;
} catch (...) {
  return HandlerError("EvaluateTrial");
}

grpc::Status WorkersService::RegisterWorker(grpc::ServerContext* ctx,
                                            const v1::RegisterWorkerRequest* req,
                                            v1::RegisterWorkerResponse* resp) try {
  if (auto s = auth_->Authorize(ctx, "/sift.v1.Workers/RegisterWorker"); !s.ok()) return s;
  WorkerRecord in, out;
  in.name = req->name();
  in.instance_type = req->instance_type();
  in.market = req->market() == v1::MARKET_SPOT ? "spot" : "on-demand";
  in.price_per_hour = req->price_per_hour();
  in.device = req->device();
  in.threads = req->threads();
  if (Status s = coordinator_->RegisterWorker(in, &out); !s.ok()) return ToGrpc(s);
  resp->set_worker_id(out.id);
  resp->set_price_per_hour(out.price_per_hour);
  resp->set_heartbeat_interval_ms(
      static_cast<int32_t>(coordinator_->options().heartbeat_interval_s * 1000));
  resp->set_lease_timeout_ms(static_cast<int32_t>(coordinator_->options().lease_timeout_s * 1000));
  return grpc::Status::OK;
} catch (...) {
  return HandlerError("RegisterWorker");
}

grpc::Status WorkersService::AcquireTrial(grpc::ServerContext* ctx,
                                          const v1::AcquireTrialRequest* req,
                                          v1::AcquireTrialResponse* resp) try {
  if (auto s = auth_->Authorize(ctx, "/sift.v1.Workers/AcquireTrial"); !s.ok()) return s;
  AcquireResult result;
  Assignment a;
  if (Status s =
          coordinator_->AcquireTrial(req->worker_id(), &result, &a, req->idle_exit_seconds());
      !s.ok()) {
    return ToGrpc(s);
  }
  if (result == AcquireResult::kShutdown) {
    resp->set_status(v1::AcquireTrialResponse::SHUTDOWN);
    return grpc::Status::OK;
  }
  if (result == AcquireResult::kNoWork) {
    resp->set_status(v1::AcquireTrialResponse::NO_WORK);
    resp->set_retry_after_ms(500);
    return grpc::Status::OK;
  }
  resp->set_status(v1::AcquireTrialResponse::ASSIGNED);
  auto* out = resp->mutable_assignment();
  out->set_study_id(a.study_id);
  out->set_trial_number(a.number);
  out->set_lease_id(a.lease_id);
  ToProto(a.params, out->mutable_params());
  out->set_max_epochs(a.max_epochs);
  out->set_start_epoch(a.start_epoch);
  out->set_seed(a.seed);
  out->set_objective_metric(a.metric);
  out->set_checkpoint_dir(a.checkpoint_dir);
  out->set_resume_checkpoint(a.resume_checkpoint);
  out->set_checkpoint_every_epochs(a.checkpoint_every_epochs);
  for (const auto& name : a.resume_fallbacks) out->add_resume_fallbacks(name);
  for (const auto& arg : a.trial.command) out->add_command(arg);
  out->set_command_dir(a.trial.dir);
  out->set_report_timeout_seconds(a.trial.report_timeout);
  out->set_command_grace_seconds(a.trial.grace_seconds);
  out->set_evaluate_test(a.evaluate_test);
  auto* data = out->mutable_data();
  data->set_dir(a.data.dir);
  data->set_train_limit(a.data.train_limit);
  data->set_val_size(a.data.val_size);
  data->set_test_limit(a.data.test_limit);
  data->set_spec_json(a.data_json);
  return grpc::Status::OK;
} catch (...) {
  return HandlerError("AcquireTrial");
}

grpc::ServerUnaryReactor* WorkersService::ReportProgress(grpc::CallbackServerContext* ctx,
                                                         const v1::ReportProgressRequest* req,
                                                         v1::ReportProgressResponse* resp) {
  grpc::ServerUnaryReactor* reactor = ctx->DefaultReactor();
  try {
    if (auto s = auth_->Authorize(ctx, "/sift.v1.Workers/ReportProgress"); !s.ok()) {
      reactor->Finish(s);
      return reactor;
    }
    if (req->redone_seconds() > 0) {
      // A ledger note; a lease that already ended (a retried report) has its segment closed.
      coordinator_->RecordRedoneWork(req->worker_id(), req->lease_id(), req->redone_seconds(),
                                     req->damaged_checkpoint());
    }
    // Answered once the report's write committed, from the thread that saw it commit.
    coordinator_->ReportProgressAsync(
        req->worker_id(), req->lease_id(), req->seq(), req->epoch(), ToMap(req->metrics()),
        req->checkpoint(), [reactor, resp](const Status& s, const search::Decision& d) {
          if (!s.ok()) return reactor->Finish(ToGrpc(s));
          resp->set_decision(d.action == search::Action::kStop    ? v1::DECISION_STOP
                             : d.action == search::Action::kPause ? v1::DECISION_PAUSE
                                                                  : v1::DECISION_CONTINUE);
          resp->set_reason(d.reason);
          reactor->Finish(grpc::Status::OK);
        });
  } catch (...) {  // thrown before the report was queued: nothing answered it
    reactor->Finish(HandlerError("ReportProgress"));
  }
  return reactor;
}

grpc::Status WorkersService::CompleteTrial(grpc::ServerContext* ctx,
                                           const v1::CompleteTrialRequest* req,
                                           v1::CompleteTrialResponse*) try {
  if (auto s = auth_->Authorize(ctx, "/sift.v1.Workers/CompleteTrial"); !s.ok()) return s;
  return ToGrpc(coordinator_->CompleteTrial(req->worker_id(), req->lease_id(),
                                            ToMap(req->final_metrics()), req->checkpoint()));
} catch (...) {
  return HandlerError("CompleteTrial");
}

grpc::Status WorkersService::FailTrial(grpc::ServerContext* ctx, const v1::FailTrialRequest* req,
                                       v1::FailTrialResponse*) try {
  if (auto s = auth_->Authorize(ctx, "/sift.v1.Workers/FailTrial"); !s.ok()) return s;
  return ToGrpc(coordinator_->FailTrial(req->worker_id(), req->lease_id(), req->error(),
                                        req->worker_cannot_run()));
} catch (...) {
  return HandlerError("FailTrial");
}

grpc::ServerUnaryReactor* WorkersService::Heartbeat(grpc::CallbackServerContext* ctx,
                                                    const v1::HeartbeatRequest* req,
                                                    v1::HeartbeatResponse* resp) {
  grpc::ServerUnaryReactor* reactor = ctx->DefaultReactor();
  reactor->Finish([&]() -> grpc::Status {
    try {
      if (auto s = auth_->Authorize(ctx, "/sift.v1.Workers/Heartbeat"); !s.ok()) return s;
      std::vector<std::string> leases(req->lease_ids().begin(), req->lease_ids().end()), revoked;
      if (Status s = coordinator_->Heartbeat(req->worker_id(), leases, &revoked); !s.ok()) {
        return ToGrpc(s);
      }
      for (const auto& id : revoked) resp->add_revoked_lease_ids(id);
      return grpc::Status::OK;
    } catch (...) {
      return HandlerError("Heartbeat");
    }
  }());
  return reactor;
}

grpc::Status WorkersService::PreemptTrial(grpc::ServerContext* ctx,
                                          const v1::PreemptTrialRequest* req,
                                          v1::PreemptTrialResponse*) try {
  if (auto s = auth_->Authorize(ctx, "/sift.v1.Workers/PreemptTrial"); !s.ok()) return s;
  return ToGrpc(coordinator_->PreemptTrial(req->worker_id(), req->lease_id(), req->checkpoint(),
                                           req->reason().empty() ? "SIGTERM" : req->reason()));
} catch (...) {
  return HandlerError("PreemptTrial");
}

grpc::Status WorkersService::UploadCheckpoint(grpc::ServerContext* ctx,
                                              grpc::ServerReader<v1::CheckpointChunk>* reader,
                                              v1::UploadCheckpointResponse* resp) try {
  if (auto s = auth_->Authorize(ctx, "/sift.v1.Workers/UploadCheckpoint"); !s.ok()) return s;
  v1::CheckpointChunk chunk;
  std::unique_ptr<CheckpointUpload> upload;
  std::string name;
  while (reader->Read(&chunk)) {
    if (!upload) {
      std::string path;
      Status s =
          coordinator_->CheckpointPath(chunk.worker_id(), chunk.lease_id(), chunk.name(), &path);
      if (!s.ok()) return ToGrpc(s);
      upload = std::make_unique<CheckpointUpload>(path);
      name = chunk.name();
    } else if (chunk.name() != name) {
      return {grpc::StatusCode::INVALID_ARGUMENT,
              "one upload carries one checkpoint: got '" + chunk.name() + "' after '" + name + "'"};
    }
    if (Status s = upload->Append(chunk.offset(), chunk.data()); !s.ok()) return ToGrpc(s);
    if (chunk.last()) {
      Status s = upload->Finish(chunk.total_size(), chunk.crc32());
      if (!s.ok()) {
        spdlog::warn("upload of {} refused: {}", name, s.message);
        return s.code == Status::Code::kInvalidArgument
                   ? grpc::Status(grpc::StatusCode::DATA_LOSS, s.message)
                   : ToGrpc(s);
      }
      resp->set_size(upload->size());
      return grpc::Status::OK;
    }
  }
  return {grpc::StatusCode::INVALID_ARGUMENT,
          "checkpoint upload ended without its last chunk; nothing stored"};
} catch (...) {
  return HandlerError("UploadCheckpoint");
}

grpc::Status WorkersService::DownloadCheckpoint(
    grpc::ServerContext* ctx, const v1::DownloadCheckpointRequest* req,
    grpc::ServerWriter<v1::CheckpointChunk>* writer) try {
  if (auto s = auth_->Authorize(ctx, "/sift.v1.Workers/DownloadCheckpoint"); !s.ok()) return s;
  std::string path;
  Status s = coordinator_->CheckpointPath(req->worker_id(), req->lease_id(), req->name(), &path);
  if (!s.ok()) return ToGrpc(s);
  s = ReadCheckpointChunks(path, 1 << 20,
                           [&](int64_t offset, const std::string& data, bool last, uint32_t crc) {
                             v1::CheckpointChunk chunk;
                             chunk.set_name(req->name());
                             chunk.set_offset(offset);
                             chunk.set_data(data);
                             chunk.set_last(last);
                             if (last) {
                               chunk.set_crc32(crc);
                               chunk.set_total_size(offset + static_cast<int64_t>(data.size()));
                             }
                             return writer->Write(chunk);
                           });
  return ToGrpc(s);
} catch (...) {
  return HandlerError("DownloadCheckpoint");
}

}  // namespace sift::coordinator
