#include "search/pbt_scheduler.h"

#include <gtest/gtest.h>

#include <cmath>

#include "search/factory.h"
#include "tests/search/scheduler_sim.h"

namespace sift::search {
namespace pbt_scheduler_test {

ParamSpec Numeric(const char* name, ParamType type, double low, double high,
                  Scale scale = Scale::kLinear) {
  ParamSpec p;
  p.name = name;
  p.type = type;
  p.low = low;
  p.high = high;
  p.scale = scale;
  return p;
}

SearchSpace Space() {
  ParamSpec opt;
  opt.name = "optimizer";
  opt.type = ParamType::kCategorical;
  opt.choices = {std::string("sgd"), std::string("adam"), std::string("adamw")};
  return SearchSpace({Numeric("lr", ParamType::kFloat, 1e-4, 1e-1, Scale::kLog),
                      Numeric("weight_decay", ParamType::kFloat, 0.0, 0.01),
                      Numeric("accumulation_steps", ParamType::kInt, 1, 4), opt,
                      Numeric("hidden", ParamType::kInt, 16, 256)});
}

Params P(double lr, double wd = 0.001, int64_t accum = 1, const char* opt = "adam") {
  return {{"lr", lr},
          {"weight_decay", wd},
          {"accumulation_steps", accum},
          {"optimizer", std::string(opt)},
          {"hidden", int64_t{64}}};
}

PbtOptions Options4() {
  PbtOptions o;
  o.population = 4;
  o.quantile = 0.25;
  o.mutable_params = {"lr", "weight_decay", "accumulation_steps", "optimizer"};
  return o;
}

std::vector<PbtMember> Members(std::vector<double> scores, bool checkpoints = true) {
  std::vector<PbtMember> out;
  for (size_t i = 0; i < scores.size(); ++i) {
    out.push_back({static_cast<int64_t>(i), scores[i], checkpoints, true, P(0.01 * (i + 1))});
  }
  return out;
}

TEST(PbtPlan, BottomQuantileCopiesTopWithExploredParams) {
  const SearchSpace space = Space();
  auto plan = PlanPbtInterval(Options4(), &space, 7, 4, Members({0.7, 0.9, 0.5, 0.8}));
  ASSERT_EQ(plan.size(), 1u);
  EXPECT_EQ(plan[0].trial, 2);
  EXPECT_EQ(plan[0].from_trial, 1);
  EXPECT_EQ(plan[0].epoch, 4);
  EXPECT_EQ(plan[0].reason.rfind("pbt: epoch 4: copies trial 1 (0.9 > 0.5); lr 0.02 -> ", 0), 0u)
      << plan[0].reason;
  // Only the mutable parameters move; the donor's others come along unchanged.
  EXPECT_EQ(std::get<int64_t>(plan[0].params.at("hidden")), 64);
  EXPECT_NE(std::get<double>(plan[0].params.at("lr")), 0.02);
  EXPECT_EQ(space.Check(plan[0].params), "");
}

TEST(PbtPlan, NeverCopiesAMemberWithoutACheckpoint) {
  const SearchSpace space = Space();
  auto members = Members({0.7, 0.9, 0.5, 0.8});
  members[1].has_checkpoint = false;  // the only top member
  EXPECT_TRUE(PlanPbtInterval(Options4(), &space, 7, 4, members).empty());

  PbtOptions half = Options4();
  half.quantile = 0.5;  // top two: 1 (no checkpoint) and 3
  for (uint64_t seed = 0; seed < 50; ++seed) {
    for (const auto& e : PlanPbtInterval(half, &space, seed, 4, members)) {
      EXPECT_EQ(e.from_trial, 3) << "seed " << seed;
    }
  }
}

TEST(PbtPlan, ExploredValuesStayWithinBounds) {
  const SearchSpace space = Space();
  PbtOptions o = Options4();
  o.perturb = {0.01, 100.0};  // every perturbation overshoots unless clamped
  for (double resample : {0.0, 0.5, 1.0}) {
    o.resample_probability = resample;
    for (uint64_t seed = 0; seed < 200; ++seed) {
      Rng rng(seed);
      std::vector<std::string> changes;
      Params p = ExplorePbtParams(o, space, P(0.05, 0.009, 4, "adamw"), rng, &changes);
      EXPECT_EQ(space.Check(p), "") << ToString(p);
      EXPECT_EQ(changes.size(), 4u);
    }
  }
}

TEST(PbtPlan, PerturbsByAFactorAndShiftsCategoriesByOne) {
  const SearchSpace space = Space();
  PbtOptions o = Options4();
  o.resample_probability = 0.0;
  bool saw_down = false, saw_up = false;
  for (uint64_t seed = 0; seed < 100; ++seed) {
    Rng rng(seed);
    std::vector<std::string> changes;
    Params p = ExplorePbtParams(o, space, P(0.01, 0.005, 2, "adam"), rng, &changes);
    const double lr = std::get<double>(p.at("lr"));
    EXPECT_TRUE(std::abs(lr - 0.008) < 1e-12 || std::abs(lr - 0.012) < 1e-12) << lr;
    saw_down = saw_down || lr < 0.01;
    saw_up = saw_up || lr > 0.01;
    const std::string opt = std::get<std::string>(p.at("optimizer"));
    EXPECT_TRUE(opt == "sgd" || opt == "adamw") << opt;
    const int64_t accum = std::get<int64_t>(p.at("accumulation_steps"));
    EXPECT_TRUE(accum == 2) << accum;  // 2 x 0.8 and 2 x 1.2 both round back to 2
  }
  EXPECT_TRUE(saw_down && saw_up);
}

TEST(PbtPlan, TiesCopyNothingAndSplitByTrialNumber) {
  const SearchSpace space = Space();
  EXPECT_TRUE(PlanPbtInterval(Options4(), &space, 7, 4, Members({0.8, 0.8, 0.8, 0.8})).empty());
  // Two tied at the bottom: the later trial ranks lower, on every replay.
  auto plan = PlanPbtInterval(Options4(), &space, 7, 4, Members({0.5, 0.5, 0.9, 0.8}));
  ASSERT_EQ(plan.size(), 1u);
  EXPECT_EQ(plan[0].trial, 1);
  EXPECT_EQ(plan[0].from_trial, 2);
}

TEST(PbtPlan, DivergedMembersRankWorstAndAreNeverDonors) {
  const SearchSpace space = Space();
  PbtOptions half = Options4();
  half.quantile = 0.5;
  auto plan = PlanPbtInterval(half, &space, 7, 4, Members({NAN, 0.9, 0.5, NAN}));
  ASSERT_EQ(plan.size(), 2u);
  EXPECT_EQ(plan[0].trial, 0);
  EXPECT_EQ(plan[1].trial, 3);
  for (const auto& e : plan) {
    EXPECT_TRUE(e.from_trial == 1 || e.from_trial == 2) << e.from_trial;
  }
}

TEST(PbtPlan, AnEndedBottomMemberIsNotRevived) {
  const SearchSpace space = Space();
  auto members = Members({0.7, 0.9, 0.5, 0.8});
  members[2].can_resume = false;
  EXPECT_TRUE(PlanPbtInterval(Options4(), &space, 7, 4, members).empty());
}

TEST(PbtPlan, SeededPerEpochAndMember) {
  const SearchSpace space = Space();
  PbtOptions o = Options4();
  o.population = 8;
  std::vector<double> scores = {0.1, 0.9, 0.2, 0.8, 0.3, 0.7, 0.4, 0.6};
  auto a = PlanPbtInterval(o, &space, 11, 6, Members(scores));
  auto b = PlanPbtInterval(o, &space, 11, 6, Members(scores));
  ASSERT_EQ(a.size(), 2u);
  ASSERT_EQ(b.size(), 2u);
  for (size_t i = 0; i < a.size(); ++i) EXPECT_EQ(a[i].reason, b[i].reason);
  // One member's draw does not depend on the others': drop member 2 from the bottom.
  scores[2] = 0.65;
  auto c = PlanPbtInterval(o, &space, 11, 6, Members(scores));
  ASSERT_EQ(c.size(), 2u);
  EXPECT_EQ(c[0].trial, 0);
  EXPECT_EQ(c[0].reason, a[0].reason);
  auto other_epoch = PlanPbtInterval(o, &space, 11, 9, Members(scores));
  EXPECT_NE(other_epoch[0].params, c[0].params);
}

StudyView Study(int members, int64_t max_resource = 10) {
  static const SearchSpace space = Space();
  StudyView study;
  study.space = &space;
  study.seed = 3;
  study.max_resource = max_resource;
  for (int n = 0; n < members; ++n) {
    TrialView t;
    t.number = n;
    t.params = P(0.001 * (n + 1));
    t.state = TrialState::kRunning;
    study.trials.push_back(t);
  }
  return study;
}

// Reports `value` at `epoch` for trial n and applies the decision as the coordinator would.
Decision Report(PbtScheduler& s, StudyView& study, int64_t n, int64_t epoch, double value) {
  TrialView& t = study.trials[static_cast<size_t>(n)];
  t.values[epoch] = value;
  Decision d = s.OnReport(study, t);
  if (d.action == Action::kPause) {
    t.state = TrialState::kPaused;
    t.checkpoints.insert(epoch);
  } else if (d.action == Action::kStop) {
    t.state = TrialState::kStopped;
  }
  return d;
}

TEST(PbtScheduler, PausesEveryIntervalAndResumesWhenThePopulationHasArrived) {
  PbtOptions o = Options4();
  o.interval_epochs = 2;
  PbtScheduler s(o);
  StudyView study = Study(4);
  for (int n = 0; n < 4; ++n) EXPECT_EQ(Report(s, study, n, 1, 0.1).action, Action::kContinue);
  const double at2[] = {0.6, 0.9, 0.3, 0.7};
  for (int n = 0; n < 3; ++n) {
    Decision d = Report(s, study, n, 2, at2[n]);
    EXPECT_EQ(d.action, Action::kPause);
    EXPECT_EQ(d.reason, "pbt: interval at epoch 2; waiting for the population");
    EXPECT_EQ(s.NextPromotion(study), std::nullopt) << "member 3 has not reached epoch 2";
    EXPECT_EQ(s.ExploitOnResume(study, n), std::nullopt);
  }
  Report(s, study, 3, 2, at2[3]);
  ASSERT_EQ(s.NextPromotion(study), 0);
  EXPECT_EQ(s.ExploitOnResume(study, 0), std::nullopt);  // middle of the pack: its own checkpoint
  auto e = s.ExploitOnResume(study, 2);
  ASSERT_TRUE(e.has_value());
  EXPECT_EQ(e->from_trial, 1);
  EXPECT_EQ(e->epoch, 2);
  // No pause at the last epoch: the member completes.
  study.trials[1].state = TrialState::kRunning;
  EXPECT_EQ(Report(s, study, 1, 10, 0.95).action, Action::kContinue);
}

TEST(PbtScheduler, KeepsEveryCheckpointOfAnIntervalUntilNoMemberWaitsThere) {
  using Keep = std::set<std::pair<int64_t, int64_t>>;
  PbtScheduler s(Options4());
  StudyView study = Study(4);
  for (int n = 0; n < 3; ++n) Report(s, study, n, 1, 0.5 + 0.1 * n);
  study.trials[0].checkpoints.insert(0);  // older ones are not PBT's to keep
  EXPECT_EQ(s.CheckpointsToKeep(study), (Keep{{0, 1}, {1, 1}, {2, 1}}));
  Report(s, study, 3, 1, 0.2);
  // The first member resumes; the others still wait, so any of epoch 1's may yet be copied.
  ASSERT_EQ(s.NextPromotion(study), 0);
  study.trials[0].state = TrialState::kRunning;
  EXPECT_EQ(s.CheckpointsToKeep(study), (Keep{{0, 1}, {1, 1}, {2, 1}, {3, 1}}));
  for (int64_t n = 1; n < 4; ++n) study.trials[static_cast<size_t>(n)].state = TrialState::kRunning;
  EXPECT_TRUE(s.CheckpointsToKeep(study).empty());
}

TEST(PbtScheduler, EndedMembersDoNotHoldTheIntervalBack) {
  PbtScheduler s(Options4());
  StudyView study = Study(4);
  study.trials[3].state = TrialState::kFailed;
  for (int n = 0; n < 3; ++n) Report(s, study, n, 1, 0.5 + 0.1 * n);
  EXPECT_EQ(s.NextPromotion(study), 0);
}

TEST(PbtScheduler, MinimizingOrientsTheRanking) {
  PbtScheduler s(Options4());
  StudyView study = Study(4);
  study.objective.maximize = false;
  const double loss[] = {0.4, 0.1, 0.9, 0.3};
  for (int n = 0; n < 4; ++n) Report(s, study, n, 1, loss[n]);
  auto e = s.ExploitOnResume(study, 2);
  ASSERT_TRUE(e.has_value());
  EXPECT_EQ(e->from_trial, 1);
}

TEST(PbtScheduler, StopsTrialsBeyondThePopulation) {
  PbtScheduler s(Options4());
  StudyView study = Study(5);
  Decision d = Report(s, study, 4, 1, 0.99);
  EXPECT_EQ(d.action, Action::kStop);
  EXPECT_EQ(d.reason, "pbt: not a member; the population is the first 4 trials");
}

TEST(PbtScheduler, ExploitsInASimulatedStudyCopyTheTopAtIntervals) {
  PbtOptions o = Options4();
  o.population = 8;
  o.interval_epochs = 3;
  PbtScheduler s(o);
  auto r = testing::Simulate(s, 8, 3, 12, true);
  ASSERT_FALSE(r.exploits.empty());
  for (const auto& e : r.exploits) {
    EXPECT_EQ(e.epoch % 3, 0);
    // The donor is in the top two at that epoch, the copier in the bottom two.
    int better_than_donor = 0, better_than_copier = 0;
    for (const auto& t : r.study.trials) {
      better_than_donor += t.values.at(e.epoch) > r.study.trials[e.from_trial].values.at(e.epoch);
      better_than_copier += t.values.at(e.epoch) > r.study.trials[e.trial].values.at(e.epoch);
    }
    EXPECT_LT(better_than_donor, 2) << e.reason;
    EXPECT_GE(better_than_copier, 6) << e.reason;
  }
  for (const auto& t : r.study.trials) EXPECT_EQ(t.state, TrialState::kCompleted);
}

TEST(PbtFactory, OptionsAreCheckedAndPeersNamed) {
  std::vector<std::string> errors;
  EXPECT_EQ(MakeScheduler("pbt",
                          {{"population", int64_t{1}},
                           {"quantile", 0.7},
                           {"perturb.0", 0.8},
                           {"perturb.1", -1.2},
                           {"perturbation_interval", int64_t{2}}},
                          {10, true}, &errors),
            nullptr);
  ASSERT_EQ(errors.size(), 4u);
  EXPECT_EQ(errors[0], "population: must be in [2, 100000], got 1");
  EXPECT_EQ(errors[1].rfind("quantile: must be in [", 0), 0u) << errors[1];
  EXPECT_EQ(errors[2], "perturb: factors must be numbers in (0, 100], as in [0.8, 1.2]");
  EXPECT_EQ(errors[3].rfind("perturbation_interval: unknown option; did you mean "
                            "'interval_epochs'? (Sift's name for it)",
                            0),
            0u)
      << errors[3];
  errors.clear();
  auto s = MakeScheduler("pbt",
                         {{"population", int64_t{6}},
                          {"perturb.0", 0.5},
                          {"perturb.1", int64_t{2}},
                          {"mutable.0", std::string("lr")}},
                         {10, true}, &errors);
  ASSERT_NE(s, nullptr) << errors[0];
  const auto& o = dynamic_cast<PbtScheduler&>(*s).options();
  EXPECT_EQ(o.population, 6);
  EXPECT_EQ(o.perturb, (std::vector<double>{0.5, 2.0}));
  EXPECT_EQ(o.mutable_params, std::vector<std::string>{"lr"});
}

}  // namespace pbt_scheduler_test
}  // namespace sift::search
