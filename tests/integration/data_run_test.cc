// `sift validate` and `sift run` on CSV files: bad data is refused before any trial, and a
// classification and a regression study run end to end on the trainer with the right metrics.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "tests/integration/process.h"

namespace sift::testing {
namespace data_run_test {

// Three well-separated classes named by text, with a text feature, or (regression) a target
// linear in the features.
void WriteCsv(const std::string& path, bool regression) {
  std::ofstream f(path);
  f << "x1,x2,site," << (regression ? "price" : "species") << "\n";
  for (int i = 0; i < 240; ++i) {
    const int c = i % 3;
    const double x1 = c * 2.0 + 0.3 * std::sin(i * 1.7), x2 = -c + 0.3 * std::cos(i * 0.9);
    f << x1 << "," << x2 << "," << (i % 2 ? "north" : "south") << ",";
    if (regression) {
      f << 4 * x1 - 3 * x2 + (i % 2 ? 1.5 : 0.0) << "\n";
    } else {
      f << (c == 0 ? "setosa" : c == 1 ? "versicolor" : "virginica") << "\n";
    }
  }
}

std::string Config(const std::string& name, const std::string& csv, const std::string& label,
                   const std::string& objective = "val_accuracy") {
  return "name: " + name + "\nobjective: {metric: " + objective + R"(}
search_space:
  lr: {type: float, low: 3.0e-3, high: 3.0e-2, scale: log}
trainer: {model: mlp, hidden: 32, depth: 1, batch_size: 16}
searcher: {type: sobol}
budget: {max_trials: 2, max_epochs: 8}
data: {file: )" +
         csv + ", label: " + label + R"(, standardize: true, split: {val: 0.2, test: 0.2}}
)";
}

TEST(DataRun, ValidateRefusesBadDataNamingFileLineAndColumn) {
  const std::string dir = TempDir("data-validate");
  std::ofstream(dir + "/d.csv") << "a,b,y\n1,2,x\n3,,y\n5,6,x\n7,8,y\n9,1,x\n2,3,y\n4,5,x\n6,7,y\n";
  std::ofstream(dir + "/study.yaml") << Config("bad", dir + "/d.csv", "y");
  std::string output;
  EXPECT_EQ(RunCommand({BinDir() + "/sift", "validate", dir + "/study.yaml"}, &output), 2);
  EXPECT_NE(output.find("data: " + dir + "/d.csv: line 3, column 'b': missing value"),
            std::string::npos)
      << output;
  std::ofstream(dir + "/idx.yaml") << "name: idx\nsearch_space:\n  lr: {type: float, low: 0.001, "
                                      "high: 0.1}\ndata: {dir: /nonexistent}\n";
  EXPECT_EQ(RunCommand({BinDir() + "/sift", "validate", dir + "/idx.yaml"}, &output), 2);
  EXPECT_NE(output.find("data.dir '/nonexistent': no such directory"), std::string::npos) << output;
  // `sift run` refuses it too, before starting any worker.
  EXPECT_EQ(
      RunCommand({BinDir() + "/sift", "run", dir + "/study.yaml", "--out", dir + "/run"}, &output),
      2);
  EXPECT_NE(output.find("missing value"), std::string::npos) << output;
}

TEST(DataRun, CsvClassificationAndRegressionStudiesRunEndToEnd) {
  const std::string dir = TempDir("data-run");
  WriteCsv(dir + "/classes.csv", /*regression=*/false);
  WriteCsv(dir + "/prices.csv", /*regression=*/true);
  std::ofstream(dir + "/classes.yaml") << Config("classes", dir + "/classes.csv", "species");
  // A relative path: read from the config's folder, not from where `sift` runs.
  std::ofstream(dir + "/prices.yaml") << Config("prices", "prices.csv", "price", "val_rmse");

  std::string output;
  ASSERT_EQ(RunCommand({BinDir() + "/sift", "validate", dir + "/classes.yaml"}, &output), 0)
      << output;
  EXPECT_NE(output.find("csv, classification: 3 classes, 4 features; 144 train, 48 val, 48 test"),
            std::string::npos)
      << output;
  for (const std::string name : {"classes", "prices"}) {
    const std::string out = dir + "/" + name + "-run";
    ASSERT_EQ(RunCommand({BinDir() + "/sift", "run", dir + "/" + name + ".yaml", "--out", out,
                          "--workers", "1"},
                         &output, /*timeout_s=*/300),
              0)
        << output;
    const auto j = nlohmann::json::parse(Read(out + "/results.json"));
    EXPECT_EQ(j["study"]["state"], "COMPLETED");
    ASSERT_EQ(j["trials"].size(), 2u);
    // The best trial, and only it, was scored on the test split, with the task's metrics.
    int scored = 0;
    for (const auto& t : j["trials"]) {
      if (!t.contains("test")) continue;
      ++scored;
      EXPECT_EQ(t["number"], j["study"]["best_trial"]);
      const auto& scores = t["test"]["scores"];
      if (name == "classes") {
        EXPECT_GT(scores["test_accuracy"].get<double>(), 0.8) << t.dump();
        EXPECT_EQ(t["test"]["per_class"].size(), 3u) << t.dump();
      } else {
        EXPECT_GT(scores["test_r2"].get<double>(), 0.5) << t.dump();
        EXPECT_GT(scores["test_rmse"].get<double>(), 0.0) << t.dump();
        EXPECT_TRUE(scores.contains("test_mae")) << t.dump();
      }
    }
    EXPECT_EQ(scored, 1) << output;
    for (const auto& t : j["trials"]) {
      EXPECT_EQ(t["state"], "COMPLETED") << t.dump();
      // The worker's own measures of the model in every epoch's report: the 4-32-(3 or 1) MLP's
      // weights and biases, and its forward time per validation sample.
      const int outputs = name == "classes" ? 3 : 1;
      for (const auto& e : t["curve"]) {
        EXPECT_EQ(e["metrics"].value("params", -1), 4 * 32 + 32 + 32 * outputs + outputs)
            << e.dump();
        EXPECT_GT(e["metrics"].value("inference_ms", -1.0), 0) << e.dump();
      }
      const auto& last = t["curve"].back()["metrics"];
      if (name == "classes") {
        EXPECT_EQ(j["study"]["objective"], "val_accuracy");
        EXPECT_GT(last["val_accuracy"].get<double>(), 0.9) << last.dump();  // separable classes
      } else {
        EXPECT_EQ(j["study"]["objective"], "val_rmse");  // minimised: the direction's default
        EXPECT_EQ(j["study"]["maximize"], false);
        EXPECT_FALSE(last.contains("val_accuracy")) << last.dump();
        EXPECT_GT(last["val_r2"].get<double>(), 0.5) << last.dump();
        EXPECT_NEAR(last["val_rmse"].get<double>() * last["val_rmse"].get<double>(),
                    last["val_loss"].get<double>(), 1e-3 * (1 + last["val_loss"].get<double>()));
      }
    }
  }
}

// The config a user writes first for their own table: lr and width searched, nothing else (no
// batch size, no standardize). Its target has mean ~100: a model that starts predicting ~0 with
// 3 steps an epoch (the old defaults) is still far off after 10 epochs; fitted standardized with
// a batch size that fits 180 rows, it beats predicting the mean by a clear margin.
TEST(DataRun, AFirstGuessRegressionConfigBeatsPredictingTheMean) {
  const std::string dir = TempDir("data-first-guess");
  {
    std::ofstream f(dir + "/houses.csv");
    f << "rooms,age,distance,value\n";
    for (int i = 0; i < 300; ++i) {
      const double rooms = (i % 17) / 8.0 - 1, age = (i % 11) / 5.0 - 1,
                   distance = std::sin(i * 0.37);
      f << rooms << "," << age << "," << distance << ","
        << 100 + 8 * rooms - 5 * age + 3 * std::sin(3 * distance) + std::cos(i * 2.1) << "\n";
    }
  }
  std::ofstream(dir + "/study.yaml") << R"(name: houses
objective: {metric: val_rmse, direction: minimize}
search_space:
  lr: {type: float, low: 1.0e-4, high: 3.0e-2, scale: log}
  hidden: {type: int, low: 16, high: 256, scale: log}
trainer: {model: mlp, optimizer: adam}
data: {file: houses.csv, label: value, split: {val: 0.2, test: 0.2, seed: 1}}
budget: {max_trials: 3, max_epochs: 10}
)";
  const std::string out = dir + "/run";
  std::string output;
  ASSERT_EQ(
      RunCommand({BinDir() + "/sift", "run", dir + "/study.yaml", "--out", out, "--workers", "1"},
                 &output, /*timeout_s=*/300),
      0)
      << output;
  const auto j = nlohmann::json::parse(Read(out + "/results.json"));
  double best_r2 = -1e9;
  for (const auto& t : j["trials"]) {
    EXPECT_EQ(t["final_metrics"]["batch_size"], 16) << "a tenth of 180 training rows, down to 16";
    for (const auto& e : t["curve"])
      best_r2 = std::max(best_r2, e["metrics"]["val_r2"].get<double>());
    if (t.contains("test")) {
      // r2 0.75: an rmse half that of predicting the mean.
      EXPECT_GT(t["test"]["scores"]["test_r2"].get<double>(), 0.75) << t.dump();
    }
  }
  EXPECT_GT(best_r2, 0.75) << output;
}

}  // namespace data_run_test
}  // namespace sift::testing
