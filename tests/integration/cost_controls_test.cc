// Cost controls with real processes: budget alerts fire exactly once at each threshold across
// coordinator restarts (a gRPC client acting as the worker keeps one lease running), and
// `sift report --by tag` adds up to what the database holds.
#include <SQLiteCpp/SQLiteCpp.h>
#include <gtest/gtest.h>
#include <signal.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <thread>

#include "coordinator/core/coordinator.h"
#include "coordinator/rpc/client.h"
#include "sift/v1/workers_service.grpc.pb.h"
#include "tests/integration/cluster_util.h"
#include "tests/integration/process.h"

namespace sift::testing {
namespace cost_controls_test {

using coordinator::MakeContext;

constexpr double kPricePerHour = 1440;  // $0.40 a second: the $4 budget lasts 10 s

std::string AlertedStudy(const std::string& dir) {
  return R"(name: alerted
search_space:
  lr: {type: float, low: 1.0e-4, high: 1.0e-1, scale: log}
trainer: {model: mlp}
budget: {max_trials: 4, max_epochs: 100, max_dollars: 4}
tags: {team: vision}
alerts: {forecast: false, command: 'cat >> )" +
         dir + R"(/alerts.jsonl'}
)";
}

// The keys of the study's alert events, oldest first, as the coordinator answers them.
std::vector<std::string> AlertKeys(v1::Studies::Stub& stub) {
  v1::GetStudyRequest req;
  req.set_study_id(1);
  v1::Study study;
  std::vector<std::string> keys;
  if (!stub.GetStudy(MakeContext("").get(), req, &study).ok()) return keys;
  for (const auto& e : study.events()) {
    if (e.action() == "alert") keys.push_back(nlohmann::json::parse(e.detail())["key"]);
  }
  return keys;
}

// Heartbeats the lease (as a worker does) until the study's alerts include `key`.
bool WaitForAlert(const std::string& address, const std::string& worker, const std::string& lease,
                  const std::string& key, double timeout_s) {
  auto studies = v1::Studies::NewStub(coordinator::MakeChannel(address));
  auto workers = v1::Workers::NewStub(coordinator::MakeChannel(address));
  const auto deadline = std::chrono::steady_clock::now() +
                        std::chrono::milliseconds(static_cast<int64_t>(timeout_s * 1000));
  while (std::chrono::steady_clock::now() < deadline) {
    v1::HeartbeatRequest beat;
    beat.set_worker_id(worker);
    beat.add_lease_ids(lease);
    v1::HeartbeatResponse revoked;
    workers->Heartbeat(MakeContext("").get(), beat, &revoked);
    EXPECT_EQ(revoked.revoked_lease_ids_size(), 0);
    const auto keys = AlertKeys(*studies);
    if (std::find(keys.begin(), keys.end(), key) != keys.end()) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  return false;
}

TEST(CostControls, BudgetAlertsFireOnceAtEachThresholdAcrossCoordinatorRestarts) {
  const std::string dir = TempDir("cost-alerts");
  std::unique_ptr<Process> coordinator;
  int port = StartCoordinator(&coordinator, dir);
  ASSERT_GT(port, 0);
  std::string address = "127.0.0.1:" + std::to_string(port);
  {
    auto studies = v1::Studies::NewStub(coordinator::MakeChannel(address));
    v1::CreateStudyRequest create;
    create.set_config(AlertedStudy(dir));
    create.set_config_path("alerted.yaml");
    v1::CreateStudyResponse created;
    grpc::Status s = studies->CreateStudy(MakeContext("").get(), create, &created);
    ASSERT_TRUE(s.ok()) << s.error_message();
  }
  auto workers = v1::Workers::NewStub(coordinator::MakeChannel(address));
  v1::RegisterWorkerRequest reg;
  reg.set_name("it-worker");
  reg.set_instance_type("c6i.large");
  reg.set_market(v1::MARKET_ON_DEMAND);
  reg.set_price_per_hour(kPricePerHour);
  v1::RegisterWorkerResponse registered;
  ASSERT_TRUE(workers->RegisterWorker(MakeContext("").get(), reg, &registered).ok());
  const std::string worker = registered.worker_id();
  v1::AcquireTrialRequest acquire;
  acquire.set_worker_id(worker);
  v1::AcquireTrialResponse lease;
  ASSERT_TRUE(workers->AcquireTrial(MakeContext("").get(), acquire, &lease).ok());
  ASSERT_EQ(lease.status(), v1::AcquireTrialResponse::ASSIGNED);
  const std::string lease_id = lease.assignment().lease_id();

  // 50% ($2) after 5 s; then a clean restart, which waits for the alert's command.
  ASSERT_TRUE(WaitForAlert(address, worker, lease_id, "budget:50", 20)) << coordinator->Log();
  // `sift status` shows the tags and the alert's message in the study's history.
  std::string status;
  ASSERT_EQ(RunCommand({BinDir() + "/sift", "status", "--coordinator", address}, &status, 30), 0)
      << status;
  EXPECT_NE(status.find("tags: team=vision"), std::string::npos) << status;
  EXPECT_NE(status.find("coordinator  alert 50% of the budget spent: $"), std::string::npos)
      << status;
  coordinator->Signal(SIGTERM);
  ASSERT_EQ(coordinator->Wait(30), 0) << coordinator->Log();
  const std::string first_log = coordinator->Log();
  EXPECT_NE(first_log.find("ALERT 50% of the budget spent"), std::string::npos) << first_log;

  // The restarted coordinator restores the lease, which keeps spending: 80% and 100% follow,
  // and 50% is not fired again.
  port = StartCoordinator(&coordinator, dir);
  ASSERT_GT(port, 0);
  address = "127.0.0.1:" + std::to_string(port);
  ASSERT_TRUE(WaitForAlert(address, worker, lease_id, "budget:100", 30)) << coordinator->Log();
  workers = v1::Workers::NewStub(coordinator::MakeChannel(address));
  v1::ReportProgressRequest report;
  report.set_worker_id(worker);
  report.set_lease_id(lease_id);
  report.set_seq(1);
  report.set_epoch(1);
  (*report.mutable_metrics())["val_accuracy"] = 0.5;
  v1::ReportProgressResponse decision;
  ASSERT_TRUE(workers->ReportProgress(MakeContext("").get(), report, &decision).ok());
  EXPECT_EQ(decision.decision(), v1::DECISION_STOP);  // the budget itself stops the trial
  v1::CompleteTrialRequest complete;
  complete.set_worker_id(worker);
  complete.set_lease_id(lease_id);
  v1::CompleteTrialResponse completed;
  ASSERT_TRUE(workers->CompleteTrial(MakeContext("").get(), complete, &completed).ok());
  const v1::Study ended = WaitForStudyEnd(address, 10);
  EXPECT_EQ(ended.state(), v1::STUDY_COMPLETED) << ended.end_reason();
  coordinator->Signal(SIGTERM);
  ASSERT_EQ(coordinator->Wait(30), 0) << coordinator->Log();
  const std::string second_log = coordinator->Log();
  EXPECT_EQ(second_log.find("ALERT 50%"), std::string::npos) << second_log;
  EXPECT_NE(second_log.find("ALERT 80% of the budget spent"), std::string::npos) << second_log;

  // A third coordinator on the ended study fires nothing.
  port = StartCoordinator(&coordinator, dir);
  ASSERT_GT(port, 0);
  std::this_thread::sleep_for(std::chrono::seconds(1));
  coordinator->Signal(SIGTERM);
  ASSERT_EQ(coordinator->Wait(30), 0) << coordinator->Log();
  EXPECT_EQ(coordinator->Log().find("ALERT"), std::string::npos) << coordinator->Log();

  SQLite::Database db(dir + "/sift.db");
  SQLite::Statement q(
      db,
      "SELECT json_extract(detail, '$.key'), json_extract(detail, '$.spent_dollars')"
      " FROM study_events WHERE action = 'alert' ORDER BY id");
  std::vector<std::string> keys;
  std::vector<double> spent;
  while (q.executeStep()) {
    keys.push_back(q.getColumn(0).getString());
    spent.push_back(q.getColumn(1).getDouble());
  }
  ASSERT_EQ(keys, (std::vector<std::string>{"budget:50", "budget:80", "budget:100"}));
  EXPECT_GE(spent[0], 2.0);
  EXPECT_GE(spent[1], 3.2);
  EXPECT_GE(spent[2], 4.0);
  // Each command got its alert's facts on stdin, once.
  std::ifstream lines(dir + "/alerts.jsonl");
  std::vector<std::string> commanded;
  for (std::string line; std::getline(lines, line);) {
    const auto j = nlohmann::json::parse(line);
    commanded.push_back(j["key"]);
    EXPECT_EQ(j["study"]["tags"]["team"], "vision") << line;
    EXPECT_DOUBLE_EQ(j["budget"]["max_dollars"].get<double>(), 4) << line;
  }
  EXPECT_EQ(commanded, keys);
}

TEST(CostControls, ReportByTagAddsUpToTheDatabase) {
  const std::string dir = TempDir("cost-by-tag");
  const std::string db_path = dir + "/sift.db";
  auto now = std::make_shared<double>(1.7e9);
  {
    coordinator::CoordinatorOptions o;
    o.clock = [now] { return *now; };
    coordinator::Coordinator c(coordinator::OpenSqliteStore(db_path), o);
    const char* tags[] = {"{team: vision, project: a}", "{team: vision}", "{team: ads}", "{}"};
    for (const char* t : tags) {
      int64_t id = 0;
      std::vector<std::string> errors;
      const std::string config =
          "name: s\nsearch_space:\n  lr: {type: float, low: 1.0e-4, high: 1.0e-1, scale: log}\n"
          "trainer: {model: mlp}\nbudget: {max_trials: 3, max_epochs: 2}\ntags: " +
          std::string(t) + "\n";
      ASSERT_TRUE(c.CreateStudy(config, "s.yaml", &id, &errors).ok());
    }
    coordinator::WorkerRecord in, w;
    in.name = "w";
    in.instance_type = "x";
    in.market = "spot";
    in.price_per_hour = 1.7;
    ASSERT_TRUE(c.RegisterWorker(in, &w).ok());
    // Trials of every study, of different lengths and scores, until each study's budget is used.
    for (int i = 0; i < 12; ++i) {
      coordinator::AcquireResult r;
      coordinator::Assignment a;
      ASSERT_TRUE(c.AcquireTrial(w.id, &r, &a).ok());
      if (r != coordinator::AcquireResult::kAssigned) break;
      *now += 7 + 3 * i;
      search::Decision d;
      ASSERT_TRUE(
          c.ReportProgress(w.id, a.lease_id, 1, 1, {{"val_accuracy", 0.05 * i}}, "", &d).ok());
      ASSERT_TRUE(c.CompleteTrial(w.id, a.lease_id, {}).ok());
    }
  }
  std::string output;
  ASSERT_EQ(RunCommand({BinDir() + "/sift", "report", "--db", db_path, "--by", "tag:team", "--out",
                        dir + "/out"},
                       &output),
            0)
      << output;
  EXPECT_NE(output.find("team=vision"), std::string::npos) << output;
  std::ifstream f(dir + "/out/by_tag.json");
  const auto rows = nlohmann::json::parse(f);
  SQLite::Database db(db_path);
  const auto dollars = [&](const std::string& ids) {
    return db
        .execAndGet(
            "SELECT COALESCE(SUM((end - start) * price_per_hour / 3600), 0) FROM "
            "segments WHERE study_id IN (" +
            ids + ")")
        .getDouble();
  };
  const auto trials = [&](const std::string& ids) {
    return db.execAndGet("SELECT COUNT(*) FROM trials WHERE study_id IN (" + ids + ")").getInt();
  };
  std::map<std::string, std::string> ids = {
      {"vision", "1, 2"}, {"ads", "3"}, {"(no team tag)", "4"}};
  ASSERT_EQ(rows.size(), 3u) << rows.dump();
  for (const auto& row : rows) {
    const std::string value = row["value"];
    ASSERT_TRUE(ids.count(value)) << value;
    EXPECT_EQ(row["key"], "team");
    EXPECT_NEAR(row["dollars"].get<double>(), dollars(ids[value]), 1e-9) << value;
    EXPECT_EQ(row["trials"].get<int>(), trials(ids[value])) << value;
    EXPECT_GT(row["trials"].get<int>(), 0) << value;
  }
  // The best of the vision studies is the highest score either reported.
  const double best = db.execAndGet(
                            "SELECT MAX(json_extract(metrics, '$.val_accuracy')) FROM reports "
                            "WHERE study_id IN (1, 2)")
                          .getDouble();
  for (const auto& row : rows) {
    if (row["value"] == "vision") {
      EXPECT_NEAR(row["best"]["val_accuracy"]["value"].get<double>(), best, 1e-12);
    }
  }
}

TEST(CostControls, ABadQuotaFlagIsRefusedNamingIt) {
  std::string output;
  EXPECT_EQ(RunCommand({BinDir() + "/sift", "coordinator", "--listen", "127.0.0.1:0", "--db",
                        TempDir("cost-quota") + "/sift.db", "--quota", "team:5"},
                       &output),
            2)
      << output;
  EXPECT_NE(output.find("--quota 'team:5': must be KEY=VALUE:DOLLARS"), std::string::npos)
      << output;
}

}  // namespace cost_controls_test
}  // namespace sift::testing
