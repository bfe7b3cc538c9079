#include "services/manifest/topology_enactment.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "services/manifest/topology_annotations.h"

namespace tollgate::manifest {
namespace {

using ::testing::ElementsAre;
using ::testing::Field;
using ::testing::IsEmpty;
using ::testing::Pair;
using ::testing::UnorderedElementsAre;

constexpr char kRack[] = "cloud.com/rack";
constexpr char kHost[] = "kubernetes.io/hostname";
constexpr char kIndexLabel[] = "batch.kubernetes.io/job-completion-index";

// An admitted workload "wl" whose pod set `pod_set` of `count` pods is placed on `domains`
// (values at `levels` and pod counts).
v1::Workload Placed(const std::string& pod_set, int count, std::vector<std::string> levels,
                    std::vector<std::pair<std::vector<std::string>, int>> domains,
                    bool index_label = true) {
  v1::Workload wl;
  wl.mutable_metadata()->set_name("wl");
  wl.mutable_metadata()->set_namespace_("ns");
  v1::PodSet* ps = wl.mutable_spec()->add_pod_sets();
  ps->set_name(pod_set);
  ps->set_count(count);
  ps->mutable_topology_request()->set_required(kRack);
  if (index_label) ps->mutable_topology_request()->set_pod_index_label(kIndexLabel);
  wl.mutable_status()->set_state(v1::WORKLOAD_STATE_ADMITTED);
  v1::PodSetAssignment* a = wl.mutable_status()->mutable_admission()->add_pod_set_assignments();
  a->set_name(pod_set);
  a->set_count(count);
  for (const std::string& level : levels) a->mutable_topology_assignment()->add_levels(level);
  for (const auto& [values, n] : domains) {
    v1::TopologyDomainAssignment* d = a->mutable_topology_assignment()->add_domains();
    for (const std::string& v : values) d->add_values(v);
    d->set_count(n);
  }
  return wl;
}

// A pod of pod set `pod_set`, gated unless `node_selector` is given, with index `index` (-1:
// no index label).
Json Pod(const std::string& name, const std::string& pod_set, int index,
         std::map<std::string, std::string> node_selector = {}) {
  Json pod = {{"metadata",
               {{"name", name},
                {"namespace", "ns"},
                {"resourceVersion", "5"},
                {"labels", {{std::string(kPodSetLabel), pod_set}}},
                {"annotations",
                 {{std::string(kWorkloadAnnotation), "wl"},
                  {std::string(kRequiredTopologyAnnotation), kRack}}}}},
              {"spec", Json::object()}};
  if (index >= 0) pod["metadata"]["labels"][kIndexLabel] = std::to_string(index);
  if (node_selector.empty()) {
    pod["spec"]["schedulingGates"] = Json::array({{{"name", kTopologySchedulingGate}}});
  } else {
    for (const auto& [k, v] : node_selector) pod["spec"]["nodeSelector"][k] = v;
  }
  return pod;
}

std::vector<std::pair<std::string, std::string>> HostsOf(const std::vector<PodUngate>& ungates) {
  std::vector<std::pair<std::string, std::string>> out;
  for (const PodUngate& u : ungates) {
    auto it = u.node_labels.find(kHost);
    out.emplace_back(u.pod, it == u.node_labels.end() ? "" : it->second);
  }
  return out;
}

TEST(PodsToUngateTest, PodsGoToTheDomainOfTheirRank) {
  const v1::Workload wl = Placed("main", 4, {kHost}, {{{"n1"}, 1}, {{"n2"}, 3}});
  // Names in the opposite order of the indexes: the index decides, not the name.
  const std::vector<Json> pods = {Pod("a", "main", 3), Pod("b", "main", 2), Pod("c", "main", 1),
                                  Pod("d", "main", 0)};
  EXPECT_THAT(HostsOf(PodsToUngate(wl, pods)),
              ElementsAre(Pair("a", "n2"), Pair("b", "n2"), Pair("c", "n2"), Pair("d", "n1")));
}

TEST(PodsToUngateTest, EveryLevelOfTheAssignmentBecomesANodeLabel) {
  const v1::Workload wl = Placed("main", 2, {"cloud.com/block", kRack}, {{{"b1", "r2"}, 2}});
  const std::vector<PodUngate> ungates = PodsToUngate(wl, {Pod("p0", "main", 0)});
  ASSERT_EQ(ungates.size(), 1u);
  EXPECT_THAT(ungates[0].node_labels,
              UnorderedElementsAre(Pair("cloud.com/block", "b1"), Pair(kRack, "r2")));
}

TEST(PodsToUngateTest, WithoutIndexLabelsPodsFillDomainsInOrderLessThoseReleased) {
  const v1::Workload wl =
      Placed("main", 4, {kHost}, {{{"n1"}, 2}, {{"n2"}, 2}}, /*index_label=*/false);
  // One pod already runs on n1: n1 has room for one more, n2 for two.
  const std::vector<Json> pods = {Pod("x", "main", -1, {{kHost, "n1"}}), Pod("a", "main", -1),
                                  Pod("b", "main", -1), Pod("c", "main", -1)};
  EXPECT_THAT(HostsOf(PodsToUngate(wl, pods)),
              ElementsAre(Pair("a", "n1"), Pair("b", "n2"), Pair("c", "n2")));
}

TEST(PodsToUngateTest, APodWithoutItsIndexMakesTheWholePodSetGreedy) {
  const v1::Workload wl = Placed("main", 2, {kHost}, {{{"n1"}, 1}, {{"n2"}, 1}});
  // Index 0 would go to n1; without ranks for every pod, name order fills n1 first.
  const std::vector<Json> pods = {Pod("a", "main", -1), Pod("b", "main", 0)};
  EXPECT_THAT(HostsOf(PodsToUngate(wl, pods)), ElementsAre(Pair("a", "n1"), Pair("b", "n2")));
}

TEST(PodsToUngateTest, AReleasedPodOutsideItsRanksDomainMakesThePodSetGreedy) {
  const v1::Workload wl = Placed("main", 2, {kHost}, {{{"n1"}, 1}, {{"n2"}, 1}});
  // Rank 0 belongs on n1 but runs on n2: ranks are not trusted, n1 gets the gated pod.
  const std::vector<Json> pods = {Pod("a", "main", 0, {{kHost, "n2"}}), Pod("b", "main", 1)};
  EXPECT_THAT(HostsOf(PodsToUngate(wl, pods)), ElementsAre(Pair("b", "n1")));
}

TEST(PodsToUngateTest, TheIndexOffsetAnnotationShiftsRanks) {
  const v1::Workload wl = Placed("main", 2, {kHost}, {{{"n1"}, 1}, {{"n2"}, 1}});
  std::vector<Json> pods = {Pod("a", "main", 10), Pod("b", "main", 11)};
  for (Json& pod : pods) pod["metadata"]["annotations"][kPodIndexOffsetAnnotation] = "10";
  EXPECT_THAT(HostsOf(PodsToUngate(wl, pods)), ElementsAre(Pair("a", "n1"), Pair("b", "n2")));
}

TEST(PodsToUngateTest, SubGroupsRankJobsOneAfterTheOther) {
  v1::Workload wl = Placed("workers", 4, {kHost}, {{{"n1"}, 2}, {{"n2"}, 2}});
  v1::PodSetTopologyRequest* request =
      wl.mutable_spec()->mutable_pod_sets(0)->mutable_topology_request();
  request->set_sub_group_index_label("jobset.sigs.k8s.io/job-index");
  request->set_sub_group_count(2);
  std::vector<Json> pods;
  for (int job = 0; job < 2; ++job) {
    for (int index = 0; index < 2; ++index) {
      Json pod = Pod("j" + std::to_string(job) + "-" + std::to_string(index), "workers", index);
      pod["metadata"]["labels"]["jobset.sigs.k8s.io/job-index"] = std::to_string(job);
      pods.push_back(pod);
    }
  }
  EXPECT_THAT(HostsOf(PodsToUngate(wl, pods)), ElementsAre(Pair("j0-0", "n1"), Pair("j0-1", "n1"),
                                                           Pair("j1-0", "n2"), Pair("j1-1", "n2")));
}

TEST(PodsToUngateTest, AGroupsLeaderTakesRankZeroAndItsWorkersFollow) {
  // LeaderWorkerSet: leader (1 pod, index 0) and workers (2 pods, indexes 1 and 2), one group.
  v1::Workload wl = Placed("leader", 1, {kHost}, {{{"n1"}, 1}});
  v1::PodSet* workers = wl.mutable_spec()->add_pod_sets();
  workers->set_name("workers");
  workers->set_count(2);
  workers->mutable_topology_request()->set_required(kRack);
  workers->mutable_topology_request()->set_pod_index_label(kIndexLabel);
  for (v1::PodSet& ps : *wl.mutable_spec()->mutable_pod_sets()) {
    ps.mutable_topology_request()->set_pod_set_group_name("group");
  }
  v1::PodSetAssignment* a = wl.mutable_status()->mutable_admission()->add_pod_set_assignments();
  a->set_name("workers");
  a->set_count(2);
  a->mutable_topology_assignment()->add_levels(kHost);
  for (const char* host : {"n2", "n3"}) {
    v1::TopologyDomainAssignment* d = a->mutable_topology_assignment()->add_domains();
    d->add_values(host);
    d->set_count(1);
  }
  const std::vector<Json> pods = {Pod("l", "leader", 0), Pod("w1", "workers", 1),
                                  Pod("w2", "workers", 2)};
  EXPECT_THAT(HostsOf(PodsToUngate(wl, pods)),
              ElementsAre(Pair("l", "n1"), Pair("w1", "n2"), Pair("w2", "n3")));
}

TEST(PodsToUngateTest, PodsOfAnUnhealthyNodeWaitForTheReplacement) {
  v1::Workload wl = Placed("main", 2, {kHost}, {{{"n1"}, 1}, {{"n2"}, 1}});
  wl.mutable_status()->add_unhealthy_nodes("n1");
  EXPECT_THAT(HostsOf(PodsToUngate(wl, {Pod("a", "main", 0), Pod("b", "main", 1)})),
              ElementsAre(Pair("b", "n2")));
}

TEST(PodsToUngateTest, NothingBeforeAdmissionAndNothingForTerminatedOrOtherPodSets) {
  v1::Workload wl = Placed("main", 1, {kHost}, {{{"n1"}, 1}});
  Json done = Pod("done", "main", 0);
  done["status"]["phase"] = "Failed";
  EXPECT_THAT(PodsToUngate(wl, {done, Pod("other", "side", 0)}), IsEmpty());
  wl.mutable_status()->set_state(v1::WORKLOAD_STATE_QUOTA_RESERVED);
  EXPECT_THAT(PodsToUngate(wl, {Pod("a", "main", 0)}), IsEmpty());
}

TEST(AddTopologyPodSetInfoTest, PlacedPodSetsAreGatedAndEveryPodSetNamesTheWorkload) {
  v1::Workload wl = Placed("main", 2, {kHost}, {{{"n1"}, 2}});
  wl.mutable_spec()->mutable_pod_sets(0)->clear_topology_request();
  wl.mutable_status()->mutable_admission()->add_pod_set_assignments()->set_name("side");
  std::vector<PodSetInfo> infos(2);
  infos[0].name = "main";
  infos[1].name = "side";
  AddTopologyPodSetInfo(wl, infos);
  EXPECT_THAT(infos[0].annotations,
              UnorderedElementsAre(Pair(std::string(kWorkloadAnnotation), "wl"),
                                   Pair(std::string(kUnconstrainedTopologyAnnotation), "true")));
  EXPECT_THAT(infos[0].scheduling_gates, ElementsAre(Json{{"name", kTopologySchedulingGate}}));
  EXPECT_THAT(infos[1].annotations,
              UnorderedElementsAre(Pair(std::string(kWorkloadAnnotation), "wl")));
  EXPECT_THAT(infos[1].scheduling_gates, IsEmpty());
}

TEST(UngatePatchTest, RemovesOnlyTheTopologyGateAndKeepsTheNodeSelector) {
  Json pod = Pod("a", "main", 0);
  pod["spec"]["schedulingGates"].push_back({{"name", "other"}});
  pod["spec"]["nodeSelector"] = {{"team", "a"}};
  const Json patch = UngatePatch(pod, {{kHost, "n1"}});
  EXPECT_EQ(patch, Json::parse(R"([
    {"op": "test", "path": "/metadata/resourceVersion", "value": "5"},
    {"op": "replace", "path": "/spec/schedulingGates", "value": [{"name": "other"}]},
    {"op": "add", "path": "/spec/nodeSelector",
     "value": {"kubernetes.io/hostname": "n1", "team": "a"}}])"));
  EXPECT_EQ(UngatePatch(Pod("b", "main", 0), {{kHost, "n1"}})[1],
            Json::parse(R"({"op": "remove", "path": "/spec/schedulingGates"})"));
}

TEST(IsTopologyPodTest, ReadsKueuesAnnotations) {
  EXPECT_TRUE(IsTopologyPod(Pod("a", "main", 0)));
  Json unconstrained = {
      {"metadata", {{"annotations", {{std::string(kUnconstrainedTopologyAnnotation), "true"}}}}}};
  EXPECT_TRUE(IsTopologyPod(unconstrained));
  EXPECT_FALSE(IsTopologyPod(Json{{"metadata", {{"annotations", {{"x", "y"}}}}}}));
  EXPECT_FALSE(IsTopologyPod(Json::object()));
}

}  // namespace
}  // namespace tollgate::manifest
