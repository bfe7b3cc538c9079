// Kueue's TASRespectNodeAffinityPreferred cases (pkg/cache/scheduler/tas_cache_test.go,
// TestFindTopologyAssignments: the cases that turn the gate on; tas_flavor_snapshot_test.go's
// sort cases), ported by reading them, and cases of Tollgate's own where the gate changes the
// outcome. Each case runs incrementally and from scratch, with the gate on, and where the gate
// changes the answer, with it off too.

#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "core/topology_flavor.h"
#include "gtest/gtest.h"

namespace tollgate::core {
namespace {

constexpr char kZone[] = "cloud.com/topology-zone";
constexpr char kBlock[] = "cloud.com/topology-block";
constexpr char kRack[] = "cloud.com/topology-rack";
constexpr char kSwitch[] = "cloud.com/topology-switch";
constexpr int64_t kGi = int64_t{1} << 30;

// A node named as its hostname, with `labels` beside the hostname label.
NodeSpec Node(std::string host, Labels labels, int64_t cpu_milli, int64_t memory = 0,
              int64_t gpus = 0) {
  NodeSpec n;
  n.name = host;
  n.labels = std::move(labels);
  n.labels[kHostnameLabel] = host;
  n.allocatable.emplace_back("cpu", cpu_milli);
  if (memory > 0) n.allocatable.emplace_back("memory", memory);
  if (gpus > 0) n.allocatable.emplace_back("nvidia.com/gpu", gpus);
  n.allocatable.emplace_back("pods", 10);
  return n;
}

PreferredSchedulingTerm Prefer(int32_t weight, std::string key, std::string value) {
  PreferredSchedulingTerm t;
  t.weight = weight;
  t.preference.match_expressions.push_back(
      LabelSelectorRequirement{std::move(key), "In", {std::move(value)}});
  return t;
}

NodeSelectorTerm Require(std::string key, std::string value) {
  NodeSelectorTerm t;
  t.match_expressions.push_back(LabelSelectorRequirement{std::move(key), "In", {std::move(value)}});
  return t;
}

struct PodSetCase {
  std::string name = "main";
  int32_t count = 1;
  std::vector<std::pair<std::string, int64_t>> per_pod = {{"cpu", 1000}};
  PodSetTopologyRequest request;
  std::vector<PreferredSchedulingTerm> preferred;
  std::vector<NodeSelectorTerm> required;
  // Hostname -> pods.
  std::vector<std::pair<std::string, int32_t>> want;
  // With the gate off, when it differs (empty: not checked).
  std::vector<std::pair<std::string, int32_t>> want_gate_off;
};

struct Case {
  std::string name;
  std::vector<std::string> levels;
  std::vector<NodeSpec> nodes;
  std::vector<PodSetCase> pod_sets;
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
PodSetTopologyRequest Sliced(PodSetTopologyRequest r, std::string level, int32_t size) {
  r.slices.push_back(SliceConstraint{std::move(level), size});
  return r;
}

std::string Describe(const std::vector<std::pair<std::string, int32_t>>& hosts) {
  std::string out;
  for (const auto& [host, count] : hosts) out += host + ":" + std::to_string(count) + " ";
  return out;
}

std::vector<std::pair<std::string, int32_t>> HostsOf(const TopologyAssignment& a) {
  std::vector<std::pair<std::string, int32_t>> out;
  for (const TopologyDomainAssignment& d : a.domains) out.emplace_back(d.values.back(), d.count);
  return out;
}

void Run(const Case& c, bool gate, bool incremental) {
  SCOPED_TRACE(c.name + (gate ? " (gate on" : " (gate off") +
               (incremental ? ", incremental)" : ", from scratch)"));
  TopologySpec topology{"default", c.levels};
  ResourceFlavorSpec flavor;
  flavor.name = "tas-flavor";
  std::vector<const NodeSpec*> nodes;
  for (const NodeSpec& n : c.nodes) nodes.push_back(&n);
  TopologyFlavor tf(topology, flavor, nodes);
  tf.set_incremental(incremental);
  tf.set_respect_node_affinity_preferred(gate);
  std::vector<TopologyPlacementRequest> requests;
  for (const PodSetCase& ps : c.pod_sets) {
    TopologyPlacementRequest r;
    r.pod_set = ps.name;
    r.count = ps.count;
    r.per_pod = ps.per_pod;
    r.request = &ps.request;
    r.preferred_node_affinity = ps.preferred.empty() ? nullptr : &ps.preferred;
    r.required_node_affinity = ps.required.empty() ? nullptr : &ps.required;
    requests.push_back(r);
  }
  // Twice: the second placement reads the first one's cached counts.
  for (int round = 0; round < 2; ++round) {
    TopologyPlacementResult result = tf.FindAssignments(requests, /*simulate_empty=*/false);
    ASSERT_EQ(result.failure, "");
    for (size_t i = 0; i < c.pod_sets.size(); ++i) {
      const PodSetCase& ps = c.pod_sets[i];
      const auto& want = gate || ps.want_gate_off.empty() ? ps.want : ps.want_gate_off;
      ASSERT_TRUE(result.assignments[i].has_value()) << ps.name;
      const auto got = HostsOf(*result.assignments[i]);
      EXPECT_EQ(got, want) << ps.name << ": got " << Describe(got) << " want " << Describe(want);
    }
  }
}

void RunAll(const Case& c) {
  for (bool incremental : {true, false}) {
    Run(c, /*gate=*/true, incremental);
    bool differs = false;
    for (const PodSetCase& ps : c.pod_sets) differs = differs || !ps.want_gate_off.empty();
    if (differs) Run(c, /*gate=*/false, incremental);
  }
}

TEST(TopologyAffinityTest, PreferredRackOfTheMatchingNode) {
  Case c;
  c.name = "with preferred affinity";
  c.levels = {kRack, kHostnameLabel};
  c.nodes = {Node("node-preferred", {{kRack, "rack-preferred"}, {"region", "us-west"}}, 1000),
             Node("node-other", {{kRack, "rack-other"}, {"region", "us-east"}}, 1000)};
  PodSetCase ps;
  ps.request = Preferred(kRack);
  ps.preferred = {Prefer(10, "region", "us-west")};
  ps.want = {{"node-preferred", 1}};
  // Without scores the racks tie and rack-other sorts first by its values.
  ps.want_gate_off = {{"node-other", 1}};
  c.pod_sets = {ps};
  RunAll(c);
}

TEST(TopologyAffinityTest, RequiredAndPreferredAffinity) {
  Case c;
  c.name = "with required and preferred affinity";
  c.levels = {kRack, kHostnameLabel};
  c.nodes = {
      Node("node-preferred", {{kRack, "rack-preferred"}, {"region", "us-west"}, {"zone", "us"}},
           1000),
      Node("node-other", {{kRack, "rack-other"}, {"region", "us-east"}, {"zone", "us"}}, 1000),
      Node("node-excluded", {{kRack, "rack-excluded"}, {"region", "us-west"}, {"zone", "eu"}},
           1000)};
  PodSetCase ps;
  ps.request = Preferred(kRack);
  ps.required = {Require("zone", "us")};
  ps.preferred = {Prefer(10, "region", "us-west")};
  ps.want = {{"node-preferred", 1}};
  ps.want_gate_off = {{"node-other", 1}};
  c.pod_sets = {ps};
  RunAll(c);
}

TEST(TopologyAffinityTest, WeightsOfTheMatchingTermsAdd) {
  Case c;
  c.name = "with multiple preferred affinities";
  c.levels = {kBlock, kRack, kHostnameLabel};
  c.nodes = {Node("node-a", {{kBlock, "b1"}, {kRack, "r1"}}, 1000),
             Node("node-b", {{kBlock, "b1"}, {kRack, "r2"}}, 1000),
             Node("node-c", {{kBlock, "b2"}, {kRack, "r1"}}, 1000)};
  PodSetCase ps;
  ps.request = Preferred(kRack);
  ps.preferred = {Prefer(10, kBlock, "b1"), Prefer(100, kRack, "r1")};
  ps.want = {{"node-a", 1}};
  c.pod_sets = {ps};
  RunAll(c);

  // 100 for r1 alone beats 10 for b1 alone.
  c.name = "the heavier term wins";
  c.nodes = {Node("node-b", {{kBlock, "b1"}, {kRack, "r2"}}, 1000),
             Node("node-c", {{kBlock, "b2"}, {kRack, "r1"}}, 1000)};
  c.pod_sets[0].want = {{"node-c", 1}};
  c.pod_sets[0].want_gate_off = {{"node-b", 1}};
  RunAll(c);
}

TEST(TopologyAffinityTest, AffinityTakesPrecedenceOverBestFit) {
  Case c;
  c.name = "affinity takes precedence over best fit";
  c.levels = {kHostnameLabel};
  c.nodes = {Node("node-better-fit", {{"region", "us-east"}}, 8000),
             Node("node-has-affinity", {{"region", "us-west"}}, 2000)};
  PodSetCase ps;
  ps.request = Preferred(kHostnameLabel);
  ps.preferred = {Prefer(10, "region", "us-west")};
  ps.want = {{"node-has-affinity", 1}};
  c.pod_sets = {ps};
  RunAll(c);

  // The preferred node is the looser fit: BestFit stays within the best-scoring nodes.
  c.name = "best fit only among the best-scoring nodes";
  c.nodes = {Node("node-tight", {{"region", "us-east"}}, 2000),
             Node("node-preferred", {{"region", "us-west"}}, 8000)};
  c.pod_sets[0].count = 2;
  c.pod_sets[0].want = {{"node-preferred", 2}};
  c.pod_sets[0].want_gate_off = {{"node-tight", 2}};
  RunAll(c);
}

TEST(TopologyAffinityTest, RequiredLevelFallsBackToAFittingDomain) {
  Case c;
  c.name =
      "affinity ordering with required topology level chooses secondary domain if primary "
      "is too small";
  c.levels = {kRack, kHostnameLabel};
  c.nodes = {
      Node("node-preferred-small", {{kRack, "rack-preferred"}, {"region", "us-west"}}, 2000),
      Node("node-secondary-large-1", {{kRack, "rack-secondary"}, {"region", "us-east"}}, 4000),
      Node("node-secondary-large-2", {{kRack, "rack-secondary"}, {"region", "us-east"}}, 4000)};
  PodSetCase ps;
  ps.request = Required(kRack);
  ps.preferred = {Prefer(10, "region", "us-west")};
  ps.count = 4;
  ps.want = {{"node-secondary-large-1", 4}};
  c.pod_sets = {ps};
  RunAll(c);

  // Past the too small preferred rack, the best fit is taken among the racks scoring as the
  // first that fits: r3 (5) over the tighter r1 (0).
  c.name = "the fallback's best fit stays within its score";
  c.nodes = {Node("r1-x", {{kRack, "r1"}, {"region", "us-east"}}, 4000),
             Node("r2-x", {{kRack, "r2"}, {"region", "us-west"}}, 1000),
             Node("r3-x", {{kRack, "r3"}, {"region", "us-west"}, {"tier", "b"}}, 8000)};
  c.pod_sets[0].count = 3;
  c.pod_sets[0].preferred = {Prefer(10, "region", "us-west"), Prefer(5, "tier", "b"),
                             Prefer(20, kRack, "r2")};
  c.pod_sets[0].want = {{"r3-x", 3}};
  c.pod_sets[0].want_gate_off = {{"r1-x", 3}};
  RunAll(c);
}

TEST(TopologyAffinityTest, PreferredInnerLevelClimbsToTheParent) {
  Case c;
  c.name =
      "affinity ordering with preferred inner topology level bubbles up to parent level to "
      "avoid splitting across parent domains";
  c.levels = {kRack, kSwitch, kHostnameLabel};
  c.nodes = {
      Node("node-preferred-small", {{kRack, "r1"}, {kSwitch, "s1"}, {"region", "us-west"}}, 2000),
      Node("node-secondary-large", {{kRack, "r1"}, {kSwitch, "s2"}, {"region", "us-east"}}, 4000)};
  PodSetCase ps;
  ps.request = Preferred(kSwitch);
  ps.preferred = {Prefer(10, "region", "us-west")};
  ps.count = 4;
  ps.want = {{"node-preferred-small", 2}, {"node-secondary-large", 2}};
  ps.want_gate_off = {{"node-secondary-large", 4}};
  c.pod_sets = {ps};
  RunAll(c);
}

std::vector<NodeSpec> FlatNodes(bool two_large_unpreferred) {
  std::vector<NodeSpec> nodes = {Node("node-1-pref-2", {{"type", "preferred"}}, 2000),
                                 Node("node-2-pref-1", {{"type", "preferred"}}, 1000)};
  if (two_large_unpreferred) {
    nodes.push_back(Node("node-3-nonpref-2a", {}, 2000));
    nodes.push_back(Node("node-4-nonpref-2b", {}, 2000));
    nodes.push_back(Node("node-5-nonpref-1", {}, 1000));
  } else {
    nodes.push_back(Node("node-3-nonpref-2", {}, 2000));
  }
  return nodes;
}

TEST(TopologyAffinityTest, FlatTopology) {
  {
    Case c;
    c.name = "flat topology, preferred mode, size 5 pods x 1";
    c.levels = {kHostnameLabel};
    c.nodes = FlatNodes(false);
    c.nodes.push_back(Node("node-4-nonpref-1", {}, 1000));
    PodSetCase ps;
    ps.request = Preferred(kHostnameLabel);
    ps.preferred = {Prefer(10, "type", "preferred")};
    ps.count = 5;
    ps.want = {{"node-1-pref-2", 2}, {"node-2-pref-1", 1}, {"node-3-nonpref-2", 2}};
    c.pod_sets = {ps};
    RunAll(c);
  }
  {
    Case c;
    c.name = "flat topology, unconstrained mode, size 5 pods x 1";
    c.levels = {kHostnameLabel};
    c.nodes = FlatNodes(false);
    c.nodes.push_back(Node("node-4-nonpref-1a", {}, 1000));
    c.nodes.push_back(Node("node-5-nonpref-1b", {}, 1000));
    PodSetCase ps;
    ps.request = Unconstrained();
    ps.preferred = {Prefer(10, "type", "preferred")};
    ps.count = 5;
    ps.want = {{"node-1-pref-2", 2},
               {"node-2-pref-1", 1},
               {"node-4-nonpref-1a", 1},
               {"node-5-nonpref-1b", 1}};
    c.pod_sets = {ps};
    RunAll(c);
  }
  {
    Case c;
    c.name = "flat topology, preferred mode, size 2 pods x 2";
    c.levels = {kHostnameLabel};
    c.nodes = FlatNodes(true);
    PodSetCase ps;
    ps.request = Sliced(Preferred(kHostnameLabel), kHostnameLabel, 2);
    ps.preferred = {Prefer(10, "type", "preferred")};
    ps.count = 4;
    ps.want = {{"node-1-pref-2", 2}, {"node-3-nonpref-2a", 2}};
    c.pod_sets = {ps};
    RunAll(c);
  }
  {
    Case c;
    c.name = "flat topology, unconstrained mode, size 2 pods x 2";
    c.levels = {kHostnameLabel};
    c.nodes = FlatNodes(true);
    PodSetCase ps;
    ps.request = Sliced(Unconstrained(), kHostnameLabel, 2);
    ps.preferred = {Prefer(10, "type", "preferred")};
    ps.count = 4;
    ps.want = {{"node-1-pref-2", 2}, {"node-3-nonpref-2a", 2}};
    c.pod_sets = {ps};
    RunAll(c);
  }
  {
    // Least free capacity comes after the score too.
    Case c;
    c.name = "unconstrained: the preferred node before the least free one";
    c.levels = {kHostnameLabel};
    c.nodes = {Node("node-large-preferred", {{"type", "preferred"}}, 4000),
               Node("node-small", {}, 1000)};
    PodSetCase ps;
    ps.request = Unconstrained();
    ps.preferred = {Prefer(10, "type", "preferred")};
    ps.want = {{"node-large-preferred", 1}};
    ps.want_gate_off = {{"node-small", 1}};
    c.pod_sets = {ps};
    RunAll(c);
  }
}

TEST(TopologyAffinityTest, LeaderCapabilityRanksBeforeAffinity) {
  Case c;
  c.name =
      "LWS with leader and workers; preferred affinity on workers; leader cannot fit on "
      "preferred zone";
  c.levels = {kZone, kHostnameLabel};
  c.nodes = {Node("us-west-1", {{kZone, "us-west"}}, 8000, 32 * kGi, 8),
             Node("us-west-2", {{kZone, "us-west"}}, 8000, 32 * kGi, 8),
             Node("us-east-1", {{kZone, "us-east"}}, 32000, 128 * kGi)};
  PodSetCase leader;
  leader.name = "leader";
  leader.request = Sliced(Preferred(kZone), kHostnameLabel, 1);
  leader.request.pod_set_group = "llm-group";
  leader.per_pod = {{"cpu", 16000}, {"memory", 64 * kGi}};
  leader.want = {{"us-east-1", 1}};
  PodSetCase workers;
  workers.name = "workers";
  workers.request = leader.request;
  workers.preferred = {Prefer(10, kZone, "us-west")};
  workers.per_pod = {{"cpu", 4000}, {"memory", 32 * kGi}, {"nvidia.com/gpu", 8}};
  workers.count = 2;
  workers.want = {{"us-west-1", 1}, {"us-west-2", 1}};
  c.pod_sets = {leader, workers};
  RunAll(c);
}

// Kueue scores only the nodes that pass the node filters: a tainted preferred node adds nothing
// to its rack.
TEST(TopologyAffinityTest, ExcludedNodesDoNotScore) {
  Case c;
  c.name = "a tainted preferred node";
  c.levels = {kRack, kHostnameLabel};
  c.nodes = {Node("a-tainted", {{kRack, "r2"}, {"region", "us-west"}}, 1000),
             Node("a-free", {{kRack, "r2"}, {"region", "us-east"}}, 1000),
             Node("b-free", {{kRack, "r1"}, {"region", "us-east"}}, 1000)};
  c.nodes[0].taints.push_back(Taint{"dedicated", "x", "NoSchedule"});
  PodSetCase ps;
  ps.request = Preferred(kRack);
  ps.preferred = {Prefer(10, "region", "us-west")};
  ps.want = {{"b-free", 1}};
  c.pod_sets = {ps};
  RunAll(c);
}

// The first phase's cache is shared by placements whatever their preferred terms (the terms
// change no count): each placement ranks by its own terms.
TEST(TopologyAffinityTest, PlacementsWithOtherTermsShareTheCountsNotTheScores) {
  TopologySpec topology{"default", {kRack, kHostnameLabel}};
  ResourceFlavorSpec flavor;
  flavor.name = "tas-flavor";
  const std::vector<NodeSpec> nodes = {Node("x1", {{kRack, "r1"}, {"region", "a"}}, 1000),
                                       Node("x2", {{kRack, "r2"}, {"region", "b"}}, 1000)};
  std::vector<const NodeSpec*> views;
  for (const NodeSpec& n : nodes) views.push_back(&n);
  TopologyFlavor tf(topology, flavor, views);
  tf.set_respect_node_affinity_preferred(true);
  const PodSetTopologyRequest request = Preferred(kRack);
  const std::vector<std::pair<std::string, int64_t>> per_pod = {{"cpu", 1000}};
  const std::vector<PreferredSchedulingTerm> to_a = {Prefer(1, "region", "a")};
  const std::vector<PreferredSchedulingTerm> to_b = {Prefer(1, "region", "b")};
  using Terms = std::vector<PreferredSchedulingTerm>;
  for (const auto& [terms, want] : std::vector<std::pair<const Terms*, std::string>>{
           {&to_b, "x2"}, {&to_a, "x1"}, {nullptr, "x1"}, {&to_b, "x2"}}) {
    TopologyPlacementRequest r;
    r.pod_set = "main";
    r.count = 1;
    r.per_pod = per_pod;
    r.request = &request;
    r.preferred_node_affinity = terms;
    TopologyPlacementResult result = tf.FindAssignments({r}, /*simulate_empty=*/false);
    ASSERT_TRUE(result.ok()) << result.failure;
    EXPECT_EQ(result.assignments[0]->domains.at(0).values.back(), want);
  }
}

}  // namespace
}  // namespace tollgate::core
