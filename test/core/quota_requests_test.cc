#include "core/quota_requests.h"

#include <cstdint>
#include <limits>
#include <string>
#include <utility>
#include <vector>

#include "core/queue_router.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace tollgate::core {
namespace {

using ::testing::ElementsAre;
using ::testing::Pair;

ResourceTransformation Transform(std::string input, TransformationStrategy strategy,
                                 std::vector<std::pair<std::string, std::string>> outputs,
                                 std::string multiply_by = "") {
  ResourceTransformation t;
  t.input = std::move(input);
  t.strategy = strategy;
  t.multiply_by = std::move(multiply_by);
  for (const auto& [name, text] : outputs) t.outputs.emplace_back(name, *Quantity::Parse(text));
  return t;
}

constexpr TransformationStrategy kRetain = TransformationStrategy::kRetain;
constexpr TransformationStrategy kReplace = TransformationStrategy::kReplace;

struct TransformCase {
  const char* name;
  ResourceAmounts per_pod;
  std::vector<ResourceTransformation> transformations;
  ResourceAmounts want;
};

// The cases of Kueue's pkg/workload TestNewInfo for resource transformations, per pod (Kueue
// multiplies by the count afterwards, as the flavor assigner does here).
TEST(TransformRequestsTest, FollowsKueueApplyResourceTransformations) {
  const std::vector<ResourceTransformation> gpu_catalogue = {
      Transform("nvidia.com/mig-1g.5gb", kReplace,
                {{"example.com/accelerator-memory", "5Ki"}, {"example.com/credits", "10"}}),
      Transform("nvidia.com/mig-2g.10gb", kReplace,
                {{"example.com/accelerator-memory", "10Ki"}, {"example.com/credits", "15"}}),
      Transform("nvidia.com/gpu", kRetain,
                {{"example.com/accelerator-memory", "40Ki"}, {"example.com/credits", "100"}}),
      Transform("nvidia.com/vgpucores", kReplace, {{"nvidia.com/total-vgpucores", "1"}},
                "nvidia.com/vgpu"),
      Transform("nvidia.com/vgpumem", kReplace, {{"nvidia.com/total-vgpumem", "1"}},
                "nvidia.com/vgpu"),
  };
  const std::vector<ResourceTransformation> allowance = {
      Transform("nvidia.com/gpumem", kReplace, {{"quota.example.com/gpu-memory-overage", "1"}},
                "nvidia.com/gpu"),
      Transform("nvidia.com/gpu", kRetain, {{"quota.example.com/gpu-memory-overage", "-1024"}}),
  };
  const std::vector<TransformCase> cases = {
      {"replace mig profiles, summing outputs of one name",
       {{"cpu", 1000}, {"nvidia.com/mig-1g.5gb", 2}, {"nvidia.com/mig-2g.10gb", 1}},
       gpu_catalogue,
       {{"cpu", 1000}, {"example.com/accelerator-memory", 20 * 1024}, {"example.com/credits", 35}}},
      {"retain keeps the input",
       {{"cpu", 2000}, {"nvidia.com/gpu", 1}},
       gpu_catalogue,
       {{"cpu", 2000},
        {"example.com/accelerator-memory", 40 * 1024},
        {"example.com/credits", 100},
        {"nvidia.com/gpu", 1}}},
      {"multiplyBy scales the outputs",
       {{"nvidia.com/vgpu", 2}, {"nvidia.com/vgpucores", 20}, {"nvidia.com/vgpumem", 1024}},
       gpu_catalogue,
       {{"nvidia.com/total-vgpucores", 40},
        {"nvidia.com/total-vgpumem", 2048},
        {"nvidia.com/vgpu", 2}}},
      {"an allowance above it charges the overage",
       {{"nvidia.com/gpu", 2}, {"nvidia.com/gpumem", 2048}},
       allowance,
       {{"nvidia.com/gpu", 2}, {"quota.example.com/gpu-memory-overage", 2048}}},
      {"an allowance exactly at it leaves a zero request",
       {{"nvidia.com/gpu", 2}, {"nvidia.com/gpumem", 1024}},
       allowance,
       {{"nvidia.com/gpu", 2}, {"quota.example.com/gpu-memory-overage", 0}}},
      {"an allowance under it is floored at zero",
       {{"nvidia.com/gpu", 2}, {"nvidia.com/gpumem", 512}},
       allowance,
       {{"nvidia.com/gpu", 2}, {"quota.example.com/gpu-memory-overage", 0}}},
      {"an allowance does not reach a request the pod makes itself",
       {{"example.com/credit", 3}, {"example.com/gpu", 8}},
       {Transform("example.com/credit", kReplace, {{"example.com/gpu", "-1"}})},
       {{"example.com/gpu", 8}}},
      {"an output sharing a request's name is added to it",
       {{"example.com/credit", 1}, {"example.com/gpu", 1}},
       {Transform("example.com/credit", kReplace, {{"example.com/gpu", "1"}})},
       {{"example.com/gpu", 2}}},
      {"an output naming its retained input is added to it",
       {{"example.com/gpu", 1}},
       {Transform("example.com/gpu", kRetain, {{"example.com/gpu", "5"}})},
       {{"example.com/gpu", 6}}},
      {"retain with multiplyBy keeps the input as requested",
       {{"example.com/gpu", 2}, {"example.com/gpumem", 1024}},
       {Transform("example.com/gpumem", kRetain, {{"example.com/gpumem-quota", "1"}},
                  "example.com/gpu")},
       {{"example.com/gpu", 2}, {"example.com/gpumem", 1024}, {"example.com/gpumem-quota", 2048}}},
      {"a multiplier under one (cpu, in cores)",
       {{"cpu", 500}, {"example.com/gpumem", 1024}},
       {Transform("example.com/gpumem", kRetain, {{"example.com/gpumem-quota", "1"}}, "cpu")},
       {{"cpu", 500}, {"example.com/gpumem", 1024}, {"example.com/gpumem-quota", 512}}},
      {"multiplyBy with its retained input of the same name",
       {{"example.com/gpu", 1}, {"example.com/node", 2}},
       {Transform("example.com/gpu", kRetain, {{"example.com/gpu", "1"}}, "example.com/node")},
       {{"example.com/gpu", 3}, {"example.com/node", 2}}},
      {"multiplyBy naming nothing the pod requests leaves the input as it is",
       {{"example.com/gpumem", 1024}},
       {Transform("example.com/gpumem", kReplace, {{"example.com/gpumem-quota", "1"}},
                  "example.com/gpu")},
       {{"example.com/gpumem-quota", 1024}}},
      {"a product past the range saturates",
       {{"example.com/credit", 10000000000}},
       {Transform("example.com/credit", kReplace, {{"example.com/gpu", "10000000000"}})},
       {{"example.com/gpu", std::numeric_limits<int64_t>::max()}}},
      {"milli values are exact",
       {{"cpu", 100}, {"memory", 100000000}},
       {Transform("cpu", kReplace, {{"example.com/cpu-credits", "3000"}}),
        Transform("memory", kReplace, {{"example.com/memory-credits", "3m"}})},
       {{"example.com/cpu-credits", 300}, {"example.com/memory-credits", 300000}}},
      {"an output of cpu is counted in milli-units, rounded up",
       {{"example.com/vcpu", 3}},
       {Transform("example.com/vcpu", kReplace, {{"cpu", "333333n"}})},
       {{"cpu", 1}}},
      {"replace without outputs drops the input",
       {{"cpu", 1000}, {"example.com/ignored", 4}},
       {Transform("example.com/ignored", kReplace, {})},
       {{"cpu", 1000}}},
      {"a request nothing transforms is returned as it is",
       {{"cpu", 1000}},
       gpu_catalogue,
       {{"cpu", 1000}}},
  };
  for (const TransformCase& c : cases) {
    SCOPED_TRACE(c.name);
    EXPECT_EQ(TransformRequests(c.per_pod, c.transformations), c.want);
  }
}

ClusterQueueRuntime CoveringCpu() {
  ClusterQueueRuntime cq;
  cq.group_index = {{"cpu", 0}};
  return cq;
}

TEST(QuotaRequestsPerPodTest, IgnoreUndeclaredLeavesOutWhatTheQueueDoesNotCover) {
  SchedulerConfig config;
  config.quota_check_strategy = QuotaCheckStrategy::kIgnoreUndeclared;
  PodSetSpec pod_set;
  pod_set.requests = {{"cpu", 2000}, {"example.com/gpu", 100}, {"memory", 0}};
  EXPECT_THAT(QuotaRequestsPerPod(config, pod_set, CoveringCpu()), ElementsAre(Pair("cpu", 2000)));
  // The transformations come first: an output the queue covers counts.
  config.resource_transformations = {
      Transform("example.com/gpu", kReplace, {{"cpu", "10m"}, {"example.com/credits", "1"}})};
  EXPECT_THAT(QuotaRequestsPerPod(config, pod_set, CoveringCpu()), ElementsAre(Pair("cpu", 3000)));
}

TEST(QuotaRequestsPerPodTest, BlockUndeclaredKeepsEveryRequest) {
  SchedulerConfig config;
  config.resource_transformations = {Transform("example.com/gpu", kRetain, {{"cpu", "1"}})};
  PodSetSpec pod_set;
  pod_set.requests = {{"cpu", 2000}, {"example.com/gpu", 1}};
  EXPECT_THAT(QuotaRequestsPerPod(config, pod_set, CoveringCpu()),
              ElementsAre(Pair("cpu", 3000), Pair("example.com/gpu", 1)));
  EXPECT_THAT(TransformedRequestsPerPod(config, pod_set),
              ElementsAre(Pair("cpu", 3000), Pair("example.com/gpu", 1)));
}

TEST(AdjustsQuotaRequestsTest, OnlyWhenAnOptionIsSet) {
  SchedulerConfig config;
  EXPECT_FALSE(AdjustsQuotaRequests(config));
  config.quota_check_strategy = QuotaCheckStrategy::kIgnoreUndeclared;
  EXPECT_TRUE(AdjustsQuotaRequests(config));
  config.quota_check_strategy = QuotaCheckStrategy::kBlockUndeclared;
  config.resource_transformations = {Transform("a", kRetain, {{"b", "1"}})};
  EXPECT_TRUE(AdjustsQuotaRequests(config));
}

}  // namespace
}  // namespace tollgate::core
