#include "services/manifest/pod_group.h"

#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

// Kueue's pod-group rules (pkg/controller/jobs/pod/pod_controller.go) as pure decisions.

namespace tollgate::manifest {
namespace {

using Json = nlohmann::json;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;

constexpr char kQueueLabel[] = "kueue.x-k8s.io/queue-name";
// Kueue's role hashes of a pod with one container requesting cpu 1, resp. cpu 1 and memory 1Gi.
constexpr char kCpuRole[] = "dc85db45";
constexpr char kCpuMemRole[] = "4ebdd4a6";

struct PodOptions {
  std::string name;
  std::string total = "3";
  std::string phase = "Pending";
  bool gated = true;
  bool memory = false;
  int created_minute = 0;
  std::string queue = "q";
};

Json Pod(const PodOptions& o) {
  Json requests = {{"cpu", "1"}};
  if (o.memory) requests["memory"] = "1Gi";
  Json pod = {
      {"metadata",
       {{"name", o.name},
        {"namespace", "ns"},
        {"creationTimestamp", absl::StrCat("2026-01-01T00:", o.created_minute < 10 ? "0" : "",
                                           o.created_minute, ":00Z")},
        {"labels", {{kQueueLabel, o.queue}, {"kueue.x-k8s.io/pod-group-name", "g"}}},
        {"annotations", {{"kueue.x-k8s.io/pod-group-total-count", o.total}}}}},
      {"spec",
       {{"containers",
         Json::array({{{"name", "c"},
                       {"resources", {{"requests", requests}, {"limits", Json::object()}}}}})}}},
      {"status", {{"phase", o.phase}}}};
  if (o.gated)
    pod["spec"]["schedulingGates"] = Json::array({{{"name", "kueue.x-k8s.io/admission"}}});
  return pod;
}

std::vector<std::string> Hashes(const std::vector<PodRole>& roles) {
  std::vector<std::string> out;
  for (const PodRole& r : roles) out.push_back(absl::StrCat(r.hash, "x", r.count));
  return out;
}

TEST(PodGroupTest, MembersMustAgreeOnTheTotalAndTheQueue) {
  absl::StatusOr<PodGroupInfo> ok = ReadPodGroup({Pod({"a"}), Pod({"b"})}, kQueueLabel);
  ASSERT_TRUE(ok.ok()) << ok.status();
  EXPECT_EQ(ok->name, "g");
  EXPECT_EQ(ok->total_count, 3);
  EXPECT_EQ(ok->queue_name, "q");

  absl::StatusOr<PodGroupInfo> changed =
      ReadPodGroup({Pod({"a"}), Pod({.name = "b", .total = "4"})}, kQueueLabel);
  EXPECT_EQ(changed.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(changed.status().message(),
              HasSubstr("pods 'a' and 'b' have different 'kueue.x-k8s.io/pod-group-total-count' "
                        "values: 3!=\"4\""));
  // A failed member's value does not count: its replacement is what matters.
  EXPECT_TRUE(
      ReadPodGroup({Pod({"a"}), Pod({.name = "b", .total = "4", .phase = "Failed"})}, kQueueLabel)
          .ok());
  EXPECT_THAT(ReadPodGroup({Pod({"a"}), Pod({.name = "b", .queue = "other"})}, kQueueLabel)
                  .status()
                  .message(),
              HasSubstr("different queue names: q!=other"));
  EXPECT_THAT(ReadPodGroup({Pod({.name = "a", .total = "0"})}, kQueueLabel).status().message(),
              HasSubstr("must be an integer greater than zero, got \"0\""));
}

TEST(PodGroupTest, AGroupWaitsForAllItsPodsThenHasOnePodSetPerRole) {
  const PodGroupInfo group = *ReadPodGroup({Pod({"a"})}, kQueueLabel);
  absl::StatusOr<NewGroupWorkload> early = ComposeGroup({Pod({"a"}), Pod({"b"})}, group);
  EXPECT_EQ(early.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(early.status().message(),
              HasSubstr("'g' group has fewer runnable pods than expected"));

  absl::StatusOr<NewGroupWorkload> all =
      ComposeGroup({Pod({"a"}), Pod({.name = "b", .memory = true}), Pod({"c"}),
                    Pod({.name = "d", .phase = "Failed"})},
                   group);
  ASSERT_TRUE(all.ok()) << all.status();
  // Sorted by hash, as Kueue sorts the pod sets.
  EXPECT_THAT(Hashes(all->roles),
              ElementsAre(absl::StrCat(kCpuMemRole, "x1"), absl::StrCat(kCpuRole, "x2")));
  EXPECT_THAT(all->excess_pods, IsEmpty());
}

TEST(PodGroupTest, ExcessPodsAreTheGatedAndYoungestOnes) {
  const PodGroupInfo group = *ReadPodGroup({Pod({.name = "a", .total = "2"})}, kQueueLabel);
  absl::StatusOr<NewGroupWorkload> composed =
      ComposeGroup({Pod({.name = "old", .total = "2", .created_minute = 1}),
                    Pod({.name = "young", .total = "2", .created_minute = 5}),
                    Pod({.name = "running",
                         .total = "2",
                         .phase = "Running",
                         .gated = false,
                         .created_minute = 9})},
                   group);
  ASSERT_TRUE(composed.ok()) << composed.status();
  EXPECT_THAT(composed->excess_pods, ElementsAre("young"));
  EXPECT_THAT(Hashes(composed->roles), ElementsAre(absl::StrCat(kCpuRole, "x2")));
}

TEST(PodGroupTest, FastAdmissionCountsTheFirstRunnablePodAtTheTotal) {
  Json first = Pod({.name = "a", .total = "5"});
  first["metadata"]["annotations"]["kueue.x-k8s.io/pod-group-fast-admission"] = "true";
  const PodGroupInfo group = *ReadPodGroup({first}, kQueueLabel);
  EXPECT_TRUE(group.fast_admission);
  absl::StatusOr<NewGroupWorkload> composed = ComposeGroup({first}, group);
  ASSERT_TRUE(composed.ok()) << composed.status();
  EXPECT_THAT(Hashes(composed->roles), ElementsAre(absl::StrCat(kCpuRole, "x5")));
}

TEST(PodGroupTest, FailedPodsAreMissingUntilReplacedAndExtraOnesGo) {
  const PodGroupInfo group = *ReadPodGroup({Pod({"a"})}, kQueueLabel);
  const std::vector<WorkloadPodSet> workload = {{kCpuMemRole, 1}, {kCpuRole, 2}};
  absl::StatusOr<GroupMatch> failed =
      MatchGroup({Pod({.name = "a", .phase = "Running", .gated = false}),
                  Pod({.name = "b", .phase = "Failed", .gated = false, .memory = true}),
                  Pod({.name = "c", .phase = "Running", .gated = false})},
                 group, workload, false);
  ASSERT_TRUE(failed.ok()) << failed.status();
  EXPECT_EQ(failed->absent, 1);
  EXPECT_TRUE(failed->equivalent);
  EXPECT_THAT(failed->excess_pods, IsEmpty());

  absl::StatusOr<GroupMatch> replaced =
      MatchGroup({Pod({.name = "a", .phase = "Running", .gated = false}),
                  Pod({.name = "b", .phase = "Failed", .gated = false, .memory = true}),
                  Pod({.name = "b2", .memory = true, .created_minute = 3}),
                  Pod({.name = "c", .phase = "Running", .gated = false}),
                  Pod({.name = "extra", .created_minute = 7})},
                 group, workload, false);
  ASSERT_TRUE(replaced.ok()) << replaced.status();
  EXPECT_EQ(replaced->absent, 0);
  EXPECT_THAT(replaced->excess_pods, ElementsAre("extra"));
  EXPECT_EQ(replaced->kept.size(), 4u);

  // With fast admission a role is missing only when none of its pods exists.
  PodGroupInfo fast = group;
  fast.fast_admission = true;
  EXPECT_EQ(MatchGroup({Pod({"a"})}, fast, {{kCpuRole, 3}}, false)->absent, 0);
  EXPECT_EQ(
      MatchGroup({Pod({.name = "a", .phase = "Failed"})}, fast, {{kCpuRole, 3}}, false)->absent, 1);
}

TEST(PodGroupTest, APrebuiltWorkloadIsInSyncWhileItsPodSetsCoverThePods) {
  PodGroupInfo group = *ReadPodGroup({Pod({"a"})}, kQueueLabel);
  EXPECT_TRUE(*GroupEquivalent({Pod({"a"}), Pod({"b"})}, group, {{kCpuRole, 3}}, false));
  // A role the workload does not have, or more pods than it counts.
  EXPECT_FALSE(
      *GroupEquivalent({Pod({.name = "a", .memory = true})}, group, {{kCpuRole, 3}}, false));
  EXPECT_FALSE(*GroupEquivalent({Pod({"a"}), Pod({"b"})}, group, {{kCpuRole, 1}}, false));
  EXPECT_TRUE(*GroupEquivalent({Pod({"a"}), Pod({"b"})}, group, {{kCpuRole, 1}}, true));
  // Fast admission (a StatefulSet): the total is what must fit.
  group.fast_admission = true;
  group.total_count = 5;
  EXPECT_FALSE(*GroupEquivalent({Pod({"a"})}, group, {{kCpuRole, 3}}, false));
  EXPECT_TRUE(*GroupEquivalent({Pod({"a"})}, group, {{kCpuRole, 5}}, false));
}

TEST(PodGroupTest, AGroupFinishesWhenAllSucceedOrAnUnretriableOneStops) {
  PodGroupInfo group = *ReadPodGroup({Pod({.name = "a", .total = "2"})}, kQueueLabel);
  EXPECT_FALSE(
      GroupFinished(
          {Pod({.name = "a", .phase = "Succeeded"}), Pod({.name = "b", .phase = "Running"})}, group)
          .has_value());
  std::optional<GroupFinish> done = GroupFinished(
      {Pod({.name = "a", .phase = "Succeeded"}), Pod({.name = "b", .phase = "Succeeded"})}, group);
  ASSERT_TRUE(done.has_value());
  EXPECT_EQ(done->message, "Pods succeeded: 2/2.");
  // A failed member is replaced unless the group is not retriable.
  const std::vector<Json> failed = {Pod({.name = "a", .phase = "Succeeded"}),
                                    Pod({.name = "b", .phase = "Failed"})};
  EXPECT_FALSE(GroupFinished(failed, group).has_value());
  group.unretriable = true;
  EXPECT_EQ(GroupFinished(failed, group)->message, "Pods succeeded: 1/2.");
  group.serving = true;
  EXPECT_FALSE(GroupFinished(failed, group).has_value());
}

TEST(PodGroupTest, AGroupIsReadyWhenAllOfItsTotalAreReady) {
  const PodGroupInfo group = *ReadPodGroup({Pod({.name = "a", .total = "2"})}, kQueueLabel);
  Json ready = Pod({.name = "a", .phase = "Running", .gated = false});
  ready["status"]["conditions"] = Json::array({{{"type", "Ready"}, {"status", "True"}}});
  EXPECT_FALSE(GroupPodsReady({ready}, group));
  Json other = ready;
  other["metadata"]["name"] = "b";
  EXPECT_TRUE(GroupPodsReady({ready, other}, group));
  other["status"]["conditions"][0]["status"] = "False";
  EXPECT_FALSE(GroupPodsReady({ready, other}, group));
}

TEST(PodGroupTest, PodStates) {
  Json pod = Pod({"a"});
  EXPECT_TRUE(IsGated(pod));
  EXPECT_TRUE(IsRunnableOrSucceeded(pod));
  pod["metadata"]["deletionTimestamp"] = "2026-01-01T00:10:00Z";
  // Deleted before it got a node: it will never run.
  EXPECT_FALSE(IsRunnableOrSucceeded(pod));
  pod["spec"]["nodeName"] = "n1";
  EXPECT_TRUE(IsRunnableOrSucceeded(pod));
  pod["status"]["phase"] = "Running";
  pod["metadata"]["deletionGracePeriodSeconds"] = 30;
  const absl::Time deleted = absl::FromUnixSeconds(1767225600) + absl::Minutes(10);
  EXPECT_TRUE(IsActivePod(pod, deleted + absl::Seconds(10)));
  // Stuck terminating past its grace period: it holds nothing any more.
  EXPECT_FALSE(IsActivePod(pod, deleted + absl::Seconds(31)));
  Json annotated = Pod({"a"});
  annotated["metadata"]["annotations"]["kueue.x-k8s.io/pod-group-name"] = "by-annotation";
  EXPECT_EQ(PodGroupName(annotated), "by-annotation");
}

}  // namespace
}  // namespace tollgate::manifest
