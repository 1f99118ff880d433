// Cost watching on its own, over a real SQLite store and ledger: budget alerts recorded once
// each, and quotas summed over the studies tagged alike.
#include "coordinator/core/cost_watch.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>

#include "tests/coordinator/state_fixture.h"

namespace sift::coordinator {
namespace cost_watch_test {

class CostWatchTest : public ::testing::Test {
 protected:
  CostWatchTest()
      : dir_(std::filesystem::temp_directory_path() /
             ("sift-cost-watch-" + std::to_string(getpid()))) {
    std::filesystem::remove_all(dir_);
    std::filesystem::create_directories(dir_);
    store_ = std::make_unique<FencedStore>(OpenSqliteStore((dir_ / "sift.db").string()));
  }
  ~CostWatchTest() override {
    store_.reset();
    std::filesystem::remove_all(dir_);
  }
  // A stored study with these tags and a $10 budget, served as the Coordinator serves it.
  std::shared_ptr<ServedStudy> Study(const std::string& tags) {
    const std::string text =
        "name: t\n"
        "search_space:\n"
        "  lr: {type: float, low: 1.0e-4, high: 1.0e-1, scale: log}\n"
        "trainer: {model: mlp}\n"
        "alerts: {forecast: false}\n"
        "budget: {max_trials: 5, max_epochs: 3, max_dollars: 10}\n"
        "tags: " +
        tags + "\n";
    return testing::StoreStudy(*store_, text, 0);
  }
  // A lease of the study billed at a dollar a second from `start`.
  void Bill(int64_t study_id, double start) {
    SegmentRecord s;
    s.lease_id = "L" + std::to_string(study_id) + "-" + std::to_string(start);
    s.study_id = study_id;
    s.start = start;
    s.price_per_hour = 3600;
    ledger_.Open(s);
  }
  std::vector<std::string> Alerts(int64_t study_id) {
    std::vector<std::string> out;
    for (const auto& e : store_->ListStudyEvents(study_id)) {
      if (e.action == "alert") out.push_back(e.detail);
    }
    return out;
  }

  std::filesystem::path dir_;
  std::unique_ptr<FencedStore> store_;
  std::mutex table_mu_;
  Ledger ledger_;
};

TEST_F(CostWatchTest, EachCrossedBudgetThresholdIsRecordedOnce) {
  CostWatch watch(*store_, table_mu_, ledger_, {}, /*forecast_interval_s=*/5);
  auto study = Study("{team: vision}");
  Bill(study->id(), 0);
  watch.Watch(*study, 4);  // $4 of $10: none yet
  EXPECT_TRUE(Alerts(study->id()).empty());
  watch.Watch(*study, 8.5);  // 50% and 80% at once
  EXPECT_EQ(study->cost_events, (std::set<std::string>{"budget:50", "budget:80"}));
  ASSERT_EQ(Alerts(study->id()).size(), 2u);
  watch.FireBudgetAlerts(*study, 9, 9);  // nothing new crossed
  EXPECT_EQ(Alerts(study->id()).size(), 2u);
  watch.FireBudgetAlerts(*study, 10, 10);
  EXPECT_TRUE(study->cost_events.count("budget:100"));
  const auto alerts = Alerts(study->id());
  ASSERT_EQ(alerts.size(), 3u);
  EXPECT_NE(alerts[2].find("budget:100"), std::string::npos) << alerts[2];
}

TEST_F(CostWatchTest, AQuotaSumsEveryStudyWithItsTagUntilOneIsDropped) {
  CostWatch watch(*store_, table_mu_, ledger_, {Quota{"team", "vision", 5}}, 5);
  auto a = Study("{team: vision}");
  auto b = Study("{team: vision, project: x}");
  auto other = Study("{team: ads}");
  {
    std::lock_guard<std::mutex> table(table_mu_);
    for (const auto& s : {a, b, other}) watch.SetTags(s->id(), s->runner->config().tags);
  }
  for (const auto& s : {a, b, other}) Bill(s->id(), 0);
  const common::Tags vision = {{"team", "vision"}};
  EXPECT_TRUE(watch.CheckQuotas(vision, 2).ok());  // $4 of $5 by a and b
  const Status spent = watch.CheckQuotas(vision, 3);
  EXPECT_EQ(spent.code, Status::Code::kResourceExhausted);
  EXPECT_NE(spent.message.find("quota team=vision: $6.0000 spent of $5.0000"), std::string::npos)
      << spent.message;
  EXPECT_TRUE(watch.CheckQuotas({{"team", "ads"}}, 3).ok());  // no quota on it
  // The runner is told its quota is spent, and so hands out no more work.
  std::string why;
  EXPECT_TRUE(a->runner->PickNext(3, 0, &why).has_value());
  watch.UpdateQuotaUse(*a->runner, 3);
  EXPECT_FALSE(a->runner->PickNext(3, 0, &why).has_value());
  EXPECT_NE(why.find("quota team=vision: $6.0000 spent of $5.0000"), std::string::npos) << why;
  watch.UpdateQuotaUse(*other->runner, 3);
  EXPECT_TRUE(other->runner->PickNext(3, 0, &why).has_value());
  {
    std::lock_guard<std::mutex> table(table_mu_);
    watch.DropTags(b->id());  // served by another coordinator now
  }
  EXPECT_TRUE(watch.CheckQuotas(vision, 3).ok());  // $3: a's alone
}

}  // namespace cost_watch_test
}  // namespace sift::coordinator
