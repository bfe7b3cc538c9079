// Kueue's placement cases (pkg/cache/scheduler/tas_cache_test.go, TestFindTopologyAssignments),
// ported by reading them: the same node trees, requests and expected assignments or messages.
// Kueue's default feature gates apply (TASProfileMixed on: unconstrained requests use least free
// capacity; balanced placement and preferred affinity off).

#include <optional>
#include <string>
#include <vector>

#include "core/topology_flavor.h"
#include "gtest/gtest.h"
#include "test/core/topology_test_support.h"

namespace tollgate::core {
namespace {

using topology_test::Describe;
using topology_test::kBlock;
using topology_test::kRack;
constexpr int64_t kGi = int64_t{1} << 30;

const std::vector<std::string> kThreeLevels = {kBlock, kRack, kHostnameLabel};
const std::vector<std::string> kTwoLevels = {kBlock, kRack};
const std::vector<std::string> kHostOnly = {kHostnameLabel};

NodeSpec Node(std::string name, Labels labels, int64_t cpu_milli, int64_t pods,
              int64_t memory = 0) {
  NodeSpec n;
  n.name = std::move(name);
  n.labels = std::move(labels);
  n.allocatable.emplace_back("cpu", cpu_milli);
  if (memory > 0) n.allocatable.emplace_back("memory", memory);
  n.allocatable.emplace_back("pods", pods);
  return n;
}

NodeSpec Host(std::string block, std::string rack, std::string host, int64_t cpu_milli,
              int64_t pods = 10, int64_t memory = 0) {
  return Node(block + "-" + rack + "-" + host,
              {{kBlock, block}, {kRack, rack}, {kHostnameLabel, host}}, cpu_milli, pods, memory);
}

//      b1                   b2
//   /      \             /      \ .
//  r1       r2          r1       r2
//  |      /  |  \       |         |
//  x3    x5  x1  x6     x2       x4
std::vector<NodeSpec> DefaultNodes() {
  return {Host("b1", "r1", "x3", 1000, 10, kGi), Host("b1", "r2", "x5", 1000, 10, kGi),
          Host("b1", "r2", "x1", 1000, 10, kGi), Host("b1", "r2", "x6", 1000, 10, kGi),
          Host("b2", "r1", "x2", 1000, 10, kGi), Host("b2", "r2", "x4", 2000, 40, 4 * kGi)};
}

//       b1           b2
//       |             |
//       r1           r1
//     /  |  \       /  \ .
//   x3  x5  x1     x6  x2
std::vector<NodeSpec> ScatteredNodes() {
  return {Host("b1", "r1", "x3", 4000, 10, kGi), Host("b1", "r1", "x5", 1000, 10, kGi),
          Host("b1", "r1", "x1", 1000, 10, kGi), Host("b2", "r1", "x6", 2000, 10, kGi),
          Host("b2", "r1", "x2", 1000, 10, kGi)};
}

//           b1                    b2
//       /        \             /      \ .
//      r1         r2          r1       r2
//     /  \      /   \        /   \    /   \ .
//    x3   x5   x1    x6     x2   x4  x7    x8
std::vector<NodeSpec> BinaryTreeNodes() {
  return {Host("b1", "r1", "x3", 1000, 10, kGi), Host("b1", "r1", "x5", 1000, 10, kGi),
          Host("b1", "r2", "x1", 1000, 10, kGi), Host("b1", "r2", "x6", 1000, 10, kGi),
          Host("b2", "r1", "x2", 1000, 10, kGi), Host("b2", "r1", "x4", 1000, 10, kGi),
          Host("b2", "r2", "x7", 1000, 10, kGi), Host("b2", "r2", "x8", 1000, 10, kGi)};
}

struct PodSetCase {
  std::string name = "main";
  std::optional<PodSetTopologyRequest> request;
  bool implied = false;
  ResourceAmounts per_pod = {{"cpu", 1000}};
  int32_t count = 1;
  Labels node_selector;
  std::vector<Toleration> tolerations;
  std::optional<TopologyAssignment> want;
};

struct Case {
  std::string name;
  std::vector<NodeSpec> nodes;
  std::vector<std::string> levels;
  Labels flavor_node_labels;
  std::vector<PodSetCase> pod_sets;
  std::string want_failure;
};

PodSetTopologyRequest Required(std::string level) {
  PodSetTopologyRequest r;
  r.required = std::move(level);
  return r;
}
PodSetTopologyRequest Preferred(std::string level) {
  PodSetTopologyRequest r;
  r.preferred = std::move(level);
  return r;
}
PodSetTopologyRequest Unconstrained() {
  PodSetTopologyRequest r;
  r.unconstrained = true;
  return r;
}
PodSetTopologyRequest WithSlices(PodSetTopologyRequest r, std::vector<SliceConstraint> slices) {
  r.slices = std::move(slices);
  return r;
}
PodSetTopologyRequest InGroup(PodSetTopologyRequest r, std::string group) {
  r.pod_set_group = std::move(group);
  return r;
}

TopologyAssignment Hosts(std::vector<std::pair<std::string, int32_t>> domains) {
  TopologyAssignment a;
  a.levels = kHostOnly;
  for (auto& [host, count] : domains) a.domains.push_back({{host}, count});
  return a;
}

TopologyAssignment Domains(std::vector<std::string> levels,
                           std::vector<std::pair<std::vector<std::string>, int32_t>> domains) {
  TopologyAssignment a;
  a.levels = std::move(levels);
  for (auto& [values, count] : domains) a.domains.push_back({values, count});
  return a;
}

void RunCase(const Case& c) {
  SCOPED_TRACE(c.name);
  TopologySpec topology{"default", c.levels};
  ResourceFlavorSpec flavor;
  flavor.name = "tas-flavor";
  flavor.node_labels = c.flavor_node_labels;
  std::vector<const NodeSpec*> nodes;
  for (const NodeSpec& n : c.nodes) nodes.push_back(&n);
  TopologyFlavor tf(topology, flavor, nodes);
  std::vector<TopologyPlacementRequest> requests;
  for (const PodSetCase& ps : c.pod_sets) {
    TopologyPlacementRequest r;
    r.pod_set = ps.name;
    r.count = ps.count;
    r.per_pod = ps.per_pod;
    r.request = ps.request.has_value() ? &*ps.request : nullptr;
    r.implied = ps.implied;
    r.node_selector = &ps.node_selector;
    r.tolerations = ps.tolerations;
    requests.push_back(std::move(r));
  }
  TopologyPlacementResult result = tf.FindAssignments(requests, /*simulate_empty=*/false);
  EXPECT_EQ(result.failure, c.want_failure);
  if (!c.want_failure.empty()) return;
  for (size_t i = 0; i < c.pod_sets.size(); ++i) {
    ASSERT_TRUE(result.assignments[i].has_value()) << c.pod_sets[i].name;
    EXPECT_EQ(*result.assignments[i], *c.pod_sets[i].want)
        << c.pod_sets[i].name << ": got " << Describe(*result.assignments[i]) << " want "
        << Describe(*c.pod_sets[i].want);
  }
}

TEST(TopologyPlacementTest, KueueCases) {
  std::vector<Case> cases;
  {
    //       b1
    //   /   |    \ .
    //  r1   r2   r3
    //  |     |    |   \   \     \ .
    // x3:2,x5:2,x1:1,x6:1,x2:1,x4:1
    Case c;
    c.name = "minimize the number of used racks before optimizing the number of nodes";
    c.nodes = {Host("b1", "r1", "x3", 2000), Host("b1", "r2", "x5", 2000, 20),
               Host("b1", "r3", "x1", 1000), Host("b1", "r3", "x6", 1000),
               Host("b1", "r3", "x2", 1000), Host("b1", "r3", "x4", 1000)};
    c.levels = kThreeLevels;
    PodSetCase ps;
    ps.request = Required(kBlock);
    ps.count = 4;
    ps.want = Hosts({{"x1", 1}, {"x2", 1}, {"x4", 1}, {"x6", 1}});
    c.pod_sets = {ps};
    cases.push_back(c);
  }
  {
    Case c;
    c.name = "choose the node that can accommodate all Pods";
    c.nodes = {Host("b1", "r1", "x3", 2000), Host("b1", "r1", "x5", 1000),
               Host("b1", "r1", "x1", 1000)};
    c.levels = kThreeLevels;
    PodSetCase ps;
    ps.request = Required(kBlock);
    ps.count = 2;
    ps.want = Hosts({{"x3", 2}});
    c.pod_sets = {ps};
    cases.push_back(c);
  }
  {
    Case c;
    c.name = "implied unconstrained: 6 pods scattered over the hosts with least free capacity";
    c.nodes = ScatteredNodes();
    c.levels = kThreeLevels;
    PodSetCase ps;
    ps.implied = true;
    ps.count = 6;
    ps.want = Hosts({{"x1", 1}, {"x3", 1}, {"x5", 1}, {"x2", 1}, {"x6", 2}});
    c.pod_sets = {ps};
    cases.push_back(c);
  }
  {
    Case c;
    c.name = "unconstrained: 6 pods scattered even though one rack could hold them";
    c.nodes = ScatteredNodes();
    c.levels = kThreeLevels;
    PodSetCase ps;
    ps.request = Unconstrained();
    ps.count = 6;
    ps.want = Hosts({{"x1", 1}, {"x3", 1}, {"x5", 1}, {"x2", 1}, {"x6", 2}});
    c.pod_sets = {ps};
    cases.push_back(c);
  }
  {
    Case c;
    c.name = "unconstrained; a single pod fits into each host";
    c.nodes = DefaultNodes();
    c.levels = kThreeLevels;
    PodSetCase ps;
    ps.request = Unconstrained();
    ps.want = Hosts({{"x3", 1}});
    c.pod_sets = {ps};
    cases.push_back(c);
  }
  {
    Case c;
    c.name = "block required; 4 pods fit into one host each";
    c.nodes = BinaryTreeNodes();
    c.levels = kThreeLevels;
    PodSetCase ps;
    ps.request = Required(kBlock);
    ps.count = 4;
    ps.want = Hosts({{"x3", 1}, {"x5", 1}, {"x1", 1}, {"x6", 1}});
    c.pod_sets = {ps};
    cases.push_back(c);
  }
  {
    Case c;
    c.name = "host required; single Pod fits in the host";
    c.nodes = DefaultNodes();
    c.levels = kThreeLevels;
    PodSetCase ps;
    ps.request = Required(kHostnameLabel);
    ps.want = Hosts({{"x3", 1}});
    c.pod_sets = {ps};
    cases.push_back(c);
  }
  {
    Case c;
    c.name = "rack required; single Pod fits in a rack";
    c.nodes = DefaultNodes();
    c.levels = kTwoLevels;
    PodSetCase ps;
    ps.request = Required(kRack);
    ps.want = Domains(kTwoLevels, {{{"b1", "r1"}, 1}});
    c.pod_sets = {ps};
    cases.push_back(c);
  }
  {
    Case c;
    c.name = "rack required; multiple Pods fit in a rack";
    c.nodes = DefaultNodes();
    c.levels = kTwoLevels;
    PodSetCase ps;
    ps.request = Required(kRack);
    ps.count = 3;
    ps.want = Domains(kTwoLevels, {{{"b1", "r2"}, 3}});
    c.pod_sets = {ps};
    cases.push_back(c);
  }
  {
    Case c;
    c.name = "block preferred; Pods fit in 2 blocks";
    c.nodes = {Node("b1", {{kBlock, "b1"}}, 2000, 20), Node("b2", {{kBlock, "b2"}}, 1000, 10),
               Node("b3", {{kBlock, "b3"}}, 4000, 40)};
    c.levels = {kBlock};
    PodSetCase ps;
    ps.request = Preferred(kBlock);
    ps.count = 5;
    ps.want = Domains({kBlock}, {{{"b2"}, 1}, {{"b3"}, 4}});
    c.pod_sets = {ps};
    cases.push_back(c);
  }
  {
    Case c;
    c.name = "rack required; multiple Pods fit in some racks";
    c.nodes = DefaultNodes();
    c.levels = kTwoLevels;
    PodSetCase ps;
    ps.request = Required(kRack);
    ps.count = 2;
    ps.want = Domains(kTwoLevels, {{{"b2", "r2"}, 2}});
    c.pod_sets = {ps};
    cases.push_back(c);
  }
  {
    Case c;
    c.name = "rack required; too many pods to fit in any rack";
    c.nodes = DefaultNodes();
    c.levels = kTwoLevels;
    PodSetCase ps;
    ps.request = Required(kRack);
    ps.count = 4;
    c.pod_sets = {ps};
    c.want_failure = R"(topology "default" allows to fit only 3 out of 4 pod(s))";
    cases.push_back(c);
  }
  {
    Case c;
    c.name = "block required; single Pod fits in a block and a single rack";
    c.nodes = DefaultNodes();
    c.levels = kTwoLevels;
    PodSetCase ps;
    ps.request = Required(kBlock);
    ps.want = Domains(kTwoLevels, {{{"b2", "r1"}, 1}});
    c.pod_sets = {ps};
    cases.push_back(c);
  }
  {
    Case c;
    c.name = "block required; Pods fit in a block spread across two racks";
    c.nodes = DefaultNodes();
    c.levels = kTwoLevels;
    PodSetCase ps;
    ps.request = Required(kBlock);
    ps.count = 4;
    ps.want = Domains(kTwoLevels, {{{"b1", "r1"}, 1}, {{"b1", "r2"}, 3}});
    c.pod_sets = {ps};
    cases.push_back(c);
  }
  {
    Case c;
    c.name = "block required; single Pod which cannot be split";
    c.nodes = DefaultNodes();
    c.levels = kTwoLevels;
    PodSetCase ps;
    ps.request = Required(kBlock);
    ps.per_pod = {{"cpu", 4000}};
    c.pod_sets = {ps};
    c.want_failure =
        R"(topology "default" doesn't allow to fit any of 1 pod(s). Total nodes: 4; excluded: resource "cpu": 4)";
    cases.push_back(c);
  }
  {
    Case c;
    c.name = "block required; too many Pods to fit requested";
    c.nodes = DefaultNodes();
    c.levels = kTwoLevels;
    PodSetCase ps;
    ps.request = Required(kBlock);
    ps.count = 5;
    c.pod_sets = {ps};
    c.want_failure = R"(topology "default" allows to fit only 4 out of 5 pod(s))";
    cases.push_back(c);
  }
  {
    Case c;
    c.name = "rack required; single Pod requiring memory";
    c.nodes = DefaultNodes();
    c.levels = kTwoLevels;
    PodSetCase ps;
    ps.request = Required(kRack);
    ps.per_pod = {{"memory", 1024}};
    ps.count = 4;
    ps.want = Domains(kTwoLevels, {{{"b1", "r1"}, 4}});
    c.pod_sets = {ps};
    cases.push_back(c);
  }
  {
    Case c;
    c.name = "rack preferred; but only block can accommodate the workload";
    c.nodes = DefaultNodes();
    c.levels = kTwoLevels;
    PodSetCase ps;
    ps.request = Preferred(kRack);
    ps.count = 4;
    ps.want = Domains(kTwoLevels, {{{"b1", "r1"}, 1}, {{"b1", "r2"}, 3}});
    c.pod_sets = {ps};
    cases.push_back(c);
  }
  {
    Case c;
    c.name = "rack preferred; but only multiple blocks can accommodate the workload";
    c.nodes = DefaultNodes();
    c.levels = kTwoLevels;
    PodSetCase ps;
    ps.request = Preferred(kRack);
    ps.count = 6;
    ps.want = Domains(kTwoLevels, {{{"b1", "r1"}, 1}, {{"b1", "r2"}, 3}, {{"b2", "r2"}, 2}});
    c.pod_sets = {ps};
    cases.push_back(c);
  }
  {
    Case c;
    c.name = "block preferred; but the workload cannot be accommodated in the entire topology";
    c.nodes = DefaultNodes();
    c.levels = kTwoLevels;
    PodSetCase ps;
    ps.request = Preferred(kBlock);
    ps.count = 10;
    c.pod_sets = {ps};
    c.want_failure = R"(topology "default" allows to fit only 7 out of 10 pod(s))";
    cases.push_back(c);
  }
  {
    Case c;
    c.name = "only nodes with matching labels are considered; no matching node";
    c.nodes = {Node("b1-r1-x3", {{"zone", "zone-a"}, {kHostnameLabel, "x3"}}, 1000, 10)};
    c.levels = kHostOnly;
    c.flavor_node_labels = {{"zone", "zone-b"}};
    PodSetCase ps;
    ps.request = Required(kHostnameLabel);
    c.pod_sets = {ps};
    c.want_failure = "no topology domains at level: kubernetes.io/hostname";
    cases.push_back(c);
  }
  {
    Case c;
    c.name = "only nodes with matching levels are considered; no host label on node";
    c.nodes = {Node("b1-r1-x3", {{kBlock, "b1"}, {kRack, "r1"}}, 1000, 10)};
    c.levels = kThreeLevels;
    PodSetCase ps;
    ps.request = Required(kRack);
    c.pod_sets = {ps};
    c.want_failure = "no topology domains at level: cloud.com/topology-rack";
    cases.push_back(c);
  }
  {
    Case c;
    c.name = "no assignment as node is not ready";
    NodeSpec n = Node("b1-r1-x3", {{"zone", "zone-a"}, {kHostnameLabel, "x3"}}, 1000, 10);
    n.ready = false;
    c.nodes = {n};
    c.levels = kHostOnly;
    PodSetCase ps;
    ps.request = Required(kHostnameLabel);
    c.pod_sets = {ps};
    c.want_failure = "no topology domains at level: kubernetes.io/hostname";
    cases.push_back(c);
  }
  {
    Case c;
    c.name = "no assignment as node is unschedulable";
    NodeSpec n = Node("b1-r1-x3", {{"zone", "zone-a"}, {kHostnameLabel, "x3"}}, 1000, 10);
    n.unschedulable = true;
    c.nodes = {n};
    c.levels = kHostOnly;
    PodSetCase ps;
    ps.request = Required(kHostnameLabel);
    c.pod_sets = {ps};
    c.want_failure = "no topology domains at level: kubernetes.io/hostname";
    cases.push_back(c);
  }
  {
    Case c;
    c.name = "skip node which has untolerated taint";
    NodeSpec n = Node("x3", {{"zone", "zone-a"}, {kHostnameLabel, "x3"}}, 1000, 10);
    n.taints = {{"example.com/gpu", "present", "NoSchedule"}};
    c.nodes = {n};
    c.levels = kHostOnly;
    PodSetCase ps;
    ps.request = Required(kHostnameLabel);
    c.pod_sets = {ps};
    c.want_failure =
        R"(topology "default" doesn't allow to fit any of 1 pod(s). Total nodes: 1; excluded: taint "example.com/gpu=present:NoSchedule": 1)";
    cases.push_back(c);
  }
  {
    Case c;
    c.name = "allow to schedule on node with tolerated taint";
    NodeSpec n = Node("b1-r1-x3", {{"zone", "zone-a"}, {kHostnameLabel, "x3"}}, 1000, 10);
    n.taints = {{"example.com/gpu", "present", "NoSchedule"}};
    c.nodes = {n};
    c.levels = kHostOnly;
    PodSetCase ps;
    ps.request = Required(kHostnameLabel);
    ps.tolerations = {{"example.com/gpu", "Equal", "present", ""}};
    ps.want = Hosts({{"x3", 1}});
    c.pod_sets = {ps};
    cases.push_back(c);
  }
  {
    Case c;
    c.name = "detailed failure message with exclusion stats";
    NodeSpec x1 = Node("x1", {{kHostnameLabel, "x1"}}, 1000, 10);
    x1.taints = {{"key", "value", "NoSchedule"}};
    c.nodes = {x1, Node("x2", {{kHostnameLabel, "x2"}, {"zone", "zone-b"}}, 1000, 10),
               Node("x3", {{kHostnameLabel, "x3"}, {"zone", "zone-b"}}, 2000, 10),
               Node("x4", {{kHostnameLabel, "x4"}, {"zone", "zone-a"}}, 100, 10)};
    c.levels = kHostOnly;
    PodSetCase ps;
    ps.request = Required(kHostnameLabel);
    ps.node_selector = {{"zone", "zone-a"}};
    c.pod_sets = {ps};
    c.want_failure =
        R"(topology "default" doesn't allow to fit any of 1 pod(s). Total nodes: 4; excluded: nodeSelector: 2, resource "cpu": 1, taint "key=value:NoSchedule": 1)";
    cases.push_back(c);
  }
  {
    Case c;
    c.name = "resource exclusion picks most restrictive resource";
    NodeSpec n = Node("dual-shortage", {{kHostnameLabel, "dual-shortage"}}, 500, 10);
    n.allocatable = {{"cpu", 500}, {"example.com/gpu", 0}, {"pods", 10}};
    c.nodes = {n};
    c.levels = kHostOnly;
    PodSetCase ps;
    ps.request = Required(kHostnameLabel);
    ps.per_pod = {{"cpu", 1000}, {"example.com/gpu", 1}};
    c.pod_sets = {ps};
    c.want_failure =
        R"(topology "default" doesn't allow to fit any of 1 pod(s). Total nodes: 1; excluded: resource "cpu": 1)";
    cases.push_back(c);
  }
  {
    //   b1
    //   |
    //   r1
    //  / | \ .
    // x3:3, x5:3, x1:3
    Case c;
    c.name = "block required for podset; host required for slices";
    c.nodes = {Host("b1", "r1", "x3", 3000), Host("b1", "r1", "x5", 3000),
               Host("b1", "r1", "x1", 3000)};
    c.levels = kThreeLevels;
    PodSetCase ps;
    ps.request = WithSlices(Required(kBlock), {{kHostnameLabel, 2}});
    ps.count = 6;
    ps.want = Hosts({{"x1", 2}, {"x3", 2}, {"x5", 2}});
    c.pod_sets = {ps};
    cases.push_back(c);
  }
  {
    // x3:6 x5:5 x1:4 x6:2
    Case c;
    c.name = "host slices: more free slice capacity first, then tight fit";
    c.nodes = {Host("b1", "r1", "x3", 6000), Host("b1", "r1", "x5", 5000),
               Host("b1", "r1", "x1", 4000), Host("b1", "r1", "x6", 2000)};
    c.levels = kThreeLevels;
    PodSetCase ps;
    ps.request = WithSlices(Required(kBlock), {{kHostnameLabel, 2}});
    ps.count = 12;
    ps.want = Hosts({{"x1", 4}, {"x3", 6}, {"x6", 2}});
    c.pod_sets = {ps};
    cases.push_back(c);
  }
  {
    Case c;
    c.name = "two podsets with overlapping domain";
    c.nodes = {Node("b1", {{kBlock, "b1"}}, 2000, 10), Node("b2", {{kBlock, "b2"}}, 2000, 10),
               Node("b3", {{kBlock, "b3"}}, 2000, 10)};
    c.levels = {kBlock};
    PodSetCase a;
    a.name = "podset1";
    a.request = Preferred(kBlock);
    a.count = 3;
    a.want = Domains({kBlock}, {{{"b1"}, 2}, {{"b2"}, 1}});
    PodSetCase b = a;
    b.name = "podset2";
    b.want = Domains({kBlock}, {{{"b2"}, 1}, {{"b3"}, 2}});
    c.pod_sets = {a, b};
    cases.push_back(c);
  }
  {
    Case c;
    c.name = "two podsets with the same group";
    NodeSpec b1 = Node("b1", {{kBlock, "b1"}}, 2000, 10);
    b1.allocatable = {{"cpu", 2000}, {"example.com/gpu", 2}, {"memory", 2 * kGi}, {"pods", 10}};
    NodeSpec b2 = Node("b2", {{kBlock, "b2"}}, 5000, 10);
    b2.allocatable = {{"cpu", 5000}, {"example.com/gpu", 4}, {"pods", 10}};
    NodeSpec b3 = Node("b3", {{kBlock, "b3"}}, 2000, 10);
    b3.allocatable = {{"cpu", 2000}, {"example.com/gpu", 2}, {"pods", 10}};
    c.nodes = {b1, b2, b3};
    c.levels = {kBlock};
    PodSetCase leader;
    leader.name = "leader";
    leader.request = InGroup(Required(kBlock), "sameGroup");
    leader.want = Domains({kBlock}, {{{"b2"}, 1}});
    PodSetCase workers;
    workers.name = "workers";
    workers.request = InGroup(Required(kBlock), "sameGroup");
    workers.per_pod = {{"cpu", 1000}, {"example.com/gpu", 1}};
    workers.count = 4;
    workers.want = Domains({kBlock}, {{{"b2"}, 4}});
    c.pod_sets = {leader, workers};
    cases.push_back(c);
  }
  {
    // b1 -> r1 (x1:1, x2:4), r2 (x3:3, x4:4); 8 pods, 4 per rack, 2 per host.
    Case c;
    c.name = "multi-layer: block required; rack slices of 4; host slices of 2";
    c.nodes = {Host("b1", "r1", "x1", 1000), Host("b1", "r1", "x2", 4000),
               Host("b1", "r2", "x3", 3000), Host("b1", "r2", "x4", 4000)};
    c.levels = kThreeLevels;
    PodSetCase ps;
    ps.request = WithSlices(Required(kBlock), {{kRack, 4}, {kHostnameLabel, 2}});
    ps.count = 8;
    ps.want = Hosts({{"x2", 4}, {"x3", 2}, {"x4", 2}});
    c.pod_sets = {ps};
    cases.push_back(c);
  }
  {
    Case c;
    c.name = "multi-layer: host slice rounding makes rack slice impossible";
    c.nodes = {Host("b1", "r1", "x1", 3000), Host("b1", "r1", "x2", 3000),
               Host("b1", "r1", "x3", 0)};
    c.levels = kThreeLevels;
    PodSetCase ps;
    ps.request = WithSlices(Required(kBlock), {{kRack, 6}, {kHostnameLabel, 2}});
    ps.count = 6;
    c.pod_sets = {ps};
    c.want_failure =
        R"(topology "default" doesn't allow to fit; 0/1 slice(s) fit on level cloud.com/topology-rack; 2/3 slice(s) fit on level kubernetes.io/hostname. Total nodes: 3; excluded: resource "cpu": 1)";
    cases.push_back(c);
  }
  {
    //         b1               b2
    //      /      \            |
    //    r1        r2          r1
    //   /  \    /  |  \      /  \ .
    //  x3  x5  x1  x6  x2    x4  x7
    Case c;
    c.name = "block required for podset; rack required for slices";
    c.nodes = {Host("b1", "r1", "x3", 1000), Host("b1", "r1", "x5", 1000),
               Host("b1", "r2", "x1", 1000), Host("b1", "r2", "x6", 1000),
               Host("b1", "r2", "x2", 1000), Host("b2", "r1", "x4", 1000),
               Host("b2", "r1", "x7", 1000)};
    c.levels = kThreeLevels;
    PodSetCase ps;
    ps.request = WithSlices(Required(kBlock), {{kRack, 2}});
    ps.count = 4;
    ps.want = Hosts({{"x3", 1}, {"x5", 1}, {"x1", 1}, {"x2", 1}});
    c.pod_sets = {ps};
    cases.push_back(c);
  }
  {
    Case c;
    c.name = "block preferred for podset; rack required for slices";
    c.nodes = DefaultNodes();
    c.levels = kThreeLevels;
    PodSetCase ps;
    ps.request = WithSlices(Preferred(kBlock), {{kRack, 2}});
    ps.count = 4;
    ps.want = Hosts({{"x1", 1}, {"x5", 1}, {"x4", 2}});
    c.pod_sets = {ps};
    cases.push_back(c);
  }
  {
    Case c;
    c.name = "no topology for podset; host required for slices";
    c.nodes = {Host("b1", "r1", "x3", 3000), Host("b1", "r1", "x5", 3000),
               Host("b1", "r1", "x1", 3000)};
    c.levels = kThreeLevels;
    PodSetCase ps;
    ps.request = WithSlices(PodSetTopologyRequest{}, {{kHostnameLabel, 2}});
    ps.count = 6;
    ps.want = Hosts({{"x1", 2}, {"x3", 2}, {"x5", 2}});
    c.pod_sets = {ps};
    cases.push_back(c);
  }
  {
    Case c;
    c.name = "no topology for podset; host required for slices; multiple blocks";
    c.nodes = ScatteredNodes();
    c.levels = kThreeLevels;
    PodSetCase ps;
    ps.request = WithSlices(PodSetTopologyRequest{}, {{kHostnameLabel, 2}});
    ps.count = 6;
    ps.want = Hosts({{"x3", 4}, {"x6", 2}});
    c.pod_sets = {ps};
    cases.push_back(c);
  }
  {
    Case c;
    c.name = "no topology for podset; rack required for slices; multiple blocks";
    c.nodes = DefaultNodes();
    c.levels = kThreeLevels;
    PodSetCase ps;
    ps.request = WithSlices(PodSetTopologyRequest{}, {{kRack, 2}});
    ps.count = 4;
    ps.want = Hosts({{"x1", 1}, {"x5", 1}, {"x4", 2}});
    c.pod_sets = {ps};
    cases.push_back(c);
  }
  for (const Case& c : cases) RunCase(c);
}

TEST(TopologyPlacementTest, RequestErrorsUseKueueTexts) {
  std::vector<Case> cases;
  {
    Case c;
    c.name = "slice level above the pod set's level";
    c.nodes = DefaultNodes();
    c.levels = kThreeLevels;
    PodSetCase ps;
    ps.request = WithSlices(Required(kRack), {{kBlock, 2}});
    ps.count = 2;
    c.pod_sets = {ps};
    c.want_failure =
        "podset slice topology cloud.com/topology-block is above the podset topology "
        "cloud.com/topology-rack";
    cases.push_back(c);
  }
  {
    Case c;
    c.name = "slice size required";
    c.nodes = DefaultNodes();
    c.levels = kThreeLevels;
    PodSetCase ps;
    ps.request = WithSlices(Required(kBlock), {{kHostnameLabel, 0}});
    c.pod_sets = {ps};
    c.want_failure = "slice topology requested, but slice size not provided";
    cases.push_back(c);
  }
  {
    Case c;
    c.name = "unknown slice level";
    c.nodes = DefaultNodes();
    c.levels = kThreeLevels;
    PodSetCase ps;
    ps.request = WithSlices(Required(kBlock), {{"not-exist", 1}});
    c.pod_sets = {ps};
    c.want_failure = "no requested topology level for slices: not-exist";
    cases.push_back(c);
  }
  for (const Case& c : cases) RunCase(c);
}

TEST(TopologyPlacementTest, UsageAndNonTasUsageReduceCapacity) {
  std::vector<NodeSpec> nodes = {Node("n1", {{kHostnameLabel, "x3"}}, 1000, 1)};
  std::vector<const NodeSpec*> ptrs = {&nodes[0]};
  TopologyFlavor tf({"default", kHostOnly}, ResourceFlavorSpec{}, ptrs);
  PodSetTopologyRequest request = Required(kHostnameLabel);
  const ResourceAmounts per_pod = {{"cpu", 300}};
  TopologyPlacementRequest r;
  r.pod_set = "main";
  r.count = 1;
  r.per_pod = per_pod;
  r.request = &request;
  // A running pod Tollgate does not place takes the node's only pod slot.
  tf.AddNonTasUsage("n1", {{"cpu", 300}, {"pods", 1}});
  EXPECT_EQ(
      tf.FindAssignments({r}, false).failure,
      R"(topology "default" doesn't allow to fit any of 1 pod(s). Total nodes: 1; excluded: resource "pods": 1)");
  tf.AddNonTasUsage("n1", {{"cpu", -300}, {"pods", -1}});
  TopologyPlacementResult ok = tf.FindAssignments({r}, false);
  ASSERT_TRUE(ok.ok()) << ok.failure;
  EXPECT_EQ(*ok.assignments[0], Hosts({{"x3", 1}}));
  // An admitted workload's pod takes it too; simulating an empty cluster ignores that.
  tf.AddUsage({"x3"}, {{"cpu", 300}}, 1, +1);
  EXPECT_FALSE(tf.FindAssignments({r}, false).ok());
  EXPECT_TRUE(tf.FindAssignments({r}, true).ok());
  EXPECT_FALSE(tf.Fits(Hosts({{"x3", 1}}), {{"cpu", 300}}));
  tf.AddUsage({"x3"}, {{"cpu", 300}}, 1, -1);
  EXPECT_TRUE(tf.Fits(Hosts({{"x3", 1}}), {{"cpu", 300}}));
}

TEST(TopologyPlacementTest, CapacitiesSumLeavesUpTheTree) {
  std::vector<NodeSpec> nodes = BinaryTreeNodes();
  std::vector<const NodeSpec*> ptrs;
  for (const NodeSpec& n : nodes) ptrs.push_back(&n);
  TopologyFlavor tf({"default", kThreeLevels}, ResourceFlavorSpec{}, ptrs);
  tf.AddUsage({"x3"}, {{"cpu", 500}}, 1, +1);
  std::vector<TopologyFlavor::DomainCapacity> c = tf.Capacities();
  // 2 blocks, 4 racks, 8 hosts; parents first, siblings by values.
  ASSERT_EQ(c.size(), 14u);
  EXPECT_EQ(c[0].values, (std::vector<std::string>{"b1"}));
  EXPECT_EQ(c[1].values, (std::vector<std::string>{"b1", "r1"}));
  EXPECT_EQ(c[2].values, (std::vector<std::string>{"b1", "r1", "x3"}));
  EXPECT_EQ(c[0].free, (ResourceAmounts{{"cpu", 4000}, {"memory", 4 * kGi}, {"pods", 40}}));
  EXPECT_EQ(c[0].used, (ResourceAmounts{{"cpu", 500}, {"pods", 1}}));
  EXPECT_EQ(c[2].used, (ResourceAmounts{{"cpu", 500}, {"pods", 1}}));
  EXPECT_TRUE(c[3].used.empty());
}

TEST(TopologyPlacementTest, ReplacementKeepsTheOtherDomainsInsideTheRequiredRack) {
  // x2 held a pod and went away (the inventory no longer has it).
  std::vector<NodeSpec> nodes = {Host("b1", "r1", "x1", 1000), Host("b1", "r1", "x3", 1000),
                                 Host("b1", "r2", "x4", 4000)};
  std::vector<const NodeSpec*> ptrs;
  for (const NodeSpec& n : nodes) ptrs.push_back(&n);
  TopologyFlavor tf({"default", kThreeLevels}, ResourceFlavorSpec{}, ptrs);
  PodSetTopologyRequest request = Required(kRack);
  const ResourceAmounts per_pod = {{"cpu", 1000}};
  TopologyPlacementRequest r;
  r.pod_set = "main";
  r.count = 2;
  r.per_pod = per_pod;
  r.request = &request;
  const TopologyAssignment existing = Hosts({{"x1", 1}, {"x2", 1}});
  tf.AddUsage({"x1"}, {{"cpu", 1000}}, 1, +1);
  tf.AddUsage({"x2"}, {{"cpu", 1000}}, 1, +1);  // no leaf: skipped, as Kueue does
  // x2 is lost: its pod goes to x3 in the same rack, not to the roomier x4 in r2.
  TopologyFlavor::Replacement rep = tf.FindReplacement(r, existing, "x2");
  ASSERT_TRUE(rep.assignment.has_value()) << rep.failure;
  EXPECT_EQ(*rep.assignment, Hosts({{"x1", 1}, {"x3", 1}}));
  // With x3 full too, nothing in r1 can take it.
  tf.AddUsage({"x3"}, {{"cpu", 1000}}, 1, +1);
  rep = tf.FindReplacement(r, existing, "x2");
  EXPECT_FALSE(rep.assignment.has_value());
  EXPECT_EQ(
      rep.failure,
      R"(topology "default" doesn't allow to fit any of 1 pod(s). Total nodes: 3; excluded: resource "cpu": 2, topologyDomain: 1)");
}

}  // namespace
}  // namespace tollgate::core
