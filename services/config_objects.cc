#include "services/config_objects.h"

#include "absl/strings/str_cat.h"
#include "core/status_macros.h"
#include "services/api_codec.h"
#include "services/state_keys.h"

namespace tollgate::services {

v1::ObjectKind KindOf(const v1::ConfigObject& object) {
  switch (object.kind_case()) {
    case v1::ConfigObject::kResourceFlavor:
      return v1::RESOURCE_FLAVOR;
    case v1::ConfigObject::kClusterQueue:
      return v1::CLUSTER_QUEUE;
    case v1::ConfigObject::kCohort:
      return v1::COHORT;
    case v1::ConfigObject::kLocalQueue:
      return v1::LOCAL_QUEUE;
    case v1::ConfigObject::kWorkloadPriorityClass:
      return v1::WORKLOAD_PRIORITY_CLASS;
    case v1::ConfigObject::kPriorityClass:
      return v1::PRIORITY_CLASS;
    case v1::ConfigObject::kNamespace:
      return v1::NAMESPACE;
    case v1::ConfigObject::KIND_NOT_SET:
      break;
  }
  return v1::OBJECT_KIND_UNSPECIFIED;
}

const v1::ObjectMeta& MetadataOf(const v1::ConfigObject& object) {
  return *MutableMetadataOf(const_cast<v1::ConfigObject&>(object));
}

v1::ObjectMeta* MutableMetadataOf(v1::ConfigObject& object) {
  switch (object.kind_case()) {
    case v1::ConfigObject::kResourceFlavor:
      return object.mutable_resource_flavor()->mutable_metadata();
    case v1::ConfigObject::kClusterQueue:
      return object.mutable_cluster_queue()->mutable_metadata();
    case v1::ConfigObject::kCohort:
      return object.mutable_cohort()->mutable_metadata();
    case v1::ConfigObject::kLocalQueue:
      return object.mutable_local_queue()->mutable_metadata();
    case v1::ConfigObject::kWorkloadPriorityClass:
      return object.mutable_workload_priority_class()->mutable_metadata();
    case v1::ConfigObject::kPriorityClass:
      return object.mutable_priority_class()->mutable_metadata();
    case v1::ConfigObject::kNamespace:
      return object.mutable_namespace_()->mutable_metadata();
    case v1::ConfigObject::KIND_NOT_SET:
      break;
  }
  static v1::ObjectMeta* const kEmpty = new v1::ObjectMeta();
  return kEmpty;
}

absl::StatusOr<core::ObjectKind> ToCoreKind(v1::ObjectKind kind) {
  switch (kind) {
    case v1::NAMESPACE:
      return core::ObjectKind::kNamespace;
    case v1::RESOURCE_FLAVOR:
      return core::ObjectKind::kResourceFlavor;
    case v1::CLUSTER_QUEUE:
      return core::ObjectKind::kClusterQueue;
    case v1::COHORT:
      return core::ObjectKind::kCohort;
    case v1::LOCAL_QUEUE:
      return core::ObjectKind::kLocalQueue;
    case v1::WORKLOAD_PRIORITY_CLASS:
      return core::ObjectKind::kWorkloadPriorityClass;
    case v1::PRIORITY_CLASS:
      return core::ObjectKind::kPriorityClass;
    default:
      break;
  }
  return absl::InvalidArgumentError(
      absl::StrCat("kind: unknown object kind ", static_cast<int>(kind),
                   v1::ObjectKind_IsValid(kind) ? absl::StrCat(" (", v1::ObjectKind_Name(kind), ")")
                                                : std::string(),
                   ": supported values: RESOURCE_FLAVOR, CLUSTER_QUEUE, COHORT, LOCAL_QUEUE, "
                   "WORKLOAD_PRIORITY_CLASS, PRIORITY_CLASS, NAMESPACE"));
}

std::string KindName(v1::ObjectKind kind) {
  absl::StatusOr<core::ObjectKind> core_kind = ToCoreKind(kind);
  return core_kind.ok() ? core::ObjectKindName(*core_kind) : "Unknown";
}

std::string ConfigObjectKey(v1::ObjectKind kind, absl::string_view namespace_name,
                            absl::string_view name) {
  return ObjectKey(KindName(kind), kind == v1::LOCAL_QUEUE ? namespace_name : absl::string_view(),
                   name);
}

absl::StatusOr<ValidatedObject> ValidateConfigObject(const v1::ConfigObject& object) {
  ValidatedObject out;
  const v1::ObjectMeta& meta = MetadataOf(object);
  out.name = meta.name();
  switch (object.kind_case()) {
    case v1::ConfigObject::kNamespace: {
      out.kind = core::ObjectKind::kNamespace;
      TOLLGATE_ASSIGN_OR_RETURN(out.spec, NamespaceFromProto(object.namespace_()));
      break;
    }
    case v1::ConfigObject::kResourceFlavor: {
      out.kind = core::ObjectKind::kResourceFlavor;
      TOLLGATE_ASSIGN_OR_RETURN(out.spec, ResourceFlavorFromProto(object.resource_flavor()));
      break;
    }
    case v1::ConfigObject::kClusterQueue: {
      out.kind = core::ObjectKind::kClusterQueue;
      TOLLGATE_ASSIGN_OR_RETURN(out.spec, ClusterQueueFromProto(object.cluster_queue()));
      break;
    }
    case v1::ConfigObject::kCohort: {
      out.kind = core::ObjectKind::kCohort;
      TOLLGATE_ASSIGN_OR_RETURN(out.spec, CohortFromProto(object.cohort()));
      break;
    }
    case v1::ConfigObject::kLocalQueue: {
      out.kind = core::ObjectKind::kLocalQueue;
      out.namespace_name = meta.namespace_();
      TOLLGATE_ASSIGN_OR_RETURN(out.spec, LocalQueueFromProto(object.local_queue()));
      break;
    }
    case v1::ConfigObject::kWorkloadPriorityClass: {
      out.kind = core::ObjectKind::kWorkloadPriorityClass;
      TOLLGATE_ASSIGN_OR_RETURN(out.spec, PriorityClassFromProto(object.workload_priority_class()));
      break;
    }
    case v1::ConfigObject::kPriorityClass: {
      out.kind = core::ObjectKind::kPriorityClass;
      TOLLGATE_ASSIGN_OR_RETURN(out.spec, PriorityClassFromProto(object.priority_class()));
      break;
    }
    case v1::ConfigObject::KIND_NOT_SET:
      return absl::InvalidArgumentError("objects[]: no object kind set");
  }
  return out;
}

void ApplyValidated(core::ClusterState& state, const ValidatedObject& object, absl::Time now) {
  // The Apply* methods accept any validated spec; dropping their OK status is safe.
  absl::Status status = std::visit(
      [&](const auto& spec) -> absl::Status {
        using T = std::decay_t<decltype(spec)>;
        if constexpr (std::is_same_v<T, core::NamespaceSpec>) {
          return state.ApplyNamespace(spec, now);
        } else if constexpr (std::is_same_v<T, core::ResourceFlavorSpec>) {
          return state.ApplyResourceFlavor(spec, now);
        } else if constexpr (std::is_same_v<T, core::ClusterQueueSpec>) {
          return state.ApplyClusterQueue(spec, now);
        } else if constexpr (std::is_same_v<T, core::CohortSpec>) {
          return state.ApplyCohort(spec, now);
        } else if constexpr (std::is_same_v<T, core::LocalQueueSpec>) {
          return state.ApplyLocalQueue(spec, now);
        } else {
          return state.ApplyPriorityClass(spec, now);
        }
      },
      object.spec);
  status.IgnoreError();
}

}  // namespace tollgate::services
