// What a client can make the coordinator hold is bounded: running studies and config bytes are
// capped (RESOURCE_EXHAUSTED), and a config bomb is one INVALID_ARGUMENT line, over real gRPC.
#include <gtest/gtest.h>
#include <signal.h>

#include <filesystem>

#include "coordinator/client.h"
#include "tests/integration/process.h"

namespace sift::testing {
namespace {

std::string Config(const std::string& name, const std::string& comment = "") {
  return "name: " + name + "\n# " + comment +
         "\nsearch_space:\n  lr: {type: float, low: 1.0e-4, high: 1.0e-2}\n";
}

TEST(CoordinatorLimits, RunningStudiesAndConfigBytesAreCappedOverGrpc) {
  const std::string dir = TempDir("limits");
  std::filesystem::remove(dir + "/sift.db");
  std::unique_ptr<Process> coordinator;
  const int port = StartSiftCoordinator(
      &coordinator, dir + "/sift.db",
      {"--max-running-studies", "2", "--max-config-bytes", "4096"}, dir + "/coordinator.log");
  ASSERT_NE(port, 0);
  auto stub = v1::Studies::NewStub(coordinator::MakeChannel("127.0.0.1:" + std::to_string(port)));
  const auto create = [&](const std::string& config) {
    v1::CreateStudyRequest req;
    req.set_config(config);
    req.set_config_path("study.yaml");
    v1::CreateStudyResponse resp;
    return stub->CreateStudy(coordinator::MakeContext("").get(), req, &resp);
  };

  ASSERT_TRUE(create(Config("a")).ok());
  ASSERT_TRUE(create(Config("b")).ok());
  grpc::Status s = create(Config("c"));
  EXPECT_EQ(s.error_code(), grpc::StatusCode::RESOURCE_EXHAUSTED) << s.error_message();
  EXPECT_EQ(s.error_message(),
            "2 studies are running, the limit (--max-running-studies 2); cancel one or wait for "
            "one to finish");

  // A finished study frees its place.
  v1::CancelStudyRequest cancel;
  cancel.set_study_id(1);
  v1::Study cancelled;
  ASSERT_TRUE(stub->CancelStudy(coordinator::MakeContext("").get(), cancel, &cancelled).ok());
  EXPECT_TRUE(create(Config("c")).ok());

  cancel.set_study_id(2);
  ASSERT_TRUE(stub->CancelStudy(coordinator::MakeContext("").get(), cancel, &cancelled).ok());
  s = create(Config("big", std::string(5000, 'x')));
  EXPECT_EQ(s.error_code(), grpc::StatusCode::RESOURCE_EXHAUSTED) << s.error_message();
  EXPECT_EQ(s.error_message(),
            "study.yaml: 5074 bytes, over the limit of 4096 (--max-config-bytes)");

  // 400 copies of one choice: one line, not 79,800.
  std::string choices = "adam";
  for (int i = 1; i < 400; ++i) choices += ",adam";
  s = create("name: bomb\nsearch_space:\n  optimizer: {type: categorical, choices: [" + choices +
             "]}\n");
  EXPECT_EQ(s.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_EQ(s.error_message(),
            "invalid study config:\n  search_space.optimizer.choices: 'adam' is listed 400 "
            "times (line 3)");

  coordinator->Signal(SIGTERM);
  EXPECT_EQ(coordinator->Wait(20), 0) << coordinator->Log();
}

}  // namespace
}  // namespace sift::testing
