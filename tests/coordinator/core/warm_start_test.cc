// warm_start through the real Coordinator on SQLite: a second study learns from a first one in
// the same database, is refused with a clear error when it cannot, and makes the same
// suggestions after a restart. The earlier trials never become this study's.
#include <cmath>

#include "tests/coordinator/core/coordinator_test.h"

namespace sift::coordinator {
namespace warm_start_test {

// A config on Config()'s space with the searcher and the rest given.
std::string WarmConfig(const std::string& rest, int max_trials = 6) {
  return "name: second\n"
         "search_space:\n"
         "  lr: {type: float, low: 1.0e-4, high: 1.0e-1, scale: log}\n"
         "  hidden: {type: int, low: 16, high: 64}\n"
         "trainer: {model: mlp}\n"
         "searcher: {type: tpe, n_startup: 4}\n"
         "budget: {max_trials: " +
         std::to_string(max_trials) +
         ", max_epochs: 1}\n"
         "seed: 8\n" +
         rest;
}

// Best at lr = 1e-2, whatever hidden is.
double Accuracy(const search::Params& p) {
  return 0.9 - 0.1 * std::abs(std::log10(std::get<double>(p.at("lr"))) + 2.0);
}

class WarmStartTest : public CoordinatorTest {
 protected:
  // Leases the next trial and runs it to completion with Accuracy (no checkpoint, so a finished
  // study owes no test evaluation).
  Assignment RunOne(const std::string& w) {
    Assignment a = Acquire(w);
    Report(w, a, 1, 1, Accuracy(a.params), /*checkpointed=*/false);
    EXPECT_TRUE(c_->CompleteTrial(w, a.lease_id, {}).ok());
    return a;
  }
  // The first study: 8 random trials, all completed.
  int64_t FirstStudy(const std::string& w) {
    const int64_t id = Study(Config("{type: fifo}", 8, 1));
    for (int i = 0; i < 8; ++i) RunOne(w);
    return id;
  }
  Status TryCreate(const std::string& text, int64_t* id) {
    std::vector<std::string> errors;
    return c_->CreateStudy(text, "second.yaml", id, &errors);
  }
};

TEST_F(WarmStartTest, UnknownStudiesAndForeignSpacesAreRefusedNamingTheStudy) {
  const std::string w = Worker();
  const int64_t first = FirstStudy(w);
  int64_t id = 0;
  Status s =
      TryCreate(WarmConfig("warm_start: {studies: [" + std::to_string(first) + ", 42]}\n"), &id);
  EXPECT_EQ(s.code, Status::Code::kInvalidArgument);
  EXPECT_NE(s.message.find("warm_start.studies: study 42: no such study in this coordinator's "
                           "database"),
            std::string::npos)
      << s.message;
  // lr of another type, and another parameter: nothing in common.
  const std::string foreign =
      "name: foreign\nsearch_space:\n"
      "  lr: {type: categorical, choices: [0.1, 0.01]}\n"
      "  dropout: {type: float, low: 0, high: 0.5}\n"
      "trainer: {model: mlp}\nsearcher: {type: tpe}\n"
      "warm_start: {studies: [" +
      std::to_string(first) + "]}\n";
  s = TryCreate(foreign, &id);
  EXPECT_EQ(s.code, Status::Code::kInvalidArgument);
  EXPECT_NE(s.message.find("warm_start.studies: study " + std::to_string(first) +
                           " (t) shares no parameter with this search space"),
            std::string::npos)
      << s.message;
  EXPECT_EQ(c_->ListStudies().size(), 1u);  // neither was created
}

TEST_F(WarmStartTest, ASecondStudyLearnsFromTheFirstAndRestartsTheSame) {
  const std::string w = Worker();
  const int64_t first = FirstStudy(w);
  // 8 priors at weight 0.5 stand for 4 trials: TPE's model proposes trial 0 already, where a
  // cold study draws at random.
  const std::string warm = "warm_start: {studies: [" + std::to_string(first) + "]}\n";
  const int64_t cold_id = Study(WarmConfig("", 1));  // done after one trial
  const Assignment cold = RunOne(w);
  ASSERT_EQ(cold.study_id, cold_id);
  const int64_t id = Study(WarmConfig(warm));
  StudySummary s;
  ASSERT_TRUE(c_->GetStudy(id, &s).ok());
  EXPECT_EQ(s.total, 0);  // the first study's trials are not this one's
  const Assignment a = RunOne(w);
  ASSERT_EQ(a.study_id, id);
  EXPECT_EQ(a.number, 0);
  EXPECT_NE(a.params.at("lr"), cold.params.at("lr"));
  std::vector<TrialSummary> trials;
  ASSERT_TRUE(c_->ListTrials(id, &trials).ok());
  EXPECT_EQ(trials.size(), 1u);

  // A copy of the database now (WAL: both files), for a coordinator restarted from it.
  const std::string copy = db_.string() + ".copy";
  std::filesystem::copy_file(db_, copy);
  std::filesystem::copy_file(db_.string() + "-wal", copy + "-wal");
  const Assignment live = Acquire(w);
  ASSERT_EQ(live.study_id, id);

  CoordinatorOptions o;
  o.clock = clock_.fn();
  Coordinator restarted(OpenSqliteStore(copy), o);
  WorkerRecord in, out;
  in.market = "spot";
  in.price_per_hour = 1;
  ASSERT_TRUE(restarted.RegisterWorker(in, &out).ok());
  AcquireResult r;
  Assignment again;
  ASSERT_TRUE(restarted.AcquireTrial(out.id, &r, &again).ok());
  ASSERT_EQ(r, AcquireResult::kAssigned);
  EXPECT_EQ(again.study_id, id);
  EXPECT_EQ(again.number, 1);
  EXPECT_EQ(again.params, live.params);
  for (const char* sfx : {"", "-wal", "-shm"}) std::filesystem::remove(copy + sfx);
}

// Regression: the earlier database deleted after creation made the study's config invalid, so a
// restarted coordinator could not restore the study at all.
TEST_F(WarmStartTest, AStudyWhoseEarlierDatabaseIsGoneIsRestoredWithoutPriors) {
  const std::string w = Worker();
  FirstStudy(w);
  const std::string earlier = db_.string() + ".earlier";
  std::filesystem::copy_file(db_, earlier);
  std::filesystem::copy_file(db_.string() + "-wal", earlier + "-wal");
  const int64_t id = Study(WarmConfig("warm_start: {studies: [1], database: " + earlier + "}\n"));
  RunOne(w);
  for (const char* sfx : {"", "-wal", "-shm"}) std::filesystem::remove(earlier + sfx);
  c_.reset();
  Open();
  StudySummary s;
  ASSERT_TRUE(c_->GetStudy(id, &s).ok());
  EXPECT_EQ(s.total, 1);
  EXPECT_EQ(Acquire(w).number, 1);
}

}  // namespace warm_start_test
}  // namespace sift::coordinator
