// The lease table on its own: grants, who holds what, heartbeats, expiry and a study's leases.
#include "coordinator/core/lease_table.h"

#include <gtest/gtest.h>

namespace sift::coordinator {
namespace lease_table_test {

TrialLease Lease(const std::string& id, const std::string& worker, int64_t study, int64_t number,
                 double seen) {
  TrialLease l;
  l.id = id;
  l.worker_id = worker;
  l.study_id = study;
  l.number = number;
  l.last_seen = seen;
  return l;
}

TEST(LeaseTable, ALeaseIsHeldByItsWorkerOnlyUntilItEnds) {
  LeaseTable t;
  t.Grant(Lease("L1", "w1", 1, 0, 100));
  TrialLease* held = nullptr;
  ASSERT_TRUE(t.Held("w1", "L1", &held).ok());
  EXPECT_EQ(held->number, 0);
  Status other = t.Held("w2", "L1", &held);
  EXPECT_EQ(other.code, Status::Code::kFailedPrecondition);
  EXPECT_NE(other.message.find("belongs to another worker"), std::string::npos);
  t.End("L1");
  Status ended = t.Held("w1", "L1", &held);
  EXPECT_EQ(ended.code, Status::Code::kFailedPrecondition);
  EXPECT_NE(ended.message.find("is not held"), std::string::npos);
  EXPECT_EQ(t.Find("L1"), nullptr);
  t.End("L1");  // ending twice is harmless
  EXPECT_EQ(t.size(), 0u);
}

TEST(LeaseTable, AStudysLeasesAreFoundWithoutTheOthersAndDropTogether) {
  LeaseTable t;
  t.Grant(Lease("L2", "w1", 1, 3, 100));
  t.Grant(Lease("L1", "w2", 1, 5, 100));
  t.Grant(Lease("L3", "w3", 2, 3, 100));
  EXPECT_EQ(t.OfStudy(1), (std::vector<std::string>{"L1", "L2"}));
  EXPECT_EQ(t.TrialsOf(1), (std::set<int64_t>{3, 5}));
  EXPECT_TRUE(t.AnyOf(2));
  EXPECT_FALSE(t.AnyOf(3));
  t.End("L3");
  EXPECT_FALSE(t.AnyOf(2));
  t.DropStudy(1);
  EXPECT_TRUE(t.OfStudy(1).empty());
  EXPECT_EQ(t.size(), 0u);
}

TEST(LeaseTable, HeartbeatsKeepLeasesOfEitherKindAliveAndNameTheOnesNotHeld) {
  LeaseTable t;
  t.Grant(Lease("L1", "w1", 1, 0, 100));
  t.Grant(Lease("L2", "w2", 1, 1, 100));
  t.GrantEvaluation({"E1", "w1", 1, 2, 100});
  const auto revoked = t.Heartbeat("w1", {"L1", "E1", "L2", "gone"}, 120);
  EXPECT_EQ(revoked, (std::vector<std::string>{"L2", "gone"}));  // L2 is w2's
  EXPECT_EQ(t.Find("L1")->last_seen, 120);
  EXPECT_EQ(t.FindEvaluation("E1")->last_seen, 120);
  EXPECT_EQ(t.Find("L2")->last_seen, 100);
  // Past a 10 s timeout at t=115 only w2's lease is silent; at t=131 all of them.
  EXPECT_EQ(t.Expired(115, 10), (std::vector<std::string>{"L2"}));
  EXPECT_TRUE(t.ExpiredEvaluations(115, 10).empty());
  EXPECT_EQ(t.Expired(131, 10), (std::vector<std::string>{"L1", "L2"}));
  EXPECT_EQ(t.ExpiredEvaluations(131, 10), (std::vector<std::string>{"E1"}));
  EXPECT_EQ(t.Holders(), (std::set<std::string>{"w1", "w2"}));
  t.EndEvaluation("E1");
  EXPECT_EQ(t.FindEvaluation("E1"), nullptr);
  t.End("L1");
  EXPECT_EQ(t.Holders(), (std::set<std::string>{"w2"}));
}

}  // namespace lease_table_test
}  // namespace sift::coordinator
