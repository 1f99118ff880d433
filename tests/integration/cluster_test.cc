// A real coordinator and two real sift-worker processes on 127.0.0.1, training on a small slice
// of Fashion-MNIST; the database is checked afterwards.
#include <SQLiteCpp/SQLiteCpp.h>
#include <gtest/gtest.h>
#include <signal.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <regex>
#include <thread>

#include "common/client_channel.h"
#include "coordinator/rpc/client.h"
#include "sift/v1/workers_service.grpc.pb.h"
#include "tests/integration/cluster_util.h"
#include "tests/integration/process.h"
#include "tests/test_pki.h"

namespace sift::testing {
namespace cluster_test {

constexpr const char* kConfig = R"(name: it-small
objective: {metric: val_accuracy, direction: maximize}
search_space:
  lr: {type: float, low: 1.0e-3, high: 3.0e-3, scale: log}
  hidden: {type: int, low: 32, high: 64}
trainer: {model: mlp, depth: 1, batch_size: 128, micro_batch: auto}
searcher: {type: random}
scheduler: {type: fifo}
budget: {max_trials: 4, max_epochs: 2}
seed: 3
data: {train_limit: 1024, val_size: 256, test_limit: 500}
)";

constexpr const char* kBadConfig = R"(name: it-bad
search_space:
  lr: {type: float, low: 0, high: 1.0e-2, scale: log}
)";

TEST(Cluster, FourTrialStudyOnTwoWorkersLandsInTheDatabase) {
  const std::string dir = TempDir("cluster");
  std::unique_ptr<Process> coordinator;
  const int port = StartCoordinator(&coordinator, dir);
  ASSERT_GT(port, 0);
  const std::string address = "127.0.0.1:" + std::to_string(port);

  std::string output;
  ASSERT_EQ(RunCommand({BinDir() + "/sift", "submit", WriteFile(dir + "/study.yaml", kConfig),
                        "--coordinator", address},
                       &output),
            0)
      << output;
  std::vector<std::unique_ptr<Process>> workers;
  for (int i = 0; i < 2; ++i) {
    workers.push_back(std::make_unique<Process>(
        std::vector<std::string>{BinDir() + "/sift-worker", "--coordinator", address, "--name",
                                 "w" + std::to_string(i), "--threads", "1", "--cache-dir",
                                 dir + "/cache", "--memory-limit-mb", "2048"},
        dir + "/worker-" + std::to_string(i) + ".log"));
  }

  v1::Study study = WaitForStudyEnd(address, /*timeout_s=*/240);
  ASSERT_EQ(study.state(), v1::STUDY_COMPLETED)
      << coordinator->Log() << workers[0]->Log() << workers[1]->Log();
  // The best trial's test score comes after the study, from one of the workers.
  auto studies = v1::Studies::NewStub(coordinator::MakeChannel(address));
  for (int i = 0; i < 300; ++i) {
    v1::ListTrialsRequest req;
    req.set_study_id(1);
    v1::ListTrialsResponse trials;
    bool scored = false;
    if (studies->ListTrials(coordinator::MakeContext("").get(), req, &trials).ok()) {
      for (const auto& t : trials.trials()) scored |= t.test_evaluation() == "done";
    }
    if (scored) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }

  // `sift status` shows it over gRPC.
  ASSERT_EQ(RunCommand({BinDir() + "/sift", "status", "--coordinator", address}, &output), 0);
  EXPECT_NE(output.find("it-small"), std::string::npos) << output;

  // A spot notice (SIGTERM) to an idle worker: it leaves cleanly.
  for (auto& w : workers) w->Signal(SIGTERM);
  for (auto& w : workers) EXPECT_EQ(w->Wait(30), 0) << w->Log();
  coordinator->Signal(SIGTERM);
  EXPECT_EQ(coordinator->Wait(30), 0);

  SQLite::Database db(dir + "/sift.db");
  EXPECT_EQ(db.execAndGet("SELECT COUNT(*) FROM trials").getInt(), 4);
  EXPECT_EQ(db.execAndGet("SELECT COUNT(*) FROM trials WHERE state='COMPLETED'").getInt(), 4);
  // Every trial reported every epoch, once, with its metrics.
  EXPECT_EQ(db.execAndGet("SELECT COUNT(*) FROM reports").getInt(), 8);
  EXPECT_EQ(db.execAndGet("SELECT COUNT(*) FROM reports WHERE "
                          "json_extract(metrics, '$.val_accuracy') > 0.3")
                .getInt(),
            8);
  // No trial scores the test split; the best one is scored once, after the study.
  EXPECT_EQ(db.execAndGet("SELECT COUNT(*) FROM trials WHERE "
                          "json_extract(final_metrics, '$.test_accuracy') IS NOT NULL")
                .getInt(),
            0);
  EXPECT_EQ(db.execAndGet("SELECT COUNT(*) FROM evaluations WHERE state = 'done' AND "
                          "json_extract(metrics, '$.test_accuracy') > 0.3")
                .getInt(),
            1);
  // micro_batch: auto measured the model and found room for the whole batch in 2 GiB.
  EXPECT_EQ(db.execAndGet("SELECT COUNT(*) FROM trials WHERE "
                          "json_extract(final_metrics, '$.micro_batch') = 128")
                .getInt(),
            4);
  // Every trial cost something, and every segment closed.
  EXPECT_EQ(db.execAndGet("SELECT COUNT(*) FROM segments WHERE end IS NULL").getInt(), 0);
  SQLite::Statement cost(db,
                         "SELECT t.number, SUM((s.end - s.start) * s.price_per_hour / 3600) "
                         "FROM trials t JOIN segments s ON s.study_id = t.study_id "
                         "AND s.number = t.number GROUP BY t.number");
  int trials_with_cost = 0;
  while (cost.executeStep()) {
    EXPECT_GT(cost.getColumn(1).getDouble(), 0.0) << "trial " << cost.getColumn(0).getInt();
    ++trials_with_cost;
  }
  EXPECT_EQ(trials_with_cost, 4);
  EXPECT_EQ(db.execAndGet("SELECT COUNT(DISTINCT worker_id) FROM segments").getInt(), 2);
}

// The README's own two-process path, command for command: a coordinator with no --prices
// (the built-in catalog), `sift submit` of the quick example, then workers, one of them priced
// as the README's g5.xlarge spot VM.
TEST(Cluster, TheReadmeTwoProcessPathRunsOnTheBuiltInCatalog) {
  const std::string dir = TempDir("readme-path");
  Process coordinator(
      {BinDir() + "/sift", "coordinator", "--listen", "127.0.0.1:0", "--db", dir + "/sift.db"},
      dir + "/coordinator.log");
  const int port = ListeningPort(coordinator);
  ASSERT_GT(port, 0);
  const std::string address = "127.0.0.1:" + std::to_string(port);
  std::string output;
  ASSERT_EQ(
      RunCommand({BinDir() + "/sift", "submit", SourceDir() + "/examples/fashion_mnist_quick.yaml",
                  "--coordinator", address},
                 &output),
      0)
      << output;
  Process local(
      {BinDir() + "/sift-worker", "--coordinator", address, "--cache-dir", dir + "/cache"},
      dir + "/local.log");
  Process spot({BinDir() + "/sift-worker", "--coordinator", address, "--instance-type", "g5.xlarge",
                "--market", "spot", "--cache-dir", dir + "/cache"},
               dir + "/spot.log");
  v1::Study study = WaitForStudyEnd(address, /*timeout_s=*/180);
  ASSERT_EQ(study.state(), v1::STUDY_COMPLETED) << coordinator.Log() << local.Log() << spot.Log();
  EXPECT_NE(coordinator.Log().find("price catalog: built in, as of 2026-11-01"), std::string::npos)
      << coordinator.Log();
  local.Signal(SIGTERM);
  spot.Signal(SIGTERM);
  EXPECT_EQ(local.Wait(30), 0) << local.Log();
  EXPECT_EQ(spot.Wait(30), 0) << spot.Log();

  // Both registered at their catalog prices (local-cpu on demand, g5.xlarge spot).
  SQLite::Database db(dir + "/sift.db", SQLite::OPEN_READONLY);
  EXPECT_EQ(db.execAndGet("SELECT COUNT(*) FROM workers WHERE instance_type='local-cpu' AND "
                          "market='on-demand' AND price_per_hour=0.0416")
                .getInt(),
            1);
  EXPECT_EQ(db.execAndGet("SELECT COUNT(*) FROM workers WHERE instance_type='g5.xlarge' AND "
                          "market='spot' AND price_per_hour=0.42")
                .getInt(),
            1);
  EXPECT_EQ(db.execAndGet("SELECT COUNT(*) FROM trials WHERE state='COMPLETED'").getInt(), 4);
}

TEST(Cluster, SigtermCheckpointsMidEpochHandsBackAndTheNextWorkerResumes) {
  const std::string dir = TempDir("sigterm");
  std::unique_ptr<Process> coordinator;
  const int port = StartCoordinator(&coordinator, dir);
  ASSERT_GT(port, 0);
  const std::string address = "127.0.0.1:" + std::to_string(port);
  std::string output;
  ASSERT_EQ(
      RunCommand({BinDir() + "/sift", "submit", WriteFile(dir + "/study.yaml", R"(name: sigterm
search_space:
  lr: {type: float, low: 1.0e-3, high: 2.0e-3, scale: log}
trainer: {model: mlp, hidden: 256, depth: 2, batch_size: 32}
budget: {max_trials: 1, max_epochs: 3}
data: {train_limit: 12288, val_size: 512, test_limit: 500}
)"),
                  "--coordinator", address},
                 &output),
      0)
      << output;
  auto worker = [&](const std::string& name) {
    return std::make_unique<Process>(
        std::vector<std::string>{BinDir() + "/sift-worker", "--coordinator", address, "--name",
                                 name, "--threads", "1", "--cache-dir", dir + "/cache"},
        dir + "/" + name + ".log");
  };
  auto first = worker("first");
  SQLite::Database db(dir + "/sift.db", SQLite::OPEN_READONLY);
  // Wait for epoch 1's report, then give the VM notice in the middle of epoch 2.
  // Up to 2 minutes: a machine busy with builds took over 30 s for this epoch.
  for (int i = 0; i < 2400 && db.execAndGet("SELECT COUNT(*) FROM reports").getInt() < 1; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  ASSERT_EQ(db.execAndGet("SELECT COUNT(*) FROM reports").getInt(), 1) << first->Log();
  std::this_thread::sleep_for(std::chrono::milliseconds(150));
  first->Signal(SIGTERM);
  EXPECT_EQ(first->Wait(30), 0) << first->Log();
  const std::string checkpoint =
      db.execAndGet("SELECT checkpoint FROM segments WHERE end_reason='preempted'").getString();
  // A mid-epoch checkpoint (in epoch 2 unless this machine is very fast): trial-0-e<k>-s<step>.
  EXPECT_TRUE(std::regex_match(checkpoint, std::regex("trial-0-e[12]-s[0-9]+\\.ckpt")))
      << checkpoint << first->Log();
  EXPECT_EQ(db.execAndGet("SELECT state FROM trials").getString(), "PENDING");

  auto second = worker("second");
  v1::Study study = WaitForStudyEnd(address, /*timeout_s=*/60);
  ASSERT_EQ(study.state(), v1::STUDY_COMPLETED) << second->Log();
  EXPECT_NE(second->Log().find("resumed from " + checkpoint), std::string::npos) << second->Log();
  EXPECT_EQ(
      db.execAndGet("SELECT COUNT(DISTINCT epoch) || '/' || COUNT(*) FROM reports").getString(),
      "3/3");
  second->Signal(SIGTERM);
  EXPECT_EQ(second->Wait(30), 0);
}

TEST(Cluster, BadConfigIsRefusedByValidateSubmitAndCreateStudyAlike) {
  const std::string dir = TempDir("badconfig");
  const std::string bad = WriteFile(dir + "/bad.yaml", kBadConfig);
  const std::string expected = "search_space.lr.low: must be > 0 for a log scale";
  std::string output;
  EXPECT_EQ(RunCommand({BinDir() + "/sift", "validate", bad}, &output), 2);
  EXPECT_NE(output.find(expected), std::string::npos) << output;

  std::unique_ptr<Process> coordinator;
  const int port = StartCoordinator(&coordinator, dir);
  ASSERT_GT(port, 0);
  const std::string address = "127.0.0.1:" + std::to_string(port);
  EXPECT_EQ(RunCommand({BinDir() + "/sift", "submit", bad, "--coordinator", address}, &output), 2);
  EXPECT_NE(output.find(expected), std::string::npos) << output;

  auto stub = v1::Studies::NewStub(coordinator::MakeChannel(address));
  v1::CreateStudyRequest req;
  req.set_config(kBadConfig);
  v1::CreateStudyResponse resp;
  grpc::Status s = stub->CreateStudy(coordinator::MakeContext("").get(), req, &resp);
  EXPECT_EQ(s.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_NE(s.error_message().find(expected), std::string::npos) << s.error_message();
  // Garbage is refused just as clearly, and the coordinator keeps serving.
  req.set_config("{{{ not yaml");
  s = stub->CreateStudy(coordinator::MakeContext("").get(), req, &resp);
  EXPECT_EQ(s.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  v1::ListStudiesResponse list;
  EXPECT_TRUE(stub->ListStudies(coordinator::MakeContext("").get(), {}, &list).ok());
  EXPECT_EQ(list.studies_size(), 0);
}

// Mode 600, as a secret file should be.
std::string WriteSecret(const std::string& path, const std::string& text) {
  WriteFile(path, text);
  std::filesystem::permissions(
      path, std::filesystem::perms::owner_read | std::filesystem::perms::owner_write);
  return path;
}

constexpr const char* kWorkerToken = "w0rker-token-0123456789abcdef";
constexpr const char* kUserToken = "us3r-token-0123456789abcdef";
constexpr const char* kViewerToken = "vi3wer-token-0123456789abcdef";

std::string CredentialsFile(const std::string& dir) {
  return WriteSecret(dir + "/credentials", std::string("# role token\nworker ") + kWorkerToken +
                                               "\nuser " + kUserToken + "\nviewer " + kViewerToken +
                                               "\n");
}

TEST(Cluster, RoleTokensAreRequiredWhenSetAndBadWorkerInputIsNamed) {
  const std::string dir = TempDir("token");
  std::unique_ptr<Process> coordinator;
  const int port =
      StartCoordinator(&coordinator, dir, {"--credentials-file", CredentialsFile(dir)});
  ASSERT_GT(port, 0);
  auto channel = coordinator::MakeChannel("127.0.0.1:" + std::to_string(port));
  auto studies = v1::Studies::NewStub(channel);
  v1::ListStudiesResponse list;
  EXPECT_EQ(studies->ListStudies(coordinator::MakeContext("").get(), {}, &list).error_code(),
            grpc::StatusCode::UNAUTHENTICATED);
  EXPECT_EQ(studies->ListStudies(coordinator::MakeContext("wrong").get(), {}, &list).error_code(),
            grpc::StatusCode::UNAUTHENTICATED);
  EXPECT_TRUE(studies->ListStudies(coordinator::MakeContext(kViewerToken).get(), {}, &list).ok());
  EXPECT_EQ(
      studies->ListStudies(coordinator::MakeContext(kWorkerToken).get(), {}, &list).error_code(),
      grpc::StatusCode::PERMISSION_DENIED);

  auto workers = v1::Workers::NewStub(channel);
  v1::RegisterWorkerRequest reg;
  reg.set_instance_type("no-such-instance");
  v1::RegisterWorkerResponse resp;
  grpc::Status s = workers->RegisterWorker(coordinator::MakeContext(kUserToken).get(), reg, &resp);
  EXPECT_EQ(s.error_code(), grpc::StatusCode::PERMISSION_DENIED) << s.error_message();
  s = workers->RegisterWorker(coordinator::MakeContext(kWorkerToken).get(), reg, &resp);
  EXPECT_EQ(s.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_NE(s.error_message().find("no-such-instance"), std::string::npos) << s.error_message();
  v1::AcquireTrialRequest acq;
  acq.set_worker_id("w-forged");
  v1::AcquireTrialResponse acq_resp;
  EXPECT_EQ(workers->AcquireTrial(coordinator::MakeContext(kWorkerToken).get(), acq, &acq_resp)
                .error_code(),
            grpc::StatusCode::NOT_FOUND);
}

TEST(Cluster, TokensNeverComeFromArgvAndALegacySiftTokenDoesNotOpenTheCoordinator) {
  const std::string dir = TempDir("argv-token");
  std::string output;
  EXPECT_EQ(RunCommand({BinDir() + "/sift", "status", "--token", "s3cret"}, &output), 2);
  EXPECT_NE(output.find("--token-file"), std::string::npos) << output;
  EXPECT_EQ(RunCommand({BinDir() + "/sift-worker", "--token", "s3cret"}, &output), 2);
  EXPECT_NE(output.find("--token-file"), std::string::npos) << output;
  EXPECT_EQ(RunCommand({BinDir() + "/sift", "coordinator", "--token", "s3cret"}, &output), 2);
  EXPECT_NE(output.find("--credentials-file"), std::string::npos) << output;
  // SIFT_TOKEN used to close the coordinator; alone it must not leave it open now.
  setenv("SIFT_TOKEN", "legacy-0123456789abcdef", 1);
  const int code = RunCommand(
      {BinDir() + "/sift", "coordinator", "--listen", "127.0.0.1:0", "--db", dir + "/sift.db"},
      &output, /*timeout_s=*/20);
  unsetenv("SIFT_TOKEN");
  EXPECT_EQ(code, 2) << output;
  EXPECT_NE(output.find("one token per role"), std::string::npos) << output;
}

// Issue 11: credentials come from a file or the environment, never argv. The coordinator takes
// its per-role tokens from SIFT_WORKER_TOKEN / SIFT_USER_TOKEN / SIFT_VIEWER_TOKEN, the CLI its
// own from SIFT_TOKEN, and each role keeps to what it may do.
TEST(Cluster, RoleTokensFromTheEnvironment) {
  const std::string dir = TempDir("env-token");
  setenv("SIFT_USER_TOKEN", kUserToken, 1);
  setenv("SIFT_VIEWER_TOKEN", kViewerToken, 1);
  std::unique_ptr<Process> coordinator;
  const int port = StartCoordinator(&coordinator, dir);
  unsetenv("SIFT_USER_TOKEN");
  unsetenv("SIFT_VIEWER_TOKEN");
  ASSERT_GT(port, 0);
  const std::string address = "127.0.0.1:" + std::to_string(port);
  const std::string config =
      WriteFile(dir + "/study.yaml",
                "name: from-env\nsearch_space:\n  lr: {type: float, low: 0.001, high: 0.1}\n");
  std::string output;
  EXPECT_EQ(RunCommand({BinDir() + "/sift", "status", "--coordinator", address}, &output), 1)
      << output;  // no token: closed
  setenv("SIFT_TOKEN", kViewerToken, 1);
  EXPECT_EQ(RunCommand({BinDir() + "/sift", "status", "--coordinator", address}, &output), 0)
      << output;
  EXPECT_EQ(RunCommand({BinDir() + "/sift", "submit", config, "--coordinator", address}, &output),
            1);
  EXPECT_NE(output.find("a viewer token may not call /sift.v1.Studies/CreateStudy"),
            std::string::npos)
      << output;
  setenv("SIFT_TOKEN", kUserToken, 1);
  EXPECT_EQ(RunCommand({BinDir() + "/sift", "submit", config, "--coordinator", address}, &output),
            0)
      << output;
  unsetenv("SIFT_TOKEN");
  coordinator->Signal(SIGTERM);
  EXPECT_EQ(coordinator->Wait(30), 0) << coordinator->Log();
}

// The whole deployment of docs/security.md: a throwaway CA, a coordinator serving TLS and asking
// workers for client certificates, role tokens in files, a real worker process and the CLI.
TEST(Cluster, StudyCompletesOverMutualTlsWithRoleCredentials) {
  const std::string dir = TempDir("mtls");
  TestPki pki;
  ASSERT_EQ(MakeTestPki(dir, &pki), "");
  std::unique_ptr<Process> coordinator;
  const int port =
      StartCoordinator(&coordinator, dir,
                       {"--tls-cert", pki.server_cert, "--tls-key", pki.server_key,
                        "--tls-client-ca", pki.ca, "--credentials-file", CredentialsFile(dir)});
  ASSERT_GT(port, 0);
  const std::string address = "127.0.0.1:" + std::to_string(port);
  const std::string user = WriteSecret(dir + "/user.token", std::string(kUserToken) + "\n");
  const std::string viewer = WriteSecret(dir + "/viewer.token", kViewerToken);
  const std::string worker = WriteSecret(dir + "/worker.token", kWorkerToken);
  const std::string config = WriteFile(dir + "/study.yaml", R"(name: over-mtls
search_space:
  lr: {type: float, low: 1.0e-3, high: 3.0e-3, scale: log}
trainer: {model: mlp, depth: 1, hidden: 32, batch_size: 128}
budget: {max_trials: 2, max_epochs: 1}
data: {train_limit: 512, val_size: 256, test_limit: 256}
)");
  auto sift = [&](std::vector<std::string> args, std::string* output) {
    args.insert(args.begin(), BinDir() + "/sift");
    return RunCommand(args, output);
  };
  std::string output;
  // Plaintext is refused; a viewer may not submit; a user may.
  EXPECT_EQ(sift({"status", "--coordinator", address, "--token-file", viewer}, &output), 1)
      << output;
  EXPECT_EQ(
      sift({"submit", config, "--coordinator", address, "--tls-ca", pki.ca, "--token-file", viewer},
           &output),
      1);
  EXPECT_NE(output.find("a viewer token may not call /sift.v1.Studies/CreateStudy"),
            std::string::npos)
      << output;
  ASSERT_EQ(
      sift({"submit", config, "--coordinator", address, "--tls-ca", pki.ca, "--token-file", user},
           &output),
      0)
      << output;

  Process w({BinDir() + "/sift-worker", "--coordinator", address, "--tls-ca", pki.ca, "--tls-cert",
             pki.worker_cert, "--tls-key", pki.worker_key, "--token-file", worker, "--name", "w0",
             "--threads", "1", "--cache-dir", dir + "/cache"},
            dir + "/worker.log");
  common::ClientOptions client;
  client.address = address;
  client.tls_ca = pki.ca;
  ASSERT_EQ(common::LoadClientOptions(&client), "");
  v1::Study study = WaitForStudyEnd(common::MakeChannel(client), kViewerToken, /*timeout_s=*/120);
  ASSERT_EQ(study.state(), v1::STUDY_COMPLETED) << coordinator->Log() << w.Log();
  EXPECT_NE(coordinator->Log().find("TLS, workers need a client certificate"), std::string::npos)
      << coordinator->Log();

  ASSERT_EQ(sift({"status", "--coordinator", address, "--tls-ca", pki.ca, "--token-file", viewer},
                 &output),
            0)
      << output;
  EXPECT_NE(output.find("over-mtls"), std::string::npos) << output;
  w.Signal(SIGTERM);
  EXPECT_EQ(w.Wait(30), 0) << w.Log();
  coordinator->Signal(SIGTERM);
  EXPECT_EQ(coordinator->Wait(30), 0);
  SQLite::Database db(dir + "/sift.db", SQLite::OPEN_READONLY);
  EXPECT_EQ(db.execAndGet("SELECT COUNT(*) FROM trials WHERE state='COMPLETED'").getInt(), 2);
}

}  // namespace cluster_test
}  // namespace sift::testing
