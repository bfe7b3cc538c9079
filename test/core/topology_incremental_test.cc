// The incremental first phase of a placement (TopologyFlavor's per-shape caches) against the
// computation from scratch: two flavors built from the same nodes go through the same random
// sequence (fixed seed) of usage changes, pods Tollgate does not place and placements of many
// shapes, and every placement must give the same assignments, or the same failure text.

#include <cstdint>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "core/topology_count_cache.h"
#include "core/topology_flavor.h"
#include "gtest/gtest.h"

namespace tollgate::core {
namespace {

constexpr char kBlock[] = "cloud.com/topology-block";
constexpr char kRack[] = "cloud.com/topology-rack";

// 3 blocks x 4 racks x 5 hosts, uneven: some hosts have fewer GPUs, some are tainted, some carry
// a label the requests select on.
std::vector<NodeSpec> Nodes(std::mt19937& rng) {
  std::vector<NodeSpec> nodes;
  for (int b = 0; b < 3; ++b) {
    for (int r = 0; r < 4; ++r) {
      for (int h = 0; h < 5; ++h) {
        NodeSpec n;
        n.name = absl::StrCat("b", b, "-r", r, "-h", h);
        n.labels = {{kBlock, absl::StrCat("b", b)},
                    {kRack, absl::StrCat("b", b, "-r", r)},
                    {kHostnameLabel, n.name}};
        if (rng() % 3 == 0) n.labels["disk"] = "ssd";
        if (rng() % 7 == 0) n.taints.push_back({"dedicated", "infer", "NoSchedule"});
        n.allocatable = {{"cpu", 4000 + 2000 * static_cast<int64_t>(rng() % 3)},
                         {"gpu", 2 + static_cast<int64_t>(rng() % 7)},
                         {"pods", 6 + static_cast<int64_t>(rng() % 6)}};
        nodes.push_back(std::move(n));
      }
    }
  }
  return nodes;
}

struct Shape {
  PodSetTopologyRequest request;
  bool implied = false;
  bool with_leader = false;
  bool two_groups = false;
  bool select_ssd = false;
  bool tolerate = false;
};

std::vector<Shape> Shapes(const std::vector<std::string>& levels) {
  const std::string lowest = levels.back();
  std::vector<Shape> out;
  auto add = [&out](PodSetTopologyRequest r, bool implied = false) {
    Shape s;
    s.request = std::move(r);
    s.implied = implied;
    out.push_back(s);
  };
  PodSetTopologyRequest r;
  r.required = kRack;
  add(r);
  r = {};
  r.required = kBlock;
  add(r);
  r = {};
  r.preferred = kRack;
  add(r);
  r = {};
  r.unconstrained = true;
  add(r);
  add({}, /*implied=*/true);
  r = {};
  r.required = kBlock;
  r.slices = {{kRack, 2}};
  add(r);
  r = {};
  r.slices = {{kRack, 4}, {lowest, 2}};
  add(r);
  r = {};
  r.preferred = kBlock;
  r.slices = {{kRack, 2}};
  add(r);
  // Leaders and workers, a second group seeing the first, node filters.
  Shape leader;
  leader.request.required = kRack;
  leader.request.pod_set_group = "g";
  leader.with_leader = true;
  out.push_back(leader);
  leader.request.required.reset();
  leader.request.preferred = kBlock;
  out.push_back(leader);
  Shape groups;
  groups.request.preferred = kRack;
  groups.two_groups = true;
  out.push_back(groups);
  Shape filtered;
  filtered.request.required = kRack;
  filtered.select_ssd = true;
  out.push_back(filtered);
  filtered.select_ssd = false;
  filtered.tolerate = true;
  filtered.request.required.reset();
  filtered.request.unconstrained = true;
  out.push_back(filtered);
  return out;
}

std::string Describe(const TopologyPlacementResult& r) {
  std::string out = absl::StrCat("failure=[", r.failure, "] pod_set=", r.failed_pod_set);
  for (const Boxed<TopologyAssignment>& a : r.assignments) {
    out += " {";
    if (a.has_value()) {
      for (const TopologyDomainAssignment& d : a->domains) {
        absl::StrAppend(&out, d.values.back(), ":", d.count, " ");
      }
    }
    out += "}";
  }
  return out;
}

void RunRandomSequence(const std::vector<std::string>& levels, uint32_t seed, int steps) {
  std::mt19937 rng(seed);
  const std::vector<NodeSpec> nodes = Nodes(rng);
  std::vector<const NodeSpec*> ptrs;
  for (const NodeSpec& n : nodes) ptrs.push_back(&n);
  ResourceFlavorSpec flavor;
  flavor.name = "tas";
  const TopologySpec topology{"default", levels};
  TopologyFlavor incremental(topology, flavor, ptrs);
  TopologyFlavor reference(topology, flavor, ptrs);
  reference.set_incremental(false);
  const std::vector<Shape> shapes = Shapes(levels);

  struct Placed {
    std::vector<std::string> values;
    ResourceAmounts per_pod;
    int32_t count;
  };
  std::vector<Placed> placed;
  auto values_of = [&levels](const NodeSpec& n) {
    std::vector<std::string> v;
    for (const std::string& l : levels) v.push_back(n.labels.at(l));
    return v;
  };
  auto apply = [&](const Placed& p, int sign) {
    incremental.AddUsage(p.values, p.per_pod, p.count, sign);
    reference.AddUsage(p.values, p.per_pod, p.count, sign);
  };
  int placements = 0;
  int failures = 0;
  for (int step = 0; step < steps; ++step) {
    const int op = static_cast<int>(rng() % 10);
    if (op == 0) {
      // Usage of an admitted workload on a random leaf.
      const NodeSpec& n = nodes[rng() % nodes.size()];
      Placed p{values_of(n), {{"cpu", 500}, {"gpu", 1}}, 1 + static_cast<int32_t>(rng() % 3)};
      apply(p, +1);
      placed.push_back(std::move(p));
    } else if (op == 1 && !placed.empty()) {
      // A workload releases its quota.
      const size_t i = rng() % placed.size();
      apply(placed[i], -1);
      placed.erase(placed.begin() + static_cast<long>(i));
    } else if (op == 2) {
      // A pod Tollgate does not place starts or ends.
      const NodeSpec& n = nodes[rng() % nodes.size()];
      const int64_t sign = rng() % 2 == 0 ? 1 : -1;
      const ResourceAmounts usage = {{"cpu", sign * 1000}, {"pods", sign}};
      incremental.AddNonTasUsage(n.name, usage);
      reference.AddNonTasUsage(n.name, usage);
    } else {
      const Shape& shape = shapes[rng() % shapes.size()];
      TopologyPlacementRequest workers;
      workers.pod_set = "workers";
      workers.count = 1 + static_cast<int32_t>(rng() % 24);
      if (!shape.request.slices.empty()) {
        const int32_t size = shape.request.slices[0].size;
        workers.count = size * (1 + workers.count / size);
      }
      // What the requests view, as a pod set's fields.
      ResourceAmounts per_pod = {{"gpu", 1 + static_cast<int64_t>(rng() % 2)}};
      if (rng() % 2 == 0) per_pod.insert(per_pod.begin(), {"cpu", 1000});
      const ResourceAmounts leader_per_pod = {{"cpu", 2000}};
      const Labels ssd = {{"disk", "ssd"}};
      const std::vector<Toleration> tolerations = {{"dedicated", "Equal", "infer", "NoSchedule"}};
      workers.per_pod = per_pod;
      workers.request = shape.implied ? nullptr : &shape.request;
      workers.implied = shape.implied;
      if (shape.select_ssd) workers.node_selector = &ssd;
      if (shape.tolerate) workers.tolerations = tolerations;
      std::vector<TopologyPlacementRequest> requests = {workers};
      if (shape.with_leader) {
        TopologyPlacementRequest leader = workers;
        leader.pod_set = "leader";
        leader.count = 1;
        leader.per_pod = leader_per_pod;
        requests.push_back(leader);
      }
      PodSetTopologyRequest second_request;
      if (shape.two_groups) {
        TopologyPlacementRequest second = workers;
        second.pod_set = "second";
        second.count = 1 + static_cast<int32_t>(rng() % 8);
        second_request.required = kRack;
        second.request = &second_request;
        requests.push_back(second);
      }
      const bool simulate_empty = rng() % 8 == 0;
      const TopologyPlacementResult got = incremental.FindAssignments(requests, simulate_empty);
      const TopologyPlacementResult want = reference.FindAssignments(requests, simulate_empty);
      ASSERT_EQ(Describe(got), Describe(want)) << "step " << step;
      ASSERT_EQ(got.assignments, want.assignments) << "step " << step;
      ++placements;
      if (!got.ok()) {
        ++failures;
        continue;
      }
      // Most placements are admitted: their usage stays until released.
      if (simulate_empty || rng() % 4 == 0) continue;
      for (size_t i = 0; i < requests.size(); ++i) {
        if (!got.assignments[i].has_value()) continue;
        for (const TopologyDomainAssignment& d : got.assignments[i]->domains) {
          std::vector<std::string> values = d.values;
          if (values.size() < levels.size()) {
            // A hostname assignment names the host alone.
            for (const NodeSpec& n : nodes) {
              if (n.name == values.back()) values = values_of(n);
            }
          }
          Placed p{values, ResourceAmounts(requests[i].per_pod.begin(), requests[i].per_pod.end()),
                   d.count};
          apply(p, +1);
          placed.push_back(std::move(p));
        }
      }
    }
    // Keep the cluster from filling up for good.
    while (placed.size() > 120) {
      apply(placed.front(), -1);
      placed.erase(placed.begin());
    }
  }
  // The sequence must exercise both outcomes.
  EXPECT_GT(placements, steps / 2);
  EXPECT_GT(failures, 0);
  EXPECT_LT(failures, placements);
}

TEST(TopologyIncrementalTest, HostnameTreeMatchesTheComputationFromScratch) {
  RunRandomSequence({kBlock, kRack, kHostnameLabel}, 28, 3000);
}

TEST(TopologyIncrementalTest, RackLeavesMatchTheComputationFromScratch) {
  RunRandomSequence({kBlock, kRack}, 2028, 3000);
}

TEST(TopologyIncrementalTest, HostnameOnlyTreeMatchesTheComputationFromScratch) {
  RunRandomSequence({kHostnameLabel}, 1128, 1500);
}

// The level order's lookups against a pass over the level, through random moves among few
// pairs (so domains leave and come back, buckets empty and come back, stale entries pile up and
// are compacted) and among many.
// `take_found`: half the moves take the domain the last lookup found, as placements do (domains
// leave their pair in level order; the buckets' runs are read from the front and appended to).
void CheckLevelOrder(int32_t domains, int32_t distinct, uint32_t seed, bool take_found = false) {
  std::mt19937 rng(seed);
  std::vector<std::pair<int32_t, int32_t>> counts(domains);
  auto random_counts = [&] {
    const int32_t slices = static_cast<int32_t>(rng() % distinct);
    return std::make_pair(slices, slices * 2 + static_cast<int32_t>(rng() % 2));
  };
  std::vector<uint64_t> keys;
  for (auto& c : counts) {
    c = random_counts();
    keys.push_back(TopologyLevelOrder::Key(c.first, c.second));
  }
  TopologyLevelOrder order(std::move(keys));
  int32_t found = -1;
  for (int step = 0; step < 20000; ++step) {
    const int32_t pos =
        take_found && found >= 0 && rng() % 2 == 0 ? found : static_cast<int32_t>(rng() % domains);
    counts[pos] = random_counts();
    order.Move(pos, TopologyLevelOrder::Key(counts[pos].first, counts[pos].second));
    const int32_t needed = static_cast<int32_t>(rng() % (distinct + 1));
    int32_t want = -1;
    int32_t largest = 0;
    for (int32_t d = 0; d < domains; ++d) {
      if (counts[d].first >= needed && (want < 0 || counts[d] < counts[want])) want = d;
      if (counts[d] > counts[largest]) largest = d;
    }
    ASSERT_EQ(order.FirstFrom(TopologyLevelOrder::Key(needed, INT32_MIN)), want)
        << "step " << step << ", at least " << needed << " slices";
    found = want;
    ASSERT_EQ(counts[order.AnyLargest()], counts[largest]) << "step " << step;
  }
}

TEST(TopologyLevelOrderTest, FindsTheSmallestDomainWithEnoughSlicesAmongFewPairs) {
  CheckLevelOrder(/*domains=*/40, /*distinct=*/3, /*seed=*/7);
}

TEST(TopologyLevelOrderTest, FindsTheSmallestDomainWithEnoughSlicesAmongManyPairs) {
  CheckLevelOrder(/*domains=*/200, /*distinct=*/150, /*seed=*/11);
}

TEST(TopologyLevelOrderTest, FindsTheSmallestDomainWhenTheFoundOnesMove) {
  CheckLevelOrder(/*domains=*/300, /*distinct=*/4, /*seed=*/13, /*take_found=*/true);
  CheckLevelOrder(/*domains=*/200, /*distinct=*/150, /*seed=*/17, /*take_found=*/true);
}

}  // namespace
}  // namespace tollgate::core
