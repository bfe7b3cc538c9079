#pragma once

// Pod templates to Tollgate pod sets: the per-pod requests as Kubernetes' scheduler computes
// them, plus the template's node selector and tolerations. Pure; no I/O.

#include <cstdint>
#include <map>
#include <optional>
#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "adapters/kube/json_util.h"
#include "tollgate/v1/objects.pb.h"

namespace tollgate::adapters::kube {

// Resource name -> amount in Kueue's scalar units (milli-CPU, whole units otherwise).
using ResourceAmounts = std::map<std::string, int64_t>;

// The effective request of one pod with `pod_spec` (a core/v1 PodSpec), as
// k8s.io/component-helpers/resource.PodRequests computes it: per resource the larger of the sum
// of the app containers (plus every sidecar, i.e. init container with restartPolicy Always) and
// the largest init container (plus the sidecars started before it); then pod overhead added. A
// container's missing request defaults to its limit, as Kueue does. Zero amounts are dropped.
// INVALID_ARGUMENT names `path` and the malformed quantity.
absl::StatusOr<ResourceAmounts> EffectivePodRequests(const Json& pod_spec, absl::string_view path);

// A pod set named `name` of `count` pods from a PodTemplateSpec (its `spec` is read); requests
// are formatted back to quantity strings.
absl::StatusOr<v1::PodSet> PodSetFromTemplate(absl::string_view name, int32_t count,
                                              std::optional<int32_t> min_count,
                                              const Json& pod_template, absl::string_view path);

// core/v1 Toleration JSON <-> Tollgate's Toleration.
v1::Toleration TolerationFromJson(const Json& t);
Json TolerationToJson(const v1::Toleration& t);

}  // namespace tollgate::adapters::kube
