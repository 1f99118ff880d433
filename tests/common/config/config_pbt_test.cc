// scheduler: {type: pbt}: its options, the parameters it may change mid-training, the budget.
#include "common/config/config_pbt.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "common/config/config.h"
#include "search/factory.h"

namespace sift::common {
namespace config_pbt_test {

constexpr const char* kSpace =
    "search_space:\n"
    "  lr: {type: float, low: 0.0001, high: 0.1, scale: log}\n"  // line 3
    "  weight_decay: {type: float, low: 0.0, high: 0.01}\n"      // line 4
    "  hidden: {type: int, low: 32, high: 256}\n"                // line 5
    "  optimizer: {type: categorical, choices: [adam, sgd]}\n"   // line 6
    "  momentum: {type: float, low: 0.5, high: 0.99, condition: {optimizer: [sgd]}}\n";

// The config's errors.
std::vector<std::string> Errors(const std::string& rest, common::StudyConfig* out = nullptr) {
  common::StudyConfig ignored;
  return common::ParseStudyConfig(std::string("name: t\n") + kSpace + rest, "study.yaml",
                                  out ? out : &ignored);
}

std::string Joined(const std::vector<std::string>& v) {
  std::string out;
  for (const auto& s : v) out += s + "\n";
  return out;
}

TEST(PbtConfig, ListsFlattenAndTheDefaultsFollowTheSpace) {
  common::StudyConfig c;
  const auto errors = Errors(
      "scheduler: {type: pbt, population: 6, interval_epochs: 2, quantile: 0.25,\n"
      "            resample_probability: 0.3, perturb: [0.8, 1.2]}\n"
      "budget: {max_epochs: 8}\n",
      &c);
  EXPECT_TRUE(errors.empty()) << Joined(errors);
  EXPECT_EQ(c.scheduler.options.at("perturb.0"), search::OptionValue(0.8));
  EXPECT_EQ(c.scheduler.options.at("perturb.1"), search::OptionValue(1.2));
  // The mutable knobs present in the space, in its order (momentum after its parent).
  EXPECT_EQ(search::ReadPbtOptions(c.scheduler.options).mutable_params,
            (std::vector<std::string>{"lr", "weight_decay", "momentum"}));
  EXPECT_EQ(c.budget.max_trials, 6);  // the population is the study's trials
}

TEST(PbtConfig, RefusesWhatCannotChangeMidTrainingNamingKeyAndLine) {
  const auto errors = Errors(
      "scheduler:\n"  // line 8
      "  type: pbt\n"
      "  mutable:\n"
      "    - lr\n"          // line 11
      "    - hidden\n"      // line 12
      "    - optimizer\n"   // line 13
      "    - batch_size\n"  // line 14
      "budget: {max_epochs: 8}\n");
  ASSERT_EQ(errors.size(), 3u) << Joined(errors);
  EXPECT_EQ(errors[0],
            "scheduler.mutable.1: 'hidden' cannot change mid-training (a copied "
            "checkpoint fixes it); the ones that can: lr, weight_decay, momentum, dropout, "
            "accumulation_steps (line 12)");
  EXPECT_EQ(errors[1],
            "scheduler.mutable.2: 'optimizer' decides whether 'momentum' exists (its "
            "condition), so it cannot change mid-training (line 13)");
  EXPECT_EQ(errors[2],
            "scheduler.mutable.3: 'batch_size' is not in search_space; only searched "
            "parameters change at an exploit (line 14)");
}

TEST(PbtConfig, RangesAndTheBudgetAreChecked) {
  const auto errors = Errors(
      "scheduler: {type: pbt, population: 4, interval_epochs: 8, quantile: 0.75, perturb: [0]}\n"
      "budget: {max_epochs: 8, max_trials: 10}\n");
  const std::string all = Joined(errors);
  EXPECT_EQ(errors.size(), 4u) << all;
  EXPECT_NE(all.find("scheduler.quantile: must be in ["), std::string::npos) << all;
  EXPECT_NE(all.find("scheduler.perturb: factors must be numbers in (0, 100]"), std::string::npos)
      << all;
  EXPECT_NE(all.find("scheduler.interval_epochs: must be below budget.max_epochs (8), or no member "
                     "is ever exploited"),
            std::string::npos)
      << all;
  EXPECT_NE(all.find("budget.max_trials: must equal scheduler.population (4) for pbt"),
            std::string::npos)
      << all;
}

TEST(PbtConfig, ASpaceWithNothingMutableIsRefused) {
  common::StudyConfig c;
  auto errors = common::ParseStudyConfig(
      "name: t\nsearch_space:\n  hidden: {type: int, low: 32, high: 256}\n"
      "scheduler: {type: pbt}\nbudget: {max_epochs: 4}\n",
      "study.yaml", &c);
  ASSERT_EQ(errors.size(), 1u) << Joined(errors);
  EXPECT_NE(errors[0].find("scheduler.type: pbt needs a searched parameter it can change "
                           "mid-training (lr, weight_decay, momentum, dropout, "
                           "accumulation_steps) in search_space"),
            std::string::npos)
      << errors[0];
}

TEST(PbtConfig, ACommandTrialNamesItsOwnMutableParameters) {
  common::StudyConfig c;
  const std::string head =
      "name: t\ntrial: {command: [sh, train.sh]}\n"
      "search_space:\n  width: {type: int, low: 8, high: 64}\n  rate: {type: float, low: 0.1, "
      "high: 1.0}\nbudget: {max_epochs: 4}\n";
  auto errors = common::ParseStudyConfig(head + "scheduler: {type: pbt}\n", "study.yaml", &c);
  std::string all = Joined(errors);
  EXPECT_NE(all.find("scheduler.mutable: required for a command trial: list the parameters your "
                     "program re-reads from SIFT_PARAMS when it resumes"),
            std::string::npos)
      << all;
  errors = common::ParseStudyConfig(head + "scheduler: {type: pbt, mutable: [rate, width]}\n",
                                    "study.yaml", &c);
  EXPECT_TRUE(errors.empty()) << Joined(errors);
}

TEST(PbtConfig, OtherSchedulersStillRefuseLists) {
  common::StudyConfig c;
  const auto errors = common::ParseStudyConfig(
      std::string("name: t\n") + kSpace + "scheduler: {type: asha, eta: [2, 3]}\n", "study.yaml",
      &c);
  ASSERT_FALSE(errors.empty());
  EXPECT_EQ(errors[0], "scheduler.eta: must be a single value, not a list (line 8)");
}

TEST(PbtConfig, RaysListNamesAreAnsweredOnceWithSiftsName) {
  const auto errors = Errors(
      "scheduler: {type: pbt, perturbation_factors: [0.8, 1.2], mutable: [lr, weight_decay]}\n"
      "budget: {max_epochs: 8}\n");
  ASSERT_EQ(errors.size(), 1u) << Joined(errors);
  EXPECT_EQ(errors[0],
            "scheduler.perturbation_factors: unknown option; did you mean 'perturb'? "
            "(Sift's name for it) (known: interval_epochs, mutable, perturb, population, quantile, "
            "resample_probability) (line 8)");
}

}  // namespace config_pbt_test
}  // namespace sift::common
