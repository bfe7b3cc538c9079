#include "services/ha/replica_phases.h"

#include <deque>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/synchronization/notification.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace tollgate::ha {
namespace {

using ::testing::ElementsAre;

// Plays back scripted phase outcomes and records what the loop did. Once the script runs out,
// the next phase notifies stop, as a signal arriving during it would.
class ScriptedPhases : public ReplicaPhases {
 public:
  ScriptedPhases(absl::Notification& stop, std::deque<absl::Status> follow_results,
                 std::deque<absl::Status> lead_results)
      : stop_(stop),
        follow_results_(std::move(follow_results)),
        lead_results_(std::move(lead_results)) {}

  absl::Status Follow() override { return Next("follow", follow_results_); }
  absl::Status Lead() override { return Next("lead", lead_results_); }
  void StepDown(absl::string_view reason) override {
    calls.push_back(std::string("step down: ") + std::string(reason));
  }
  void Resign() override { calls.push_back("resign"); }

  std::vector<std::string> calls;

 private:
  absl::Status Next(const std::string& phase, std::deque<absl::Status>& results) {
    calls.push_back(phase);
    if (results.empty()) {
      if (!stop_.HasBeenNotified()) stop_.Notify();
      return absl::OkStatus();
    }
    absl::Status next = std::move(results.front());
    results.pop_front();
    return next;
  }

  absl::Notification& stop_;
  std::deque<absl::Status> follow_results_;
  std::deque<absl::Status> lead_results_;
};

TEST(ReplicaPhasesTest, FollowsAndLeadsInTurnUntilStopped) {
  absl::Notification stop;
  ScriptedPhases phases(stop, {absl::OkStatus(), absl::OkStatus()}, {absl::OkStatus()});
  EXPECT_TRUE(RunReplicaPhases(phases, stop).ok());
  // Elected, led, lost the leadership, followed, elected again, then a stop while leading.
  EXPECT_THAT(phases.calls, ElementsAre("follow", "lead", "follow", "lead"));
}

TEST(ReplicaPhasesTest, AStopWhileFollowingNeverLeads) {
  absl::Notification stop;
  ScriptedPhases phases(stop, {}, {absl::OkStatus()});
  EXPECT_TRUE(RunReplicaPhases(phases, stop).ok());
  EXPECT_THAT(phases.calls, ElementsAre("follow"));
}

TEST(ReplicaPhasesTest, APromotionThatLosesEtcdStepsDownAndFollowsAgain) {
  for (absl::Status lost :
       {absl::UnavailableError("etcd: no quorum"), absl::CancelledError("store shut down")}) {
    SCOPED_TRACE(lost.ToString());
    absl::Notification stop;
    ScriptedPhases phases(stop, {absl::OkStatus(), absl::OkStatus()}, {lost});
    EXPECT_TRUE(RunReplicaPhases(phases, stop).ok());
    EXPECT_THAT(phases.calls,
                ElementsAre("follow", "lead", "step down: the promotion failed", "follow", "lead"));
  }
}

TEST(ReplicaPhasesTest, APromotionThatWouldFailAgainResignsAndExits) {
  absl::Notification stop;
  const absl::Status bad_manifest = absl::InvalidArgumentError("queues.yaml: unknown field");
  ScriptedPhases phases(stop, {absl::OkStatus(), absl::OkStatus()}, {bad_manifest});
  EXPECT_EQ(RunReplicaPhases(phases, stop), bad_manifest);
  EXPECT_THAT(phases.calls, ElementsAre("follow", "lead", "resign"));
}

TEST(ReplicaPhasesTest, AFailedFollowerPhaseExitsWithoutGivingAnythingUp) {
  absl::Notification stop;
  const absl::Status port_taken = absl::UnavailableError("cannot listen on 127.0.0.1:50051");
  ScriptedPhases phases(stop, {port_taken}, {});
  EXPECT_EQ(RunReplicaPhases(phases, stop), port_taken);
  EXPECT_THAT(phases.calls, ElementsAre("follow"));
}

TEST(ReplicaPhasesTest, OnlyAnUnreachableEtcdIsWorthAnotherPromotion) {
  EXPECT_EQ(ClassifyLeadFailure(absl::UnavailableError("")), LeadFailure::kStepDownAndFollow);
  EXPECT_EQ(ClassifyLeadFailure(absl::CancelledError("")), LeadFailure::kStepDownAndFollow);
  for (const absl::Status& status : {absl::InvalidArgumentError(""), absl::DataLossError(""),
                                     absl::FailedPreconditionError(""), absl::InternalError("")}) {
    EXPECT_EQ(ClassifyLeadFailure(status), LeadFailure::kResignAndExit) << status;
  }
}

}  // namespace
}  // namespace tollgate::ha
