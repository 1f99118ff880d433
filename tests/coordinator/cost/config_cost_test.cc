// The config's cost controls: tags, alerts and the objective's target, and the errors that name
// the key that is wrong.
#include "common/config/config_cost.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "common/config/config.h"
#include "coordinator/cost/quota.h"

namespace sift::coordinator {
namespace config_cost_test {

std::string Study(const std::string& extra) {
  return "name: tagged\n"
         "search_space:\n"
         "  lr: {type: float, low: 1.0e-4, high: 1.0e-1, scale: log}\n"
         "trainer: {model: mlp}\n"
         "budget: {max_trials: 4, max_epochs: 2, max_dollars: 10}\n" +
         extra;
}

std::vector<std::string> Parse(const std::string& extra, common::StudyConfig* out) {
  return common::ParseStudyConfig(Study(extra), "s.yaml", out);
}

bool HasError(const std::vector<std::string>& errors, const std::string& text) {
  for (const auto& e : errors) {
    if (e.find(text) != std::string::npos) return true;
  }
  return false;
}

std::string Joined(const std::vector<std::string>& errors) {
  std::string out;
  for (const auto& e : errors) out += e + "\n";
  return out;
}

TEST(ConfigCost, DefaultsAreNoTagsAlertsAt50_80And100PercentAndNoTarget) {
  common::StudyConfig c;
  ASSERT_TRUE(Parse("", &c).empty());
  EXPECT_TRUE(c.tags.empty());
  EXPECT_EQ(c.alerts.thresholds, (std::vector<double>{50, 80, 100}));
  EXPECT_TRUE(c.alerts.forecast);
  EXPECT_TRUE(c.alerts.command.empty());
  EXPECT_DOUBLE_EQ(c.alerts.timeout_seconds, 10);
  EXPECT_FALSE(c.target.has_value());
}

TEST(ConfigCost, TagsAlertsAndTargetAreRead) {
  common::StudyConfig c;
  const auto errors = Parse(
      "objective: {metric: val_accuracy, target: 0.9}\n"
      "tags: {team: vision, project: ranking, cost-center: 4711, owner: ana@example.org}\n"
      "alerts: {thresholds: [90, 25.5], forecast: false, command: 'notify --to ops', "
      "timeout: 3}\n",
      &c);
  ASSERT_TRUE(errors.empty()) << Joined(errors);
  EXPECT_EQ(c.tags, (common::Tags{{"team", "vision"},
                                  {"project", "ranking"},
                                  {"cost-center", "4711"},
                                  {"owner", "ana@example.org"}}));
  EXPECT_EQ(c.alerts.thresholds, (std::vector<double>{25.5, 90}));  // sorted
  EXPECT_FALSE(c.alerts.forecast);
  EXPECT_EQ(c.alerts.command, (std::vector<std::string>{"/bin/sh", "-c", "notify --to ops"}));
  EXPECT_DOUBLE_EQ(c.alerts.timeout_seconds, 3);
  ASSERT_TRUE(c.target.has_value());
  EXPECT_DOUBLE_EQ(*c.target, 0.9);
  // A list runs as it is, without a shell; an empty list of thresholds turns them off.
  ASSERT_TRUE(
      Parse("alerts: {thresholds: [], command: [curl, -d, '@-', 'https://h/x']}\n", &c).empty());
  EXPECT_TRUE(c.alerts.thresholds.empty());
  EXPECT_EQ(c.alerts.command, (std::vector<std::string>{"curl", "-d", "@-", "https://h/x"}));
}

TEST(ConfigCost, BadTagsAreNamedByKey) {
  common::StudyConfig c;
  auto errors = Parse("tags: {team: vision team}\n", &c);
  EXPECT_TRUE(HasError(errors, "tags.team: value 'vision team' has ' ' (a space) at 7"))
      << Joined(errors);
  errors = Parse("tags: {'9lives': x}\n", &c);
  EXPECT_TRUE(HasError(errors, "tags.9lives: bad tag key '9lives': a tag key starts with a letter"))
      << Joined(errors);
  errors = Parse("tags: {'te am': x}\n", &c);
  EXPECT_TRUE(
      HasError(errors, "has ' ' (a space) at 3; use letters, digits and _ . - in a tag key"))
      << Joined(errors);
  errors = Parse("tags: {team: [a, b]}\n", &c);
  EXPECT_TRUE(HasError(errors, "tags.team: must be a single value")) << Joined(errors);
  errors = Parse("tags: {team: ''}\n", &c);
  EXPECT_TRUE(HasError(errors, "tags.team: value '' must not be empty")) << Joined(errors);
  errors = Parse("tags: {team: 'a=b'}\n", &c);
  EXPECT_TRUE(HasError(errors, "tags.team: value 'a=b' has '=' at 2")) << Joined(errors);
  errors = Parse("tags: {" + std::string(64, 'k') + ": x}\n", &c);
  EXPECT_TRUE(HasError(errors, "64 characters, over the limit of 63 for a tag key"))
      << Joined(errors);
  errors = Parse("tags: {team: " + std::string(129, 'v') + "}\n", &c);
  EXPECT_TRUE(HasError(errors, "tags.team: value '" + std::string(129, 'v') +
                                   "' 129 characters, over the limit of 128"))
      << Joined(errors);
  std::string many = "tags: {";
  for (int i = 0; i < 33; ++i) many += "k" + std::to_string(i) + ": v, ";
  errors = Parse(many + "}\n", &c);
  EXPECT_TRUE(HasError(errors, "tags: 33 tags, over the limit of 32 (max_tags)")) << Joined(errors);
  errors = Parse("tags: [team, vision]\n", &c);
  EXPECT_TRUE(HasError(errors, "tags: must be a map")) << Joined(errors);
}

TEST(ConfigCost, BadAlertsAreNamedByField) {
  common::StudyConfig c;
  auto errors = Parse("alerts: {thresholds: [50, 0, 2000, fifty, 50]}\n", &c);
  EXPECT_TRUE(HasError(errors,
                       "alerts.thresholds[1]: must be a percent of budget.max_dollars in "
                       "(0, 1000], got '0'"))
      << Joined(errors);
  EXPECT_TRUE(HasError(errors, "alerts.thresholds[2]: must be a percent")) << Joined(errors);
  EXPECT_TRUE(HasError(errors,
                       "alerts.thresholds[3]: must be a percent of budget.max_dollars in "
                       "(0, 1000], got 'fifty'"))
      << Joined(errors);
  EXPECT_TRUE(HasError(errors, "alerts.thresholds[4]: is listed twice")) << Joined(errors);
  errors = Parse("alerts: {thresholds: 50}\n", &c);
  EXPECT_TRUE(HasError(errors, "alerts.thresholds: must be a list of percents")) << Joined(errors);
  errors = Parse("alerts: {command: ''}\n", &c);
  EXPECT_TRUE(HasError(errors, "alerts.command: must not be empty")) << Joined(errors);
  errors = Parse("alerts: {command: [curl, {x: 1}]}\n", &c);
  EXPECT_TRUE(HasError(errors, "alerts.command[1]: must be a single string")) << Joined(errors);
  errors = Parse("alerts: {timeout: 0}\n", &c);
  EXPECT_TRUE(HasError(errors, "alerts.timeout: must be a number of seconds in (0, 3600]"))
      << Joined(errors);
  errors = Parse("alerts: {forecast: maybe}\n", &c);
  EXPECT_TRUE(HasError(errors, "alerts.forecast: must be one of true, false")) << Joined(errors);
  errors = Parse("alerts: {treshold: [50]}\n", &c);
  EXPECT_TRUE(HasError(errors, "alerts.treshold: unknown key")) << Joined(errors);
  errors = Parse("objective: {metric: val_accuracy, target: high}\n", &c);
  EXPECT_TRUE(HasError(errors, "objective.target: must be a number")) << Joined(errors);
}

TEST(ConfigCost, QuotaFlagsParseOrSayWhatIsWrong) {
  Quota q;
  ASSERT_EQ(ParseQuota("team=vision:100", &q), "");
  EXPECT_EQ(q.key, "team");
  EXPECT_EQ(q.value, "vision");
  EXPECT_DOUBLE_EQ(q.dollars, 100);
  EXPECT_EQ(q.Name(), "team=vision");
  ASSERT_EQ(ParseQuota("project=a/b:0.25", &q), "");
  EXPECT_DOUBLE_EQ(q.dollars, 0.25);
  EXPECT_NE(ParseQuota("team:100", &q).find("must be KEY=VALUE:DOLLARS"), std::string::npos);
  EXPECT_NE(ParseQuota("team=vision", &q).find("must be KEY=VALUE:DOLLARS"), std::string::npos);
  EXPECT_NE(
      ParseQuota("team=vision:-5", &q).find("the dollar limit must be a number > 0, got '-5'"),
      std::string::npos);
  EXPECT_NE(ParseQuota("team=vision:lots", &q).find("got 'lots'"), std::string::npos);
  EXPECT_NE(ParseQuota("9=vision:5", &q).find("tag key '9': a tag key starts with a letter"),
            std::string::npos);
  EXPECT_NE(ParseQuota("team=vi sion:5", &q).find("tag value 'vi sion' has ' ' (a space)"),
            std::string::npos);
}

}  // namespace config_cost_test
}  // namespace sift::coordinator
