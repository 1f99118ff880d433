// `sift run` end to end on the quick example: coordinator, local workers, SQLite, report files.
#include <SQLiteCpp/SQLiteCpp.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>

#include "tests/integration/process.h"

namespace sift::testing {
namespace embedded_run_test {

TEST(EmbeddedRun, QuickExampleProducesTableCsvAndJson) {
  const std::string out = TempDir("run") + "/quick";
  std::string output;
  const int code =
      RunCommand({BinDir() + "/sift", "run", SourceDir() + "/examples/fashion_mnist_quick.yaml",
                  "--out", out, "--workers", "2", "--target", "0.5"},
                 &output, /*timeout_s=*/300);
  ASSERT_EQ(code, 0) << output;
  EXPECT_NE(output.find("best trial"), std::string::npos) << output;
  // `sift run` waited for the best trial's one test evaluation before it printed the report.
  EXPECT_NE(output.find("held-out test score of trial "), std::string::npos) << output;
  EXPECT_NE(output.find("reached val_accuracy 0.5000 after $"), std::string::npos) << output;

  std::istringstream csv(Read(out + "/results.csv"));
  std::string line;
  int rows = 0;
  std::getline(csv, line);
  EXPECT_EQ(line.rfind("trial,state,epochs,val_accuracy,test_accuracy,test_balanced_accuracy,"
                       "test_macro_f1,wall_seconds,dollars",
                       0),
            0u);
  while (std::getline(csv, line)) ++rows;
  EXPECT_EQ(rows, 4);

  auto j = nlohmann::json::parse(Read(out + "/results.json"));
  EXPECT_EQ(j["study"]["state"], "COMPLETED");
  ASSERT_EQ(j["trials"].size(), 4u);
  for (const auto& t : j["trials"]) {
    EXPECT_GT(t["dollars"].get<double>(), 0.0);
    EXPECT_EQ(t["curve"].size(), 3u);  // three epochs, each reported once
  }
  // Only the best trial has a test score, and it was scored.
  int scored = 0;
  for (const auto& t : j["trials"]) {
    if (!t.contains("test")) continue;
    ++scored;
    EXPECT_EQ(t["number"], j["study"]["best_trial"]);
    EXPECT_EQ(t["test"]["state"], "done");
    EXPECT_GT(t["test"]["scores"]["test_accuracy"].get<double>(), 0.0);
  }
  EXPECT_EQ(scored, 1);
  EXPECT_FALSE(j["pareto_frontiers"]["all"]["trials"].empty());
  EXPECT_FALSE(j["pareto_frontiers"]["completed"]["trials"].empty());
  EXPECT_TRUE(std::ifstream(out + "/sift.db").good());

  // checkpoint.keep defaults to latest: each trial's final model stays, and nothing else.
  std::set<std::string> kept, named;
  for (const auto& e : std::filesystem::directory_iterator(out + "/checkpoints/study-1")) {
    kept.insert(e.path().filename().string());
  }
  for (const auto& t : j["trials"]) named.insert(t["checkpoint"].get<std::string>());
  EXPECT_EQ(kept.size(), 4u);
  EXPECT_EQ(kept, named);
  const std::string best_model = "best trial's model: " + out + "/checkpoints/study-1/trial-" +
                                 std::to_string(j["study"]["best_trial"].get<int>()) + "-e3.ckpt";
  EXPECT_NE(output.find(best_model), std::string::npos) << output;

  // After the run: another trial scored on request (the run's database, one local worker), and
  // the best one shown as it was scored, not scored again.
  const int best = j["study"]["best_trial"].get<int>();
  const std::string other = std::to_string(best == 0 ? 1 : 0);
  ASSERT_EQ(
      RunCommand({BinDir() + "/sift", "evaluate", "--run", out, "--study", "1", "--trial", other},
                 &output, /*timeout_s=*/120),
      0)
      << output;
  EXPECT_NE(output.find("trial " + other + " held-out test score (scored once): test_accuracy 0."),
            std::string::npos)
      << output;
  ASSERT_EQ(
      RunCommand({BinDir() + "/sift", "report", "--db", out + "/sift.db", "--out", out + "/again"},
                 &output),
      0)
      << output;
  j = nlohmann::json::parse(Read(out + "/again/results.json"));
  int evaluated = 0;
  for (const auto& t : j["trials"]) evaluated += t.contains("test");
  EXPECT_EQ(evaluated, 2);
  EXPECT_EQ(
      RunCommand({BinDir() + "/sift", "evaluate", "--run", out, "--study", "1", "--trial", "99"},
                 &output),
      2)
      << output;

  // The frontier as a list, and the cheapest model picked from it and exported.
  ASSERT_EQ(RunCommand({BinDir() + "/sift", "export", "--run", out, "--pareto"}, &output), 0)
      << output;
  for (const auto& n : j["pareto_frontiers"]["all"]["trials"]) {
    EXPECT_NE(output.find("\n" + std::string(6 - std::to_string(n.get<int>()).size(), ' ') +
                          std::to_string(n.get<int>()) + "  "),
              std::string::npos)
        << n << "\n"
        << output;
  }
  int cheapest = -1;
  double least = 1e300;
  for (const auto& t : j["trials"]) {
    if (t["dollars"].get<double>() < least) {
      least = t["dollars"].get<double>();
      cheapest = t["number"].get<int>();
    }
  }
  ASSERT_EQ(RunCommand({BinDir() + "/sift", "export", "--run", out, "--pick",
                        "val_accuracy>=0, min dollars", "--out", out + "/picked.pt"},
                       &output, /*timeout_s=*/120),
            0)
      << output;
  EXPECT_NE(output.find("--pick chose trial " + std::to_string(cheapest) + " "), std::string::npos)
      << output;
  EXPECT_TRUE(std::filesystem::exists(out + "/picked.pt")) << output;
  EXPECT_EQ(RunCommand({BinDir() + "/sift", "export", "--run", out, "--pick",
                        "val_accuracy>=2, min dollars", "--out", out + "/none.pt"},
                       &output),
            1)
      << output;
  EXPECT_NE(output.find("none of the 4 trials with a model meets all of val_accuracy>=2.0000 "
                        "(none; closest 0."),
            std::string::npos)
      << output;
}

TEST(EmbeddedRun, PromotionAshaPausesAndResumesTrialsFromCheckpoints) {
  const std::string dir = TempDir("promotion");
  std::ofstream(dir + "/asha.yaml") << R"(name: promotion
search_space:
  lr: {type: float, low: 3.0e-4, high: 3.0e-3, scale: log}
  hidden: {type: int, low: 32, high: 64}
trainer: {model: mlp, depth: 1, batch_size: 128}
searcher: {type: sobol}
scheduler: {type: asha, eta: 2, min_resource: 1, variant: promotion}
budget: {max_trials: 8, max_epochs: 4}
data: {train_limit: 1024, val_size: 256, test_limit: 200}
checkpoint: {every_epochs: 4, keep: best}
)";
  // One worker: results arrive in trial order, so which paused trials get promoted (and that
  // some do) does not hang on how two workers interleave; with two, a run could promote every
  // trial at its report and resume none.
  std::string output;
  ASSERT_EQ(RunCommand({BinDir() + "/sift", "run", dir + "/asha.yaml", "--out", dir + "/run",
                        "--workers", "1"},
                       &output, 300),
            0)
      << output;
  SQLite::Database db(dir + "/run/sift.db");
  // Every trial ended; some were promoted, i.e. resumed from a checkpoint past epoch 0.
  EXPECT_EQ(
      db.execAndGet("SELECT COUNT(*) FROM trials WHERE state IN ('COMPLETED','STOPPED')").getInt(),
      8);
  EXPECT_GT(db.execAndGet("SELECT COUNT(*) FROM segments WHERE start_epoch > 0").getInt(), 0)
      << output;
  EXPECT_GT(db.execAndGet("SELECT COUNT(*) FROM trials WHERE state='COMPLETED'").getInt(), 0);
  // Rungs (epochs 1, 2) fall between interval checkpoints (every 4): pauses write their own.
  EXPECT_GT(db.execAndGet("SELECT COUNT(*) FROM segments WHERE end_reason='paused' AND "
                          "checkpoint LIKE 'trial-%-e_.ckpt'")
                .getInt(),
            0);
  // keep: best leaves one file, the best trial's model after its last epoch (written at its end,
  // as no rung falls on an interval checkpoint).
  std::vector<std::string> files;
  for (const auto& e : std::filesystem::directory_iterator(dir + "/run/checkpoints/study-1")) {
    files.push_back(e.path().filename().string());
  }
  EXPECT_EQ(files.size(), 1u);
  EXPECT_NE(output.find("best trial's model: " + dir + "/run/checkpoints/study-1/" +
                        (files.empty() ? std::string("?") : files[0])),
            std::string::npos)
      << output;
  // Curves have no gap and no repeat: epochs 1..n, each once.
  SQLite::Statement q(db,
                      "SELECT number, COUNT(*), MAX(epoch), COUNT(DISTINCT epoch) "
                      "FROM reports GROUP BY number");
  while (q.executeStep()) {
    EXPECT_EQ(q.getColumn(1).getInt(), q.getColumn(2).getInt()) << "trial " << q.getColumn(0);
    EXPECT_EQ(q.getColumn(1).getInt(), q.getColumn(3).getInt()) << "trial " << q.getColumn(0);
  }
}

}  // namespace embedded_run_test
}  // namespace sift::testing
