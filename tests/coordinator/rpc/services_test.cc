// The gRPC services over a real coordinator and SQLite, called through the generated stubs: each
// RPC's answer, the status code and message of each kind of bad input, and roles. An exception
// inside a handler answers INTERNAL with what went wrong (gRPC's own catch says only "Unexpected
// error in RPC handling"), and the coordinator keeps serving.
#include <SQLiteCpp/SQLiteCpp.h>
#include <grpcpp/grpcpp.h>
#include <gtest/gtest.h>
#include <unistd.h>
#include <zlib.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <future>
#include <iterator>
#include <optional>
#include <thread>

#include "common/checkpoint_file.h"
#include "common/data/data_spec.h"
#include "coordinator/core/coordinator.h"
#include "coordinator/rpc/client.h"
#include "coordinator/rpc/server.h"
#include "sift/v1/workers_service.grpc.pb.h"
#include "tests/coordinator/test_clock.h"

namespace sift::coordinator {
namespace services_test {

TEST(ServicesTest, AnExceptionInAHandlerAnswersInternalWithItsMessage) {
  const auto db = std::filesystem::temp_directory_path() /
                  ("sift-services-" + std::to_string(getpid()) + ".db");
  for (const char* s : {"", "-wal", "-shm"}) std::filesystem::remove(db.string() + s);
  {
    Coordinator c(OpenSqliteStore(db.string()), {});
    int64_t id = 0;
    std::vector<std::string> errors;
    const std::string config =
        "name: t\nsearch_space:\n  lr: {type: float, low: 0.001, high: 0.1}\n";
    ASSERT_TRUE(c.CreateStudy(config, "t.yaml", &id, &errors).ok());
    WorkerRecord in, w;
    in.market = "on-demand";
    in.price_per_hour = 1;
    ASSERT_TRUE(c.RegisterWorker(in, &w).ok());
    AcquireResult result;
    Assignment a;
    ASSERT_TRUE(c.AcquireTrial(w.id, &result, &a).ok());
    search::Decision d;
    ASSERT_TRUE(c.ReportProgress(w.id, a.lease_id, 1, 1, {{"val_accuracy", 0.5}}, "", &d).ok());

    Server server(&c, "127.0.0.1:0");
    // Something no sift wrote: the next read of the study's reports throws.
    SQLite::Database(db.string(), SQLite::OPEN_READWRITE)
        .exec("UPDATE reports SET metrics = '{\"val_loss\":[1]}'");
    auto stub = v1::Studies::NewStub(MakeChannel("127.0.0.1:" + std::to_string(server.port())));
    v1::ListTrialsRequest req;
    req.set_study_id(id);
    v1::ListTrialsResponse resp;
    grpc::Status s = stub->ListTrials(MakeContext("").get(), req, &resp);
    EXPECT_EQ(s.error_code(), grpc::StatusCode::INTERNAL) << s.error_message();
    EXPECT_NE(s.error_message().find("ListTrials: report of trial 0 epoch 1.val_loss"),
              std::string::npos)
        << s.error_message();
    // The service is still up and answers what it can.
    v1::ListStudiesResponse studies;
    EXPECT_TRUE(stub->ListStudies(MakeContext("").get(), v1::ListStudiesRequest(), &studies).ok());
    EXPECT_EQ(studies.studies_size(), 1);
    server.Shutdown();
  }
  for (const char* s : {"", "-wal", "-shm"}) std::filesystem::remove(db.string() + s);
}

}  // namespace services_test
}  // namespace sift::coordinator
