#pragma once

// Kueue's role hash of a pod (Kueue: pkg/util/pod GenerateRoleHash, used by the pod-group
// integration): pods of a group with the same hash form one pod set, named by the hash. Kueue
// hashes the JSON that Go's encoding/json writes for the parts of the pod spec that matter to
// admission; this computes the same bytes from the pod's JSON, so a group gets the pod set names
// Kueue would give it.

#include <string>

#include "absl/status/statusor.h"
#include "nlohmann/json.hpp"

namespace tollgate::manifest {

// The annotation that, when a pod carries it, is its role hash (Kueue's webhook writes it at
// creation; LeaderWorkerSet and StatefulSet pods get "leader", "worker" or "main").
inline constexpr char kRoleHashAnnotation[] = "kueue.x-k8s.io/role-hash";

// The pod's role: its kRoleHashAnnotation when set, else RoleHashOfSpec of its spec.
absl::StatusOr<std::string> PodRoleHash(const nlohmann::json& pod);

// The first 8 hex digits of SHA-256 over {"spec": shape}, the shape holding the pod spec's
// initContainers and containers (each only its resources.requests and ports), nodeSelector,
// affinity, tolerations, runtimeClassName, priority, topologySpreadConstraints, overhead,
// resourceClaims, and pod-level resources.requests when `resources` is set. Written as Go does:
// map keys sorted, struct fields in their Go order, omitempty fields left out when empty, an
// absent list, map or pointer as null, quantities in their canonical spelling, and Go's string
// escapes. INVALID_ARGUMENT (naming the field) for a quantity that does not parse or a value of
// the wrong JSON type.
absl::StatusOr<std::string> RoleHashOfSpec(const nlohmann::json& pod_spec);

// The shape's JSON text itself (what is hashed), for tests and diagnostics.
absl::StatusOr<std::string> RoleShapeJson(const nlohmann::json& pod_spec);

}  // namespace tollgate::manifest
