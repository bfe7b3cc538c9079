#pragma once

// Pod templates to Tollgate pod sets: the per-pod requests (core/pod_requests.h, the rule the
// manifest parser shares), plus the template's node selector and tolerations. Pure; no I/O.

#include <cstdint>
#include <optional>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "core/pod_requests.h"
#include "services/manifest/json_util.h"
#include "tollgate/v1/objects.pb.h"

namespace tollgate::manifest {

// The parts of a core/v1 PodSpec (JSON) that decide its requests, for core::EffectivePodRequests:
// containers, init containers (with restartPolicy), overhead and pod-level `resources`.
// INVALID_ARGUMENT names `path` and the malformed quantity.
absl::StatusOr<core::PodResources> PodResourcesFromJson(const Json& pod_spec,
                                                        absl::string_view path);

// A pod set named `name` of `count` pods from a PodTemplateSpec (its `spec` is read), with the
// pod's effective requests (core::EffectivePodRequests) as quantity strings.
absl::StatusOr<v1::PodSet> PodSetFromTemplate(absl::string_view name, int32_t count,
                                              std::optional<int32_t> min_count,
                                              const Json& pod_template, absl::string_view path);

// core/v1 Toleration JSON <-> Tollgate's Toleration.
v1::Toleration TolerationFromJson(const Json& t);
Json TolerationToJson(const v1::Toleration& t);

}  // namespace tollgate::manifest
