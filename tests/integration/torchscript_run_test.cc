// model: torchscript through `sift validate` and `sift run`: a scripted module exported by
// examples/torchscript/export_model.py (Debian's python3-torch; skipped without it) is trained by
// the real worker, its file picked by a searched width and its dropout attribute searched.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <set>
#include <vector>

#include "tests/integration/process.h"

namespace sift::testing {
namespace torchscript_run_test {

bool HavePythonTorch() {
  return std::system("/usr/bin/python3 -c 'import torch' >/dev/null 2>&1") == 0;
}

// MLPs for 4 features and 3 classes, `width` wide, as dir/net_<width>.pt; one python3 for all.
void Export(const std::string& dir, const std::vector<int>& widths) {
  std::string code = "import sys; sys.path.insert(0, '" + SourceDir() +
                     "/examples/torchscript'); import export_model as e";
  for (int w : widths) {
    code += "; e.export('mlp', " + std::to_string(w) + ", out='" + dir + "/net_" +
            std::to_string(w) + ".pt', outputs=3, features=4)";
  }
  const std::string cmd = "/usr/bin/python3 -c \"" + code + "\" >/dev/null";
  ASSERT_EQ(std::system(cmd.c_str()), 0) << cmd;
}

// Three well-separated classes: 4 features once the text column is one-hot encoded.
void WriteCsv(const std::string& path) {
  std::ofstream f(path);
  f << "x1,x2,site,species\n";
  for (int i = 0; i < 240; ++i) {
    const int c = i % 3;
    f << c * 2.0 + 0.3 * std::sin(i * 1.7) << "," << -c + 0.3 * std::cos(i * 0.9) << ","
      << (i % 2 ? "north" : "south") << ","
      << (c == 0   ? "a"
          : c == 1 ? "b"
                   : "c")
      << "\n";
  }
}

std::string Config(const std::string& dir, const std::string& attribute) {
  return "name: ts\nsearch_space:\n"
         "  width: {type: categorical, choices: [8, 16]}\n"
         "  " +
         attribute +
         ": {type: float, low: 0.0, high: 0.2}\n"
         "  lr: {type: float, low: 1.0e-2, high: 3.0e-2, scale: log}\n"
         // A constant rate: the default cosine decay halves what 54 steps learn (0.85-0.88).
         "trainer: {model: torchscript, path: '" +
         dir +
         "/net_{width}.pt', batch_size: 16, "
         "lr_schedule: constant}\n"
         "searcher: {type: grid, points_per_float: 1}\nbudget: {max_trials: 2, max_epochs: 6}\n"
         "data: {file: " +
         dir +
         "/d.csv, label: species, standardize: true, "
         "split: {val: 0.2, test: 0.2}}\n";
}

TEST(TorchScriptRun, ValidateListsMissingFilesAndTheWorkerTrainsTheModule) {
  if (!HavePythonTorch()) GTEST_SKIP() << "python3-torch is not installed";
  const std::string dir = TempDir("torchscript-run");
  WriteCsv(dir + "/d.csv");
  Export(dir, {8, 16});
  std::filesystem::rename(dir + "/net_16.pt", dir + "/later.pt");
  std::ofstream(dir + "/study.yaml") << Config(dir, "dropout_p");
  std::string output;
  EXPECT_EQ(RunCommand({BinDir() + "/sift", "validate", dir + "/study.yaml"}, &output), 2);
  EXPECT_NE(output.find("trainer.path: 1 of 2 model files do not exist: " + dir + "/net_16.pt"),
            std::string::npos)
      << output;

  std::filesystem::rename(dir + "/later.pt", dir + "/net_16.pt");
  ASSERT_EQ(RunCommand({BinDir() + "/sift", "validate", dir + "/study.yaml"}, &output), 0)
      << output;
  ASSERT_EQ(RunCommand({BinDir() + "/sift", "run", dir + "/study.yaml", "--out", dir + "/run",
                        "--workers", "1"},
                       &output, /*timeout_s=*/300),
            0)
      << output;
  const auto j = nlohmann::json::parse(Read(dir + "/run/results.json"));
  ASSERT_EQ(j["trials"].size(), 2u);
  std::set<std::string> widths;
  for (const auto& t : j["trials"]) {
    EXPECT_EQ(t["state"], "COMPLETED") << t.dump();
    widths.insert(t["params"]["width"].dump());
    EXPECT_GT(t["curve"].back()["metrics"]["val_accuracy"].get<double>(), 0.9) << t.dump();
  }
  EXPECT_EQ(widths.size(), 2u);  // each file trained

  // An attribute the module lacks fails the trial, naming it and the attributes there are.
  std::ofstream(dir + "/bad.yaml") << Config(dir, "dropout_q");
  EXPECT_NE(RunCommand({BinDir() + "/sift", "run", dir + "/bad.yaml", "--out", dir + "/bad",
                        "--workers", "1"},
                       &output, /*timeout_s=*/300),
            0);
  const auto bad = nlohmann::json::parse(Read(dir + "/bad/results.json"));
  for (const auto& t : bad["trials"]) {
    EXPECT_EQ(t["state"], "FAILED") << t.dump();
    EXPECT_NE(t["end_reason"].get<std::string>().find(
                  "dropout_q: not a trainer setting nor an attribute of the module"),
              std::string::npos)
        << t.dump();
    EXPECT_NE(t["end_reason"].get<std::string>().find("settable attributes: dropout_p (float)"),
              std::string::npos)
        << t.dump();
  }
}

}  // namespace torchscript_run_test
}  // namespace sift::testing
