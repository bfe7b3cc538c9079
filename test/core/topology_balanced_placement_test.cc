// Kueue's balanced placement cases (TASBalancedPlacement on): the cases of
// pkg/cache/scheduler/tas_cache_test.go (TestFindTopologyAssignments) that switch the gate on,
// ported by reading them (the same node trees, requests and expected assignments), one of
// tas_topology_tree_test.go, and the same trees with the gate off, where most come out
// differently.

#include <optional>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "core/topology_flavor.h"
#include "gtest/gtest.h"
#include "test/core/topology_test_support.h"

namespace tollgate::core {
namespace {

using topology_test::Describe;
using topology_test::kBlock;
using topology_test::kRack;
using topology_test::kSubBlock;

const std::vector<std::string> kHostOnly = {kHostnameLabel};

NodeSpec MakeNode(std::string name, Labels labels, ResourceAmounts allocatable) {
  NodeSpec n;
  n.name = std::move(name);
  n.labels = std::move(labels);
  n.allocatable = std::move(allocatable);
  return n;
}

struct PodSet {
  std::string name = "main";
  PodSetTopologyRequest request;
  ResourceAmounts per_pod;
  int32_t count = 1;
  TopologyAssignment want;
};

struct BalancedCase {
  std::string name;
  std::vector<NodeSpec> nodes;
  std::vector<std::string> levels;
  std::vector<PodSet> pod_sets;
};

std::vector<TopologyAssignment> Place(const BalancedCase& c, bool balanced, bool incremental,
                                      bool names = true) {
  TopologySpec topology{"default", c.levels};
  ResourceFlavorSpec flavor;
  flavor.name = "tas-flavor";
  std::vector<const NodeSpec*> nodes;
  for (const NodeSpec& n : c.nodes) nodes.push_back(&n);
  TopologyFlavor tf(topology, flavor, nodes);
  tf.set_balanced_placement(balanced);
  tf.set_incremental(incremental);
  std::vector<TopologyPlacementRequest> requests;
  for (const PodSet& ps : c.pod_sets) {
    TopologyPlacementRequest r;
    r.pod_set = ps.name;
    r.count = ps.count;
    r.per_pod = ps.per_pod;
    r.request = &ps.request;
    requests.push_back(std::move(r));
  }
  std::vector<TopologyAssignment> out;
  // Twice on the same tree: the second placement reads the state the first one handed back.
  for (int round = 0; round < 2; ++round) {
    TopologyPlacementResult result = tf.FindAssignments(requests, /*simulate_empty=*/false, names);
    EXPECT_EQ(result.failure, "");
    out.clear();
    for (size_t i = 0; i < requests.size(); ++i) {
      if (result.leaves[i] == nullptr) {
        ADD_FAILURE() << "unplaced " << c.pod_sets[i].name;
        out.emplace_back();
        continue;
      }
      out.push_back(names ? *result.assignments[i] : tf.AssignmentOf(*result.leaves[i]));
    }
  }
  return out;
}

std::vector<BalancedCase> KueueCases() {
  std::vector<BalancedCase> cases;
  {
    BalancedCase c;
    c.name = "balanced placement; basic";
    c.nodes.push_back(MakeNode("b1-r1-x1", {{kBlock, "b1"}, {kRack, "r1"}, {kHostnameLabel, "x1"}},
                               {{"example.com/gpu", 15}, {"pods", 25}}));
    c.nodes.push_back(MakeNode("b1-r2-x2", {{kBlock, "b1"}, {kRack, "r2"}, {kHostnameLabel, "x2"}},
                               {{"example.com/gpu", 15}, {"pods", 25}}));
    c.levels = {kBlock, kRack, kHostnameLabel};
    {
      PodSet ps;
      ps.name = "main";
      ps.request.preferred = kRack;
      ps.per_pod = {{"example.com/gpu", 1}};
      ps.count = 25;
      ps.want.levels = kHostOnly;
      ps.want.domains.push_back({{"x1"}, 13});
      ps.want.domains.push_back({{"x2"}, 12});
      c.pod_sets.push_back(ps);
    }
    cases.push_back(c);
  }
  {
    BalancedCase c;
    c.name = "balanced placement; select optmial set of domains";
    c.nodes.push_back(MakeNode("b1-r1-x1", {{kBlock, "b1"}, {kRack, "r1"}, {kHostnameLabel, "x1"}},
                               {{"example.com/gpu", 15}, {"pods", 23}}));
    c.nodes.push_back(MakeNode("b1-r1-x2", {{kBlock, "b1"}, {kRack, "r1"}, {kHostnameLabel, "x2"}},
                               {{"example.com/gpu", 13}, {"pods", 23}}));
    c.nodes.push_back(MakeNode("b1-r1-x3", {{kBlock, "b1"}, {kRack, "r1"}, {kHostnameLabel, "x3"}},
                               {{"example.com/gpu", 10}, {"pods", 23}}));
    c.levels = {kBlock, kRack, kHostnameLabel};
    {
      PodSet ps;
      ps.name = "main";
      ps.request.preferred = kRack;
      ps.per_pod = {{"example.com/gpu", 1}};
      ps.count = 23;
      ps.want.levels = kHostOnly;
      ps.want.domains.push_back({{"x1"}, 12});
      ps.want.domains.push_back({{"x2"}, 11});
      c.pod_sets.push_back(ps);
    }
    cases.push_back(c);
  }
  {
    BalancedCase c;
    c.name = "balanced placement; select optmial set of domains; with slices";
    c.nodes.push_back(MakeNode("b1-r1-x1", {{kBlock, "b1"}, {kRack, "r1"}, {kHostnameLabel, "x1"}},
                               {{"example.com/gpu", 20}, {"pods", 25}}));
    c.nodes.push_back(MakeNode("b1-r1-x2", {{kBlock, "b1"}, {kRack, "r1"}, {kHostnameLabel, "x2"}},
                               {{"example.com/gpu", 15}, {"pods", 25}}));
    c.nodes.push_back(MakeNode("b1-r1-x3", {{kBlock, "b1"}, {kRack, "r1"}, {kHostnameLabel, "x3"}},
                               {{"example.com/gpu", 10}, {"pods", 25}}));
    c.levels = {kBlock, kRack, kHostnameLabel};
    {
      PodSet ps;
      ps.name = "main";
      ps.request.preferred = kRack;
      ps.request.slices = {{kHostnameLabel, 5}};
      ps.per_pod = {{"example.com/gpu", 1}};
      ps.count = 25;
      ps.want.levels = kHostOnly;
      ps.want.domains.push_back({{"x2"}, 15});
      ps.want.domains.push_back({{"x3"}, 10});
      c.pod_sets.push_back(ps);
    }
    cases.push_back(c);
  }
  {
    BalancedCase c;
    c.name = "balanced placement; select correct block";
    c.nodes.push_back(MakeNode("b1-r1-x1", {{kBlock, "b1"}, {kRack, "r1"}, {kHostnameLabel, "x1"}},
                               {{"example.com/gpu", 20}, {"pods", 22}}));
    c.nodes.push_back(MakeNode("b1-r1-x2", {{kBlock, "b1"}, {kRack, "r1"}, {kHostnameLabel, "x2"}},
                               {{"example.com/gpu", 10}, {"pods", 22}}));
    c.nodes.push_back(MakeNode("b2-r2-x3", {{kBlock, "b2"}, {kRack, "r2"}, {kHostnameLabel, "x3"}},
                               {{"example.com/gpu", 15}, {"pods", 22}}));
    c.nodes.push_back(MakeNode("b2-r2-x4", {{kBlock, "b2"}, {kRack, "r2"}, {kHostnameLabel, "x4"}},
                               {{"example.com/gpu", 15}, {"pods", 22}}));
    c.levels = {kBlock, kRack, kHostnameLabel};
    {
      PodSet ps;
      ps.name = "main";
      ps.request.preferred = kRack;
      ps.per_pod = {{"example.com/gpu", 1}};
      ps.count = 22;
      ps.want.levels = kHostOnly;
      ps.want.domains.push_back({{"x3"}, 11});
      ps.want.domains.push_back({{"x4"}, 11});
      c.pod_sets.push_back(ps);
    }
    cases.push_back(c);
  }
  {
    BalancedCase c;
    c.name = "balanced placement; cannot chose domains from different blocks";
    c.nodes.push_back(MakeNode("b1-r1-x1", {{kBlock, "b1"}, {kRack, "r1"}, {kHostnameLabel, "x1"}},
                               {{"example.com/gpu", 14}, {"pods", 25}}));
    c.nodes.push_back(MakeNode("b1-r1-x2", {{kBlock, "b1"}, {kRack, "r1"}, {kHostnameLabel, "x2"}},
                               {{"example.com/gpu", 11}, {"pods", 25}}));
    c.nodes.push_back(MakeNode("b2-r2-x3", {{kBlock, "b2"}, {kRack, "r2"}, {kHostnameLabel, "x3"}},
                               {{"example.com/gpu", 15}, {"pods", 25}}));
    c.nodes.push_back(MakeNode("b2-r2-x4", {{kBlock, "b2"}, {kRack, "r2"}, {kHostnameLabel, "x4"}},
                               {{"example.com/gpu", 10}, {"pods", 25}}));
    c.levels = {kBlock, kRack, kHostnameLabel};
    {
      PodSet ps;
      ps.name = "main";
      ps.request.preferred = kRack;
      ps.per_pod = {{"example.com/gpu", 1}};
      ps.count = 25;
      ps.want.levels = kHostOnly;
      ps.want.domains.push_back({{"x1"}, 14});
      ps.want.domains.push_back({{"x2"}, 11});
      c.pod_sets.push_back(ps);
    }
    cases.push_back(c);
  }
  {
    BalancedCase c;
    c.name =
        "balanced placement; select correct block; prefer blocks with single rack; with slices";
    c.nodes.push_back(MakeNode("b1-r1-x1", {{kBlock, "b1"}, {kRack, "r1"}, {kHostnameLabel, "x1"}},
                               {{"example.com/gpu", 15}, {"pods", 25}}));
    c.nodes.push_back(MakeNode("b1-r2-x2", {{kBlock, "b1"}, {kRack, "r2"}, {kHostnameLabel, "x2"}},
                               {{"example.com/gpu", 15}, {"pods", 25}}));
    c.nodes.push_back(MakeNode("b1-r3-x3", {{kBlock, "b1"}, {kRack, "r3"}, {kHostnameLabel, "x3"}},
                               {{"example.com/gpu", 15}, {"pods", 25}}));
    c.nodes.push_back(MakeNode("b1-r3-x4", {{kBlock, "b1"}, {kRack, "r3"}, {kHostnameLabel, "x4"}},
                               {{"example.com/gpu", 15}, {"pods", 25}}));
    c.levels = {kBlock, kRack, kHostnameLabel};
    {
      PodSet ps;
      ps.name = "main";
      ps.request.preferred = kRack;
      ps.request.slices = {{kHostnameLabel, 5}};
      ps.per_pod = {{"example.com/gpu", 1}};
      ps.count = 25;
      ps.want.levels = kHostOnly;
      ps.want.domains.push_back({{"x3"}, 15});
      ps.want.domains.push_back({{"x4"}, 10});
      c.pod_sets.push_back(ps);
    }
    cases.push_back(c);
  }
  {
    BalancedCase c;
    c.name = "balanced placement; four level topology; slice two levels below balanced level";
    c.nodes.push_back(MakeNode(
        "b1-sb1-r1-x1", {{kBlock, "b1"}, {kSubBlock, "sb1"}, {kRack, "r1"}, {kHostnameLabel, "x1"}},
        {{"example.com/gpu", 18}, {"pods", 20}}));
    c.nodes.push_back(MakeNode(
        "b1-sb1-r2-x2", {{kBlock, "b1"}, {kSubBlock, "sb1"}, {kRack, "r2"}, {kHostnameLabel, "x2"}},
        {{"example.com/gpu", 8}, {"pods", 20}}));
    c.nodes.push_back(MakeNode(
        "b1-sb1-r3-x3", {{kBlock, "b1"}, {kSubBlock, "sb2"}, {kRack, "r3"}, {kHostnameLabel, "x3"}},
        {{"example.com/gpu", 15}, {"pods", 20}}));
    c.nodes.push_back(MakeNode(
        "b1-sb1-r3-x4", {{kBlock, "b1"}, {kSubBlock, "sb2"}, {kRack, "r4"}, {kHostnameLabel, "x4"}},
        {{"example.com/gpu", 9}, {"pods", 20}}));
    c.nodes.push_back(MakeNode(
        "b1-sb1-r3-x5", {{kBlock, "b1"}, {kSubBlock, "sb2"}, {kRack, "r4"}, {kHostnameLabel, "x5"}},
        {{"example.com/gpu", 7}, {"pods", 20}}));
    c.levels = {kBlock, kSubBlock, kRack, kHostnameLabel};
    {
      PodSet ps;
      ps.name = "main";
      ps.request.preferred = kSubBlock;
      ps.request.slices = {{kHostnameLabel, 2}};
      ps.per_pod = {{"example.com/gpu", 1}};
      ps.count = 20;
      ps.want.levels = kHostOnly;
      ps.want.domains.push_back({{"x3"}, 10});
      ps.want.domains.push_back({{"x4"}, 8});
      ps.want.domains.push_back({{"x5"}, 2});
      c.pod_sets.push_back(ps);
    }
    cases.push_back(c);
  }
  {
    BalancedCase c;
    c.name = "balanced placement; four level topology; slice one level below balanced level";
    c.nodes.push_back(MakeNode(
        "b1-sb1-r1-x1", {{kBlock, "b1"}, {kSubBlock, "sb1"}, {kRack, "r1"}, {kHostnameLabel, "x1"}},
        {{"example.com/gpu", 18}, {"pods", 20}}));
    c.nodes.push_back(MakeNode(
        "b1-sb1-r2-x2", {{kBlock, "b1"}, {kSubBlock, "sb1"}, {kRack, "r2"}, {kHostnameLabel, "x2"}},
        {{"example.com/gpu", 8}, {"pods", 20}}));
    c.nodes.push_back(MakeNode(
        "b1-sb1-r3-x3", {{kBlock, "b1"}, {kSubBlock, "sb2"}, {kRack, "r3"}, {kHostnameLabel, "x3"}},
        {{"example.com/gpu", 15}, {"pods", 20}}));
    c.nodes.push_back(MakeNode(
        "b1-sb1-r3-x4", {{kBlock, "b1"}, {kSubBlock, "sb2"}, {kRack, "r4"}, {kHostnameLabel, "x4"}},
        {{"example.com/gpu", 9}, {"pods", 20}}));
    c.nodes.push_back(MakeNode(
        "b1-sb1-r3-x5", {{kBlock, "b1"}, {kSubBlock, "sb2"}, {kRack, "r4"}, {kHostnameLabel, "x5"}},
        {{"example.com/gpu", 7}, {"pods", 20}}));
    c.levels = {kBlock, kSubBlock, kRack, kHostnameLabel};
    {
      PodSet ps;
      ps.name = "main";
      ps.request.preferred = kSubBlock;
      ps.request.slices = {{kRack, 2}};
      ps.per_pod = {{"example.com/gpu", 1}};
      ps.count = 20;
      ps.want.levels = kHostOnly;
      ps.want.domains.push_back({{"x3"}, 10});
      ps.want.domains.push_back({{"x4"}, 3});
      ps.want.domains.push_back({{"x5"}, 7});
      c.pod_sets.push_back(ps);
    }
    cases.push_back(c);
  }
  {
    BalancedCase c;
    c.name =
        "balanced placement; four level topology; balance on rack level; slice not on the lowest "
        "level";
    c.nodes.push_back(MakeNode(
        "b1-sb1-r1-x1", {{kBlock, "b1"}, {kSubBlock, "sb1"}, {kRack, "r1"}, {kHostnameLabel, "x1"}},
        {{"example.com/gpu", 18}, {"pods", 20}}));
    c.nodes.push_back(MakeNode(
        "b1-sb1-r2-x2", {{kBlock, "b1"}, {kSubBlock, "sb1"}, {kRack, "r2"}, {kHostnameLabel, "x2"}},
        {{"example.com/gpu", 8}, {"pods", 20}}));
    c.nodes.push_back(MakeNode(
        "b1-sb1-r3-x3", {{kBlock, "b1"}, {kSubBlock, "sb2"}, {kRack, "r3"}, {kHostnameLabel, "x3"}},
        {{"example.com/gpu", 15}, {"pods", 20}}));
    c.nodes.push_back(MakeNode(
        "b1-sb1-r3-x4", {{kBlock, "b1"}, {kSubBlock, "sb2"}, {kRack, "r4"}, {kHostnameLabel, "x4"}},
        {{"example.com/gpu", 15}, {"pods", 20}}));
    c.levels = {kBlock, kSubBlock, kRack};
    {
      PodSet ps;
      ps.name = "main";
      ps.request.preferred = kSubBlock;
      ps.request.slices = {{kRack, 2}};
      ps.per_pod = {{"example.com/gpu", 1}};
      ps.count = 20;
      ps.want.levels = {kBlock, kSubBlock, kRack};
      ps.want.domains.push_back({{"b1", "sb2", "r3"}, 10});
      ps.want.domains.push_back({{"b1", "sb2", "r4"}, 10});
      c.pod_sets.push_back(ps);
    }
    cases.push_back(c);
  }
  {
    BalancedCase c;
    c.name = "balanced placement; three level topology; balance on the same level as slice";
    c.nodes.push_back(MakeNode("b1-r1-x1", {{kBlock, "b1"}, {kRack, "r1"}, {kHostnameLabel, "x1"}},
                               {{"example.com/gpu", 15}, {"pods", 22}}));
    c.nodes.push_back(MakeNode("b1-r1-x2", {{kBlock, "b1"}, {kRack, "r1"}, {kHostnameLabel, "x2"}},
                               {{"example.com/gpu", 13}, {"pods", 22}}));
    c.nodes.push_back(MakeNode("b1-r1-x3", {{kBlock, "b1"}, {kRack, "r1"}, {kHostnameLabel, "x3"}},
                               {{"example.com/gpu", 10}, {"pods", 22}}));
    c.nodes.push_back(MakeNode("b1-r2-x4", {{kBlock, "b1"}, {kRack, "r2"}, {kHostnameLabel, "x4"}},
                               {{"example.com/gpu", 20}, {"pods", 22}}));
    c.nodes.push_back(MakeNode("b1-r2-x5", {{kBlock, "b1"}, {kRack, "r2"}, {kHostnameLabel, "x5"}},
                               {{"example.com/gpu", 8}, {"pods", 22}}));
    c.levels = {kBlock, kRack, kHostnameLabel};
    {
      PodSet ps;
      ps.name = "main";
      ps.request.preferred = kHostnameLabel;
      ps.request.slices = {{kHostnameLabel, 2}};
      ps.per_pod = {{"example.com/gpu", 1}};
      ps.count = 22;
      ps.want.levels = kHostOnly;
      ps.want.domains.push_back({{"x2"}, 12});
      ps.want.domains.push_back({{"x3"}, 10});
      c.pod_sets.push_back(ps);
    }
    cases.push_back(c);
  }
  {
    BalancedCase c;
    c.name = "balanced placement; three level topology; balance on the lowest level";
    c.nodes.push_back(MakeNode("b1-r1-x1", {{kBlock, "b1"}, {kRack, "r1"}, {kHostnameLabel, "x1"}},
                               {{"example.com/gpu", 20}, {"pods", 22}}));
    c.nodes.push_back(MakeNode("b1-r1-x2", {{kBlock, "b1"}, {kRack, "r1"}, {kHostnameLabel, "x2"}},
                               {{"example.com/gpu", 8}, {"pods", 22}}));
    c.nodes.push_back(MakeNode("b1-r2-x3", {{kBlock, "b1"}, {kRack, "r2"}, {kHostnameLabel, "x3"}},
                               {{"example.com/gpu", 15}, {"pods", 22}}));
    c.nodes.push_back(MakeNode("b1-r2-x4", {{kBlock, "b1"}, {kRack, "r2"}, {kHostnameLabel, "x4"}},
                               {{"example.com/gpu", 13}, {"pods", 22}}));
    c.nodes.push_back(MakeNode("b1-r2-x5", {{kBlock, "b1"}, {kRack, "r2"}, {kHostnameLabel, "x5"}},
                               {{"example.com/gpu", 10}, {"pods", 22}}));
    c.levels = {kBlock, kRack, kHostnameLabel};
    {
      PodSet ps;
      ps.name = "main";
      ps.request.preferred = kHostnameLabel;
      ps.per_pod = {{"example.com/gpu", 1}};
      ps.count = 22;
      ps.want.levels = kHostOnly;
      ps.want.domains.push_back({{"x3"}, 11});
      ps.want.domains.push_back({{"x4"}, 11});
      c.pod_sets.push_back(ps);
    }
    cases.push_back(c);
  }
  {
    BalancedCase c;
    c.name = "balanced placement; leader worker set";
    c.nodes.push_back(MakeNode("b1-r1-x1", {{kBlock, "b1"}, {kRack, "r1"}, {kHostnameLabel, "x1"}},
                               {{"example.com/gpu", 20}, {"pods", 24}}));
    c.nodes.push_back(MakeNode("b1-r1-x2", {{kBlock, "b1"}, {kRack, "r1"}, {kHostnameLabel, "x2"}},
                               {{"example.com/gpu", 15}, {"pods", 24}}));
    c.nodes.push_back(MakeNode("b1-r1-x3", {{kBlock, "b1"}, {kRack, "r1"}, {kHostnameLabel, "x3"}},
                               {{"example.com/gpu", 12}, {"pods", 24}}));
    c.levels = {kBlock, kRack, kHostnameLabel};
    {
      PodSet ps;
      ps.name = "leader";
      ps.request.preferred = kRack;
      ps.request.pod_set_group = "sameGroup";
      ps.per_pod = {{"example.com/gpu", 1}};
      ps.count = 1;
      ps.want.levels = kHostOnly;
      ps.want.domains.push_back({{"x3"}, 1});
      c.pod_sets.push_back(ps);
    }
    {
      PodSet ps;
      ps.name = "workers";
      ps.request.preferred = kRack;
      ps.request.slices = {{kHostnameLabel, 5}};
      ps.request.pod_set_group = "sameGroup";
      ps.per_pod = {{"example.com/gpu", 1}};
      ps.count = 25;
      ps.want.levels = kHostOnly;
      ps.want.domains.push_back({{"x2"}, 15});
      ps.want.domains.push_back({{"x3"}, 10});
      c.pod_sets.push_back(ps);
    }
    cases.push_back(c);
  }
  {
    BalancedCase c;
    c.name = "balanced placement; prioritize (using entropy) balanced domains; second rack wins";
    c.nodes.push_back(MakeNode("b1-r1-x1", {{kBlock, "b1"}, {kRack, "r1"}, {kHostnameLabel, "x1"}},
                               {{"example.com/gpu", 10}, {"pods", 20}}));
    c.nodes.push_back(MakeNode("b1-r1-x2", {{kBlock, "b1"}, {kRack, "r1"}, {kHostnameLabel, "x2"}},
                               {{"example.com/gpu", 5}, {"pods", 20}}));
    c.nodes.push_back(MakeNode("b1-r2-x3", {{kBlock, "b1"}, {kRack, "r2"}, {kHostnameLabel, "x3"}},
                               {{"example.com/gpu", 5}, {"pods", 20}}));
    c.nodes.push_back(MakeNode("b1-r2-x4", {{kBlock, "b1"}, {kRack, "r2"}, {kHostnameLabel, "x4"}},
                               {{"example.com/gpu", 5}, {"pods", 20}}));
    c.nodes.push_back(MakeNode("b1-r2-x5", {{kBlock, "b1"}, {kRack, "r2"}, {kHostnameLabel, "x5"}},
                               {{"example.com/gpu", 5}, {"pods", 20}}));
    c.levels = {kBlock, kRack, kHostnameLabel};
    {
      PodSet ps;
      ps.name = "main";
      ps.request.preferred = kRack;
      ps.per_pod = {{"example.com/gpu", 1}};
      ps.count = 15;
      ps.want.levels = kHostOnly;
      ps.want.domains.push_back({{"x3"}, 5});
      ps.want.domains.push_back({{"x4"}, 5});
      ps.want.domains.push_back({{"x5"}, 5});
      c.pod_sets.push_back(ps);
    }
    cases.push_back(c);
  }
  {
    BalancedCase c;
    c.name = "balanced placement; prioritize (using entropy) balanced domains; first rack wins";
    c.nodes.push_back(MakeNode("b1-r1-x1", {{kBlock, "b1"}, {kRack, "r1"}, {kHostnameLabel, "x1"}},
                               {{"example.com/gpu", 8}, {"pods", 24}}));
    c.nodes.push_back(MakeNode("b1-r1-x2", {{kBlock, "b1"}, {kRack, "r1"}, {kHostnameLabel, "x2"}},
                               {{"example.com/gpu", 8}, {"pods", 24}}));
    c.nodes.push_back(MakeNode("b1-r1-x3", {{kBlock, "b1"}, {kRack, "r1"}, {kHostnameLabel, "x3"}},
                               {{"example.com/gpu", 8}, {"pods", 24}}));
    c.nodes.push_back(MakeNode("b1-r2-x4", {{kBlock, "b1"}, {kRack, "r2"}, {kHostnameLabel, "x4"}},
                               {{"example.com/gpu", 16}, {"pods", 24}}));
    c.nodes.push_back(MakeNode("b1-r2-x5", {{kBlock, "b1"}, {kRack, "r2"}, {kHostnameLabel, "x5"}},
                               {{"example.com/gpu", 8}, {"pods", 24}}));
    c.levels = {kBlock, kRack, kHostnameLabel};
    {
      PodSet ps;
      ps.name = "main";
      ps.request.preferred = kRack;
      ps.per_pod = {{"example.com/gpu", 1}};
      ps.count = 24;
      ps.want.levels = kHostOnly;
      ps.want.domains.push_back({{"x1"}, 8});
      ps.want.domains.push_back({{"x2"}, 8});
      ps.want.domains.push_back({{"x3"}, 8});
      c.pod_sets.push_back(ps);
    }
    cases.push_back(c);
  }
  {
    BalancedCase c;
    c.name = "balanced placement; two level topology; balance on the highest level";
    c.nodes.push_back(MakeNode("r1-x1", {{kRack, "r1"}, {kHostnameLabel, "x1"}},
                               {{"example.com/gpu", 21}, {"pods", 22}}));
    c.nodes.push_back(MakeNode("r1-x2", {{kRack, "r1"}, {kHostnameLabel, "x2"}},
                               {{"example.com/gpu", 9}, {"pods", 22}}));
    c.nodes.push_back(MakeNode("r2-x3", {{kRack, "r2"}, {kHostnameLabel, "x3"}},
                               {{"example.com/gpu", 11}, {"pods", 22}}));
    c.nodes.push_back(MakeNode("r2-x4", {{kRack, "r2"}, {kHostnameLabel, "x4"}},
                               {{"example.com/gpu", 10}, {"pods", 22}}));
    c.nodes.push_back(MakeNode("r2-x5", {{kRack, "r2"}, {kHostnameLabel, "x5"}},
                               {{"example.com/gpu", 10}, {"pods", 22}}));
    c.levels = {kRack, kHostnameLabel};
    {
      PodSet ps;
      ps.name = "main";
      ps.request.preferred = kRack;
      ps.per_pod = {{"example.com/gpu", 1}};
      ps.count = 23;
      ps.want.levels = kHostOnly;
      ps.want.domains.push_back({{"x1"}, 12});
      ps.want.domains.push_back({{"x3"}, 11});
      c.pod_sets.push_back(ps);
    }
    cases.push_back(c);
  }
  {
    BalancedCase c;
    c.name = "balanced placement; select correct block taking into account pruning";
    c.nodes.push_back(MakeNode("b1-r1-x1", {{kBlock, "b1"}, {kRack, "r1"}, {kHostnameLabel, "x1"}},
                               {{"example.com/gpu", 5}, {"pods", 20}}));
    c.nodes.push_back(MakeNode("b1-r1-x2", {{kBlock, "b1"}, {kRack, "r1"}, {kHostnameLabel, "x2"}},
                               {{"example.com/gpu", 5}, {"pods", 20}}));
    c.nodes.push_back(MakeNode("b1-r2-x3", {{kBlock, "b1"}, {kRack, "r2"}, {kHostnameLabel, "x3"}},
                               {{"example.com/gpu", 5}, {"pods", 20}}));
    c.nodes.push_back(MakeNode("b1-r2-x4", {{kBlock, "b1"}, {kRack, "r2"}, {kHostnameLabel, "x4"}},
                               {{"example.com/gpu", 5}, {"pods", 20}}));
    c.nodes.push_back(MakeNode("b2-r3-x5", {{kBlock, "b2"}, {kRack, "r3"}, {kHostnameLabel, "x5"}},
                               {{"example.com/gpu", 10}, {"pods", 20}}));
    c.nodes.push_back(MakeNode("b2-r3-x6", {{kBlock, "b2"}, {kRack, "r3"}, {kHostnameLabel, "x6"}},
                               {{"example.com/gpu", 4}, {"pods", 20}}));
    c.nodes.push_back(MakeNode("b2-r3-x7", {{kBlock, "b2"}, {kRack, "r3"}, {kHostnameLabel, "x7"}},
                               {{"example.com/gpu", 4}, {"pods", 20}}));
    c.nodes.push_back(MakeNode("b2-r3-x8", {{kBlock, "b2"}, {kRack, "r3"}, {kHostnameLabel, "x8"}},
                               {{"example.com/gpu", 4}, {"pods", 20}}));
    c.nodes.push_back(MakeNode("b2-r4-x9", {{kBlock, "b2"}, {kRack, "r4"}, {kHostnameLabel, "x9"}},
                               {{"example.com/gpu", 5}, {"pods", 20}}));
    c.nodes.push_back(MakeNode("b2-r5-x10",
                               {{kBlock, "b2"}, {kRack, "r5"}, {kHostnameLabel, "x10"}},
                               {{"example.com/gpu", 5}, {"pods", 20}}));
    c.levels = {kBlock, kRack, kHostnameLabel};
    {
      PodSet ps;
      ps.name = "main";
      ps.request.preferred = kRack;
      ps.per_pod = {{"example.com/gpu", 1}};
      ps.count = 20;
      ps.want.levels = kHostOnly;
      ps.want.domains.push_back({{"x1"}, 5});
      ps.want.domains.push_back({{"x2"}, 5});
      ps.want.domains.push_back({{"x3"}, 5});
      ps.want.domains.push_back({{"x4"}, 5});
      c.pod_sets.push_back(ps);
    }
    cases.push_back(c);
  }
  {
    BalancedCase c;
    c.name = "balanced placement; should not prune domain";
    c.nodes.push_back(MakeNode("b1-r1-x1", {{kBlock, "b1"}, {kRack, "r1"}, {kHostnameLabel, "x1"}},
                               {{"example.com/gpu", 6}, {"pods", 24}}));
    c.nodes.push_back(MakeNode("b1-r1-x2", {{kBlock, "b1"}, {kRack, "r1"}, {kHostnameLabel, "x2"}},
                               {{"example.com/gpu", 5}, {"pods", 24}}));
    c.levels = {kBlock, kRack, kHostnameLabel};
    {
      PodSet ps;
      ps.name = "leader";
      ps.request.preferred = kRack;
      ps.request.pod_set_group = "sameGroup";
      ps.per_pod = {{"example.com/gpu", 1}};
      ps.count = 1;
      ps.want.levels = kHostOnly;
      ps.want.domains.push_back({{"x1"}, 1});
      c.pod_sets.push_back(ps);
    }
    {
      PodSet ps;
      ps.name = "workers";
      ps.request.preferred = kRack;
      ps.request.pod_set_group = "sameGroup";
      ps.per_pod = {{"example.com/gpu", 1}};
      ps.count = 10;
      ps.want.levels = kHostOnly;
      ps.want.domains.push_back({{"x1"}, 5});
      ps.want.domains.push_back({{"x2"}, 5});
      c.pod_sets.push_back(ps);
    }
    cases.push_back(c);
  }
  {
    BalancedCase c;
    c.name = "balanced placement; leader worker set does not reserve leader space on every node";
    c.nodes.push_back(MakeNode("b1-r1-x1", {{kBlock, "b1"}, {kRack, "r1"}, {kHostnameLabel, "x1"}},
                               {{"example.com/gpu", 7}, {"pods", 12}}));
    c.nodes.push_back(MakeNode("b1-r1-x2", {{kBlock, "b1"}, {kRack, "r1"}, {kHostnameLabel, "x2"}},
                               {{"example.com/gpu", 5}, {"pods", 12}}));
    c.levels = {kBlock, kRack, kHostnameLabel};
    {
      PodSet ps;
      ps.name = "leader";
      ps.request.preferred = kRack;
      ps.request.pod_set_group = "sameGroup";
      ps.per_pod = {{"example.com/gpu", 1}};
      ps.count = 1;
      ps.want.levels = kHostOnly;
      ps.want.domains.push_back({{"x1"}, 1});
      c.pod_sets.push_back(ps);
    }
    {
      PodSet ps;
      ps.name = "workers";
      ps.request.preferred = kRack;
      ps.request.pod_set_group = "sameGroup";
      ps.per_pod = {{"example.com/gpu", 1}};
      ps.count = 10;
      ps.want.levels = kHostOnly;
      ps.want.domains.push_back({{"x1"}, 5});
      ps.want.domains.push_back({{"x2"}, 5});
      c.pod_sets.push_back(ps);
    }
    cases.push_back(c);
  }
  {
    BalancedCase c;
    c.name = "balanced placement; fallback to BestFit when leader worker set cannot meet threshold";
    c.nodes.push_back(MakeNode("b1-r1-x1", {{kBlock, "b1"}, {kRack, "r1"}, {kHostnameLabel, "x1"}},
                               {{"example.com/gpu", 3}, {"pods", 12}}));
    c.nodes.push_back(MakeNode("b1-r2-x2", {{kBlock, "b1"}, {kRack, "r2"}, {kHostnameLabel, "x2"}},
                               {{"example.com/gpu", 3}, {"pods", 12}}));
    c.nodes.push_back(MakeNode("b1-r3-x3", {{kBlock, "b1"}, {kRack, "r3"}, {kHostnameLabel, "x3"}},
                               {{"example.com/gpu", 8}, {"pods", 12}}));
    c.nodes.push_back(MakeNode("b2-r1-x4", {{kBlock, "b2"}, {kRack, "r1"}, {kHostnameLabel, "x4"}},
                               {{"example.com/gpu", 11}, {"pods", 12}}));
    c.levels = {kBlock, kRack, kHostnameLabel};
    {
      PodSet ps;
      ps.name = "leader";
      ps.request.preferred = kBlock;
      ps.request.pod_set_group = "sameGroup";
      ps.per_pod = {{"example.com/gpu", 5}};
      ps.count = 1;
      ps.want.levels = kHostOnly;
      ps.want.domains.push_back({{"x3"}, 1});
      c.pod_sets.push_back(ps);
    }
    {
      PodSet ps;
      ps.name = "workers";
      ps.request.preferred = kBlock;
      ps.request.pod_set_group = "sameGroup";
      ps.per_pod = {{"example.com/gpu", 1}};
      ps.count = 7;
      ps.want.levels = kHostOnly;
      ps.want.domains.push_back({{"x1"}, 3});
      ps.want.domains.push_back({{"x2"}, 1});
      ps.want.domains.push_back({{"x3"}, 3});
      c.pod_sets.push_back(ps);
    }
    cases.push_back(c);
  }
  {
    BalancedCase c;
    c.name = "stable tie break on identical nodes: TASBalancedPlacement enabled";
    c.nodes.push_back(MakeNode("x2", {{kBlock, "b1"}, {kRack, "r1"}, {kHostnameLabel, "x2"}},
                               {{"cpu", 1000}, {"pods", 10}}));
    c.nodes.push_back(MakeNode("x1", {{kBlock, "b1"}, {kRack, "r1"}, {kHostnameLabel, "x1"}},
                               {{"cpu", 1000}, {"pods", 10}}));
    c.levels = {kBlock, kRack, kHostnameLabel};
    {
      PodSet ps;
      ps.name = "main";
      ps.request.required = kHostnameLabel;
      ps.per_pod = {{"cpu", 1000}};
      ps.count = 1;
      ps.want.levels = kHostOnly;
      ps.want.domains.push_back({{"x1"}, 1});
      c.pod_sets.push_back(ps);
    }
    cases.push_back(c);
  }
  {
    BalancedCase c;
    c.name = "stable tie break on identical nodes: reversed order, TASBalancedPlacement enabled";
    c.nodes.push_back(MakeNode("x1", {{kBlock, "b1"}, {kRack, "r1"}, {kHostnameLabel, "x1"}},
                               {{"cpu", 1000}, {"pods", 10}}));
    c.nodes.push_back(MakeNode("x2", {{kBlock, "b1"}, {kRack, "r1"}, {kHostnameLabel, "x2"}},
                               {{"cpu", 1000}, {"pods", 10}}));
    c.levels = {kBlock, kRack, kHostnameLabel};
    {
      PodSet ps;
      ps.name = "main";
      ps.request.required = kHostnameLabel;
      ps.per_pod = {{"cpu", 1000}};
      ps.count = 1;
      ps.want.levels = kHostOnly;
      ps.want.domains.push_back({{"x1"}, 1});
      c.pod_sets.push_back(ps);
    }
    cases.push_back(c);
  }
  {
    // pkg/cache/scheduler/tas_topology_tree_test.go, TestSnapshotReuseAfterBalancedPlacement: the
    // second placement on the same tree (Place places twice) gives the same assignment.
    BalancedCase c;
    c.name = "snapshot reuse after balanced placement";
    for (const char* rack : {"r1", "r2"}) {
      const std::string host = rack == std::string("r1") ? "n1" : "n2";
      c.nodes.push_back(MakeNode(host, {{kBlock, "b1"}, {kRack, rack}, {kHostnameLabel, host}},
                                 {{"cpu", 4000}, {"pods", 110}}));
    }
    c.levels = {kBlock, kRack, kHostnameLabel};
    PodSet ps;
    ps.name = "workers";
    ps.request.preferred = kRack;
    ps.per_pod = {{"cpu", 1000}};
    ps.count = 6;
    ps.want.levels = kHostOnly;
    ps.want.domains.push_back({{"n1"}, 3});
    ps.want.domains.push_back({{"n2"}, 3});
    c.pod_sets.push_back(ps);
    cases.push_back(c);
  }
  return cases;
}

class TopologyBalancedPlacementTest : public ::testing::TestWithParam<bool> {};

TEST_P(TopologyBalancedPlacementTest, KueueCases) {
  const bool incremental = GetParam();
  for (const BalancedCase& c : KueueCases()) {
    SCOPED_TRACE(c.name);
    for (bool names : {true, false}) {
      std::vector<TopologyAssignment> got = Place(c, /*balanced=*/true, incremental, names);
      ASSERT_EQ(got.size(), c.pod_sets.size());
      for (size_t i = 0; i < got.size(); ++i) {
        EXPECT_EQ(got[i], c.pod_sets[i].want) << c.pod_sets[i].name << ": got " << Describe(got[i])
                                              << " want " << Describe(c.pod_sets[i].want);
      }
    }
  }
}

// The gate off, the same trees are placed by best fit: the cases below come out differently (the
// others, a fallback to best fit among them, the same), so the cases above test the gate.
TEST(TopologyBalancedPlacementTest, GateOffPlacesByBestFit) {
  std::vector<std::string> differing;
  for (const BalancedCase& c : KueueCases()) {
    std::vector<TopologyAssignment> got = Place(c, /*balanced=*/false, /*incremental=*/true);
    for (size_t i = 0; i < got.size(); ++i) {
      if (got[i] != c.pod_sets[i].want) {
        differing.push_back(c.name);
        break;
      }
    }
  }
  const std::vector<std::string> want = {
      "balanced placement; basic",
      "balanced placement; select optmial set of domains",
      "balanced placement; select optmial set of domains; with slices",
      "balanced placement; select correct block",
      "balanced placement; four level topology; slice two levels below balanced level",
      "balanced placement; four level topology; slice one level below balanced level",
      "balanced placement; four level topology; balance on rack level; slice not on the lowest "
      "level",
      "balanced placement; three level topology; balance on the same level as slice",
      "balanced placement; three level topology; balance on the lowest level",
      "balanced placement; leader worker set",
      "balanced placement; prioritize (using entropy) balanced domains; second rack wins",
      "balanced placement; two level topology; balance on the highest level",
      "balanced placement; select correct block taking into account pruning",
      "balanced placement; leader worker set does not reserve leader space on every node",
      "snapshot reuse after balanced placement",
  };
  EXPECT_EQ(differing, want);
}

// Slices at the requested level above the hosts: the hosts hold no slice counts, so pruning
// empties every sibling set and the request is placed by best fit, as in Kueue.
TEST(TopologyBalancedPlacementTest, SlicesAtRequestedLevelAboveHostsFallBackToBestFit) {
  BalancedCase c;
  c.name = "slices at the requested rack level";
  for (const auto& [rack, host, gpus] : std::vector<std::tuple<std::string, std::string, int>>{
           {"r1", "x1", 15}, {"r1", "x2", 15}, {"r2", "x3", 20}}) {
    c.nodes.push_back(MakeNode(host, {{kBlock, "b1"}, {kRack, rack}, {kHostnameLabel, host}},
                               {{"example.com/gpu", gpus}, {"pods", 40}}));
  }
  c.levels = {kBlock, kRack, kHostnameLabel};
  PodSet ps;
  ps.request.preferred = kRack;
  ps.request.slices = {{kRack, 2}};
  ps.per_pod = {{"example.com/gpu", 1}};
  ps.count = 24;
  c.pod_sets.push_back(ps);
  for (bool incremental : {true, false}) {
    const std::vector<TopologyAssignment> on = Place(c, /*balanced=*/true, incremental);
    const std::vector<TopologyAssignment> off = Place(c, /*balanced=*/false, incremental);
    ASSERT_EQ(on.size(), 1u);
    EXPECT_EQ(on, off) << Describe(on[0]) << " vs " << Describe(off[0]);
    // Best fit: r1 (30 GPUs, 15 slices) is the tightest rack for 12 slices.
    EXPECT_EQ(Describe(on[0]), "x1/:15 x2/:9 ");
  }
}

INSTANTIATE_TEST_SUITE_P(CountedIncrementallyOrFromScratch, TopologyBalancedPlacementTest,
                         ::testing::Bool());

}  // namespace
}  // namespace tollgate::core
