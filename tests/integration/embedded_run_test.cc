// `sift run` end to end on the quick example: coordinator, local workers, SQLite, report files.
#include <gtest/gtest.h>

#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "tests/integration/process.h"

namespace sift::testing {
namespace {

std::string Read(const std::string& path) {
  std::ifstream f(path);
  std::stringstream s;
  s << f.rdbuf();
  return s.str();
}

TEST(EmbeddedRun, QuickExampleProducesTableCsvAndJson) {
  const std::string out = TempDir("run") + "/quick";
  std::string output;
  const int code = RunCommand({BinDir() + "/sift", "run",
                               SourceDir() + "/examples/fashion_mnist_quick.yaml", "--out", out,
                               "--workers", "2", "--target", "0.5"},
                              &output, /*timeout_s=*/300);
  ASSERT_EQ(code, 0) << output;
  EXPECT_NE(output.find("best trial"), std::string::npos) << output;
  EXPECT_NE(output.find("best trial's test accuracy"), std::string::npos) << output;
  EXPECT_NE(output.find("reached val_accuracy 0.5000 after $"), std::string::npos) << output;

  std::istringstream csv(Read(out + "/results.csv"));
  std::string line;
  int rows = 0;
  std::getline(csv, line);
  EXPECT_EQ(line.rfind("trial,state,epochs,val_accuracy,test_accuracy,wall_seconds,dollars", 0),
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
  EXPECT_FALSE(j["pareto_frontier"].empty());
  EXPECT_TRUE(std::ifstream(out + "/sift.db").good());
}

}  // namespace
}  // namespace sift::testing
