// Several objectives and constraints end to end (issue 26): `sift run` with local workers, and a
// standalone coordinator with a remote sift-worker, each training on a slice of Fashion-MNIST.
// The database shows what the coordinator measured with every report and what it decided on.
#include <SQLiteCpp/SQLiteCpp.h>
#include <gtest/gtest.h>
#include <signal.h>

#include <algorithm>
#include <nlohmann/json.hpp>
#include <string>

#include "tests/integration/cluster_util.h"
#include "tests/integration/process.h"

namespace sift::testing {
namespace frontier_run_test {

// hidden 32..128 with one layer: about 25k to 102k parameters, so the bound on params leaves
// some configurations infeasible.
constexpr const char* kFrontier = R"(name: it-frontier
objectives:
  - {metric: val_accuracy, direction: maximize}
  - {metric: dollars}
constraints:
  - {metric: params, max: 60000}
search_space:
  lr: {type: float, low: 1.0e-3, high: 3.0e-3, scale: log}
  hidden: {type: int, low: 32, high: 128, scale: log}
trainer: {model: mlp, depth: 1, batch_size: 128, precision: fp32}
searcher: {type: tpe, n_startup: 3}
scheduler: {type: asha, eta: 2}
budget: {max_trials: 6, max_epochs: 3}
seed: 5
data: {dir: /usr/share/datasets/fashion-mnist, train_limit: 1024, val_size: 256, test_limit: 256}
worker: {instance_type: local-cpu, market: on-demand}
)";

TEST(Frontier, SiftRunSearchesTwoObjectivesUnderAConstraint) {
  const std::string dir = TempDir("frontier");
  std::string output;
  const int code = RunCommand({BinDir() + "/sift", "run", WriteFile(dir + "/f.yaml", kFrontier),
                               "--out", dir + "/run", "--workers", "2"},
                              &output, /*timeout_s=*/300);
  ASSERT_EQ(code, 0) << output;
  SQLite::Database db(dir + "/run/sift.db");
  EXPECT_EQ(db.execAndGet("SELECT state FROM studies").getString(), "COMPLETED");
  EXPECT_EQ(db.execAndGet("SELECT COUNT(*) FROM trials").getInt(), 6);
  // Every report carries the dollars and seconds measured for its trial when it came, beside
  // what the worker reported (params), and a trial's dollars grow from epoch to epoch.
  const int reports = db.execAndGet("SELECT COUNT(*) FROM reports").getInt();
  EXPECT_GE(reports, 6);
  EXPECT_EQ(db.execAndGet("SELECT COUNT(*) FROM reports WHERE "
                          "json_extract(metrics, '$.dollars') > 0 AND "
                          "json_extract(metrics, '$.train_seconds') > 0 AND "
                          "json_extract(metrics, '$.params') > 0")
                .getInt(),
            reports);
  EXPECT_EQ(db.execAndGet("SELECT COUNT(*) FROM reports a JOIN reports b ON a.study_id = "
                          "b.study_id AND a.number = b.number AND b.epoch = a.epoch + 1 WHERE "
                          "json_extract(b.metrics, '$.dollars') <= "
                          "json_extract(a.metrics, '$.dollars')")
                .getInt(),
            0);
  // MO-ASHA (eta 2) stopped some trial at its first rung by the Pareto ranks there.
  EXPECT_GE(db.execAndGet("SELECT COUNT(*) FROM trials WHERE state = 'STOPPED'").getInt(), 1)
      << output;

  // The closing text and results.json show the Pareto set of the feasible trials.
  EXPECT_NE(output.find("Pareto set over val_accuracy (max), dollars (min), feasible trials only "
                        "(constraints: params <= 60000): #"),
            std::string::npos)
      << output;
  // The set as a list from the database alone: no checkpoint folder needed to list it.
  std::string listed;
  ASSERT_EQ(
      RunCommand({BinDir() + "/sift", "export", "--db", dir + "/run/sift.db", "--pareto"}, &listed),
      0)
      << listed;
  EXPECT_NE(listed.find("val_accuracy"), std::string::npos) << listed;
  const auto j = nlohmann::json::parse(Read(dir + "/run/results.json"));
  ASSERT_FALSE(j["pareto"].empty()) << j.dump();
  for (const auto& t : j["trials"]) {
    const bool listed =
        std::find(j["pareto"].begin(), j["pareto"].end(), t["number"]) != j["pareto"].end();
    EXPECT_EQ(t["on_pareto"].get<bool>(), listed) << t.dump();
    if (listed) {
      EXPECT_TRUE(t["feasible"].get<bool>()) << t.dump();
    }
  }
}

// A bound on train_seconds no epoch can keep: the coordinator stops each trial at its first
// report, naming the constraint, and the study still completes.
TEST(Frontier, AStandaloneCoordinatorStopsTheTrialThatCrossesASecondsBound) {
  const std::string dir = TempDir("frontier-bound");
  std::unique_ptr<Process> coordinator;
  const int port = StartCoordinator(&coordinator, dir);
  ASSERT_GT(port, 0);
  const std::string address = "127.0.0.1:" + std::to_string(port);
  std::string config = kFrontier;
  config.replace(config.find("{metric: params, max: 60000}"), 28,
                 "{metric: train_seconds, max: 0.001}");
  config.replace(config.find("max_trials: 6"), 13, "max_trials: 3");
  std::string output;
  ASSERT_EQ(RunCommand({BinDir() + "/sift", "submit", WriteFile(dir + "/f.yaml", config),
                        "--coordinator", address},
                       &output),
            0)
      << output;
  Process worker({BinDir() + "/sift-worker", "--coordinator", address, "--name", "w0", "--threads",
                  "1", "--cache-dir", dir + "/cache"},
                 dir + "/worker.log");
  const v1::Study study = WaitForStudyEnd(address, /*timeout_s=*/180);
  ASSERT_EQ(study.state(), v1::STUDY_COMPLETED) << coordinator->Log() << worker.Log();
  // Over gRPC: both objectives and the constraint; no trial is feasible, so no hypervolume.
  ASSERT_EQ(study.objectives_size(), 2);
  EXPECT_EQ(study.objectives(1).metric(), "dollars");
  ASSERT_EQ(study.constraints_size(), 1);
  EXPECT_FALSE(study.has_hypervolume());
  ASSERT_EQ(RunCommand({BinDir() + "/sift", "status", "--coordinator", address}, &output), 0);
  EXPECT_NE(output.find("Pareto set over val_accuracy (max), dollars (min), feasible trials only "
                        "(constraints: train_seconds <= "),
            std::string::npos)
      << output;
  worker.Signal(SIGTERM);
  EXPECT_EQ(worker.Wait(30), 0) << worker.Log();
  coordinator->Signal(SIGTERM);
  EXPECT_EQ(coordinator->Wait(30), 0);

  SQLite::Database db(dir + "/sift.db");
  EXPECT_EQ(db.execAndGet("SELECT COUNT(*) FROM trials WHERE state = 'STOPPED' AND end_reason LIKE "
                          "'constraint train_seconds <= 0.001 crossed (%): it can only grow'")
                .getInt(),
            3);
  EXPECT_EQ(db.execAndGet("SELECT MAX(epoch) FROM reports").getInt(), 1);
}

}  // namespace frontier_run_test
}  // namespace sift::testing
