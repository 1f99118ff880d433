// The worker table on its own: touching, liveness, refusals, lost idle workers and forgetting
// the longest silent.
#include "coordinator/core/worker_table.h"

#include <gtest/gtest.h>

namespace sift::coordinator {
namespace worker_table_test {

WorkerRecord Record(const std::string& id, const std::string& name = "") {
  WorkerRecord r;
  r.id = id;
  r.name = name.empty() ? id : name;
  r.market = "spot";
  r.price_per_hour = 3.6;
  return r;
}

TEST(WorkerTable, TouchFindsARegisteredWorkerAndNotesWhenItWasHeardFrom) {
  WorkerTable t(/*timeout_s=*/30);
  t.Add(Record("w1"), 100);
  WorkerTable::Worker* w = nullptr;
  ASSERT_TRUE(t.Touch("w1", 120, &w).ok());
  EXPECT_EQ(w->last_seen, 120);
  EXPECT_EQ(t.Find("w1")->last_seen, 120);
  const Status unknown = t.Touch("w9", 120, &w);
  EXPECT_EQ(unknown.code, Status::Code::kNotFound);
  EXPECT_NE(unknown.message.find("unknown worker 'w9': register first"), std::string::npos);
  EXPECT_EQ(t.Find("w9"), nullptr);
}

TEST(WorkerTable, ATakenOverStudysWorkersKeepWhatIsKnownOfThemHere) {
  WorkerTable t(30);
  t.Add(Record("w1", "here"), 100);
  t.NoteStudy("w1", 7);
  t.AddIfAbsent(Record("w1", "loaded"), 200);
  t.AddIfAbsent(Record("w2"), 200);
  EXPECT_EQ(t.Find("w1")->record.name, "here");
  EXPECT_EQ(t.Find("w1")->last_study_id, 7);
  EXPECT_EQ(t.Find("w1")->last_seen, 100);
  EXPECT_EQ(t.Find("w2")->last_seen, 200);
  t.Add(Record("w1", "again"), 300);  // registering anew starts over
  EXPECT_EQ(t.Find("w1")->record.name, "again");
  EXPECT_EQ(t.Find("w1")->last_study_id, 0);
  EXPECT_EQ(t.size(), 2u);
}

TEST(WorkerTable, AStudyIsRunnableWhileSomeLiveWorkerHasNotRefusedIt) {
  WorkerTable t(30);
  t.Add(Record("w1"), 100);
  t.Add(Record("w2"), 100);
  EXPECT_TRUE(t.SomeLiveCanRun(1, 130));
  t.Refuse("w1", 1);
  t.Refuse("w9", 1);  // unknown: nothing to note
  EXPECT_TRUE(t.SomeLiveCanRun(1, 130));
  EXPECT_FALSE(t.SomeLiveCanRun(1, 130, /*except=*/"w2"));
  EXPECT_TRUE(t.SomeLiveCanRun(2, 130, "w2"));  // w1 refused study 1 only
  EXPECT_FALSE(t.SomeLiveCanRun(2, 130.5));     // both silent past the timeout
  EXPECT_TRUE(t.Live(*t.Find("w1"), 130));
  EXPECT_FALSE(t.Live(*t.Find("w1"), 130.5));
}

TEST(WorkerTable, ALostWorkersIdleStretchEndsAtItsLastSignOfLife) {
  WorkerTable t(30);
  Ledger ledger;
  t.Add(Record("idle-lost"), 100);
  t.Add(Record("idle-live"), 100);
  t.Add(Record("busy-lost"), 100);
  ledger.OpenIdle("idle-lost", 1, 90, 3.6, "spot");
  ledger.OpenIdle("idle-live", 1, 90, 3.6, "spot");
  WorkerTable::Worker* w = nullptr;
  ASSERT_TRUE(t.Touch("idle-live", 150, &w).ok());
  const auto lost = t.LostIdle(ledger, 160);
  ASSERT_EQ(lost.size(), 1u);
  EXPECT_EQ(lost[0].first, "idle-lost");
  EXPECT_EQ(lost[0].second, 100);  // heard from after its stretch began
  EXPECT_EQ(t.HeardUntil("idle-lost", 160), 100);
  EXPECT_EQ(t.HeardUntil("idle-live", 160), 160);
  EXPECT_EQ(t.HeardUntil("nobody", 160), 160);
}

TEST(WorkerTable, OnlyTheLongestSilentLostWorkersAreForgottenPastTheCap) {
  WorkerTable t(/*timeout_s=*/30, /*max_lost=*/2);
  Ledger ledger;
  for (int i = 0; i < 6; ++i) t.Add(Record("w" + std::to_string(i)), 100 + i);
  ledger.OpenIdle("w0", 1, 100, 3.6, "spot");    // idle: its stretch is still to be stored
  const std::set<std::string> holding = {"w1"};  // holds a lease
  t.Add(Record("live"), 200);
  // Lost and neither idle nor holding: w2..w5; the two heard from last (w4, w5) stay.
  EXPECT_EQ(t.ForgetLost(holding, ledger, 210), 2u);
  for (const char* kept : {"w0", "w1", "w4", "w5", "live"}) {
    EXPECT_NE(t.Find(kept), nullptr) << kept;
  }
  for (const char* gone : {"w2", "w3"}) EXPECT_EQ(t.Find(gone), nullptr) << gone;
  EXPECT_EQ(t.ForgetLost(holding, ledger, 210), 0u);  // at the cap now
}

}  // namespace worker_table_test
}  // namespace sift::coordinator
