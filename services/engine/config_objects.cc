#include "services/engine/config_objects.h"

#include <optional>
#include <string>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "core/object_kind.h"
#include "core/status_macros.h"
#include "services/api/api_codec.h"
#include "services/api/policy_codec.h"
#include "services/engine/state_keys.h"

namespace tollgate::engine {

namespace {

// "ClusterQueue" -> "cluster_queue".
std::string SnakeCase(absl::string_view camel) {
  std::string out;
  for (char c : camel) {
    if (absl::ascii_isupper(c)) {
      if (!out.empty()) out.push_back('_');
      out.push_back(absl::ascii_tolower(c));
    } else {
      out.push_back(c);
    }
  }
  return out;
}

// One configuration kind of the core table, as the API spells it.
struct ProtoKind {
  core::ObjectKind kind;
  v1::ObjectKind proto = v1::OBJECT_KIND_UNSPECIFIED;
  // ConfigObject's oneof member holding this kind; null if the proto lacks one (a test fails).
  const google::protobuf::FieldDescriptor* member = nullptr;
};

// Derived from core::AllKinds() by the proto naming convention (ClusterQueue is the enum value
// CLUSTER_QUEUE and the oneof member cluster_queue), so the kinds are listed once, in the core.
const std::vector<ProtoKind>& ProtoKinds() {
  static const auto* const kinds = [] {
    auto* out = new std::vector<ProtoKind>;
    const google::protobuf::Descriptor* object = v1::ConfigObject::descriptor();
    for (const core::KindTraits& traits : core::AllKinds()) {
      if (!traits.config_kind.has_value()) continue;
      const std::string snake = SnakeCase(traits.name);
      ProtoKind row{*traits.config_kind};
      if (!v1::ObjectKind_Parse(absl::AsciiStrToUpper(snake), &row.proto)) {
        row.proto = v1::OBJECT_KIND_UNSPECIFIED;
      }
      row.member = object->FindFieldByName(snake);
      out->push_back(row);
    }
    return out;
  }();
  return *kinds;
}

const ProtoKind* RowOf(const v1::ConfigObject& object) {
  for (const ProtoKind& row : ProtoKinds()) {
    if (row.member != nullptr && row.member->number() == object.kind_case()) return &row;
  }
  return nullptr;
}

// The per-kind converters: the only place a new kind needs code of its own here.
absl::StatusOr<ValidatedSpec> SpecFromProto(const v1::ConfigObject& object) {
  switch (object.kind_case()) {
    case v1::ConfigObject::kNamespace:
      return api::NamespaceFromProto(object.namespace_());
    case v1::ConfigObject::kResourceFlavor:
      return api::ResourceFlavorFromProto(object.resource_flavor());
    case v1::ConfigObject::kClusterQueue:
      return api::ClusterQueueFromProto(object.cluster_queue());
    case v1::ConfigObject::kCohort:
      return api::CohortFromProto(object.cohort());
    case v1::ConfigObject::kLocalQueue:
      return api::LocalQueueFromProto(object.local_queue());
    case v1::ConfigObject::kWorkloadPriorityClass:
      return api::PriorityClassFromProto(object.workload_priority_class());
    case v1::ConfigObject::kPriorityClass:
      return api::PriorityClassFromProto(object.priority_class());
    case v1::ConfigObject::kRole:
      return api::RoleFromProto(object.role());
    case v1::ConfigObject::kRoleBinding:
      return api::RoleBindingFromProto(object.role_binding());
    case v1::ConfigObject::kQueueGrant:
      return api::QueueGrantFromProto(object.queue_grant());
    case v1::ConfigObject::kAdmissionCheck:
      return api::AdmissionCheckFromProto(object.admission_check());
    case v1::ConfigObject::kTopology:
      return api::TopologyFromProto(object.topology());
    case v1::ConfigObject::kMultiKueueConfig:
      return api::MultiKueueConfigFromProto(object.multi_kueue_config());
    case v1::ConfigObject::kMultiKueueCluster:
      return api::MultiKueueClusterFromProto(object.multi_kueue_cluster());
    case v1::ConfigObject::KIND_NOT_SET:
      break;
  }
  return absl::InvalidArgumentError("objects[]: no object kind set");
}

}  // namespace

v1::ObjectKind KindOf(const v1::ConfigObject& object) {
  const ProtoKind* row = RowOf(object);
  return row == nullptr ? v1::OBJECT_KIND_UNSPECIFIED : row->proto;
}

const v1::ObjectMeta& MetadataOf(const v1::ConfigObject& object) {
  return *MutableMetadataOf(const_cast<v1::ConfigObject&>(object));
}

v1::ObjectMeta* MutableMetadataOf(v1::ConfigObject& object) {
  static v1::ObjectMeta* const kEmpty = new v1::ObjectMeta();
  const ProtoKind* row = RowOf(object);
  if (row == nullptr) return kEmpty;
  google::protobuf::Message* member = object.GetReflection()->MutableMessage(&object, row->member);
  const google::protobuf::FieldDescriptor* metadata =
      member->GetDescriptor()->FindFieldByName("metadata");
  if (metadata == nullptr || metadata->message_type() != v1::ObjectMeta::descriptor()) {
    return kEmpty;  // a kind without metadata; the ConfigObjectKindsTest forbids it
  }
  return static_cast<v1::ObjectMeta*>(member->GetReflection()->MutableMessage(member, metadata));
}

void ClearStatus(v1::ConfigObject& object) {
  const ProtoKind* row = RowOf(object);
  if (row == nullptr) return;
  google::protobuf::Message* member = object.GetReflection()->MutableMessage(&object, row->member);
  if (const google::protobuf::FieldDescriptor* status =
          member->GetDescriptor()->FindFieldByName("status");
      status != nullptr) {
    member->GetReflection()->ClearField(member, status);
  }
}

v1::ObjectKind ToProtoKind(core::ObjectKind kind) {
  for (const ProtoKind& row : ProtoKinds()) {
    if (row.kind == kind) return row.proto;
  }
  return v1::OBJECT_KIND_UNSPECIFIED;
}

absl::StatusOr<core::ObjectKind> ToCoreKind(v1::ObjectKind kind) {
  for (const ProtoKind& row : ProtoKinds()) {
    if (kind != v1::OBJECT_KIND_UNSPECIFIED && row.proto == kind) return row.kind;
  }
  std::vector<std::string> supported;
  for (const ProtoKind& row : ProtoKinds()) supported.push_back(v1::ObjectKind_Name(row.proto));
  return absl::InvalidArgumentError(
      absl::StrCat("kind: unknown object kind ", static_cast<int>(kind),
                   v1::ObjectKind_IsValid(kind) ? absl::StrCat(" (", v1::ObjectKind_Name(kind), ")")
                                                : std::string(),
                   ": supported values: ", absl::StrJoin(supported, ", ")));
}

std::optional<v1::ObjectKind> ConfigKindNamed(absl::string_view name) {
  const core::KindTraits* traits = core::FindKind(name);
  if (traits == nullptr || !traits->config_kind.has_value()) return std::nullopt;
  return ToProtoKind(*traits->config_kind);
}

std::string KindName(v1::ObjectKind kind) {
  absl::StatusOr<core::ObjectKind> core_kind = ToCoreKind(kind);
  return core_kind.ok() ? core::ObjectKindName(*core_kind) : "Unknown";
}

bool IsNamespaced(v1::ObjectKind kind) {
  absl::StatusOr<core::ObjectKind> core_kind = ToCoreKind(kind);
  return core_kind.ok() && core::TraitsOf(*core_kind).namespaced;
}

bool IsPolicyKind(v1::ObjectKind kind) {
  absl::StatusOr<core::ObjectKind> core_kind = ToCoreKind(kind);
  return core_kind.ok() && core::IsPolicyKind(*core_kind);
}

std::string ConfigObjectKey(v1::ObjectKind kind, absl::string_view namespace_name,
                            absl::string_view name) {
  return ObjectKey(KindName(kind), IsNamespaced(kind) ? namespace_name : absl::string_view(), name);
}

absl::StatusOr<ValidatedObject> ValidateConfigObject(const v1::ConfigObject& object) {
  ValidatedObject out;
  TOLLGATE_ASSIGN_OR_RETURN(out.spec, SpecFromProto(object));
  TOLLGATE_ASSIGN_OR_RETURN(out.kind, ToCoreKind(KindOf(object)));
  const v1::ObjectMeta& meta = MetadataOf(object);
  out.name = meta.name();
  if (core::TraitsOf(out.kind).namespaced) out.namespace_name = meta.namespace_();
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
        } else if constexpr (std::is_same_v<T, core::PriorityClassSpec>) {
          return state.ApplyPriorityClass(spec, now);
        } else if constexpr (std::is_same_v<T, core::AdmissionCheckSpec>) {
          // The API refuses a changed controllerName before it applies (TollgateApi::Apply).
          return state.ApplyAdmissionCheck(spec, now);
        } else if constexpr (std::is_same_v<T, core::TopologySpec>) {
          return state.ApplyTopology(spec, now);
        } else if constexpr (std::is_same_v<T, core::MultiKueueConfigSpec>) {
          return state.ApplyMultiKueueConfig(spec, now);
        } else if constexpr (std::is_same_v<T, core::MultiKueueClusterSpec>) {
          // Keeps the Active condition the connection reported.
          return state.ApplyMultiKueueCluster(spec, now);
        } else {
          return absl::OkStatus();  // a policy kind: not scheduling state
        }
      },
      object.spec);
  status.IgnoreError();
}

}  // namespace tollgate::engine
