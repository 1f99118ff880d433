// gRPC adapters: each handler asks the Authorizer first, converts the request, calls the
// Coordinator and converts the answer. No logic of their own.
#pragma once

#include <memory>
#include <string>

#include "coordinator/core/coordinator.h"
#include "coordinator/rpc/authorization.h"
#include "coordinator/rpc/study_proto.h"
#include "coordinator/rpc/trial_proto.h"
#include "sift/v1/studies_service.grpc.pb.h"
#include "sift/v1/workers_service.grpc.pb.h"

namespace sift::coordinator {

// The caller's name for the audit trail: its "x-sift-user" metadata (set by the CLI from $USER).
// Self-declared: the token, not this name, is what authorizes the call.
std::string CallerUser(const grpc::ServerContext* ctx);

class StudiesService final : public v1::Studies::Service {
 public:
  StudiesService(Coordinator* coordinator, const Authorizer* auth)
      : coordinator_(coordinator), auth_(auth) {}

  grpc::Status CreateStudy(grpc::ServerContext* ctx, const v1::CreateStudyRequest* req,
                           v1::CreateStudyResponse* resp) override;
  grpc::Status GetStudy(grpc::ServerContext* ctx, const v1::GetStudyRequest* req,
                        v1::Study* resp) override;
  grpc::Status ListStudies(grpc::ServerContext* ctx, const v1::ListStudiesRequest* req,
                           v1::ListStudiesResponse* resp) override;
  grpc::Status ListTrials(grpc::ServerContext* ctx, const v1::ListTrialsRequest* req,
                          v1::ListTrialsResponse* resp) override;
  grpc::Status CancelStudy(grpc::ServerContext* ctx, const v1::CancelStudyRequest* req,
                           v1::Study* resp) override;
  grpc::Status PauseStudy(grpc::ServerContext* ctx, const v1::PauseStudyRequest* req,
                          v1::Study* resp) override;
  grpc::Status ResumeStudy(grpc::ServerContext* ctx, const v1::ResumeStudyRequest* req,
                           v1::Study* resp) override;
  grpc::Status UpdateBudget(grpc::ServerContext* ctx, const v1::UpdateBudgetRequest* req,
                            v1::Study* resp) override;
  grpc::Status EvaluateTrial(grpc::ServerContext* ctx, const v1::EvaluateTrialRequest* req,
                             v1::Trial* resp) override;

 private:
  Coordinator* coordinator_;
  const Authorizer* auth_;
};

// ReportProgress and Heartbeat on gRPC's callback API: a report is decided on a gRPC thread and
// answered from the group commit's writer once its write committed, so no thread waits for a
// commit. The other RPCs stay on the synchronous server's threads (AcquireTrial and
// CompleteTrial wait for their commits).
using WorkersBase = v1::Workers::WithCallbackMethod_ReportProgress<
    v1::Workers::WithCallbackMethod_Heartbeat<v1::Workers::Service>>;

class WorkersService final : public WorkersBase {
 public:
  WorkersService(Coordinator* coordinator, const Authorizer* auth)
      : coordinator_(coordinator), auth_(auth) {}

  grpc::Status RegisterWorker(grpc::ServerContext* ctx, const v1::RegisterWorkerRequest* req,
                              v1::RegisterWorkerResponse* resp) override;
  grpc::Status AcquireTrial(grpc::ServerContext* ctx, const v1::AcquireTrialRequest* req,
                            v1::AcquireTrialResponse* resp) override;
  grpc::ServerUnaryReactor* ReportProgress(grpc::CallbackServerContext* ctx,
                                           const v1::ReportProgressRequest* req,
                                           v1::ReportProgressResponse* resp) override;
  grpc::Status CompleteTrial(grpc::ServerContext* ctx, const v1::CompleteTrialRequest* req,
                             v1::CompleteTrialResponse* resp) override;
  grpc::Status FailTrial(grpc::ServerContext* ctx, const v1::FailTrialRequest* req,
                         v1::FailTrialResponse* resp) override;
  grpc::ServerUnaryReactor* Heartbeat(grpc::CallbackServerContext* ctx,
                                      const v1::HeartbeatRequest* req,
                                      v1::HeartbeatResponse* resp) override;
  grpc::Status PreemptTrial(grpc::ServerContext* ctx, const v1::PreemptTrialRequest* req,
                            v1::PreemptTrialResponse* resp) override;
  grpc::Status UploadCheckpoint(grpc::ServerContext* ctx,
                                grpc::ServerReader<v1::CheckpointChunk>* reader,
                                v1::UploadCheckpointResponse* resp) override;
  grpc::Status DownloadCheckpoint(grpc::ServerContext* ctx,
                                  const v1::DownloadCheckpointRequest* req,
                                  grpc::ServerWriter<v1::CheckpointChunk>* writer) override;

 private:
  Coordinator* coordinator_;
  const Authorizer* auth_;
};

}  // namespace sift::coordinator
