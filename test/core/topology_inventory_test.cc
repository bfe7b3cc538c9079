// TopologyInventory's usage of placements carried on the tree that computed them
// (PlacedTopology): counted by their leaves while the tree is current, and by their domains'
// names once a change of nodes rebuilds it.

#include "core/topology_inventory.h"

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "gtest/gtest.h"

namespace tollgate::core {
namespace {

constexpr char kRack[] = "cloud.com/topology-rack";

NodeSpec Host(const std::string& rack, const std::string& host, int64_t gpus) {
  NodeSpec n;
  n.name = host;
  n.labels = {{kRack, rack}, {kHostnameLabel, host}};
  n.allocatable = {{"gpu", gpus}, {"pods", 110}};
  return n;
}

// The GPUs placements use on `host` in the flavor's current tree.
int64_t UsedGpus(TopologyInventory& inventory, const std::string& host) {
  for (const TopologyFlavor::DomainCapacity& d : inventory.Flavor("tas")->Capacities()) {
    if (d.values.size() != 2 || d.values.back() != host) continue;
    for (const auto& [resource, amount] : d.used) {
      if (resource == "gpu") return amount;
    }
  }
  return 0;
}

TEST(TopologyInventoryTest, CarriedPlacementsCountByNameAfterTheTreeIsRebuilt) {
  TopologyInventory inventory;
  inventory.ApplyTopology({"default", {kRack, kHostnameLabel}});
  ASSERT_TRUE(inventory.UpsertNode(Host("r1", "x1", 4)).ok());
  ASSERT_TRUE(inventory.UpsertNode(Host("r1", "x2", 4)).ok());
  ResourceFlavorSpec flavor;
  flavor.name = "tas";
  flavor.topology_name = "default";
  inventory.SetFlavors({{"tas", flavor}});

  TopologyFlavor* tree = inventory.Flavor("tas");
  ASSERT_NE(tree, nullptr);
  const ResourceAmounts per_pod = {{"gpu", 1}};
  PodSetTopologyRequest required;
  required.required = kHostnameLabel;
  TopologyPlacementRequest request;
  request.pod_set = "main";
  request.count = 3;
  request.per_pod = per_pod;
  request.request = &required;
  TopologyPlacementResult result = tree->FindAssignments({request}, /*simulate_empty=*/false);
  ASSERT_TRUE(result.ok()) << result.failure;
  const std::string host = result.assignments[0]->domains[0].values.back();
  const PlacedTopology placed{tree, inventory.generation(), result.leaves[0]};
  ASSERT_EQ(inventory.CurrentTree(placed), tree);

  // Admitted, and planned once more for the cycle: both by the leaves.
  WorkloadTopologyUsage admitted;
  admitted.placed = {placed};
  inventory.SetWorkloadUsage(1, admitted);
  EXPECT_EQ(UsedGpus(inventory, host), 3);
  const int64_t token = inventory.ApplyTemporary(WorkloadTopologyUsage(admitted), +1);
  EXPECT_EQ(UsedGpus(inventory, host), 6);

  // A new node rebuilds the tree: the carried leaves are stale, the names still count.
  ASSERT_TRUE(inventory.UpsertNode(Host("r2", "x3", 4)).ok());
  EXPECT_EQ(inventory.CurrentTree(placed), nullptr);
  EXPECT_EQ(UsedGpus(inventory, host), 6);
  EXPECT_EQ(UsedGpus(inventory, "x3"), 0);
  inventory.UndoTemporary(token);
  EXPECT_EQ(UsedGpus(inventory, host), 3);
  inventory.ClearWorkloadUsage(1);
  EXPECT_EQ(UsedGpus(inventory, host), 0);
}

TEST(TopologyInventoryTest, CarriedPlacementsCountOnAnotherHostnameFlavorBuiltLater) {
  TopologyInventory inventory;
  inventory.ApplyTopology({"default", {kRack, kHostnameLabel}});
  ASSERT_TRUE(inventory.UpsertNode(Host("r1", "x1", 4)).ok());
  ResourceFlavorSpec flavor;
  flavor.name = "tas";
  flavor.topology_name = "default";
  ResourceFlavorSpec other = flavor;
  other.name = "other";
  inventory.SetFlavors({{"tas", flavor}, {"other", other}});

  TopologyFlavor* tree = inventory.Flavor("tas");
  const ResourceAmounts per_pod = {{"gpu", 2}};
  TopologyPlacementRequest request;
  request.pod_set = "main";
  request.count = 1;
  request.per_pod = per_pod;
  request.implied = true;
  TopologyPlacementResult result = tree->FindAssignments({request}, /*simulate_empty=*/false);
  ASSERT_TRUE(result.ok()) << result.failure;
  WorkloadTopologyUsage usage;
  usage.placed = {PlacedTopology{tree, inventory.generation(), result.leaves[0]}};
  const int64_t token = inventory.ApplyTemporary(WorkloadTopologyUsage(usage), +1);
  // Both flavors end at the hostname: the one built now counts the same node's usage.
  int64_t used = 0;
  for (const TopologyFlavor::DomainCapacity& d : inventory.Flavor("other")->Capacities()) {
    if (d.values.size() != 2) continue;
    for (const auto& [resource, amount] : d.used) {
      if (resource == "gpu") used += amount;
    }
  }
  EXPECT_EQ(used, 2);
  inventory.UndoTemporary(token);
  EXPECT_EQ(UsedGpus(inventory, "x1"), 0);
}

// Kueue's nonTasUsageCache (#13764): a pod reported again may free capacity when it moves or
// asks for less of some resource; the caller requeues parked workloads then.
TEST(TopologyInventoryTest, ReportPodSaysWhenItMayHaveFreedCapacity) {
  TopologyInventory inventory;
  auto report = [&](const std::string& node, ResourceAmounts requests) {
    absl::StatusOr<bool> freed = inventory.ReportPod("kube-system/daemon", node, requests);
    EXPECT_TRUE(freed.ok()) << freed.status();
    return freed.value_or(false);
  };
  EXPECT_FALSE(report("x1", {{"gpu", 2}, {"cpu", 1}}));  // new
  EXPECT_FALSE(report("x1", {{"cpu", 1}, {"gpu", 2}}));  // unchanged
  EXPECT_FALSE(report("x1", {{"cpu", 1}, {"gpu", 3}}));  // grew
  EXPECT_TRUE(report("x1", {{"cpu", 2}, {"gpu", 2}}));   // less gpu, more cpu
  EXPECT_TRUE(report("x1", {{"gpu", 2}}));               // no cpu
  EXPECT_TRUE(report("x2", {{"gpu", 2}}));               // moved
}

}  // namespace
}  // namespace tollgate::core
