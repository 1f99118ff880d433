// Config files: a study named after its file, and every shipped example.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "common/config/price_catalog.h"
#include "common/hparams/hparams.h"
#include "tests/common/config/config_test.h"

namespace sift::common {
namespace config_files_test {

using namespace config_test;  // NOLINT: the suites' helpers
using search::ParamType;
using search::ParamValue;
using search::Scale;

TEST(StudyConfigFiles, AConfigWithoutANameIsNamedAfterItsFile) {
  // The config a user writes first has no name (issue 28's house-price config): the study is
  // named after the file, and the text it stores says so. A flow map cannot take an appended
  // key, so it still says what is missing.
  const auto dir =
      std::filesystem::temp_directory_path() / ("sift-name-" + std::to_string(getpid()));
  std::filesystem::create_directories(dir);
  const auto write = [&](const std::string& file, const std::string& body) {
    std::ofstream((dir / file).string()) << body;
    return (dir / file).string();
  };
  const std::string body = "search_space:\n  lr: {type: float, low: 1.0e-4, high: 0.1}";
  common::StudyConfig c;
  std::string text;
  EXPECT_TRUE(common::LoadStudyConfig(write("my houses!.yaml", body), &c, &text).empty());
  EXPECT_EQ(c.name, "my-houses-");
  EXPECT_EQ(text, body + "\nname: my-houses-\n");
  common::StudyConfig stored;  // what a restarted coordinator parses
  EXPECT_TRUE(common::ParseStudyConfig(text, "study", &stored).empty());
  EXPECT_EQ(stored.name, "my-houses-");

  const auto errors = common::LoadStudyConfig(
      write("flow.json", R"({"search_space": {"lr": {"type": "float", "low": 0.1, "high": 1}}})"),
      &c, &text);
  ASSERT_EQ(errors.size(), 1u);
  EXPECT_EQ(errors[0], "name: missing; give the study a name matching [A-Za-z0-9_.-]{1,64}");
  std::filesystem::remove_all(dir);
}

// ---- the shipped examples ----------------------------------------------------------------------

#ifndef SIFT_SOURCE_DIR
#define SIFT_SOURCE_DIR ""
#endif
// ctest sets SIFT_SOURCE_DIR in the environment; a compile definition is the fallback.
std::string SourceDir() {
  const char* env = std::getenv("SIFT_SOURCE_DIR");
  return env != nullptr && *env != '\0' ? env : SIFT_SOURCE_DIR;
}

TEST(ExampleConfigs, EveryExampleValidates) {
  const std::string root = SourceDir();
  ASSERT_FALSE(root.empty()) << "set SIFT_SOURCE_DIR to the source tree (ctest does)";
  std::vector<std::filesystem::path> configs;
  for (const auto& entry : std::filesystem::directory_iterator(root + "/examples")) {
    const auto ext = entry.path().extension();
    if (ext == ".yaml" || ext == ".yml") configs.push_back(entry.path());
  }
  std::sort(configs.begin(), configs.end());
  EXPECT_GE(configs.size(), 2u);
  for (const auto& path : configs) {
    common::StudyConfig c;
    std::string text;
    const auto errors = common::LoadStudyConfig(path.string(), &c, &text);
    EXPECT_TRUE(errors.empty()) << path << ":\n" << JoinLines(errors);
    EXPECT_FALSE(text.empty()) << path;
  }
}

TEST(ExampleConfigs, TheMainExampleIsTheDocumentedSearch) {
  common::StudyConfig c;
  const auto errors = common::LoadStudyConfig(SourceDir() + "/examples/fashion_mnist_mlp.yaml", &c);
  ASSERT_TRUE(errors.empty()) << JoinLines(errors);
  EXPECT_EQ(c.name, "fashion-mnist-mlp");
  EXPECT_EQ(c.space.size(), 8u);
  EXPECT_EQ(c.searcher.type, "random");
  EXPECT_EQ(c.scheduler.type, "plateau");
  EXPECT_EQ(c.budget.max_trials, 12);
  EXPECT_EQ(c.budget.max_epochs, 6);
  EXPECT_EQ(c.seed, 7u);
  EXPECT_EQ(c.data.train_limit, 0);
  EXPECT_EQ(c.data.val_size, 10000);
  EXPECT_EQ(c.worker.instance_type, "local-cpu");
}

TEST(ExampleConfigs, ThePriceCatalogLoadsAndPricesThisMachine) {
  ASSERT_FALSE(SourceDir().empty()) << "set SIFT_SOURCE_DIR to the source tree (ctest does)";
  common::PriceCatalog catalog;
  ASSERT_EQ(catalog.Load(SourceDir() + "/examples/prices.json"), "");
  EXPECT_FALSE(catalog.as_of().empty());
  double on_demand = 0, spot = 0;
  ASSERT_EQ(catalog.Lookup("local-cpu", "on-demand", &on_demand), "");
  ASSERT_EQ(catalog.Lookup("local-cpu", "spot", &spot), "");
  EXPECT_GT(on_demand, 0.0);
  EXPECT_LT(spot, on_demand);
  // Spot is cheaper than on-demand everywhere in the example; a typo swapping them shows here.
  for (const auto& type : catalog.Types()) {
    ASSERT_EQ(catalog.Lookup(type, "on-demand", &on_demand), "");
    ASSERT_EQ(catalog.Lookup(type, "spot", &spot), "");
    EXPECT_LT(spot, on_demand) << type;
  }
}

}  // namespace config_files_test
}  // namespace sift::common
