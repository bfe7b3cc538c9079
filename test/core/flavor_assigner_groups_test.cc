#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/time/time.h"
#include "core/cluster_state.h"
#include "core/flavor_assigner.h"
#include "gtest/gtest.h"

namespace tollgate::core {
namespace {

// Preemption never finds victims: the tests below are about which flavor fits.
class NoVictims : public PreemptionOracle {
 public:
  std::pair<PreemptionPossibility, int> SimulatePreemption(FrId, int64_t) override {
    return {PreemptionPossibility::kNoCandidates, 0};
  }
};

// A queue whose resource group covers `resources` with topology flavors "one" then "two", each
// over one node of ample capacity, and workloads whose pod sets may form pod-set groups.
class FlavorAssignerGroupsTest : public ::testing::Test {
 protected:
  FlavorAssignerGroupsTest() : state_(SchedulerConfig{}) {
    EXPECT_TRUE(state_.ApplyNamespace({"ns", {}}, now_).ok());
    EXPECT_TRUE(state_.ApplyTopology({"default", {kHostnameLabel}}, now_).ok());
    for (const std::string name : {"one", "two"}) {
      ResourceFlavorSpec flavor;
      flavor.name = name;
      flavor.node_labels = {{"node-group", name}};
      flavor.topology_name = "default";
      if (name == "one") flavor.node_taints = one_taints_;
      EXPECT_TRUE(state_.ApplyResourceFlavor(flavor, now_).ok());
      NodeSpec node;
      node.name = name + "-node";
      node.labels = {{"node-group", name}, {kHostnameLabel, node.name}};
      node.allocatable = {{"cpu", 64}, {"gpu", 64}, {"pods", 110}};
      EXPECT_TRUE(state_.UpsertNode(node, now_).ok());
    }
  }

  // Quota per flavor: {resource, nominal} for "one" and for "two".
  void AddQueue(std::vector<std::string> covered, ResourceAmounts one, ResourceAmounts two) {
    auto quotas = [](const ResourceAmounts& amounts) {
      std::vector<ResourceQuotaSpec> out;
      for (const auto& [resource, nominal] : amounts) {
        out.push_back({resource, nominal, std::nullopt, std::nullopt});
      }
      return out;
    };
    ClusterQueueSpec cq;
    cq.name = "cq";
    cq.resource_groups = {{std::move(covered), {{"one", quotas(one)}, {"two", quotas(two)}}}};
    ASSERT_TRUE(state_.ApplyClusterQueue(cq, now_).ok());
    ASSERT_TRUE(state_.ApplyLocalQueue({"ns", "q", "cq", StopPolicy::kNone, 1.0}, now_).ok());
  }

  static PodSetSpec PodSet(std::string name, int32_t count, ResourceAmounts requests,
                           std::optional<std::string> group) {
    PodSetSpec ps;
    ps.name = std::move(name);
    ps.count = count;
    ps.requests = std::move(requests);
    PodSetTopologyRequest request;
    request.required = kHostnameLabel;
    request.pod_set_group = std::move(group);
    ps.topology_request = request;
    return ps;
  }

  FlavorAssignment Assign(std::vector<PodSetSpec> pod_sets,
                          const FlavorScanProgress* resume_from = nullptr) {
    WorkloadSpec spec;
    spec.name = "lws";
    spec.namespace_name = "ns";
    spec.queue_name = "q";
    spec.pod_sets = std::move(pod_sets);
    now_ += absl::Milliseconds(1);
    EXPECT_TRUE(state_.Submit(std::move(spec), "", now_).ok());
    const Workload& wl = *state_.FindWorkload("ns/lws");
    NoVictims oracle;
    FlavorAssigner assigner(state_, *state_.cluster_queue("cq"), wl, oracle);
    if (resume_from != nullptr) assigner.ResumeFrom(*resume_from);
    return assigner.Assign({});
  }

  // "resource=flavor ..." of one pod set.
  static std::string Flavors(const PodSetFlavors& ps) {
    std::string out;
    for (const auto& [resource, flavor] : ps.flavors) {
      if (!out.empty()) out += " ";
      out += resource + "=" + flavor;
    }
    return out;
  }

  int64_t Usage(const FlavorAssignment& assignment, const std::string& flavor,
                const std::string& resource) {
    return FrUsageOf(assignment.usage, state_.fr_index().Find(flavor, resource).value_or(-1));
  }

  std::vector<Taint> one_taints_;
  absl::Time now_ = absl::FromUnixSeconds(1767225600);
  ClusterState state_;
};

TEST_F(FlavorAssignerGroupsTest, AGroupTakesTheFirstFlavorThatFitsItsTotal) {
  AddQueue({"cpu"}, {{"cpu", 4}}, {{"cpu", 9}});
  // 8 + 1 = 9 cpu: one (4) cannot hold the group, two (9) can. Pod set by pod set the leader
  // would have taken one.
  FlavorAssignment a =
      Assign({PodSet("worker", 4, {{"cpu", 2}}, "g"), PodSet("leader", 1, {{"cpu", 1}}, "g")});
  ASSERT_EQ(a.pod_sets.size(), 2u);
  EXPECT_EQ(a.RepresentativeMode(), FlavorMode::kFit);
  EXPECT_EQ(Flavors(a.pod_sets[0]), "cpu=two");
  EXPECT_EQ(Flavors(a.pod_sets[1]), "cpu=two");
  EXPECT_EQ(Usage(a, "two", "cpu"), 9);
  EXPECT_EQ(Usage(a, "one", "cpu"), 0);
}

TEST_F(FlavorAssignerGroupsTest, WithoutAGroupThePodSetsAreAssignedOneByOne) {
  AddQueue({"cpu"}, {{"cpu", 4}}, {{"cpu", 9}});
  FlavorAssignment a = Assign({PodSet("worker", 4, {{"cpu", 2}}, std::nullopt),
                               PodSet("leader", 1, {{"cpu", 1}}, std::nullopt)});
  ASSERT_EQ(a.pod_sets.size(), 2u);
  EXPECT_EQ(Flavors(a.pod_sets[0]), "cpu=two");
  EXPECT_EQ(Flavors(a.pod_sets[1]), "cpu=one");
}

TEST_F(FlavorAssignerGroupsTest, AGroupNoFlavorHoldsGetsNoFlavorAndSharesItsReasons) {
  AddQueue({"cpu", "gpu"}, {{"cpu", 4000}, {"gpu", 4}}, {{"cpu", 5000}, {"gpu", 0}});
  // cpu is in millicores. The group asks 5 cpu and 4 gpu: one lacks cpu, two lacks gpu. Alone, the
  // worker would take one and the leader two.
  FlavorAssignment a = Assign({PodSet("worker", 4, {{"cpu", 1000}, {"gpu", 1}}, "g"),
                               PodSet("leader", 1, {{"cpu", 1000}}, "g")});
  ASSERT_EQ(a.pod_sets.size(), 2u);
  EXPECT_EQ(a.RepresentativeMode(), FlavorMode::kNoFit);
  EXPECT_TRUE(a.pod_sets[0].flavors.empty());
  EXPECT_TRUE(a.pod_sets[1].flavors.empty());
  EXPECT_EQ(a.pod_sets[0].reasons, a.pod_sets[1].reasons);
  EXPECT_EQ(a.pod_sets[0].reasons,
            (std::vector<std::string>{
                "insufficient quota for cpu in flavor one, previously considered podsets requests "
                "(0) + current podset request (5) > maximum capacity (4)",
                "insufficient quota for gpu in flavor two, previously considered podsets requests "
                "(0) + current podset request (4) > maximum capacity (0)"}));
  EXPECT_TRUE(a.usage.empty());
  EXPECT_NE(a.Message().find("couldn't assign flavors to pod set leader: "), std::string::npos);
}

TEST_F(FlavorAssignerGroupsTest, AFlavorOnePodSetCannotUseIsSkippedForTheWholeGroup) {
  one_taints_ = {{"dedicated", "lws", "NoSchedule"}};
  // The fixture applied the flavors already: apply "one" again with its taint.
  ResourceFlavorSpec one;
  one.name = "one";
  one.node_labels = {{"node-group", "one"}};
  one.topology_name = "default";
  one.node_taints = one_taints_;
  ASSERT_TRUE(state_.ApplyResourceFlavor(one, now_).ok());
  AddQueue({"cpu"}, {{"cpu", 16}}, {{"cpu", 16}});
  PodSetSpec worker = PodSet("worker", 2, {{"cpu", 1}}, "g");
  worker.tolerations = {Toleration{"dedicated", "Equal", "lws", "NoSchedule"}};
  FlavorAssignment a = Assign({worker, PodSet("leader", 1, {{"cpu", 1}}, "g")});
  ASSERT_EQ(a.pod_sets.size(), 2u);
  EXPECT_EQ(a.RepresentativeMode(), FlavorMode::kFit);
  EXPECT_EQ(Flavors(a.pod_sets[0]), "cpu=two");
  EXPECT_EQ(Flavors(a.pod_sets[1]), "cpu=two");
}

TEST_F(FlavorAssignerGroupsTest, EachPodSetKeepsTheGroupFlavorsOfTheResourcesItRequests) {
  AddQueue({"cpu", "gpu"}, {{"cpu", 2}, {"gpu", 0}}, {{"cpu", 16}, {"gpu", 8}});
  FlavorAssignment a = Assign(
      {PodSet("leader", 1, {{"cpu", 1}}, "g"), PodSet("worker", 2, {{"cpu", 1}, {"gpu", 1}}, "g")});
  ASSERT_EQ(a.pod_sets.size(), 2u);
  EXPECT_EQ(Flavors(a.pod_sets[0]), "cpu=two");
  EXPECT_EQ(Flavors(a.pod_sets[1]), "cpu=two gpu=two");
  EXPECT_EQ(Usage(a, "two", "cpu"), 3);
  EXPECT_EQ(Usage(a, "two", "gpu"), 2);
}

TEST_F(FlavorAssignerGroupsTest, APodSetRequestingNothingTakesTheGroupsTopologyFlavors) {
  AddQueue({"gpu"}, {{"gpu", 0}}, {{"gpu", 8}});
  FlavorAssignment a =
      Assign({PodSet("leader", 1, {}, "g"), PodSet("worker", 2, {{"gpu", 1}}, "g")});
  ASSERT_EQ(a.pod_sets.size(), 2u);
  EXPECT_EQ(a.RepresentativeMode(), FlavorMode::kFit);
  EXPECT_EQ(Flavors(a.pod_sets[0]), "gpu=two");
  EXPECT_EQ(Flavors(a.pod_sets[1]), "gpu=two");
  // The leader takes no quota.
  EXPECT_EQ(Usage(a, "two", "gpu"), 2);
}

TEST_F(FlavorAssignerGroupsTest, GroupsAreAssignedInTheOrderOfTheirFirstPodSet) {
  AddQueue({"cpu"}, {{"cpu", 6}}, {{"cpu", 6}});
  // a and c (group g) are assigned together before b: they fill one, so b takes two. Pod set by
  // pod set, a and b would have filled one and c taken two.
  FlavorAssignment a =
      Assign({PodSet("a", 1, {{"cpu", 3}}, "g"), PodSet("b", 1, {{"cpu", 3}}, std::nullopt),
              PodSet("c", 1, {{"cpu", 3}}, "g")});
  ASSERT_EQ(a.pod_sets.size(), 3u);
  // Listed in spec order.
  EXPECT_EQ(a.pod_sets[0].name, "a");
  EXPECT_EQ(a.pod_sets[1].name, "b");
  EXPECT_EQ(a.pod_sets[2].name, "c");
  EXPECT_EQ(Flavors(a.pod_sets[0]), "cpu=one");
  EXPECT_EQ(Flavors(a.pod_sets[1]), "cpu=two");
  EXPECT_EQ(Flavors(a.pod_sets[2]), "cpu=one");
}

TEST_F(FlavorAssignerGroupsTest, AGroupResumesItsFlavorScanFromItsFirstPodSet) {
  AddQueue({"cpu"}, {{"cpu", 16}}, {{"cpu", 16}});
  auto lws = [] {
    return std::vector<PodSetSpec>{PodSet("leader", 1, {{"cpu", 1}}, "g"),
                                   PodSet("worker", 2, {{"cpu", 1}}, "g")};
  };
  // The leader's search stopped at one: the group starts after it.
  FlavorScanProgress leader_stopped;
  leader_stopped.stops = {FlavorScanStop{0, 0, 0}};
  FlavorAssignment a = Assign(lws(), &leader_stopped);
  ASSERT_EQ(a.pod_sets.size(), 2u);
  EXPECT_EQ(Flavors(a.pod_sets[0]), "cpu=two");
  EXPECT_EQ(Flavors(a.pod_sets[1]), "cpu=two");
}

TEST_F(FlavorAssignerGroupsTest, AGroupIgnoresTheScanProgressOfItsOtherPodSets) {
  AddQueue({"cpu"}, {{"cpu", 16}}, {{"cpu", 16}});
  // Only the worker (the group's second pod set) recorded a stop: Kueue reads the first's.
  FlavorScanProgress worker_stopped;
  worker_stopped.stops = {FlavorScanStop{1, 0, 0}};
  FlavorAssignment a =
      Assign({PodSet("leader", 1, {{"cpu", 1}}, "g"), PodSet("worker", 2, {{"cpu", 1}}, "g")},
             &worker_stopped);
  ASSERT_EQ(a.pod_sets.size(), 2u);
  EXPECT_EQ(Flavors(a.pod_sets[0]), "cpu=one");
  EXPECT_EQ(Flavors(a.pod_sets[1]), "cpu=one");
}

TEST_F(FlavorAssignerGroupsTest, EveryPodSetOfAGroupRecordsWhereTheGroupsSearchStopped) {
  AddQueue({"cpu"}, {{"cpu", 16}}, {{"cpu", 16}});
  // one fits: the search stops there with two left untried, for both pod sets.
  FlavorAssignment a =
      Assign({PodSet("leader", 1, {{"cpu", 1}}, "g"), PodSet("worker", 2, {{"cpu", 1}}, "g")});
  ASSERT_EQ(a.scan_stops.size(), 2u);
  EXPECT_EQ(a.scan_stops[0].pod_set, 0);
  EXPECT_EQ(a.scan_stops[1].pod_set, 1);
  EXPECT_EQ(a.scan_stops[0].flavor, 0);
  EXPECT_EQ(a.scan_stops[1].flavor, 0);
}

}  // namespace
}  // namespace tollgate::core
