// Topology Aware Scheduling through the real cycle (ClusterState::PlanCycle/ApplyCycle): the
// behaviours of Kueue's scheduler_tas_test.go and test/integration/singlecluster/tas/, ported by
// reading them.

#include <map>
#include <string>
#include <utility>
#include <vector>

#include "absl/time/time.h"
#include "core/cluster_state.h"
#include "core/topology_validation.h"
#include "gtest/gtest.h"

namespace tollgate::core {
namespace {

constexpr char kBlock[] = "cloud.com/topology-block";
constexpr char kRack[] = "cloud.com/topology-rack";

class TopologySchedulingTest : public ::testing::Test {
 protected:
  explicit TopologySchedulingTest(SchedulerConfig config = {}) : state_(std::move(config)) {
    EXPECT_TRUE(state_.ApplyNamespace({"ns", {}}, now_).ok());
    EXPECT_TRUE(state_.ApplyTopology({"default", {kBlock, kRack, kHostnameLabel}}, now_).ok());
    ResourceFlavorSpec flavor;
    flavor.name = "tas-flavor";
    flavor.node_labels = {{"node-group", "tas"}};
    flavor.topology_name = "default";
    EXPECT_TRUE(state_.ApplyResourceFlavor(flavor, now_).ok());
  }

  void AddQueue(int64_t gpus, PreemptionPolicy within = PreemptionPolicy::kNever) {
    ClusterQueueSpec cq;
    cq.name = "cq";
    cq.resource_groups = {{{"gpu"}, {{"tas-flavor", {{"gpu", gpus, std::nullopt, std::nullopt}}}}}};
    cq.preemption.within_cluster_queue = within;
    ASSERT_TRUE(state_.ApplyClusterQueue(cq, now_).ok());
    ASSERT_TRUE(state_.ApplyLocalQueue({"ns", "q", "cq", StopPolicy::kNone, 1.0}, now_).ok());
  }

  void AddNode(const std::string& block, const std::string& rack, const std::string& host,
               int64_t gpus, const std::string& node_group = "tas") {
    NodeSpec n;
    n.name = host;
    n.labels = {{"node-group", node_group}, {kBlock, block}, {kRack, rack}, {kHostnameLabel, host}};
    n.allocatable = {{"gpu", gpus}, {"pods", 110}};
    ASSERT_TRUE(state_.UpsertNode(n, now_).ok());
  }

  void Submit(const std::string& name, int32_t pods, std::optional<PodSetTopologyRequest> request,
              int32_t priority = 0, std::vector<Toleration> tolerations = {},
              const std::string& queue = "q") {
    WorkloadSpec spec;
    spec.name = name;
    spec.namespace_name = "ns";
    spec.queue_name = queue;
    spec.priority = priority;
    PodSetSpec ps;
    ps.name = "main";
    ps.count = pods;
    ps.requests = {{"gpu", 1}};
    ps.tolerations = std::move(tolerations);
    if (request.has_value()) ps.topology_request = *request;
    spec.pod_sets = {ps};
    now_ += absl::Milliseconds(1);
    ASSERT_TRUE(state_.Submit(std::move(spec), "", now_).ok());
  }

  int Settle() {
    int cycles = 0;
    while (true) {
      CyclePlan plan = state_.PlanCycle(now_);
      state_.ApplyCycle(plan, now_);
      if (!plan.MadeProgress()) return cycles;
      ++cycles;
    }
  }

  const Workload& Get(const std::string& name) { return *state_.FindWorkload("ns/" + name); }

  // "host:count ..." of the first pod set's placement.
  std::string Placement(const std::string& name) {
    const Workload& wl = Get(name);
    if (!wl.status.admission.has_value() ||
        !wl.status.admission->pod_sets[0].topology_assignment.has_value()) {
      return "<none>";
    }
    std::string out;
    for (const TopologyDomainAssignment& d :
         wl.status.admission->pod_sets[0].topology_assignment->domains) {
      if (!out.empty()) out += " ";
      out += d.values.back() + ":" + std::to_string(d.count);
    }
    return out;
  }

  static PodSetTopologyRequest Required(std::string level) {
    PodSetTopologyRequest r;
    r.required = std::move(level);
    return r;
  }

  absl::Time now_ = absl::FromUnixSeconds(1767225600);
  ClusterState state_;
};

TEST_F(TopologySchedulingTest, AdmitsWithTheRackPlacementInTheAdmission) {
  AddQueue(16);
  AddNode("b1", "r1", "x1", 2);
  AddNode("b1", "r1", "x2", 2);
  AddNode("b1", "r2", "x3", 4);
  AddNode("b1", "r2", "x4", 4);
  Submit("job", 8, Required(kRack));
  Settle();
  EXPECT_EQ(Get("job").status.state, WorkloadState::kAdmitted);
  EXPECT_EQ(Placement("job"), "x3:4 x4:4");
}

TEST_F(TopologySchedulingTest, QuotaFitsButTopologyDoesNotStaysPendingWithKueuesMessage) {
  AddQueue(16);
  AddNode("b1", "r1", "x1", 4);
  AddNode("b1", "r2", "x2", 4);
  // 6 pods fit the quota and the block, but no rack.
  Submit("job", 6, Required(kRack));
  Settle();
  const Workload& wl = Get("job");
  EXPECT_EQ(wl.status.state, WorkloadState::kPending);
  EXPECT_NE(
      wl.status.pending_message.find(R"(topology "default" allows to fit only 4 out of 6 pod(s))"),
      std::string::npos)
      << wl.status.pending_message;
}

TEST_F(TopologySchedulingTest, ImpliedRequestInATopologyOnlyQueue) {
  AddQueue(16);
  AddNode("b1", "r1", "x1", 1);
  AddNode("b1", "r1", "x2", 4);
  Submit("job", 2, std::nullopt);
  Settle();
  // Least free capacity: the node with the least room that still holds both pods.
  EXPECT_EQ(Placement("job"), "x2:2");
}

TEST_F(TopologySchedulingTest, TwoHeadsOfOneCycleNeverClaimTheSameNode) {
  // Two queues in one cohort, each with quota to spare; one rack with room for one job.
  ResourceFlavorSpec flavor;
  flavor.name = "tas-flavor";
  flavor.node_labels = {{"node-group", "tas"}};
  flavor.topology_name = "default";
  for (const std::string name : {"cq-a", "cq-b"}) {
    ClusterQueueSpec cq;
    cq.name = name;
    cq.resource_groups = {{{"gpu"}, {{"tas-flavor", {{"gpu", 8, std::nullopt, std::nullopt}}}}}};
    ASSERT_TRUE(state_.ApplyClusterQueue(cq, now_).ok());
    ASSERT_TRUE(
        state_.ApplyLocalQueue({"ns", "q-" + name, name, StopPolicy::kNone, 1.0}, now_).ok());
  }
  AddNode("b1", "r1", "x1", 4);
  AddNode("b1", "r2", "x2", 4);
  for (const std::string q : {"q-cq-a", "q-cq-b"}) {
    ASSERT_NO_FATAL_FAILURE(Submit("job-" + q, 4, Required(kRack), 0, {}, q));
  }
  CyclePlan plan = state_.PlanCycle(now_);
  state_.ApplyCycle(plan, now_);
  // Both were evaluated against the same empty nodes; the second is recomputed onto the other
  // rack instead of taking x1 again.
  ASSERT_EQ(plan.admissions.size(), 2u);
  EXPECT_EQ(Placement("job-q-cq-a"), "x1:4");
  EXPECT_EQ(Placement("job-q-cq-b"), "x2:4");
}

SchedulerConfig WithoutTopologyRecompute() {
  SchedulerConfig config;
  config.tas_recompute_assignment_within_scheduling_cycle = false;
  return config;
}

// Kueue's TestScheduleForTASCohorts cases "...; TASRecomputeAssignmentWithinSchedulingCycle
// disabled" ("two workloads in cohort nominated to the same node", "two small workloads
// considered; there is only space for one of them on the initial node"): the second head, placed
// on nodes the first took in the same cycle, is skipped, not placed again; the next cycle
// evaluates it afresh.
class TopologyWithoutRecomputeTest : public TopologySchedulingTest {
 protected:
  TopologyWithoutRecomputeTest() : TopologySchedulingTest(WithoutTopologyRecompute()) {}
};

TEST_F(TopologyWithoutRecomputeTest, ASecondHeadOnTheSameNodesWaitsForTheNextCycle) {
  for (const std::string name : {"cq-a", "cq-b"}) {
    ClusterQueueSpec cq;
    cq.name = name;
    cq.resource_groups = {{{"gpu"}, {{"tas-flavor", {{"gpu", 8, std::nullopt, std::nullopt}}}}}};
    ASSERT_TRUE(state_.ApplyClusterQueue(cq, now_).ok());
    ASSERT_TRUE(
        state_.ApplyLocalQueue({"ns", "q-" + name, name, StopPolicy::kNone, 1.0}, now_).ok());
  }
  AddNode("b1", "r1", "x1", 4);
  AddNode("b1", "r2", "x2", 4);
  for (const std::string q : {"q-cq-a", "q-cq-b"}) {
    ASSERT_NO_FATAL_FAILURE(Submit("job-" + q, 4, Required(kRack), 0, {}, q));
  }
  CyclePlan plan = state_.PlanCycle(now_);
  state_.ApplyCycle(plan, now_);
  ASSERT_EQ(plan.admissions.size(), 1u);
  EXPECT_EQ(Placement("job-q-cq-a"), "x1:4");
  const Workload& second = Get("job-q-cq-b");
  EXPECT_EQ(second.status.state, WorkloadState::kPending);
  EXPECT_EQ(second.status.pending_message,
            "Workload no longer fits after processing another workload");
  plan = state_.PlanCycle(now_);
  state_.ApplyCycle(plan, now_);
  EXPECT_EQ(Placement("job-q-cq-b"), "x2:4");
}

TEST_F(TopologySchedulingTest, AHeadRecomputedForTopologyKeepsItsNominatedFlavorInItsCohort) {
  // Two topology flavors on their own racks; cq-a and cq-b in cohort "team" under "root". cq-b
  // has no quota of its own: it borrows tas-a from cq-a within "team" (borrowing level 1) and
  // tas-b from "team" itself (level 1), and with TryNextFlavor for borrowing takes the first.
  for (const std::string name : {"tas-a", "tas-b"}) {
    ResourceFlavorSpec flavor;
    flavor.name = name;
    flavor.node_labels = {{"node-group", name}};
    flavor.topology_name = "default";
    ASSERT_TRUE(state_.ApplyResourceFlavor(flavor, now_).ok());
    ASSERT_NO_FATAL_FAILURE(AddNode("b-" + name, "r-" + name, "x-" + name, 4, name));
  }
  // tas-a has room for both jobs, on two racks.
  ASSERT_NO_FATAL_FAILURE(AddNode("b-tas-a", "s-tas-a", "y-tas-a", 4, "tas-a"));
  auto quotas = [](int64_t a, int64_t b) {
    return std::vector<ResourceGroupSpec>{{{"gpu"},
                                           {{"tas-a", {{"gpu", a, std::nullopt, std::nullopt}}},
                                            {"tas-b", {{"gpu", b, std::nullopt, std::nullopt}}}}}};
  };
  ASSERT_TRUE(state_.ApplyCohort({"root", "", quotas(4, 0), 1.0}, now_).ok());
  ASSERT_TRUE(state_.ApplyCohort({"team", "root", quotas(0, 4), 1.0}, now_).ok());
  for (const auto& [name, a] :
       std::vector<std::pair<std::string, int64_t>>{{"cq-a", 4}, {"cq-b", 0}}) {
    ClusterQueueSpec cq;
    cq.name = name;
    cq.cohort = "team";
    cq.resource_groups = quotas(a, 0);
    cq.flavor_fungibility.when_can_borrow = WhenCanBorrow::kTryNextFlavor;
    ASSERT_TRUE(state_.ApplyClusterQueue(cq, now_).ok());
    ASSERT_TRUE(
        state_.ApplyLocalQueue({"ns", "q-" + name, name, StopPolicy::kNone, 1.0}, now_).ok());
  }
  for (const std::string q : {"q-cq-a", "q-cq-b"}) {
    ASSERT_NO_FATAL_FAILURE(Submit("job-" + q, 4, Required(kRack), 0, {}, q));
  }
  CyclePlan plan = state_.PlanCycle(now_);
  state_.ApplyCycle(plan, now_);
  // job-q-cq-a (no borrowing, first) takes a rack of tas-a and cq-a's quota; job-q-cq-b,
  // evaluated on the same empty nodes for tas-a, no longer fits that rack and is evaluated
  // again, in full (its cohort's usage changed): tas-a (which has a rack left) now comes from
  // "root" (level 2) while tas-b would come from "team" (level 1), but only its nominated
  // flavor is considered again (Kueue's NominationMapping), so it stays on tas-a.
  ASSERT_EQ(plan.admissions.size(), 2u);
  EXPECT_EQ(Placement("job-q-cq-a"), "x-tas-a:4");
  EXPECT_EQ(Placement("job-q-cq-b"), "y-tas-a:4");
  EXPECT_EQ(Get("job-q-cq-b").status.admission->pod_sets[0].flavors,
            (std::vector<std::pair<std::string, std::string>>{{"gpu", "tas-a"}}));
}

TEST_F(TopologySchedulingTest, FragmentationAwarePreemptionFreesOneRack) {
  AddQueue(10, PreemptionPolicy::kLowerPriority);
  AddNode("b1", "r1", "x1", 4);
  AddNode("b1", "r2", "x2", 4);
  // Two low-priority 3-pod jobs: one on each rack, one GPU left on each.
  Submit("low-1", 3, std::nullopt);
  Settle();
  Submit("low-2", 3, std::nullopt);
  Settle();
  ASSERT_EQ(Placement("low-1"), "x1:3");
  ASSERT_EQ(Placement("low-2"), "x2:3");
  // Quota for 4 more is free, but no rack has 4 free GPUs: one victim must go.
  Submit("high", 4, Required(kRack), /*priority=*/100);
  CyclePlan plan = state_.PlanCycle(now_);
  state_.ApplyCycle(plan, now_);
  ASSERT_EQ(plan.preemptions.size(), 1u);
  EXPECT_EQ(Get("high").status.pending_message,
            R"(couldn't assign flavors to pod set main: topology "default" allows to fit only 1 )"
            R"(out of 4 pod(s). Pending the preemption of 1 workload(s))");
  Settle();
  int evicted = 0;
  for (const std::string name : {"low-1", "low-2"}) {
    if (Get(name).status.state != WorkloadState::kAdmitted) ++evicted;
  }
  EXPECT_EQ(evicted, 1);
  EXPECT_EQ(Get("high").status.state, WorkloadState::kAdmitted);
}

TEST_F(TopologySchedulingTest, NodeFailureReplacesThePodsInsideTheRequiredRack) {
  AddQueue(16);
  AddNode("b1", "r1", "x1", 2);
  AddNode("b1", "r1", "x2", 2);
  AddNode("b1", "r1", "x3", 2);
  AddNode("b1", "r2", "x4", 8);
  // BestFit: r1 (6 free) is the tightest rack that holds 4 pods.
  Submit("job2", 4, Required(kRack));
  Settle();
  ASSERT_EQ(Placement("job2"), "x1:2 x2:2");
  // Kueue's node controller records the node; its scheduler replaces it in the next cycle.
  ASSERT_TRUE(state_.DeleteNode("x2", now_).ok());
  EXPECT_EQ(Placement("job2"), "x1:2 x2:2");
  EXPECT_EQ(Get("job2").status.history().unhealthy_nodes, std::vector<std::string>{"x2"});
  Settle();
  EXPECT_EQ(Get("job2").status.state, WorkloadState::kAdmitted);
  EXPECT_EQ(Placement("job2"), "x1:2 x3:2");
  EXPECT_TRUE(Get("job2").status.history().unhealthy_nodes.empty());
  // Another failure in r1 leaves no room there: the cycle evicts it with Kueue's reason (fail
  // fast), and the requeued workload is placed afresh on r2 in the same settle.
  ASSERT_TRUE(state_.DeleteNode("x3", now_).ok());
  Settle();
  const Workload& wl = Get("job2");
  EXPECT_EQ(wl.status.state, WorkloadState::kAdmitted);
  EXPECT_EQ(Placement("job2"), "x4:4");
  const Condition* evicted = FindCondition(wl.status, "Evicted");
  ASSERT_NE(evicted, nullptr);
  EXPECT_FALSE(evicted->status);
  EXPECT_EQ(evicted->message,
            "Previously: Workload was evicted as there was no replacement for unhealthy node(s): "
            "x3");
  // Kueue's resetUnhealthyNodes: an eviction forgets the failed nodes, so the requeued workload
  // is placed afresh, not as a replacement.
  EXPECT_TRUE(wl.status.history().unhealthy_nodes.empty());
}

// Kueue's TestScheduleForTAS "workload with unhealthyNode annotation; second pass; preferred; no
// fit" (TASFailedNodeReplacementFailFast off): the workload keeps its placement and record and
// a SecondPassFailed event, and its second pass is queued again after a backoff, which only
// its timer ends (not the capacity freed meanwhile).
class TopologyWithoutFailFastTest : public TopologySchedulingTest {
 protected:
  static SchedulerConfig WithoutFailFast() {
    SchedulerConfig config;
    config.tas_failed_node_replacement_fail_fast = false;
    return config;
  }
  TopologyWithoutFailFastTest() : TopologySchedulingTest(WithoutFailFast()) {}
};

TEST_F(TopologyWithoutFailFastTest, AFailedNodeWithoutReplacementIsTriedAgainAfterItsBackoff) {
  AddQueue(16);
  AddNode("b1", "r1", "x1", 2);
  AddNode("b1", "r1", "x2", 2);
  AddNode("b1", "r1", "x3", 2);
  Submit("job2", 4, Required(kRack));
  Settle();
  Submit("filler", 2, Required(kRack));
  Settle();
  ASSERT_EQ(Placement("job2"), "x1:2 x2:2");
  ASSERT_EQ(Placement("filler"), "x3:2");

  ASSERT_TRUE(state_.DeleteNode("x2", now_).ok());
  Settle();
  const Workload& wl = Get("job2");
  EXPECT_EQ(wl.status.state, WorkloadState::kAdmitted);
  EXPECT_EQ(Placement("job2"), "x1:2 x2:2");
  EXPECT_EQ(wl.status.history().unhealthy_nodes, std::vector<std::string>{"x2"});
  EXPECT_EQ(FindCondition(wl.status, "Evicted"), nullptr);
  ASSERT_FALSE(wl.status.events.empty());
  EXPECT_EQ(wl.status.events.back().reason, "SecondPassFailed");
  EXPECT_EQ(wl.status.events.back().message.rfind("couldn't assign flavors to pod set main: ", 0),
            0u)
      << wl.status.events.back().message;

  // Room appears at once, but the retry waits for its 2 s.
  ASSERT_TRUE(state_.Finish("ns/filler", "", now_).ok());
  Settle();
  EXPECT_EQ(Placement("job2"), "x1:2 x2:2");
  now_ += absl::Seconds(2) - absl::Milliseconds(1);
  EXPECT_FALSE(state_.FireTimers(now_));
  now_ += absl::Milliseconds(1);
  EXPECT_TRUE(state_.FireTimers(now_));
  Settle();
  EXPECT_EQ(Placement("job2"), "x1:2 x3:2");
  EXPECT_TRUE(Get("job2").status.history().unhealthy_nodes.empty());
  EXPECT_EQ(FindCondition(Get("job2").status, "Evicted"), nullptr);
}

// Kueue's evictWorkloadIfNeeded: a second node of the workload failing while the first still
// waits for its replacement evicts it, naming the recorded node first.
TEST_F(TopologySchedulingTest, ASecondFailedNodeBeforeTheReplacementEvicts) {
  AddQueue(16);
  AddNode("b1", "r1", "x1", 2);
  AddNode("b1", "r1", "x2", 2);
  AddNode("b1", "r1", "x3", 2);
  Submit("job2", 4, Required(kRack));
  Settle();
  ASSERT_EQ(Placement("job2"), "x1:2 x2:2");
  ASSERT_TRUE(state_.DeleteNode("x2", now_).ok());
  ASSERT_TRUE(state_.DeleteNode("x1", now_).ok());
  const Workload& wl = Get("job2");
  EXPECT_EQ(wl.status.state, WorkloadState::kPending);
  const Condition* evicted = FindCondition(wl.status, "Evicted");
  ASSERT_NE(evicted, nullptr);
  EXPECT_EQ(evicted->reason, "NodeFailures");
  EXPECT_EQ(evicted->message,
            "Workload eviction triggered due to multiple TAS assigned node failures, including: "
            "x2, x1");
  EXPECT_TRUE(wl.status.history().unhealthy_nodes.empty());
}

// Kueue's removeUnhealthyNodes: a node healthy again before the scheduler replaced it is
// forgotten, and the placement stays.
TEST_F(TopologySchedulingTest, ANodeReadyAgainBeforeTheCycleKeepsThePlacement) {
  AddQueue(16);
  AddNode("b1", "r1", "x1", 2);
  AddNode("b1", "r1", "x2", 2);
  AddNode("b1", "r1", "x3", 2);
  Submit("job2", 4, Required(kRack));
  Settle();
  ASSERT_EQ(Placement("job2"), "x1:2 x2:2");
  NodeSpec x2 = *state_.topology().FindNode("x2");
  x2.ready = false;
  ASSERT_TRUE(state_.UpsertNode(x2, now_).ok());
  EXPECT_EQ(Get("job2").status.history().unhealthy_nodes, std::vector<std::string>{"x2"});
  x2.ready = true;
  ASSERT_TRUE(state_.UpsertNode(x2, now_).ok());
  EXPECT_TRUE(Get("job2").status.history().unhealthy_nodes.empty());
  Settle();
  EXPECT_EQ(Placement("job2"), "x1:2 x2:2");
  EXPECT_EQ(FindCondition(Get("job2").status, "Evicted"), nullptr);
}

// Kueue's node controller records the failed node of every placement that is neither finished
// nor evicted, a reservation still waiting for its checks too; its scheduler replaces it only
// once the workload is admitted (needsSecondPassAfterNodeFailure).
TEST_F(TopologySchedulingTest,
       AReservationWaitingForItsChecksHasItsFailedNodeReplacedOnceAdmitted) {
  ASSERT_TRUE(
      state_.ApplyAdmissionCheck({"approval", "example.com/approval", std::nullopt}, now_).ok());
  ASSERT_TRUE(state_.SetAdmissionCheckActive("approval", true, "Active", "ready", now_).ok());
  ClusterQueueSpec cq;
  cq.name = "cq";
  cq.resource_groups = {{{"gpu"}, {{"tas-flavor", {{"gpu", 16, std::nullopt, std::nullopt}}}}}};
  cq.admission_checks = {{"approval", {}}};
  ASSERT_TRUE(state_.ApplyClusterQueue(cq, now_).ok());
  ASSERT_TRUE(state_.ApplyLocalQueue({"ns", "q", "cq", StopPolicy::kNone, 1.0}, now_).ok());
  AddNode("b1", "r1", "x1", 2);
  AddNode("b1", "r1", "x2", 2);
  AddNode("b1", "r1", "x3", 2);
  AddNode("b1", "r2", "x4", 8);
  Submit("job", 4, Required(kRack));
  Settle();
  ASSERT_EQ(Get("job").status.state, WorkloadState::kQuotaReserved);
  ASSERT_EQ(Placement("job"), "x1:2 x2:2");
  ASSERT_TRUE(state_.DeleteNode("x2", now_).ok());
  Settle();
  EXPECT_EQ(Get("job").status.state, WorkloadState::kQuotaReserved);
  EXPECT_EQ(Placement("job"), "x1:2 x2:2");
  EXPECT_EQ(Get("job").status.history().unhealthy_nodes, std::vector<std::string>{"x2"});
  CheckStateUpdate ready;
  ready.check = "approval";
  ready.state = CheckState::kReady;
  ASSERT_TRUE(state_.SetAdmissionCheckState("ns/job", std::move(ready), now_).ok());
  ASSERT_EQ(Get("job").status.state, WorkloadState::kAdmitted);
  Settle();
  EXPECT_EQ(Placement("job"), "x1:2 x3:2");
  EXPECT_TRUE(Get("job").status.history().unhealthy_nodes.empty());
}

// Kueue's FindTopologyAssignmentsForWorkload with TASHandleOverlappingFlavors: the pod sets of
// one workload on two hostname flavors over the same nodes see each other's pods.
TEST_F(TopologySchedulingTest, PodSetsOnSiblingFlavorsDoNotShareANodesRoom) {
  for (const std::string name : {"flavor-a", "flavor-b"}) {
    ResourceFlavorSpec flavor;
    flavor.name = name;
    flavor.node_labels = {{"node-group", "tas"}};
    flavor.node_taints = {{"example.com/flavor", name, "NoSchedule"}};
    flavor.topology_name = "default";
    ASSERT_TRUE(state_.ApplyResourceFlavor(flavor, now_).ok());
  }
  ClusterQueueSpec cq;
  cq.name = "cq";
  cq.resource_groups = {{{"gpu"},
                         {{"flavor-a", {{"gpu", 4, std::nullopt, std::nullopt}}},
                          {"flavor-b", {{"gpu", 4, std::nullopt, std::nullopt}}}}}};
  ASSERT_TRUE(state_.ApplyClusterQueue(cq, now_).ok());
  ASSERT_TRUE(state_.ApplyLocalQueue({"ns", "q", "cq", StopPolicy::kNone, 1.0}, now_).ok());
  AddNode("b1", "r1", "x1", 4);
  AddNode("b1", "r1", "x2", 4);
  WorkloadSpec spec;
  spec.name = "two-flavors";
  spec.namespace_name = "ns";
  spec.queue_name = "q";
  for (const std::string name : {"flavor-a", "flavor-b"}) {
    PodSetSpec ps;
    ps.name = name == "flavor-a" ? "ps-a" : "ps-b";
    ps.count = 3;
    ps.requests = {{"gpu", 1}};
    ps.tolerations = {{"example.com/flavor", "Equal", name, "NoSchedule", std::nullopt}};
    PodSetTopologyRequest preferred;
    preferred.preferred = std::string(kHostnameLabel);
    ps.topology_request = preferred;
    spec.pod_sets.push_back(ps);
  }
  ASSERT_TRUE(state_.Submit(std::move(spec), "", now_).ok());
  Settle();
  const Workload& wl = Get("two-flavors");
  ASSERT_EQ(wl.status.state, WorkloadState::kAdmitted);
  ASSERT_EQ(wl.status.admission->pod_sets.size(), 2u);
  std::map<std::string, int32_t> pods_per_host;
  for (const PodSetAssignment& psa : wl.status.admission->pod_sets) {
    ASSERT_TRUE(psa.topology_assignment.has_value());
    for (const TopologyDomainAssignment& d : psa.topology_assignment->domains) {
      pods_per_host[d.values.back()] += d.count;
    }
  }
  // Three pods of each pod set on two 4-GPU hosts: neither host takes more than four.
  EXPECT_EQ(pods_per_host["x1"] + pods_per_host["x2"], 6);
  EXPECT_LE(pods_per_host["x1"], 4);
  EXPECT_LE(pods_per_host["x2"], 4);
}

// Kueue's TASReplaceNodeOnPodTermination: a node that stops being ready fails a workload's
// placement there only once that workload's pods on it have ended.
TEST_F(TopologySchedulingTest, ANotReadyNodeFailsAPlacementOnceItsPodsThereEnd) {
  AddQueue(16);
  AddNode("b1", "r1", "x1", 2);
  AddNode("b1", "r1", "x2", 2);
  AddNode("b1", "r1", "x3", 2);
  Submit("job2", 4, Required(kRack));
  Settle();
  ASSERT_EQ(Placement("job2"), "x1:2 x2:2");
  NodeSpec x2 = *state_.topology().FindNode("x2");
  x2.ready = false;
  x2.running_workloads = {"ns/job2", "ns/other"};
  ASSERT_TRUE(state_.UpsertNode(x2, now_).ok());
  EXPECT_EQ(Placement("job2"), "x1:2 x2:2");
  EXPECT_TRUE(Get("job2").status.history().unhealthy_nodes.empty());
  // Another workload's pods ending changes nothing for this one.
  x2.running_workloads = {"ns/job2"};
  ASSERT_TRUE(state_.UpsertNode(x2, now_).ok());
  EXPECT_EQ(Placement("job2"), "x1:2 x2:2");
  // Its own pods there have ended: replaced inside the rack.
  x2.running_workloads.clear();
  ASSERT_TRUE(state_.UpsertNode(x2, now_).ok());
  Settle();
  EXPECT_EQ(Get("job2").status.state, WorkloadState::kAdmitted);
  EXPECT_EQ(Placement("job2"), "x1:2 x3:2");
}

// Kueue's TASReplaceNodeOnNodeTaints: a ready node that gets a NoSchedule or NoExecute taint the
// workload does not tolerate fails the placement there once the workload's pods there have
// ended; the pods go to another node of the rack (not the tainted one), or the workload is
// evicted.
TEST_F(TopologySchedulingTest, AnUntoleratedTaintFailsAPlacementOnceItsPodsThereEnd) {
  AddQueue(16);
  AddNode("b1", "r1", "x1", 2);
  AddNode("b1", "r1", "x2", 2);
  AddNode("b1", "r1", "x3", 2);
  AddNode("b1", "r2", "x4", 8);
  Submit("job2", 4, Required(kRack));
  Settle();
  ASSERT_EQ(Placement("job2"), "x1:2 x2:2");
  NodeSpec x2 = *state_.topology().FindNode("x2");
  x2.taints = {{"maintenance", "", "NoExecute"}};
  x2.running_workloads = {"ns/job2"};
  ASSERT_TRUE(state_.UpsertNode(x2, now_).ok());
  EXPECT_EQ(Placement("job2"), "x1:2 x2:2");
  // The pods were evicted by the taint: replaced inside the rack, on the untainted x3.
  x2.running_workloads.clear();
  ASSERT_TRUE(state_.UpsertNode(x2, now_).ok());
  Settle();
  EXPECT_EQ(Get("job2").status.state, WorkloadState::kAdmitted);
  EXPECT_EQ(Placement("job2"), "x1:2 x3:2");
  EXPECT_TRUE(Get("job2").status.history().unhealthy_nodes.empty());
  // A NoSchedule taint on x3 before its pods started: failed at once, and r1 has no room left:
  // the cycle evicts it (then places it afresh on r2).
  NodeSpec x3 = *state_.topology().FindNode("x3");
  x3.taints = {{"gpu-broken", "true", "NoSchedule"}};
  ASSERT_TRUE(state_.UpsertNode(x3, now_).ok());
  EXPECT_EQ(Get("job2").status.history().unhealthy_nodes, std::vector<std::string>{"x3"});
  Settle();
  const Workload& wl = Get("job2");
  EXPECT_EQ(Placement("job2"), "x4:4");
  const Condition* evicted = FindCondition(wl.status, "Evicted");
  ASSERT_NE(evicted, nullptr);
  EXPECT_EQ(evicted->message,
            "Previously: Workload was evicted as there was no replacement for unhealthy node(s): "
            "x3");
}

TEST_F(TopologySchedulingTest, ATaintTheWorkloadToleratesForGoodKeepsThePlacement) {
  AddQueue(16);
  AddNode("b1", "r1", "x1", 2);
  AddNode("b1", "r1", "x2", 2);
  AddNode("b1", "r1", "x3", 2);
  Toleration maintenance;
  maintenance.key = "maintenance";
  maintenance.op = "Exists";
  Toleration drain;
  drain.key = "drain";
  drain.op = "Exists";
  drain.effect = "NoExecute";
  drain.toleration_seconds = 60;
  Submit("job2", 4, Required(kRack), 0, {maintenance, drain});
  Settle();
  ASSERT_EQ(Placement("job2"), "x1:2 x2:2");
  NodeSpec x2 = *state_.topology().FindNode("x2");
  x2.taints = {{"maintenance", "", "NoExecute"}, {"slow", "", "PreferNoSchedule"}};
  ASSERT_TRUE(state_.UpsertNode(x2, now_).ok());
  EXPECT_EQ(Placement("job2"), "x1:2 x2:2");
  // A toleration for a while only is waited on like none: with no pods there, x1 fails.
  NodeSpec x1 = *state_.topology().FindNode("x1");
  x1.taints = {{"drain", "", "NoExecute"}};
  ASSERT_TRUE(state_.UpsertNode(x1, now_).ok());
  Settle();
  EXPECT_EQ(Placement("job2"), "x2:2 x3:2");
}

TEST_F(TopologySchedulingTest, MissingTopologyMakesTheQueueInactive) {
  ResourceFlavorSpec flavor;
  flavor.name = "other";
  flavor.topology_name = "missing";
  ASSERT_TRUE(state_.ApplyResourceFlavor(flavor, now_).ok());
  ClusterQueueSpec cq;
  cq.name = "cq2";
  cq.resource_groups = {{{"gpu"}, {{"other", {{"gpu", 1, std::nullopt, std::nullopt}}}}}};
  ASSERT_TRUE(state_.ApplyClusterQueue(cq, now_).ok());
  const ClusterQueueRuntime* runtime = state_.cluster_queue("cq2");
  EXPECT_FALSE(runtime->active);
  EXPECT_EQ(runtime->inactive_reason, "TopologyNotFound");
  EXPECT_EQ(runtime->inactive_message,
            R"(Can't admit new workloads: there is no Topology "missing" for TAS flavor "other".)");
  // A change of admission checks recomputes activity; the missing topology still counts.
  ASSERT_TRUE(
      state_.ApplyAdmissionCheck({"approval", "example.com/approval", std::nullopt}, now_).ok());
  ASSERT_TRUE(state_.SetAdmissionCheckActive("approval", true, "Active", "ready", now_).ok());
  EXPECT_FALSE(state_.cluster_queue("cq2")->active);
  EXPECT_EQ(state_.cluster_queue("cq2")->inactive_reason, "TopologyNotFound");
  ASSERT_TRUE(state_.ApplyTopology({"missing", {kHostnameLabel}}, now_).ok());
  EXPECT_TRUE(state_.cluster_queue("cq2")->active);
}

TEST_F(TopologySchedulingTest, BadInputNamesTheFieldAndChangesNothing) {
  const absl::Status hostname_not_lowest =
      state_.ApplyTopology({"t", {kHostnameLabel, kRack}}, now_);
  EXPECT_EQ(hostname_not_lowest.message(),
            "spec.levels[0].nodeLabel: the kubernetes.io/hostname label can only be used at the "
            "lowest level of topology");
  EXPECT_EQ(state_.topology().FindTopology("t"), nullptr);
  EXPECT_FALSE(state_.ApplyTopology({"t", {}}, now_).ok());
  EXPECT_EQ(state_.ApplyTopology({"t", {kRack, kRack}}, now_).message(),
            R"(spec.levels[1].nodeLabel: "cloud.com/topology-rack": must be unique)");
  // Levels of a topology without the hostname lowest cannot change.
  ASSERT_TRUE(state_.ApplyTopology({"t", {kBlock, kRack}}, now_).ok());
  EXPECT_FALSE(state_.ApplyTopology({"t", {kBlock}}, now_).ok());
  EXPECT_EQ(state_.topology().FindTopology("t")->levels.size(), 2u);

  PodSetTopologyRequest two;
  two.required = kRack;
  two.preferred = kBlock;
  EXPECT_EQ(ValidatePodSetTopologyRequest(two, 4, "spec.podSets[0]").message(),
            "spec.podSets[0].topologyRequest: must not contain more than one topology request: "
            "[required, preferred, unconstrained]");
  PodSetTopologyRequest slices;
  slices.required = kBlock;
  slices.slices = {{kRack, 4}, {kHostnameLabel, 3}};
  EXPECT_EQ(
      ValidatePodSetTopologyRequest(slices, 8, "spec.podSets[0]").message(),
      "spec.podSets[0].topologyRequest.podsetSliceRequiredTopologyConstraints[1].size: 3: must "
      "evenly divide the parent "
      "layer size 4");
  PodSetTopologyRequest too_big;
  too_big.slices = {{kRack, 16}};
  EXPECT_EQ(ValidatePodSetTopologyRequest(too_big, 8, "spec.podSets[0]").message(),
            "spec.podSets[0].topologyRequest.podSetSliceSize: 16: must not be greater than pod set "
            "count 8");
  // A Workload may group its pod sets without asking for a topology (Kueue's Workload webhook
  // asks for neither required nor preferred with a group; only a job's annotations do).
  PodSetTopologyRequest group_only;
  group_only.pod_set_group = "group1";
  EXPECT_TRUE(ValidatePodSetTopologyRequest(group_only, 4, "spec.podSets[0]").ok());
  // And with slices (a leader-worker group whose workers ask for host slices): Kueue refuses
  // the pair on a job's annotations only.
  PodSetTopologyRequest group_with_slices;
  group_with_slices.preferred = kRack;
  group_with_slices.slices = {{kHostnameLabel, 5}};
  group_with_slices.pod_set_group = "group1";
  EXPECT_TRUE(ValidatePodSetTopologyRequest(group_with_slices, 30, "spec.podSets[1]").ok());

  NodeSpec bad;
  bad.name = "Bad_Node";
  EXPECT_EQ(state_.UpsertNode(bad, now_).code(), absl::StatusCode::kInvalidArgument);
  EXPECT_TRUE(state_.topology().nodes().empty());
}

TEST_F(TopologySchedulingTest, FlavorMatchingFollowsTheTopologyRequest) {
  // A quota-only flavor first, the topology flavor second (Kueue's "workload requiring TAS
  // skips the non-TAS flavor" and "workload which does not need TAS skips the TAS flavor").
  ASSERT_TRUE(state_.ApplyResourceFlavor({"plain", {}, {}, {}}, now_).ok());
  ClusterQueueSpec cq;
  cq.name = "cq";
  cq.resource_groups = {{{"gpu"},
                         {{"plain", {{"gpu", 4, std::nullopt, std::nullopt}}},
                          {"tas-flavor", {{"gpu", 4, std::nullopt, std::nullopt}}}}}};
  ASSERT_TRUE(state_.ApplyClusterQueue(cq, now_).ok());
  ASSERT_TRUE(state_.ApplyLocalQueue({"ns", "q", "cq", StopPolicy::kNone, 1.0}, now_).ok());
  AddNode("b1", "r1", "x1", 4);
  Submit("tas", 2, Required(kRack));
  Submit("plain", 2, std::nullopt);
  Settle();
  ASSERT_EQ(Get("tas").status.state, WorkloadState::kAdmitted);
  EXPECT_EQ(Get("tas").status.admission->pod_sets[0].flavors[0].second, "tas-flavor");
  EXPECT_EQ(Placement("tas"), "x1:2");
  ASSERT_EQ(Get("plain").status.state, WorkloadState::kAdmitted);
  EXPECT_EQ(Get("plain").status.admission->pod_sets[0].flavors[0].second, "plain");
  EXPECT_EQ(Placement("plain"), "<none>");
}

TEST_F(TopologySchedulingTest, UnknownLevelDoesNotMatchTheFlavor) {
  AddQueue(16);
  AddNode("b1", "r1", "x1", 4);
  Submit("job", 1, Required("cloud.com/non-existing"));
  Settle();
  EXPECT_EQ(Get("job").status.state, WorkloadState::kPending);
  EXPECT_EQ(Get("job").status.pending_message,
            R"(couldn't assign flavors to pod set main: Flavor "tas-flavor" does not contain )"
            R"(the requested level)");
}

TEST_F(TopologySchedulingTest, PodsTollgateDoesNotPlaceTakeCapacity) {
  AddQueue(16);
  AddNode("b1", "r1", "x1", 4);
  ASSERT_TRUE(state_.ReportPod("kube-system/daemon", "x1", {{"gpu", 2}}, now_).ok());
  Submit("job", 3, Required(kHostnameLabel));
  Settle();
  EXPECT_EQ(Get("job").status.state, WorkloadState::kPending);
  ASSERT_TRUE(state_.RemovePod("kube-system/daemon", now_).ok());
  Settle();
  EXPECT_EQ(Placement("job"), "x1:3");
}

TEST_F(TopologySchedulingTest, AnAdmissionPlannedBeforeANodeChangeCountsItsPlacementByName) {
  AddQueue(16);
  AddNode("b1", "r1", "x1", 4);
  AddNode("b1", "r1", "x2", 4);
  Submit("a", 4, Required(kHostnameLabel));
  CyclePlan plan = state_.PlanCycle(now_);
  ASSERT_EQ(plan.admissions.size(), 1u);
  ASSERT_EQ(plan.admissions[0].topology_leaves.size(), 1u);
  // A new node rebuilds the flavor's tree: the leaves the plan carries index the old one.
  AddNode("b1", "r2", "x3", 4);
  state_.ApplyCycle(plan, now_);
  const std::string a = Placement("a");
  ASSERT_EQ(a.size(), 4u) << a;  // "xN:4"
  // Counted by the host's name on the new tree: the next job does not get the same host.
  Submit("b", 4, Required(kHostnameLabel));
  Settle();
  EXPECT_EQ(Get("b").status.state, WorkloadState::kAdmitted);
  EXPECT_NE(Placement("b").substr(0, 2), a.substr(0, 2));
  int64_t used = 0;
  for (const TopologyFlavor::DomainCapacity& d :
       state_.topology().Flavor("tas-flavor")->Capacities()) {
    if (d.values.size() != 3 || d.values.back() != a.substr(0, 2)) continue;
    for (const auto& [resource, amount] : d.used) {
      if (resource == "gpu") used = amount;
    }
  }
  EXPECT_EQ(used, 4);
}

TEST_F(TopologySchedulingTest, APlanNeverAppliedLeavesItsPlacementsUncounted) {
  AddQueue(16);
  AddNode("b1", "r1", "x1", 4);
  Submit("a", 4, Required(kHostnameLabel));
  // The cycle holds the placement it planned for the admission (taken over when applied):
  // dropped, the plan counts nothing once the trees are read.
  { ASSERT_EQ(state_.PlanCycle(now_).admissions.size(), 1u); }
  auto gpu_used = [this] {
    int64_t used = 0;
    for (const TopologyFlavor::DomainCapacity& d :
         state_.topology().Flavor("tas-flavor")->Capacities()) {
      if (d.values.size() != 3) continue;
      for (const auto& [resource, amount] : d.used) {
        if (resource == "gpu") used += amount;
      }
    }
    return used;
  };
  EXPECT_EQ(gpu_used(), 0);
  Settle();
  EXPECT_EQ(Placement("a"), "x1:4");
  EXPECT_EQ(gpu_used(), 4);
}

}  // namespace
}  // namespace tollgate::core
