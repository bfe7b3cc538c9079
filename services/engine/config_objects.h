#pragma once

#include <optional>
#include <string>
#include <variant>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "core/cluster_state.h"
#include "core/object_kind.h"
#include "core/types.h"
#include "services/auth/authorizer.h"
#include "tollgate/v1/objects.pb.h"
#include "tollgate/v1/service.pb.h"

namespace tollgate::engine {

// A configuration object that passed validation, in the core's model (the scheduling kinds) or
// the authorizer's (the policy kinds, which ApplyValidated leaves out of ClusterState).
using ValidatedSpec =
    std::variant<core::NamespaceSpec, core::ResourceFlavorSpec, core::ClusterQueueSpec,
                 core::CohortSpec, core::LocalQueueSpec, core::PriorityClassSpec, auth::Role,
                 auth::RoleBinding, auth::QueueGrant, core::AdmissionCheckSpec, core::TopologySpec,
                 core::MultiKueueConfigSpec, core::MultiKueueClusterSpec>;

struct ValidatedObject {
  core::ObjectKind kind;
  std::string namespace_name;
  std::string name;
  ValidatedSpec spec;
};

// Validates every field; INVALID_ARGUMENT names the kind, object, field path and value.
absl::StatusOr<ValidatedObject> ValidateConfigObject(const v1::ConfigObject& object);
// Cannot fail: the object was validated. Policy kinds change nothing here (they are not
// scheduling state; the access gate reads them from the store).
void ApplyValidated(core::ClusterState& state, const ValidatedObject& object, absl::Time now);

// Identity of any config object, and the store key it lives under. The API's kinds are the
// core's (core/object_kind.h) under the proto naming convention: kind ClusterQueue is
// v1::CLUSTER_QUEUE and ConfigObject's member cluster_queue; nothing here lists kinds again.
v1::ObjectKind KindOf(const v1::ConfigObject& object);
const v1::ObjectMeta& MetadataOf(const v1::ConfigObject& object);
v1::ObjectMeta* MutableMetadataOf(v1::ConfigObject& object);
// Clears the server-filled `status` of whichever kind `object` holds (if it has one).
void ClearStatus(v1::ConfigObject& object);
v1::ObjectKind ToProtoKind(core::ObjectKind kind);
absl::StatusOr<core::ObjectKind> ToCoreKind(v1::ObjectKind kind);
// The API kind of a configuration kind's manifest name ("ClusterQueue"); nullopt for Workload
// and for names that are no kind.
std::optional<v1::ObjectKind> ConfigKindNamed(absl::string_view name);
std::string KindName(v1::ObjectKind kind);
bool IsNamespaced(v1::ObjectKind kind);
// Role, RoleBinding, QueueGrant: the authorization policy kinds (core::KindTraits::policy).
bool IsPolicyKind(v1::ObjectKind kind);
std::string ConfigObjectKey(v1::ObjectKind kind, absl::string_view namespace_name,
                            absl::string_view name);

}  // namespace tollgate::engine
