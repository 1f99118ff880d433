// Metric maps through JSON: NaN and infinities come back exactly, old `null`s read as NaN.
#include "common/metric_json.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>

namespace sift::common {
namespace metric_json_test {

constexpr double kInf = std::numeric_limits<double>::infinity();

TEST(MetricJsonTest, NonFiniteValuesRoundTripThroughText) {
  const std::map<std::string, double> in = {
      {"nan", std::nan("")}, {"inf", kInf},        {"ninf", -kInf},
      {"tiny", 5e-324},      {"third", 1.0 / 3.0}, {"big", -1.7976931348623157e308}};
  const std::string text = MetricsToJson(in).dump();
  EXPECT_EQ(text.find("null"), std::string::npos) << text;
  const auto out = MetricsFromJson(nlohmann::json::parse(text), "test");
  ASSERT_EQ(out.size(), in.size());
  EXPECT_TRUE(std::isnan(out.at("nan")));
  EXPECT_EQ(out.at("inf"), kInf);
  EXPECT_EQ(out.at("ninf"), -kInf);
  // Finite values keep every bit.
  for (const char* k : {"tiny", "third", "big"}) EXPECT_EQ(out.at(k), in.at(k)) << k;
}

TEST(MetricJsonTest, NonFiniteValuesUseTheCommonSpellings) {
  EXPECT_EQ(MetricToJson(std::nan("")), "NaN");
  EXPECT_EQ(MetricToJson(kInf), "Infinity");
  EXPECT_EQ(MetricToJson(-kInf), "-Infinity");
  EXPECT_EQ(MetricToJson(0.5), 0.5);
  EXPECT_EQ(FormatMetric(std::nan(""), 4), "NaN");
  EXPECT_EQ(FormatMetric(-kInf, 4), "-Infinity");
  EXPECT_EQ(FormatMetric(0.12345, 4), "0.1235");
}

TEST(MetricJsonTest, NullFromOlderDatabasesReadsAsNaN) {
  // What sift stored before: nlohmann writes NaN as null.
  const auto out =
      MetricsFromJson(nlohmann::json::parse(R"({"train_loss":null,"val_accuracy":0.1})"), "t");
  EXPECT_TRUE(std::isnan(out.at("train_loss")));
  EXPECT_EQ(out.at("val_accuracy"), 0.1);
}

TEST(MetricJsonTest, AnythingElseIsRefusedNamingTheMetric) {
  try {
    MetricsFromJson(nlohmann::json::parse(R"({"val_loss":"soon"})"), "report 3");
    FAIL() << "accepted a string that is no metric value";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("report 3.val_loss"), std::string::npos) << e.what();
  }
  EXPECT_THROW(MetricsFromJson(nlohmann::json::parse("[1]"), "x"), std::invalid_argument);
  EXPECT_THROW(MetricsFromJson(nlohmann::json::parse(R"({"a":[1]})"), "x"), std::invalid_argument);
}

}  // namespace metric_json_test
}  // namespace sift::common
