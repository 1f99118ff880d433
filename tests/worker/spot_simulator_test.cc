// The spot simulator's reclaim timer (worker/spot_simulator.cc): a reclaim with notice stops the
// worker and says why; one that has not come when the simulator goes is called off, and its
// timer never reads the link that goes with it.
#include "worker/spot_simulator.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <memory>
#include <thread>

#include "tests/worker/coordinator_fixture.h"
#include "worker/coordinator_link.h"

namespace sift::worker {
namespace spot_simulator_test {

using fixture::Eventually;

// A lease of one epoch: the reclaim falls in epoch 1. Seed 2: the first reclaim drawn comes with
// notice (seeds alternate by parity; without notice would be a real SIGKILL of this test).
v1::TrialAssignment OneEpoch() {
  v1::TrialAssignment a;
  a.set_max_epochs(1);
  a.set_start_epoch(0);
  a.set_trial_number(0);
  return a;
}

WorkerOptions Options() {
  WorkerOptions o;
  o.client.address = "127.0.0.1:1";  // never called: the link only holds the lease here
  o.name = "spot-test";
  return o;
}

TEST(SpotSimulatorTest, AReclaimWithNoticeStopsTheWorkerAndSaysWhy) {
  std::atomic<bool> stop{false};
  CoordinatorLink link(Options(), &stop);
  link.SetLease("L-1");
  SpotSimulator spot(/*chance=*/1.0, /*seed=*/2, &link, &stop);
  spot.Schedule(OneEpoch());
  spot.EpochDone(0.05);  // the reclaim comes within 50 ms of epoch 1's start
  spot.ArmReclaim(1);
  EXPECT_TRUE(Eventually([&] { return stop.load(); }, 30));
  EXPECT_EQ(spot.reason(), "simulated spot reclaim");
}

TEST(SpotSimulatorTest, AReclaimThatHasNotComeIsCalledOffWithTheSimulator) {
  std::atomic<bool> stop{false};
  {
    auto link = std::make_unique<CoordinatorLink>(Options(), &stop);
    link->SetLease("L-1");
    auto spot = std::make_unique<SpotSimulator>(1.0, 2, link.get(), &stop);
    spot->Schedule(OneEpoch());
    spot->EpochDone(0.3);  // due within 0.3 s
    spot->ArmReclaim(1);
    spot.reset();  // the worker leaves first, its link with it
    link.reset();
  }
  // A timer left running (it was detached) would read the freed link when due and could
  // stop a worker that is gone.
  std::this_thread::sleep_for(std::chrono::milliseconds(500));
  EXPECT_FALSE(stop.load());
}

TEST(SpotSimulatorTest, ANewLeaseCallsOffTheLastOnesReclaim) {
  std::atomic<bool> stop{false};
  CoordinatorLink link(Options(), &stop);
  link.SetLease("L-1");
  SpotSimulator spot(1.0, 2, &link, &stop);
  spot.Schedule(OneEpoch());
  spot.EpochDone(0.3);
  spot.ArmReclaim(1);
  link.SetLease("L-2");  // L-1 ended first; the reclaim drawn next is without notice: not armed
  spot.Schedule(OneEpoch());
  std::this_thread::sleep_for(std::chrono::milliseconds(500));
  EXPECT_FALSE(stop.load());
  EXPECT_EQ(spot.reason(), "");
}

}  // namespace spot_simulator_test
}  // namespace sift::worker
