#include "search/random_searcher.h"

#include <gtest/gtest.h>

#include "search/factory.h"

namespace sift::search {
namespace random_searcher_test {

SearchSpace Space() {
  ParamSpec lr;
  lr.name = "lr";
  lr.low = 1e-4;
  lr.high = 1e-1;
  lr.scale = Scale::kLog;
  return SearchSpace({lr});
}

TEST(RandomSearcher, SameSeedSameSuggestionsWhateverTheBatching) {
  SearchSpace space = Space();
  StudyView study;
  study.space = &space;
  study.seed = 42;
  RandomSearcher s;
  auto all = s.Suggest(study, 4);
  ASSERT_EQ(all.size(), 4u);
  // Asking one at a time, with history growing, gives the same trial-by-trial configurations.
  for (int i = 0; i < 4; ++i) {
    auto one = s.Suggest(study, 1);
    EXPECT_EQ(one[0], all[i]);
    TrialView t;
    t.number = i;
    t.params = one[0];
    study.trials.push_back(t);
  }
  study.trials.clear();
  study.seed = 43;
  EXPECT_NE(s.Suggest(study, 1)[0], all[0]);
}

TEST(Factory, UnknownTypesAndOptionsAreNamed) {
  SearchSpace space = Space();
  std::vector<std::string> errors;
  EXPECT_EQ(MakeSearcher("annealing", {}, space, &errors), nullptr);
  ASSERT_EQ(errors.size(), 1u);
  EXPECT_EQ(errors[0].rfind("type: unknown searcher 'annealing'", 0), 0u);

  errors.clear();
  EXPECT_EQ(MakeScheduler("plateau", {{"patience", int64_t{0}}, {"bogus", true}}, {}, &errors),
            nullptr);
  ASSERT_EQ(errors.size(), 2u);
  EXPECT_EQ(errors[0].rfind("patience: must be in [1,", 0), 0u);
  EXPECT_EQ(errors[1],
            "bogus: unknown option (known: min_delta, min_resource, patience, "
            "smoothing)");

  errors.clear();  // a huge whole-number double is not converted to int64 (undefined behaviour)
  EXPECT_EQ(MakeScheduler("plateau", {{"patience", 1e300}}, {}, &errors), nullptr);
  EXPECT_EQ(errors, std::vector<std::string>{"patience: must be an integer"});
}

}  // namespace random_searcher_test
}  // namespace sift::search
