// The trainer's parameter schema on its own (worker/hparams): every kind of setting parsed from a
// trial's flat parameter map, its range, and errors that name the parameter; and the model path's
// {name} placeholders.
#include "common/hparams/hparams.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "common/hparams/model_path.h"

namespace sift::common {
namespace hparams_test {

using search::Params;

// The error ParseHParams gives for `params` ("" when they parse).
std::string ErrorOf(const Params& params) {
  HParams hp;
  return ParseHParams(params, &hp);
}

bool StartsWith(const std::string& s, const std::string& prefix) {
  return s.compare(0, prefix.size(), prefix) == 0;
}

TEST(HParamsTest, NoParametersGiveTheDefaults) {
  HParams hp;
  hp.lr = 5;
  hp.model = "cnn";
  hp.attributes["x"] = int64_t{1};
  ASSERT_EQ(ParseHParams({}, &hp), "");
  const HParams defaults;
  // Whatever `out` held before is replaced, not merged.
  EXPECT_EQ(hp.model, "mlp");
  EXPECT_EQ(hp.lr, defaults.lr);
  EXPECT_TRUE(hp.attributes.empty());
  EXPECT_EQ(hp.batch_size, 128);
  EXPECT_EQ(hp.micro_batch, 0);
  EXPECT_EQ(hp.precision, "auto");
  EXPECT_TRUE(hp.stop_on_divergence);
  EXPECT_EQ(AccumulationSteps(hp), 1);
  EXPECT_FALSE(MicroBatchIsAuto(hp));
  EXPECT_EQ(hp.lr_schedule, "cosine") << "a config without a schedule anneals over its budget";
  ASSERT_EQ(ParseHParams({{"lr_schedule", std::string("constant")}}, &hp), "");
  EXPECT_EQ(hp.lr_schedule, "constant");
}

TEST(HParamsTest, ParsesEachKindOfSetting) {
  HParams hp;
  ASSERT_EQ(ParseHParams({{"model", std::string("cnn")},
                          {"lr", 0.01},
                          {"depth", int64_t{3}},
                          {"hidden", 64.0},  // a whole double is an integer
                          {"optimizer", std::string("sgd")},
                          {"nesterov", int64_t{1}},
                          {"batch_norm", std::string("false")},
                          {"stop_on_divergence", int64_t{0}},
                          {"kernel_size", int64_t{5}},
                          {"width2", int64_t{48}},
                          {"init_from", std::string("runs/best.ckpt")}},
                         &hp),
            "");
  EXPECT_EQ(hp.model, "cnn");
  EXPECT_DOUBLE_EQ(hp.lr, 0.01);
  EXPECT_EQ(hp.depth, 3);
  EXPECT_EQ(hp.hidden, 64);
  EXPECT_EQ(hp.optimizer, "sgd");
  EXPECT_EQ(hp.nesterov, 1);
  EXPECT_FALSE(hp.batch_norm);
  EXPECT_FALSE(hp.stop_on_divergence);
  EXPECT_EQ(hp.kernel_size, 5);
  EXPECT_EQ(hp.widths[0], 0);
  EXPECT_EQ(hp.widths[1], 48);
  EXPECT_EQ(hp.init_from, "runs/best.ckpt");
}

TEST(HParamsTest, RangesAreInclusiveAndErrorsNameTheParameter) {
  // The bounds themselves are accepted.
  EXPECT_EQ(ErrorOf({{"depth", int64_t{1}}}), "");
  EXPECT_EQ(ErrorOf({{"depth", int64_t{kMaxDepth}}}), "");
  EXPECT_EQ(ErrorOf({{"dropout", 0.0}}), "");
  EXPECT_EQ(ErrorOf({{"dropout", 0.95}}), "");
  EXPECT_EQ(ErrorOf({{"width8", int64_t{8192}}}), "");
  // One past them is not, and the message says which parameter and which range.
  EXPECT_EQ(ErrorOf({{"depth", int64_t{9}}}), "depth: 9 is outside [1, 8]");
  EXPECT_EQ(ErrorOf({{"depth", int64_t{0}}}), "depth: 0 is outside [1, 8]");
  EXPECT_EQ(ErrorOf({{"hidden", int64_t{7}}}), "hidden: 7 is outside [8, 8192]");
  EXPECT_EQ(ErrorOf({{"width8", int64_t{8193}}}), "width8: 8193 is outside [8, 8192]");
  EXPECT_EQ(ErrorOf({{"dropout", 0.96}}), "dropout: 0.96 is outside [0, 0.95]");
  EXPECT_EQ(ErrorOf({{"lr", 20.0}}), "lr: 20 is outside [1e-07, 10]");
  EXPECT_EQ(ErrorOf({{"lr", 0.0}}), "lr: 0 is outside [1e-07, 10]");
  EXPECT_EQ(ErrorOf({{"nesterov", int64_t{2}}}), "nesterov: 2 is outside [0, 1]");
  EXPECT_EQ(ErrorOf({{"batch_size", int64_t{65537}}}), "batch_size: 65537 is outside [1, 65536]");
  // An int64 far past the range is refused, not wrapped.
  EXPECT_TRUE(StartsWith(ErrorOf({{"blocks", std::numeric_limits<int64_t>::max()}}),
                         "blocks: 9223372036854775807 is outside [1, 8]"));
}

TEST(HParamsTest, WrongTypesAreRefusedByName) {
  EXPECT_EQ(ErrorOf({{"depth", 2.5}}), "depth: must be an integer");
  EXPECT_EQ(ErrorOf({{"depth", std::string("two")}}), "depth: must be an integer");
  EXPECT_EQ(ErrorOf({{"depth", std::nan("")}}), "depth: must be an integer");
  EXPECT_EQ(ErrorOf({{"lr", std::string("fast")}}), "lr: must be a number");
  EXPECT_EQ(ErrorOf({{"lr", std::numeric_limits<double>::infinity()}}), "lr: must be a number");
  EXPECT_EQ(ErrorOf({{"lr", std::nan("")}}), "lr: must be a number");
  EXPECT_EQ(ErrorOf({{"optimizer", std::string("rmsprop")}}),
            "optimizer: 'rmsprop' is not one of sgd, adam, adamw");
  EXPECT_EQ(ErrorOf({{"activation", int64_t{1}}}),
            "activation: '1' is not one of relu, gelu, silu, tanh");
  EXPECT_EQ(ErrorOf({{"precision", std::string("FP32")}}),
            "precision: 'FP32' is not one of fp32, bf16, fp16, auto");
  EXPECT_EQ(ErrorOf({{"batch_norm", std::string("yes")}}),
            "batch_norm: 'yes' is not true or false");
  EXPECT_EQ(ErrorOf({{"batch_norm", int64_t{2}}}), "batch_norm: '2' is not true or false");
  EXPECT_EQ(ErrorOf({{"kernel_size", int64_t{4}}}), "kernel_size: must be odd");
  EXPECT_EQ(ErrorOf({{"init_from", std::string("")}}), "init_from: must not be empty");
}

TEST(HParamsTest, UnknownNamesAreErrorsExceptUnderTorchScript) {
  const std::string e = ErrorOf({{"learning_rate", 0.1}});
  EXPECT_TRUE(StartsWith(e, "learning_rate: not a trainer hyperparameter (known: ")) << e;
  EXPECT_NE(e.find("lr"), std::string::npos) << e;
  // Every known name is in KnownHParamNames, and each one is accepted on its own with a value
  // of the right kind (no name is listed that ParseHParams refuses as unknown).
  for (const auto& name : KnownHParamNames()) {
    const std::string err = ErrorOf({{name, int64_t{1}}});
    EXPECT_EQ(err.find("not a trainer hyperparameter"), std::string::npos) << name << ": " << err;
  }

  HParams hp;
  ASSERT_EQ(ParseHParams({{"model", std::string("torchscript")},
                          {"path", std::string("models/net_{width}.pt")},
                          {"width", int64_t{64}},
                          {"lr", 0.1}},
                         &hp),
            "");
  EXPECT_EQ(hp.model, "torchscript");
  EXPECT_EQ(hp.path, "models/net_{width}.pt");
  ASSERT_EQ(hp.attributes.size(), 1u);  // lr is a trainer setting, not an attribute
  EXPECT_EQ(std::get<int64_t>(hp.attributes.at("width")), 64);
  EXPECT_DOUBLE_EQ(hp.lr, 0.1);
  // A wrong trainer setting is still refused under TorchScript.
  EXPECT_EQ(
      ErrorOf({{"model", std::string("torchscript")}, {"path", std::string("m.pt")}, {"lr", -1.0}}),
      "lr: -1 is outside [1e-07, 10]");
}

TEST(HParamsTest, PathGoesWithTorchScriptOnly) {
  EXPECT_EQ(ErrorOf({{"model", std::string("torchscript")}}),
            "path: model: torchscript needs the module's file (trainer: {path: models/net.pt})");
  EXPECT_EQ(ErrorOf({{"path", std::string("m.pt")}}), "path: only model: torchscript takes a file");
  EXPECT_EQ(ErrorOf({{"model", std::string("torchscript")}, {"path", std::string("")}}),
            "path: must not be empty");
}

TEST(HParamsTest, MicroBatchAndAccumulationAgreeWithBatchSize) {
  HParams hp;
  ASSERT_EQ(ParseHParams({{"batch_size", int64_t{128}}, {"micro_batch", int64_t{32}}}, &hp), "");
  EXPECT_EQ(hp.micro_batch, 32);
  EXPECT_EQ(AccumulationSteps(hp), 4);
  ASSERT_EQ(ParseHParams({{"micro_batch", std::string("auto")}}, &hp), "");
  EXPECT_TRUE(MicroBatchIsAuto(hp));
  EXPECT_EQ(AccumulationSteps(hp), 1);
  EXPECT_EQ(ErrorOf({{"batch_size", int64_t{128}}, {"micro_batch", int64_t{48}}}),
            "micro_batch: 48 does not divide batch_size 128");
  EXPECT_EQ(ErrorOf({{"micro_batch", std::string("half")}}),
            "micro_batch: must be an integer (or 'auto')");

  // accumulation_steps k sets micro_batch to batch_size / k; 1 means the whole batch.
  ASSERT_EQ(ParseHParams({{"batch_size", int64_t{96}}, {"accumulation_steps", int64_t{3}}}, &hp),
            "");
  EXPECT_EQ(hp.micro_batch, 32);
  EXPECT_EQ(hp.accumulation_steps, 3);
  EXPECT_EQ(AccumulationSteps(hp), 3);
  ASSERT_EQ(ParseHParams({{"accumulation_steps", int64_t{1}}}, &hp), "");
  EXPECT_EQ(hp.micro_batch, 0);
  EXPECT_EQ(ErrorOf({{"batch_size", int64_t{100}}, {"accumulation_steps", int64_t{3}}}),
            "accumulation_steps: 3 does not divide batch_size 100");
  // Both set: they must say the same thing.
  EXPECT_EQ(ErrorOf({{"batch_size", int64_t{128}},
                     {"accumulation_steps", int64_t{4}},
                     {"micro_batch", int64_t{32}}}),
            "");
  EXPECT_EQ(ErrorOf({{"batch_size", int64_t{128}},
                     {"accumulation_steps", int64_t{4}},
                     {"micro_batch", int64_t{64}}}),
            "accumulation_steps: 4 x micro_batch 64 is not batch_size 128; set one of them");
  EXPECT_EQ(ErrorOf({{"batch_size", int64_t{128}},
                     {"accumulation_steps", int64_t{4}},
                     {"micro_batch", std::string("auto")}}),
            "accumulation_steps: 4 x micro_batch auto is not batch_size 128; set one of them");
}

TEST(HParamsTest, ModelParamsRebuildTheSameModel) {
  HParams hp;
  ASSERT_EQ(ParseHParams({{"model", std::string("cnn")},
                          {"channels", int64_t{16}},
                          {"kernel_size", int64_t{5}},
                          {"batch_norm", std::string("false")},
                          {"activation", std::string("gelu")},
                          {"width3", int64_t{40}},
                          {"lr", 0.5}},
                         &hp),
            "");
  const Params model = ModelParams(hp);
  EXPECT_EQ(model.count("lr"), 0u);      // training settings are not the model's
  EXPECT_EQ(model.count("width1"), 0u);  // unset widths are left out
  HParams back;
  ASSERT_EQ(ParseHParams(model, &back), "");
  EXPECT_EQ(back.model, "cnn");
  EXPECT_EQ(back.channels, 16);
  EXPECT_EQ(back.kernel_size, 5);
  EXPECT_FALSE(back.batch_norm);
  EXPECT_EQ(back.activation, "gelu");
  EXPECT_EQ(back.widths, hp.widths);
  EXPECT_EQ(ModelParams(back), model);
}

TEST(ModelPathTest, NamesInOrderOfAppearanceEachOnce) {
  std::string problem = "x";
  EXPECT_EQ(PathParamNames("models/{arch}_{width}/{arch}.pt", &problem),
            (std::vector<std::string>{"arch", "width"}));
  EXPECT_EQ(problem, "");
  EXPECT_TRUE(PathParamNames("models/net.pt", &problem).empty());
  EXPECT_EQ(problem, "");
  PathParamNames("models/{arch.pt", &problem);
  EXPECT_EQ(problem, "path: models/{arch.pt: '{' without a closing '}'");
  PathParamNames("models/{}.pt", &problem);
  EXPECT_EQ(problem, "path: models/{}.pt: '{}' names no parameter");
}

TEST(ModelPathTest, FillPathPutsInTheTrialsValues) {
  std::string out = "unchanged";
  EXPECT_EQ(FillPath("m/{arch}_{width}_{arch}.pt",
                     {{"arch", std::string("wide")}, {"width", int64_t{64}}}, &out),
            "");
  EXPECT_EQ(out, "m/wide_64_wide.pt");
  EXPECT_EQ(FillPath("m/net_{scale}.pt", {{"scale", 0.5}}, &out), "");
  EXPECT_EQ(out, "m/net_0.5.pt");
  EXPECT_EQ(FillPath("plain.pt", {}, &out), "");
  EXPECT_EQ(out, "plain.pt");
  // A missing value or a malformed path leaves `out` as it was and says what is wrong.
  out = "unchanged";
  EXPECT_EQ(FillPath("m/net_{width}_{depth}.pt", {{"depth", int64_t{2}}}, &out),
            "path: m/net_{width}_{depth}.pt names 'width', which this trial does not set");
  EXPECT_EQ(out, "unchanged");
  EXPECT_EQ(FillPath("m/{width", {{"width", int64_t{2}}}, &out),
            "path: m/{width: '{' without a closing '}'");
  EXPECT_EQ(out, "unchanged");
}

}  // namespace hparams_test
}  // namespace sift::common

namespace sift::common {
namespace hparams_test {

// A tenth of the training rows, down to a power of two, between 2 and kMaxDefaultBatch.
TEST(HParamsTest, DefaultBatchSizeIsATenthOfTheTrainingRows) {
  EXPECT_EQ(DefaultBatchSize(300), 16);  // 30 -> 16: 19 steps an epoch, not 3 of 128
  EXPECT_EQ(DefaultBatchSize(265), 16);  // diabetes' training rows
  EXPECT_EQ(DefaultBatchSize(320), 32);  // exactly a tenth
  EXPECT_EQ(DefaultBatchSize(1000), 64);
  EXPECT_EQ(DefaultBatchSize(1280), 128);
  EXPECT_EQ(DefaultBatchSize(50000), kMaxDefaultBatch);
  EXPECT_EQ(DefaultBatchSize(30), 2);  // never 1: batch norm needs two samples
  EXPECT_EQ(DefaultBatchSize(1), 2);
  for (int64_t rows : {40, 100, 300, 999, 5000}) EXPECT_LE(DefaultBatchSize(rows), rows / 10);
}

// Chosen from the data only when nothing about batching was set.
TEST(HParamsTest, BatchSizeIsAutoOnlyWhenNoBatchSettingIsGiven) {
  HParams hp;
  EXPECT_FALSE(hp.batch_size_auto) << "HParams{} keeps its batch_size (tests set it directly)";
  ASSERT_EQ(ParseHParams({{"lr", 0.01}}, &hp), "");
  EXPECT_TRUE(hp.batch_size_auto);
  for (const Params& p : {Params{{"batch_size", int64_t{64}}}, Params{{"micro_batch", int64_t{32}}},
                          Params{{"accumulation_steps", int64_t{2}}}}) {
    ASSERT_EQ(ParseHParams(p, &hp), "") << search::ToString(p);
    EXPECT_FALSE(hp.batch_size_auto) << search::ToString(p);
  }
}

}  // namespace hparams_test
}  // namespace sift::common
