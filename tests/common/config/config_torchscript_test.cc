// trainer: {model: torchscript, path, init_from}: what `sift validate` checks without LibTorch.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "common/config/config.h"
#include "common/config/config_model_files.h"
#include "common/hparams/hparams.h"
#include "tests/common/data_files.h"

namespace sift::common {
namespace config_torchscript_test {

using sift::data::testing::TempDir;
using sift::data::testing::WriteFile;

std::vector<std::string> Parse(const std::string& trainer, const std::string& space,
                               common::StudyConfig* out) {
  return common::ParseStudyConfig("name: t\nsearch_space:\n" + space + "trainer: " + trainer + "\n",
                                  "study.yaml", out);
}

std::string Joined(const std::vector<std::string>& v) {
  std::string out;
  for (const auto& s : v) out += s + "\n";
  return out;
}

TEST(TorchScriptConfig, ModuleAttributesAreSearchableNames) {
  common::StudyConfig c;
  const std::string space =
      "  lr: {type: float, low: 0.001, high: 0.1}\n"
      "  dropout_p: {type: float, low: 0.0, high: 0.5}\n"
      "  width: {type: categorical, choices: [16, 32]}\n";
  auto errors = Parse("{model: torchscript, path: 'models/net_{width}.pt', blocks: 2}", space, &c);
  EXPECT_TRUE(errors.empty()) << Joined(errors);
  common::HParams hp;
  ASSERT_EQ(common::ParseHParams({{"model", std::string("torchscript")},
                                  {"path", std::string("m_{width}.pt")},
                                  {"dropout_p", 0.2},
                                  {"width", int64_t{16}},
                                  {"lr", 0.01}},
                                 &hp),
            "");
  EXPECT_EQ(hp.lr, 0.01);
  EXPECT_EQ(hp.attributes, (search::Params{{"dropout_p", 0.2}, {"width", int64_t{16}}}));

  // Other models keep rejecting them; a TorchScript model needs its file.
  errors = Parse("{model: mlp}", space, &c);
  ASSERT_EQ(errors.size(), 2u) << Joined(errors);
  EXPECT_EQ(errors[0].rfind("search_space.dropout_p: not a trainer hyperparameter", 0), 0u);
  errors = Parse("{model: torchscript}", "  lr: {type: float, low: 0.001, high: 0.1}\n", &c);
  ASSERT_EQ(errors.size(), 1u) << Joined(errors);
  EXPECT_EQ(errors[0],
            "trainer.path: model: torchscript needs the module's file (trainer: "
            "{path: models/net.pt}) (line 4)");
}

TEST(TorchScriptConfig, PathNamesMustBeSearchedOverFiniteValues) {
  common::StudyConfig c;
  auto errors = Parse("{model: torchscript, path: 'net_{depth}.pt'}",
                      "  lr: {type: float, low: 0.001, high: 0.1}\n", &c);
  ASSERT_EQ(errors.size(), 1u) << Joined(errors);
  EXPECT_EQ(errors[0],
            "trainer.path: net_{depth}.pt names 'depth', which is neither searched "
            "nor set under trainer (line 4)");
  errors = Parse("{model: torchscript, path: 'net_{lr}.pt'}",
                 "  lr: {type: float, low: 0.001, high: 0.1}\n", &c);
  ASSERT_EQ(errors.size(), 1u) << Joined(errors);
  EXPECT_EQ(errors[0],
            "trainer.path: net_{lr}.pt names 'lr', a float range: a file per value "
            "needs choices (type: categorical) or a small int range (line 4)");
  errors = Parse("{model: torchscript, path: 'net_{width.pt'}",
                 "  lr: {type: float, low: 0.001, high: 0.1}\n", &c);
  ASSERT_EQ(errors.size(), 1u) << Joined(errors);
  EXPECT_EQ(errors[0], "trainer.path: net_{width.pt: '{' without a closing '}' (line 4)");
}

TEST(TorchScriptConfig, ValidateListsTheMissingModelFiles) {
  TempDir dir;
  WriteFile(dir / "net_1.pt", "x");
  WriteFile(dir / "net_3.pt", "x");
  common::StudyConfig c;
  const auto errors = Parse("{model: torchscript, path: '" + (dir / "net_{blocks}.pt") +
                                "', init_from: '" + (dir / "pretrained.pt") + "'}",
                            "  blocks: {type: int, low: 1, high: 4}\n", &c);
  ASSERT_TRUE(errors.empty()) << Joined(errors);
  EXPECT_EQ(common::MissingModelFiles(c.fixed, c.space),
            (std::vector<std::string>{
                "trainer.path: 2 of 4 model files do not exist: " + (dir / "net_2.pt") + ", " +
                    (dir / "net_4.pt"),
                "trainer.init_from: " + (dir / "pretrained.pt") + " does not exist"}));
  WriteFile(dir / "net_2.pt", "x");
  WriteFile(dir / "net_4.pt", "x");
  WriteFile(dir / "pretrained.pt", "x");
  EXPECT_TRUE(common::MissingModelFiles(c.fixed, c.space).empty());
}

}  // namespace config_torchscript_test
}  // namespace sift::common
