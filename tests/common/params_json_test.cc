#include "common/params_json.h"

#include <gtest/gtest.h>

#include <stdexcept>
#include <string>

namespace sift::common {
namespace params_json_test {

std::string ErrorOf(const std::string& text) {
  try {
    ParamsFromJsonText(text);
  } catch (const std::runtime_error& e) {
    return e.what();
  }
  return "";
}

TEST(ParamsJson, EachValueKeepsItsType) {
  const search::Params params{
      {"lr", 0.001}, {"hidden", int64_t{128}}, {"optimizer", "adam"}, {"whole_float", 2.0}};
  const auto back = ParamsFromJsonText(ParamsToJsonText(params));
  EXPECT_EQ(back, params);
  // 2.0 must not come back as the int 2: the trainer reads floats and ints differently.
  EXPECT_TRUE(std::holds_alternative<double>(back.at("whole_float")));
  EXPECT_TRUE(std::holds_alternative<int64_t>(back.at("hidden")));
}

TEST(ParamsJson, ADoubleSurvivesToTheLastBit) {
  const search::Params params{{"lr", 0.1 + 0.2}};
  EXPECT_EQ(std::get<double>(ParamsFromJsonText(ParamsToJsonText(params)).at("lr")), 0.1 + 0.2);
}

TEST(ParamsJson, BadTextIsNamed) {
  EXPECT_NE(ErrorOf("{\"lr\": ").find("not JSON"), std::string::npos);
  EXPECT_EQ(ErrorOf("[1, 2]"), "must be a JSON object");
  EXPECT_EQ(ErrorOf("{\"layers\": [1, 2]}"), "layers: must be a number or a string");
  EXPECT_EQ(ErrorOf("{\"flag\": true}"), "flag: must be a number or a string");
  EXPECT_EQ(ErrorOf("{}"), "");
}

}  // namespace params_json_test
}  // namespace sift::common
