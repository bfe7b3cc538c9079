#include "core/quota_requests.h"

#include <algorithm>
#include <map>
#include <string>
#include <utility>

#include "core/quantity.h"
#include "core/queue_router.h"
#include "core/saturating.h"

namespace tollgate::core {
namespace {

// A request as the exact quantity its scalar stands for (cpu is counted in milli-units).
Quantity QuantityOf(const std::string& resource, int64_t scalar) {
  return resource == "cpu" ? Quantity::FromMilli(scalar, Quantity::Format::kDecimalSI)
                           : Quantity::FromValue(scalar, Quantity::Format::kDecimalSI);
}

const ResourceTransformation* TransformationOf(
    const std::vector<ResourceTransformation>& transformations, const std::string& resource) {
  for (const ResourceTransformation& t : transformations) {
    if (t.input == resource) return &t;
  }
  return nullptr;
}

const int64_t* RequestOf(const ResourceAmounts& per_pod, const std::string& resource) {
  for (const auto& [name, amount] : per_pod) {
    if (name == resource) return &amount;
  }
  return nullptr;
}

}  // namespace

ResourceAmounts TransformRequests(const ResourceAmounts& per_pod,
                                  const std::vector<ResourceTransformation>& transformations) {
  if (std::none_of(per_pod.begin(), per_pod.end(), [&](const auto& request) {
        return TransformationOf(transformations, request.first) != nullptr;
      })) {
    return per_pod;
  }
  // Kept apart until the end, as Kueue keeps them: a negative output (an allowance) offsets
  // other outputs of its name, never a request the pod makes itself.
  std::map<std::string, int64_t> retained;
  std::map<std::string, Quantity> generated;
  for (const auto& [resource, amount] : per_pod) {
    const ResourceTransformation* t = TransformationOf(transformations, resource);
    if (t == nullptr) {
      retained.emplace(resource, amount);
      continue;
    }
    // multiplyBy scales what the outputs are computed from, not the retained input.
    Quantity base = QuantityOf(resource, amount);
    if (!t->multiply_by.empty()) {
      if (const int64_t* multiplier = RequestOf(per_pod, t->multiply_by)) {
        base = base.Times(QuantityOf(t->multiply_by, *multiplier));
      }
    }
    for (const auto& [output, factor] : t->outputs) {
      Quantity& total = generated[output];
      total = total.Plus(base.Times(factor));
    }
    if (t->strategy == TransformationStrategy::kRetain) retained.emplace(resource, amount);
  }
  for (const auto& [output, total] : generated) {
    // A negative total is zero; the scalar rounds up and saturates (Kueue's Value/MilliValue).
    const int64_t scalar = total.IsNegative() ? 0 : ResourceScalar(output, total);
    auto [it, inserted] = retained.emplace(output, scalar);
    if (!inserted) it->second = SatAdd(it->second, scalar);
  }
  ResourceAmounts out(retained.begin(), retained.end());
  // Kueue's FloorToZero: no request below zero.
  for (auto& [resource, amount] : out) amount = std::max<int64_t>(amount, 0);
  return out;
}

ResourceAmounts QuotaRequestsPerPod(const SchedulerConfig& config, const PodSetSpec& pod_set,
                                    const ClusterQueueRuntime& cq) {
  ResourceAmounts out = config.resource_transformations.empty()
                            ? pod_set.requests
                            : TransformRequests(pod_set.requests, config.resource_transformations);
  if (config.quota_check_strategy == QuotaCheckStrategy::kIgnoreUndeclared) {
    std::erase_if(out, [&cq](const std::pair<std::string, int64_t>& request) {
      return cq.GroupOf(request.first) < 0;
    });
  }
  return out;
}

ResourceAmounts TransformedRequestsPerPod(const SchedulerConfig& config,
                                          const PodSetSpec& pod_set) {
  if (config.resource_transformations.empty()) return pod_set.requests;
  return TransformRequests(pod_set.requests, config.resource_transformations);
}

}  // namespace tollgate::core
