// warm_start: its ids, its database (relative to the config's folder) and its weight.
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>

#include "tests/common/config/config_test.h"

namespace sift::common::config_test {
namespace config_warm_start_test {

TEST(WarmStartConfig, ReadsIdsAndWeight) {
  common::StudyConfig c;
  const auto errors = Parse(WithSpace(kLr,
                                      "searcher: {type: tpe}\n"
                                      "warm_start: {studies: [3, 1], weight: 0.25}\n"),
                            &c);
  ASSERT_TRUE(errors.empty()) << JoinLines(errors);
  EXPECT_EQ(c.warm_start.studies, (std::vector<int64_t>{3, 1}));
  EXPECT_EQ(c.warm_start.database, "");
  EXPECT_EQ(c.warm_start.weight, 0.25);
  ASSERT_TRUE(Parse(WithSpace(kLr), &c).empty());
  EXPECT_FALSE(c.warm_start.enabled());
}

TEST(WarmStartConfig, EachProblemNamesItsFieldAndLine) {
  const auto errors = Parse(WithSpace(kLr,
                                      "searcher: {type: gp}\n"
                                      "warm_start:\n"
                                      "  studies: [0, first, 2, 2, [1]]\n"
                                      "  database: /no/such/sift.db\n"
                                      "  weight: 1.5\n"
                                      "  studys: [1]\n"));
  const std::string id = "must be a study id (an integer >= 1), got ";
  EXPECT_EQ(errors, (std::vector<std::string>{
                        "warm_start.studies[0]: " + id + "'0' (line 6)",
                        "warm_start.studies[1]: " + id + "'first' (line 6)",
                        "warm_start.studies[3]: study 2 is listed twice (line 6)",
                        "warm_start.studies[4]: " + id + "a list (line 6)",
                        "warm_start.database: no such database file: /no/such/sift.db (line 7)",
                        "warm_start.weight: must be in (0, 1], got 1.5 (line 8)",
                        "warm_start.studys: unknown key; did you mean 'studies'? (line 9)",
                    }))
      << JoinLines(errors);
  EXPECT_EQ(OnlyError(WithSpace(kLr, "searcher: {type: tpe}\nwarm_start: {weight: 0.5}\n")),
            "warm_start.studies: must be a list of earlier study ids, e.g. [1, 2], got nothing "
            "(line 5)");
}

TEST(WarmStartConfig, OnlySearchersWithAModelTakeIt) {
  EXPECT_EQ(OnlyError(WithSpace(kLr, "searcher: {type: random}\nwarm_start: {studies: [1]}\n")),
            "warm_start: searcher random does not learn from earlier results; use tpe or gp "
            "(line 5)");
}

TEST(WarmStartConfig, AStudyOfSeveralObjectivesCannotTakeIt) {
  const auto errors = Parse(WithSpace(kLr,
                                      "searcher: {type: tpe}\n"
                                      "warm_start: {studies: [1]}\n"
                                      "objectives:\n"
                                      "  - {metric: val_accuracy, direction: maximize}\n"
                                      "  - {metric: dollars, direction: minimize}\n"));
  EXPECT_NE(std::find(errors.begin(), errors.end(),
                      "warm_start: earlier studies' results rank by one objective; a study with 2 "
                      "objectives cannot use them (line 5)"),
            errors.end())
      << JoinLines(errors);
}

TEST(WarmStartConfig, ADatabaseIsFoundBesideTheConfig) {
  const auto dir =
      std::filesystem::temp_directory_path() / ("sift-warm-" + std::to_string(getpid()));
  std::filesystem::create_directories(dir / "runs");
  std::ofstream(dir / "runs" / "first.db") << "";
  const auto config = dir / "second.yaml";
  std::ofstream(config) << WithSpace(kLr,
                                     "searcher: {type: tpe}\n"
                                     "warm_start: {studies: [1], database: runs/first.db}\n");
  common::StudyConfig c;
  const auto errors = common::LoadStudyConfig(config.string(), &c);
  EXPECT_TRUE(errors.empty()) << JoinLines(errors);
  EXPECT_EQ(c.warm_start.database, (dir / "runs" / "first.db").string());
  std::filesystem::remove_all(dir);
}

}  // namespace config_warm_start_test
}  // namespace sift::common::config_test
