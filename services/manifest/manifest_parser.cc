#include "services/manifest/manifest_parser.h"

#include <cstdint>
#include <initializer_list>
#include <iterator>
#include <limits>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/algorithm/container.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/ascii.h"
#include "absl/strings/cord.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/string_view.h"
#include "common/yaml_documents.h"
#include "core/names.h"
#include "core/object_kind.h"
#include "core/pod_requests.h"
#include "core/quantity.h"
#include "core/status_macros.h"
#include "services/api/policy_codec.h"
#include "services/auth/policy_parser.h"
#include "services/manifest/gated_kinds_input.h"
#include "services/manifest/job_kind.h"
#include "services/manifest/manifest_input.h"
#include "services/manifest/topology_annotations.h"
#include "services/manifest/yaml_reader.h"

namespace tollgate::manifest {
namespace {

using ::google::protobuf::RepeatedPtrField;
using StringMap = ::google::protobuf::Map<std::string, std::string>;

constexpr absl::string_view kValueErrorPayload = "type.tollgate.dev/tollgate.manifest.ValueError";
constexpr absl::string_view kQueueNameLabel = "kueue.x-k8s.io/queue-name";

// Metadata the API server fills in; `kubectl get -o yaml` output carries it, and it means nothing
// to a fresh object.
constexpr std::initializer_list<absl::string_view> kServerMetadata = {
    "uid",
    "resourceVersion",
    "generation",
    "creationTimestamp",
    "managedFields",
    "finalizers",
    "ownerReferences",
    "selfLink",
    "deletionTimestamp",
    "deletionGracePeriodSeconds",
};

using manifest::Describe;
using manifest::Index;
using manifest::IsEmpty;
using manifest::Join;
using manifest::MapKey;

// Prefixes every message with "<prefix>: <Kind> <name>" so the user can find the object.
class Ctx : public manifest::Where {
 public:
  using Where::Where;

  absl::Status Invalid(absl::string_view path, absl::string_view what) const {
    return Error(path, what);
  }
  absl::Status UnknownField(absl::string_view path) const {
    return absl::InvalidArgumentError(absl::StrCat(label(), ": unknown field ", path));
  }
  absl::Status Unsupported(absl::string_view path) const {
    return absl::UnimplementedError(
        absl::StrCat(label(), ": ", path, " is not supported by Tollgate"));
  }
  // A well-formed manifest carrying a value the service would refuse.
  absl::Status BadValue(absl::string_view path, absl::string_view what) const {
    absl::Status status = Invalid(path, what);
    status.SetPayload(kValueErrorPayload, absl::Cord("1"));
    return status;
  }
};

bool Contains(std::initializer_list<absl::string_view> list, absl::string_view s) {
  return absl::c_linear_search(list, s);
}

// The fields of one YAML map, checked against what the object type accepts. Null values count as
// absent, as they do for Kubernetes.
class Fields : public manifest::MapFields {
 public:
  static absl::StatusOr<Fields> Read(const Ctx& ctx, const YAML::Node& node, std::string path,
                                     std::initializer_list<absl::string_view> supported,
                                     std::initializer_list<absl::string_view> unsupported = {},
                                     std::initializer_list<absl::string_view> ignored = {}) {
    TOLLGATE_ASSIGN_OR_RETURN(
        manifest::MapFields fields,
        manifest::MapFields::Read(ctx, node, std::move(path),
                                  [&](const std::string& key, const YAML::Node& value,
                                      const std::string& key_path) -> absl::StatusOr<bool> {
                                    if (Contains(supported, key)) return !value.IsNull();
                                    if (Contains(unsupported, key)) {
                                      if (!IsEmpty(value)) return ctx.Unsupported(key_path);
                                      return false;
                                    }
                                    if (Contains(ignored, key)) return false;
                                    return ctx.UnknownField(key_path);
                                  }));
    return Fields(std::move(fields));
  }

 private:
  explicit Fields(manifest::MapFields fields) : manifest::MapFields(std::move(fields)) {}
};

// Null reads as "": an unset string field.
absl::StatusOr<std::string> Str(const Ctx& ctx, const YAML::Node& node, absl::string_view path) {
  if (node.IsNull()) return std::string();
  return manifest::Str(ctx, node, path);
}

absl::Status StrInto(const Ctx& ctx, const Fields& f, absl::string_view key, std::string* out) {
  if (const YAML::Node* n = f.Get(key)) {
    TOLLGATE_ASSIGN_OR_RETURN(*out, Str(ctx, *n, f.Path(key)));
  }
  return absl::OkStatus();
}

// Integers are refused as values (not structure): a count of "many" is the workload's fault.
absl::StatusOr<int64_t> Int(const Ctx& ctx, const YAML::Node& node, absl::string_view path,
                            int64_t lo, int64_t hi) {
  if (!node.IsScalar()) {
    return ctx.Invalid(path, absl::StrCat("expected an integer, got ", Describe(node)));
  }
  int64_t v = 0;
  if (!manifest::ScalarInt(node, lo, hi, &v)) {
    return ctx.BadValue(path, absl::StrCat("invalid integer \"", node.Scalar(), "\""));
  }
  return v;
}

absl::StatusOr<int32_t> Int32(const Ctx& ctx, const YAML::Node& node, absl::string_view path) {
  TOLLGATE_ASSIGN_OR_RETURN(int64_t v, Int(ctx, node, path, std::numeric_limits<int32_t>::min(),
                                           std::numeric_limits<int32_t>::max()));
  return static_cast<int32_t>(v);
}

using manifest::Bool;

absl::Status ExpectSeq(const Ctx& ctx, const YAML::Node& node, absl::string_view path) {
  return manifest::ExpectList(ctx, node, path);
}

absl::Status StrMap(const Ctx& ctx, const YAML::Node& node, absl::string_view path,
                    StringMap* out) {
  TOLLGATE_RETURN_IF_ERROR(manifest::ExpectMap(ctx, node, path));
  for (const auto& kv : node) {
    if (!kv.first.IsScalar()) return ctx.Invalid(path, "map keys must be strings");
    TOLLGATE_ASSIGN_OR_RETURN(std::string value,
                              Str(ctx, kv.second, MapKey(path, kv.first.Scalar())));
    (*out)[kv.first.Scalar()] = std::move(value);
  }
  return absl::OkStatus();
}

absl::Status StrList(const Ctx& ctx, const YAML::Node& node, absl::string_view path,
                     RepeatedPtrField<std::string>* out) {
  TOLLGATE_RETURN_IF_ERROR(ExpectSeq(ctx, node, path));
  size_t i = 0;
  for (const auto& item : node) {
    TOLLGATE_ASSIGN_OR_RETURN(*out->Add(), Str(ctx, item, Index(path, i)));
    ++i;
  }
  return absl::OkStatus();
}

// A quantity keeps the text the user wrote; parsing only checks it.
absl::StatusOr<std::string> QuantityText(const Ctx& ctx, const YAML::Node& node,
                                         absl::string_view path) {
  if (!node.IsScalar()) {
    return ctx.Invalid(path, absl::StrCat("expected a quantity, got ", Describe(node)));
  }
  absl::StatusOr<core::Quantity> q = core::Quantity::Parse(node.Scalar());
  if (!q.ok()) {
    return ctx.BadValue(path, absl::StrCat("malformed quantity \"", node.Scalar(), "\""));
  }
  return node.Scalar();
}

// The map under `key` of `f` (a core/v1 ResourceList), each value a valid quantity.
absl::Status ParseResourceList(const Ctx& ctx, const Fields& f, absl::string_view key,
                               core::ResourceList* out) {
  const YAML::Node* list = f.Get(key);
  if (list == nullptr) return absl::OkStatus();
  const std::string list_path = f.Path(key);
  if (!list->IsMap()) {
    return ctx.Invalid(list_path, absl::StrCat("expected a map, got ", Describe(*list)));
  }
  for (const auto& kv : *list) {
    if (!kv.first.IsScalar()) return ctx.Invalid(list_path, "map keys must be strings");
    const std::string& resource = kv.first.Scalar();
    TOLLGATE_ASSIGN_OR_RETURN(std::string text,
                              QuantityText(ctx, kv.second, MapKey(list_path, resource)));
    TOLLGATE_ASSIGN_OR_RETURN(core::Quantity q, core::Quantity::Parse(text));
    out->insert_or_assign(resource, std::move(q));
  }
  return absl::OkStatus();
}

// ---------------------------------------------------------------------------------------------
// Shared pieces.

absl::Status ParseMetadata(const Ctx& ctx, const YAML::Node& node, bool namespaced,
                           v1::ObjectMeta* out) {
  // generateName has no counterpart: the service never invents names.
  TOLLGATE_ASSIGN_OR_RETURN(
      Fields f, Fields::Read(ctx, node, "metadata", {"name", "namespace", "labels", "annotations"},
                             {"generateName"}, kServerMetadata));
  TOLLGATE_RETURN_IF_ERROR(StrInto(ctx, f, "name", out->mutable_name()));
  if (out->name().empty()) return ctx.Invalid("metadata.name", "required");
  if (namespaced) {
    TOLLGATE_RETURN_IF_ERROR(StrInto(ctx, f, "namespace", out->mutable_namespace_()));
    // kubectl's namespace when the manifest names none.
    if (out->namespace_().empty()) out->set_namespace_("default");
  }
  // A namespace on a cluster-scoped object is dropped, as the API server does.
  if (const YAML::Node* n = f.Get("labels")) {
    TOLLGATE_RETURN_IF_ERROR(StrMap(ctx, *n, f.Path("labels"), out->mutable_labels()));
  }
  if (const YAML::Node* n = f.Get("annotations")) {
    TOLLGATE_RETURN_IF_ERROR(StrMap(ctx, *n, f.Path("annotations"), out->mutable_annotations()));
  }
  return absl::OkStatus();
}

// An object's metadata, read from its top-level fields; a missing one is an empty map, which
// ParseMetadata then refuses for want of a name.
absl::Status ParseMetadataOf(const Ctx& ctx, const Fields& object, bool namespaced,
                             v1::ObjectMeta* out) {
  const YAML::Node* metadata = object.Get("metadata");
  return ParseMetadata(ctx, metadata != nullptr ? *metadata : YAML::Node(), namespaced, out);
}

// The envelope of every kind with a spec: apiVersion, kind, metadata and spec, with a status
// accepted and ignored (it is the server's to write). Returns the spec, or nothing when the
// manifest has none.
absl::StatusOr<std::optional<YAML::Node>> ReadSpecObject(const Ctx& ctx, const YAML::Node& node,
                                                         bool namespaced,
                                                         v1::ObjectMeta* metadata) {
  TOLLGATE_ASSIGN_OR_RETURN(
      Fields f,
      Fields::Read(ctx, node, "", {"apiVersion", "kind", "metadata", "spec"}, {}, {"status"}));
  TOLLGATE_RETURN_IF_ERROR(ParseMetadataOf(ctx, f, namespaced, metadata));
  const YAML::Node* spec = f.Get("spec");
  if (spec == nullptr) return std::nullopt;
  return *spec;
}

absl::Status ParseTolerations(const Ctx& ctx, const YAML::Node& node, absl::string_view path,
                              RepeatedPtrField<v1::Toleration>* out) {
  TOLLGATE_RETURN_IF_ERROR(ExpectSeq(ctx, node, path));
  size_t i = 0;
  for (const auto& item : node) {
    TOLLGATE_ASSIGN_OR_RETURN(
        Fields f, Fields::Read(ctx, item, Index(path, i++),
                               {"key", "operator", "value", "effect", "tolerationSeconds"}));
    v1::Toleration* t = out->Add();
    TOLLGATE_RETURN_IF_ERROR(StrInto(ctx, f, "key", t->mutable_key()));
    TOLLGATE_RETURN_IF_ERROR(StrInto(ctx, f, "operator", t->mutable_operator_()));
    TOLLGATE_RETURN_IF_ERROR(StrInto(ctx, f, "value", t->mutable_value()));
    TOLLGATE_RETURN_IF_ERROR(StrInto(ctx, f, "effect", t->mutable_effect()));
    if (const YAML::Node* n = f.Get("tolerationSeconds")) {
      TOLLGATE_ASSIGN_OR_RETURN(
          int64_t s, Int(ctx, *n, f.Path("tolerationSeconds"), std::numeric_limits<int64_t>::min(),
                         std::numeric_limits<int64_t>::max()));
      t->set_toleration_seconds(s);
    }
  }
  return absl::OkStatus();
}

absl::Status ParseTaints(const Ctx& ctx, const YAML::Node& node, absl::string_view path,
                         RepeatedPtrField<v1::Taint>* out) {
  TOLLGATE_RETURN_IF_ERROR(ExpectSeq(ctx, node, path));
  size_t i = 0;
  for (const auto& item : node) {
    // timeAdded is set by the node lifecycle controller; it does not change what tolerates it.
    TOLLGATE_ASSIGN_OR_RETURN(
        Fields f,
        Fields::Read(ctx, item, Index(path, i++), {"key", "value", "effect"}, {}, {"timeAdded"}));
    v1::Taint* t = out->Add();
    TOLLGATE_RETURN_IF_ERROR(StrInto(ctx, f, "key", t->mutable_key()));
    TOLLGATE_RETURN_IF_ERROR(StrInto(ctx, f, "value", t->mutable_value()));
    TOLLGATE_RETURN_IF_ERROR(StrInto(ctx, f, "effect", t->mutable_effect()));
  }
  return absl::OkStatus();
}

absl::Status ParseFairSharing(const Ctx& ctx, const YAML::Node& node, absl::string_view path,
                              v1::FairSharing* out) {
  TOLLGATE_ASSIGN_OR_RETURN(Fields f, Fields::Read(ctx, node, std::string(path), {"weight"}));
  if (const YAML::Node* n = f.Get("weight")) {
    TOLLGATE_ASSIGN_OR_RETURN(*out->mutable_weight(), QuantityText(ctx, *n, f.Path("weight")));
  }
  return absl::OkStatus();
}

absl::Status ParseResourceGroups(const Ctx& ctx, const YAML::Node& node, absl::string_view path,
                                 RepeatedPtrField<v1::ResourceGroup>* out) {
  TOLLGATE_RETURN_IF_ERROR(ExpectSeq(ctx, node, path));
  size_t gi = 0;
  for (const auto& group_node : node) {
    TOLLGATE_ASSIGN_OR_RETURN(Fields g, Fields::Read(ctx, group_node, Index(path, gi++),
                                                     {"coveredResources", "flavors"}));
    v1::ResourceGroup* group = out->Add();
    if (const YAML::Node* n = g.Get("coveredResources")) {
      TOLLGATE_RETURN_IF_ERROR(
          StrList(ctx, *n, g.Path("coveredResources"), group->mutable_covered_resources()));
    }
    const YAML::Node* flavors = g.Get("flavors");
    if (flavors == nullptr) continue;
    const std::string flavors_path = g.Path("flavors");
    TOLLGATE_RETURN_IF_ERROR(ExpectSeq(ctx, *flavors, flavors_path));
    size_t fi = 0;
    for (const auto& flavor_node : *flavors) {
      TOLLGATE_ASSIGN_OR_RETURN(Fields f, Fields::Read(ctx, flavor_node, Index(flavors_path, fi++),
                                                       {"name", "resources"}));
      v1::FlavorQuotas* flavor = group->add_flavors();
      TOLLGATE_RETURN_IF_ERROR(StrInto(ctx, f, "name", flavor->mutable_name()));
      const YAML::Node* resources = f.Get("resources");
      if (resources == nullptr) continue;
      const std::string resources_path = f.Path("resources");
      TOLLGATE_RETURN_IF_ERROR(ExpectSeq(ctx, *resources, resources_path));
      size_t ri = 0;
      for (const auto& quota_node : *resources) {
        TOLLGATE_ASSIGN_OR_RETURN(
            Fields r, Fields::Read(ctx, quota_node, Index(resources_path, ri++),
                                   {"name", "nominalQuota", "borrowingLimit", "lendingLimit"}));
        v1::ResourceQuota* quota = flavor->add_resources();
        TOLLGATE_RETURN_IF_ERROR(StrInto(ctx, r, "name", quota->mutable_name()));
        if (const YAML::Node* n = r.Get("nominalQuota")) {
          TOLLGATE_ASSIGN_OR_RETURN(*quota->mutable_nominal_quota(),
                                    QuantityText(ctx, *n, r.Path("nominalQuota")));
        }
        if (const YAML::Node* n = r.Get("borrowingLimit")) {
          TOLLGATE_ASSIGN_OR_RETURN(*quota->mutable_borrowing_limit(),
                                    QuantityText(ctx, *n, r.Path("borrowingLimit")));
        }
        if (const YAML::Node* n = r.Get("lendingLimit")) {
          TOLLGATE_ASSIGN_OR_RETURN(*quota->mutable_lending_limit(),
                                    QuantityText(ctx, *n, r.Path("lendingLimit")));
        }
      }
    }
  }
  return absl::OkStatus();
}

// A list of requirements under `list` in `owner` (a label selector's or a node selector term's
// matchExpressions, a term's matchFields): each entry a key, an operator and values. What each
// list allows is checked where the spec is validated (core's validation), not here.
template <typename Requirement>
absl::Status ParseRequirements(const Ctx& ctx, const Fields& owner, const char* list,
                               google::protobuf::RepeatedPtrField<Requirement>* out) {
  const YAML::Node* items = owner.Get(list);
  if (items == nullptr) return absl::OkStatus();
  const std::string items_path = owner.Path(list);
  TOLLGATE_RETURN_IF_ERROR(ExpectSeq(ctx, *items, items_path));
  size_t i = 0;
  for (const auto& item : *items) {
    TOLLGATE_ASSIGN_OR_RETURN(
        Fields f, Fields::Read(ctx, item, Index(items_path, i++), {"key", "operator", "values"}));
    Requirement* req = out->Add();
    TOLLGATE_RETURN_IF_ERROR(StrInto(ctx, f, "key", req->mutable_key()));
    TOLLGATE_RETURN_IF_ERROR(StrInto(ctx, f, "operator", req->mutable_operator_()));
    if (const YAML::Node* v = f.Get("values")) {
      TOLLGATE_RETURN_IF_ERROR(StrList(ctx, *v, f.Path("values"), req->mutable_values()));
    }
  }
  return absl::OkStatus();
}

absl::Status ParseLabelSelector(const Ctx& ctx, const YAML::Node& node, absl::string_view path,
                                v1::LabelSelector* out) {
  TOLLGATE_ASSIGN_OR_RETURN(
      Fields f, Fields::Read(ctx, node, std::string(path), {"matchLabels", "matchExpressions"}));
  if (const YAML::Node* n = f.Get("matchLabels")) {
    TOLLGATE_RETURN_IF_ERROR(StrMap(ctx, *n, f.Path("matchLabels"), out->mutable_match_labels()));
  }
  return ParseRequirements(ctx, f, "matchExpressions", out->mutable_match_expressions());
}

// Two spellings of one field (v1beta1 vs v1beta2); both may be given only if they agree.
absl::Status EitherName(const Ctx& ctx, const Fields& f, absl::string_view a, absl::string_view b,
                        std::string* out) {
  std::string va, vb;
  TOLLGATE_RETURN_IF_ERROR(StrInto(ctx, f, a, &va));
  TOLLGATE_RETURN_IF_ERROR(StrInto(ctx, f, b, &vb));
  if (!va.empty() && !vb.empty() && va != vb) {
    return ctx.Invalid(f.Path(b),
                       absl::StrCat("\"", vb, "\" conflicts with ", f.Path(a), " \"", va, "\""));
  }
  *out = va.empty() ? vb : va;
  return absl::OkStatus();
}

// ---------------------------------------------------------------------------------------------
// Configuration kinds.

absl::Status ParseNamespace(const Ctx& ctx, const YAML::Node& node, v1::Namespace* out) {
  // A Namespace's spec only holds finalizers, and its status is the server's.
  TOLLGATE_ASSIGN_OR_RETURN(
      Fields f,
      Fields::Read(ctx, node, "", {"apiVersion", "kind", "metadata"}, {}, {"spec", "status"}));
  return ParseMetadataOf(ctx, f, false, out->mutable_metadata());
}

absl::Status ParseResourceFlavor(const Ctx& ctx, const YAML::Node& node, v1::ResourceFlavor* out) {
  TOLLGATE_ASSIGN_OR_RETURN(const std::optional<YAML::Node> spec_node,
                            ReadSpecObject(ctx, node, false, out->mutable_metadata()));
  if (!spec_node.has_value()) return absl::OkStatus();
  TOLLGATE_ASSIGN_OR_RETURN(
      Fields s, Fields::Read(ctx, *spec_node, "spec",
                             {"nodeLabels", "nodeTaints", "tolerations", "topologyName"}));
  v1::ResourceFlavorSpec* spec = out->mutable_spec();
  TOLLGATE_RETURN_IF_ERROR(StrInto(ctx, s, "topologyName", spec->mutable_topology_name()));
  if (const YAML::Node* n = s.Get("nodeLabels")) {
    TOLLGATE_RETURN_IF_ERROR(StrMap(ctx, *n, s.Path("nodeLabels"), spec->mutable_node_labels()));
  }
  if (const YAML::Node* n = s.Get("nodeTaints")) {
    TOLLGATE_RETURN_IF_ERROR(
        ParseTaints(ctx, *n, s.Path("nodeTaints"), spec->mutable_node_taints()));
  }
  if (const YAML::Node* n = s.Get("tolerations")) {
    TOLLGATE_RETURN_IF_ERROR(
        ParseTolerations(ctx, *n, s.Path("tolerations"), spec->mutable_tolerations()));
  }
  return absl::OkStatus();
}

absl::Status ParseTopology(const Ctx& ctx, const YAML::Node& node, v1::Topology* out) {
  TOLLGATE_ASSIGN_OR_RETURN(const std::optional<YAML::Node> spec_node,
                            ReadSpecObject(ctx, node, false, out->mutable_metadata()));
  if (!spec_node.has_value()) return absl::OkStatus();
  TOLLGATE_ASSIGN_OR_RETURN(Fields s, Fields::Read(ctx, *spec_node, "spec", {"levels"}));
  if (const YAML::Node* n = s.Get("levels")) {
    const std::string levels_path = s.Path("levels");
    TOLLGATE_RETURN_IF_ERROR(ExpectSeq(ctx, *n, levels_path));
    size_t i = 0;
    for (const auto& item : *n) {
      TOLLGATE_ASSIGN_OR_RETURN(Fields l,
                                Fields::Read(ctx, item, Index(levels_path, i++), {"nodeLabel"}));
      TOLLGATE_RETURN_IF_ERROR(
          StrInto(ctx, l, "nodeLabel", out->mutable_spec()->add_levels()->mutable_node_label()));
    }
  }
  return absl::OkStatus();
}

absl::Status ParseClusterQueue(const Ctx& ctx, const YAML::Node& node, v1::ClusterQueue* out) {
  TOLLGATE_ASSIGN_OR_RETURN(const std::optional<YAML::Node> spec_node,
                            ReadSpecObject(ctx, node, false, out->mutable_metadata()));
  if (!spec_node.has_value()) return absl::OkStatus();
  TOLLGATE_ASSIGN_OR_RETURN(
      Fields s, Fields::Read(ctx, *spec_node, "spec",
                             {"resourceGroups", "cohort", "cohortName", "queueingStrategy",
                              "namespaceSelector", "flavorFungibility", "preemption", "stopPolicy",
                              "fairSharing", "admissionScope", "maxPreemptedWorkloads",
                              "preemptionRateLimit", "admissionChecks", "admissionChecksStrategy"},
                             {"concurrentAdmissionPolicy"}));
  v1::ClusterQueueSpec* spec = out->mutable_spec();
  TOLLGATE_RETURN_IF_ERROR(EitherName(ctx, s, "cohort", "cohortName", spec->mutable_cohort()));
  if (const YAML::Node* n = s.Get("resourceGroups")) {
    TOLLGATE_RETURN_IF_ERROR(
        ParseResourceGroups(ctx, *n, s.Path("resourceGroups"), spec->mutable_resource_groups()));
  }
  TOLLGATE_RETURN_IF_ERROR(StrInto(ctx, s, "queueingStrategy", spec->mutable_queueing_strategy()));
  if (const YAML::Node* n = s.Get("namespaceSelector")) {
    // `{}` must stay distinguishable from absent: mutable_ marks the field present.
    TOLLGATE_RETURN_IF_ERROR(ParseLabelSelector(ctx, *n, s.Path("namespaceSelector"),
                                                spec->mutable_namespace_selector()));
  }
  if (const YAML::Node* n = s.Get("flavorFungibility")) {
    TOLLGATE_ASSIGN_OR_RETURN(Fields ff,
                              Fields::Read(ctx, *n, s.Path("flavorFungibility"),
                                           {"whenCanBorrow", "whenCanPreempt", "preference"}));
    v1::FlavorFungibility* fung = spec->mutable_flavor_fungibility();
    TOLLGATE_RETURN_IF_ERROR(StrInto(ctx, ff, "whenCanBorrow", fung->mutable_when_can_borrow()));
    TOLLGATE_RETURN_IF_ERROR(StrInto(ctx, ff, "whenCanPreempt", fung->mutable_when_can_preempt()));
    TOLLGATE_RETURN_IF_ERROR(StrInto(ctx, ff, "preference", fung->mutable_preference()));
  }
  if (const YAML::Node* n = s.Get("preemption")) {
    TOLLGATE_ASSIGN_OR_RETURN(Fields p, Fields::Read(ctx, *n, s.Path("preemption"),
                                                     {"withinClusterQueue", "reclaimWithinCohort",
                                                      "borrowWithinCohort"}));
    v1::ClusterQueuePreemption* pre = spec->mutable_preemption();
    TOLLGATE_RETURN_IF_ERROR(
        StrInto(ctx, p, "withinClusterQueue", pre->mutable_within_cluster_queue()));
    TOLLGATE_RETURN_IF_ERROR(
        StrInto(ctx, p, "reclaimWithinCohort", pre->mutable_reclaim_within_cohort()));
    if (const YAML::Node* b = p.Get("borrowWithinCohort")) {
      TOLLGATE_ASSIGN_OR_RETURN(Fields bw, Fields::Read(ctx, *b, p.Path("borrowWithinCohort"),
                                                        {"policy", "maxPriorityThreshold"}));
      v1::BorrowWithinCohort* borrow = pre->mutable_borrow_within_cohort();
      TOLLGATE_RETURN_IF_ERROR(StrInto(ctx, bw, "policy", borrow->mutable_policy()));
      if (const YAML::Node* t = bw.Get("maxPriorityThreshold")) {
        TOLLGATE_ASSIGN_OR_RETURN(int32_t v, Int32(ctx, *t, bw.Path("maxPriorityThreshold")));
        borrow->set_max_priority_threshold(v);
      }
    }
  }
  TOLLGATE_RETURN_IF_ERROR(StrInto(ctx, s, "stopPolicy", spec->mutable_stop_policy()));
  if (const YAML::Node* n = s.Get("fairSharing")) {
    TOLLGATE_RETURN_IF_ERROR(
        ParseFairSharing(ctx, *n, s.Path("fairSharing"), spec->mutable_fair_sharing()));
  }
  if (const YAML::Node* n = s.Get("admissionScope")) {
    TOLLGATE_ASSIGN_OR_RETURN(Fields a,
                              Fields::Read(ctx, *n, s.Path("admissionScope"), {"admissionMode"}));
    TOLLGATE_RETURN_IF_ERROR(StrInto(ctx, a, "admissionMode",
                                     spec->mutable_admission_scope()->mutable_admission_mode()));
  }
  if (const YAML::Node* n = s.Get("maxPreemptedWorkloads")) {
    TOLLGATE_ASSIGN_OR_RETURN(int32_t v, Int32(ctx, *n, s.Path("maxPreemptedWorkloads")));
    spec->set_max_preempted_workloads(v);
  }
  // v1beta1's list of names, and both versions' strategy (docs/admission-checks.md).
  if (const YAML::Node* n = s.Get("admissionChecks")) {
    TOLLGATE_RETURN_IF_ERROR(
        StrList(ctx, *n, s.Path("admissionChecks"), spec->mutable_admission_checks()));
  }
  if (const YAML::Node* n = s.Get("admissionChecksStrategy")) {
    TOLLGATE_ASSIGN_OR_RETURN(
        Fields st, Fields::Read(ctx, *n, s.Path("admissionChecksStrategy"), {"admissionChecks"}));
    v1::AdmissionChecksStrategy* strategy = spec->mutable_admission_checks_strategy();
    if (const YAML::Node* rules = st.Get("admissionChecks")) {
      const std::string rules_path = st.Path("admissionChecks");
      TOLLGATE_RETURN_IF_ERROR(ExpectSeq(ctx, *rules, rules_path));
      size_t i = 0;
      for (const auto& item : *rules) {
        TOLLGATE_ASSIGN_OR_RETURN(
            Fields r, Fields::Read(ctx, item, Index(rules_path, i++), {"name", "onFlavors"}));
        v1::AdmissionCheckStrategyRule* rule = strategy->add_admission_checks();
        TOLLGATE_RETURN_IF_ERROR(StrInto(ctx, r, "name", rule->mutable_name()));
        if (const YAML::Node* on = r.Get("onFlavors")) {
          TOLLGATE_RETURN_IF_ERROR(
              StrList(ctx, *on, r.Path("onFlavors"), rule->mutable_on_flavors()));
        }
      }
    }
  }
  if (const YAML::Node* n = s.Get("preemptionRateLimit")) {
    TOLLGATE_ASSIGN_OR_RETURN(Fields l, Fields::Read(ctx, *n, s.Path("preemptionRateLimit"),
                                                     {"maxPreemptions", "windowSeconds"}));
    v1::PreemptionRateLimit* limit = spec->mutable_preemption_rate_limit();
    if (const YAML::Node* m = l.Get("maxPreemptions")) {
      TOLLGATE_ASSIGN_OR_RETURN(int32_t v, Int32(ctx, *m, l.Path("maxPreemptions")));
      limit->set_max_preemptions(v);
    }
    if (const YAML::Node* w = l.Get("windowSeconds")) {
      TOLLGATE_ASSIGN_OR_RETURN(
          int64_t v, Int(ctx, *w, l.Path("windowSeconds"), 0, std::numeric_limits<int64_t>::max()));
      limit->set_window_seconds(v);
    }
  }
  return absl::OkStatus();
}

absl::Status ParseAdmissionCheck(const Ctx& ctx, const YAML::Node& node, v1::AdmissionCheck* out) {
  // The status (the Active condition) is the check controller's, not the manifest's.
  TOLLGATE_ASSIGN_OR_RETURN(const std::optional<YAML::Node> spec_node,
                            ReadSpecObject(ctx, node, false, out->mutable_metadata()));
  if (!spec_node.has_value()) return absl::OkStatus();
  TOLLGATE_ASSIGN_OR_RETURN(
      Fields s,
      Fields::Read(ctx, *spec_node, "spec", {"controllerName", "parameters", "retryDelayMinutes"}));
  v1::AdmissionCheckSpec* spec = out->mutable_spec();
  TOLLGATE_RETURN_IF_ERROR(StrInto(ctx, s, "controllerName", spec->mutable_controller_name()));
  if (const YAML::Node* n = s.Get("parameters")) {
    TOLLGATE_ASSIGN_OR_RETURN(
        Fields p, Fields::Read(ctx, *n, s.Path("parameters"), {"apiGroup", "kind", "name"}));
    v1::AdmissionCheckParametersReference* ref = spec->mutable_parameters();
    TOLLGATE_RETURN_IF_ERROR(StrInto(ctx, p, "apiGroup", ref->mutable_api_group()));
    TOLLGATE_RETURN_IF_ERROR(StrInto(ctx, p, "kind", ref->mutable_kind()));
    TOLLGATE_RETURN_IF_ERROR(StrInto(ctx, p, "name", ref->mutable_name()));
  }
  // v1beta1's deprecated retryDelayMinutes: kept, without effect, as in Kueue.
  if (const YAML::Node* n = s.Get("retryDelayMinutes")) {
    TOLLGATE_ASSIGN_OR_RETURN(int64_t v, Int(ctx, *n, s.Path("retryDelayMinutes"), 0,
                                             std::numeric_limits<int64_t>::max()));
    spec->set_retry_delay_minutes(v);
  }
  return absl::OkStatus();
}

absl::Status ParseMultiKueueConfig(const Ctx& ctx, const YAML::Node& node,
                                   v1::MultiKueueConfig* out) {
  TOLLGATE_ASSIGN_OR_RETURN(const std::optional<YAML::Node> spec_node,
                            ReadSpecObject(ctx, node, false, out->mutable_metadata()));
  if (!spec_node.has_value()) return absl::OkStatus();
  // v1beta2's quotaManagement (manager quota automation) is not implemented.
  TOLLGATE_ASSIGN_OR_RETURN(
      Fields s, Fields::Read(ctx, *spec_node, "spec", {"clusters"}, {"quotaManagement"}));
  if (const YAML::Node* n = s.Get("clusters")) {
    TOLLGATE_RETURN_IF_ERROR(
        StrList(ctx, *n, s.Path("clusters"), out->mutable_spec()->mutable_clusters()));
  }
  return absl::OkStatus();
}

absl::Status ParseKubeConfig(const Ctx& ctx, const YAML::Node& node, const std::string& path,
                             v1::MultiKueueKubeConfig* out) {
  TOLLGATE_ASSIGN_OR_RETURN(Fields k, Fields::Read(ctx, node, path, {"location", "locationType"}));
  TOLLGATE_RETURN_IF_ERROR(StrInto(ctx, k, "location", out->mutable_location()));
  return StrInto(ctx, k, "locationType", out->mutable_location_type());
}

absl::Status ParseMultiKueueCluster(const Ctx& ctx, const YAML::Node& node,
                                    v1::MultiKueueCluster* out) {
  // The status (the Active condition) is the connection's, not the manifest's.
  TOLLGATE_ASSIGN_OR_RETURN(const std::optional<YAML::Node> spec_node,
                            ReadSpecObject(ctx, node, false, out->mutable_metadata()));
  if (!spec_node.has_value()) return absl::OkStatus();
  // v1beta1 spells the source spec.kubeConfig, v1beta2 spec.clusterSource.kubeConfig; endpoint
  // is Tollgate's own (a worker tollgated's address and the TLS files for it).
  TOLLGATE_ASSIGN_OR_RETURN(
      Fields s, Fields::Read(ctx, *spec_node, "spec", {"kubeConfig", "clusterSource", "endpoint"},
                             {"clusterProfileRef"}));
  v1::MultiKueueClusterSpec* spec = out->mutable_spec();
  if (const YAML::Node* n = s.Get("kubeConfig")) {
    TOLLGATE_RETURN_IF_ERROR(
        ParseKubeConfig(ctx, *n, s.Path("kubeConfig"), spec->mutable_kube_config()));
  }
  if (const YAML::Node* n = s.Get("clusterSource")) {
    TOLLGATE_ASSIGN_OR_RETURN(Fields cs, Fields::Read(ctx, *n, s.Path("clusterSource"),
                                                      {"kubeConfig"}, {"clusterProfileRef"}));
    if (const YAML::Node* k = cs.Get("kubeConfig")) {
      if (spec->has_kube_config()) {
        return ctx.Invalid(cs.Path("kubeConfig"), "spec.kubeConfig is set too; give only one");
      }
      TOLLGATE_RETURN_IF_ERROR(
          ParseKubeConfig(ctx, *k, cs.Path("kubeConfig"), spec->mutable_kube_config()));
    }
  }
  if (const YAML::Node* n = s.Get("endpoint")) {
    TOLLGATE_ASSIGN_OR_RETURN(Fields e, Fields::Read(ctx, *n, s.Path("endpoint"),
                                                     {"address", "caFile", "certFile", "keyFile",
                                                      "tokenFile", "insecure"}));
    v1::MultiKueueWorkerEndpoint* endpoint = spec->mutable_endpoint();
    TOLLGATE_RETURN_IF_ERROR(StrInto(ctx, e, "address", endpoint->mutable_address()));
    TOLLGATE_RETURN_IF_ERROR(StrInto(ctx, e, "caFile", endpoint->mutable_ca_file()));
    TOLLGATE_RETURN_IF_ERROR(StrInto(ctx, e, "certFile", endpoint->mutable_cert_file()));
    TOLLGATE_RETURN_IF_ERROR(StrInto(ctx, e, "keyFile", endpoint->mutable_key_file()));
    TOLLGATE_RETURN_IF_ERROR(StrInto(ctx, e, "tokenFile", endpoint->mutable_token_file()));
    if (const YAML::Node* b = e.Get("insecure")) {
      TOLLGATE_ASSIGN_OR_RETURN(bool insecure, Bool(ctx, *b, e.Path("insecure")));
      endpoint->set_insecure(insecure);
    }
  }
  return absl::OkStatus();
}

absl::Status ParseCohort(const Ctx& ctx, const YAML::Node& node, v1::Cohort* out) {
  TOLLGATE_ASSIGN_OR_RETURN(const std::optional<YAML::Node> spec_node,
                            ReadSpecObject(ctx, node, false, out->mutable_metadata()));
  if (!spec_node.has_value()) return absl::OkStatus();
  // `parent` is v1alpha1's spelling, `parentName` v1beta1's and v1beta2's.
  TOLLGATE_ASSIGN_OR_RETURN(
      Fields s, Fields::Read(ctx, *spec_node, "spec",
                             {"parent", "parentName", "resourceGroups", "fairSharing"}));
  v1::CohortSpec* spec = out->mutable_spec();
  TOLLGATE_RETURN_IF_ERROR(EitherName(ctx, s, "parent", "parentName", spec->mutable_parent()));
  if (const YAML::Node* n = s.Get("resourceGroups")) {
    TOLLGATE_RETURN_IF_ERROR(
        ParseResourceGroups(ctx, *n, s.Path("resourceGroups"), spec->mutable_resource_groups()));
  }
  if (const YAML::Node* n = s.Get("fairSharing")) {
    TOLLGATE_RETURN_IF_ERROR(
        ParseFairSharing(ctx, *n, s.Path("fairSharing"), spec->mutable_fair_sharing()));
  }
  return absl::OkStatus();
}

absl::Status ParseLocalQueue(const Ctx& ctx, const YAML::Node& node, v1::LocalQueue* out) {
  TOLLGATE_ASSIGN_OR_RETURN(const std::optional<YAML::Node> spec_node,
                            ReadSpecObject(ctx, node, true, out->mutable_metadata()));
  if (!spec_node.has_value()) return absl::OkStatus();
  TOLLGATE_ASSIGN_OR_RETURN(Fields s, Fields::Read(ctx, *spec_node, "spec",
                                                   {"clusterQueue", "stopPolicy", "fairSharing"}));
  v1::LocalQueueSpec* spec = out->mutable_spec();
  TOLLGATE_RETURN_IF_ERROR(StrInto(ctx, s, "clusterQueue", spec->mutable_cluster_queue()));
  TOLLGATE_RETURN_IF_ERROR(StrInto(ctx, s, "stopPolicy", spec->mutable_stop_policy()));
  if (const YAML::Node* n = s.Get("fairSharing")) {
    TOLLGATE_RETURN_IF_ERROR(
        ParseFairSharing(ctx, *n, s.Path("fairSharing"), spec->mutable_fair_sharing()));
  }
  return absl::OkStatus();
}

absl::Status ParseWorkloadPriorityClass(const Ctx& ctx, const YAML::Node& node,
                                        v1::WorkloadPriorityClass* out) {
  TOLLGATE_ASSIGN_OR_RETURN(
      Fields f,
      Fields::Read(ctx, node, "", {"apiVersion", "kind", "metadata", "value", "description"}, {},
                   {"status"}));
  TOLLGATE_RETURN_IF_ERROR(ParseMetadataOf(ctx, f, false, out->mutable_metadata()));
  if (const YAML::Node* n = f.Get("value")) {
    TOLLGATE_ASSIGN_OR_RETURN(int32_t v, Int32(ctx, *n, "value"));
    out->set_value(v);
  }
  return StrInto(ctx, f, "description", out->mutable_description());
}

absl::Status ParsePriorityClass(const Ctx& ctx, const YAML::Node& node, v1::PriorityClass* out) {
  // globalDefault would change the priority of every workload naming no class.
  TOLLGATE_ASSIGN_OR_RETURN(Fields f,
                            Fields::Read(ctx, node, "",
                                         {"apiVersion", "kind", "metadata", "value", "description",
                                          "preemptionPolicy", "globalDefault"},
                                         {}, {"status"}));
  TOLLGATE_RETURN_IF_ERROR(ParseMetadataOf(ctx, f, false, out->mutable_metadata()));
  if (const YAML::Node* n = f.Get("value")) {
    TOLLGATE_ASSIGN_OR_RETURN(int32_t v, Int32(ctx, *n, "value"));
    out->set_value(v);
  }
  if (const YAML::Node* n = f.Get("globalDefault")) {
    TOLLGATE_ASSIGN_OR_RETURN(bool global_default, Bool(ctx, *n, "globalDefault"));
    if (global_default) return ctx.Unsupported("globalDefault");
  }
  TOLLGATE_RETURN_IF_ERROR(StrInto(ctx, f, "preemptionPolicy", out->mutable_preemption_policy()));
  return StrInto(ctx, f, "description", out->mutable_description());
}

// ---------------------------------------------------------------------------------------------
// Workload and its effective pod requests.

// A `resources` stanza (container or pod level): requests and limits as written; the rule in
// core::EffectivePodRequests decides what they add up to.
absl::Status ParseResourceRequirements(const Ctx& ctx, const YAML::Node& node,
                                       absl::string_view path, core::ResourceList* requests,
                                       core::ResourceList* limits) {
  // claims refer to DRA ResourceClaims, which the pod spec holds; Kueue accounts them only
  // behind an alpha gate.
  TOLLGATE_ASSIGN_OR_RETURN(
      Fields f, Fields::Read(ctx, node, std::string(path), {"requests", "limits"}, {}, {"claims"}));
  TOLLGATE_RETURN_IF_ERROR(ParseResourceList(ctx, f, "requests", requests));
  return ParseResourceList(ctx, f, "limits", limits);
}

// Every corev1.Container field, so a typo (e.g. `resource:`) is an error instead of a workload
// that silently requests nothing.
constexpr std::initializer_list<absl::string_view> kIgnoredContainerFields = {
    "name",
    "image",
    "command",
    "args",
    "workingDir",
    "ports",
    "envFrom",
    "env",
    "resizePolicy",
    "restartPolicyRules",
    "volumeMounts",
    "volumeDevices",
    "livenessProbe",
    "readinessProbe",
    "startupProbe",
    "lifecycle",
    "terminationMessagePath",
    "terminationMessagePolicy",
    "imagePullPolicy",
    "securityContext",
    "stdin",
    "stdinOnce",
    "tty"};

// Every corev1.PodSpec field that does not change what the pod asks of the queue.
constexpr std::initializer_list<absl::string_view> kIgnoredPodSpecFields = {
    "volumes",
    "ephemeralContainers",
    "restartPolicy",
    "terminationGracePeriodSeconds",
    "activeDeadlineSeconds",
    "dnsPolicy",
    "serviceAccountName",
    "serviceAccount",
    "automountServiceAccountToken",
    "nodeName",
    "hostNetwork",
    "hostPID",
    "hostIPC",
    "shareProcessNamespace",
    "securityContext",
    "imagePullSecrets",
    "hostname",
    "subdomain",
    "schedulerName",
    "hostAliases",
    "priorityClassName",
    "priority",
    "dnsConfig",
    "readinessGates",
    "runtimeClassName",
    "enableServiceLinks",
    "preemptionPolicy",
    "topologySpreadConstraints",
    "setHostnameAsFQDN",
    "os",
    "hostUsers",
    "schedulingGates",
    "resourceClaims",
    "hostnameOverride",
    "workloadRef"};

absl::StatusOr<core::ContainerResources> ParseContainer(const Ctx& ctx, const YAML::Node& node,
                                                        absl::string_view path) {
  TOLLGATE_ASSIGN_OR_RETURN(
      Fields f, Fields::Read(ctx, node, std::string(path), {"resources", "restartPolicy"}, {},
                             kIgnoredContainerFields));
  core::ContainerResources c;
  if (const YAML::Node* n = f.Get("resources")) {
    TOLLGATE_RETURN_IF_ERROR(
        ParseResourceRequirements(ctx, *n, f.Path("resources"), &c.requests, &c.limits));
  }
  // An init container with restartPolicy Always is a sidecar.
  std::string restart_policy;
  TOLLGATE_RETURN_IF_ERROR(StrInto(ctx, f, "restartPolicy", &restart_policy));
  c.restartable = restart_policy == "Always";
  return c;
}

absl::StatusOr<std::vector<core::ContainerResources>> ParseContainers(const Ctx& ctx,
                                                                      const Fields& spec,
                                                                      absl::string_view key) {
  std::vector<core::ContainerResources> out;
  const YAML::Node* list = spec.Get(key);
  if (list == nullptr) return out;
  const std::string path = spec.Path(key);
  TOLLGATE_RETURN_IF_ERROR(ExpectSeq(ctx, *list, path));
  size_t i = 0;
  for (const auto& item : *list) {
    TOLLGATE_ASSIGN_OR_RETURN(core::ContainerResources c,
                              ParseContainer(ctx, item, Index(path, i++)));
    out.push_back(std::move(c));
  }
  return out;
}

// Required node affinity terms (matchExpressions on node labels, matchFields on the node's name).
absl::Status ParseNodeSelectorTerms(const Ctx& ctx, const YAML::Node& node, absl::string_view path,
                                    v1::PodSet* out) {
  TOLLGATE_ASSIGN_OR_RETURN(Fields r,
                            Fields::Read(ctx, node, std::string(path), {"nodeSelectorTerms"}));
  const YAML::Node* terms = r.Get("nodeSelectorTerms");
  if (terms == nullptr) return absl::OkStatus();
  const std::string terms_path = r.Path("nodeSelectorTerms");
  TOLLGATE_RETURN_IF_ERROR(ExpectSeq(ctx, *terms, terms_path));
  size_t i = 0;
  for (const auto& item : *terms) {
    TOLLGATE_ASSIGN_OR_RETURN(Fields t, Fields::Read(ctx, item, Index(terms_path, i++),
                                                     {"matchExpressions", "matchFields"}));
    v1::NodeSelectorTerm* term = out->add_required_node_affinity();
    TOLLGATE_RETURN_IF_ERROR(
        ParseRequirements(ctx, t, "matchExpressions", term->mutable_match_expressions()));
    TOLLGATE_RETURN_IF_ERROR(
        ParseRequirements(ctx, t, "matchFields", term->mutable_match_fields()));
  }
  return absl::OkStatus();
}

// Preferred node affinity terms: a weight (Kubernetes allows 1..100) and a preference term.
absl::Status ParsePreferredSchedulingTerms(const Ctx& ctx, const YAML::Node& node,
                                           absl::string_view path, v1::PodSet* out) {
  TOLLGATE_RETURN_IF_ERROR(ExpectSeq(ctx, node, path));
  size_t i = 0;
  for (const auto& item : node) {
    TOLLGATE_ASSIGN_OR_RETURN(Fields t,
                              Fields::Read(ctx, item, Index(path, i++), {"weight", "preference"}));
    v1::PreferredSchedulingTerm* term = out->add_preferred_node_affinity();
    if (const YAML::Node* w = t.Get("weight")) {
      TOLLGATE_ASSIGN_OR_RETURN(int32_t weight, Int32(ctx, *w, t.Path("weight")));
      if (weight < 1 || weight > 100) {
        return ctx.BadValue(t.Path("weight"), absl::StrCat(weight, ": must be in the range 1-100"));
      }
      term->set_weight(weight);
    } else {
      return ctx.BadValue(t.Path("weight"), "0: must be in the range 1-100");
    }
    if (const YAML::Node* pref = t.Get("preference")) {
      TOLLGATE_ASSIGN_OR_RETURN(Fields p, Fields::Read(ctx, *pref, t.Path("preference"),
                                                       {"matchExpressions", "matchFields"}));
      v1::NodeSelectorTerm* preference = term->mutable_preference();
      TOLLGATE_RETURN_IF_ERROR(
          ParseRequirements(ctx, p, "matchExpressions", preference->mutable_match_expressions()));
      TOLLGATE_RETURN_IF_ERROR(
          ParseRequirements(ctx, p, "matchFields", preference->mutable_match_fields()));
    }
  }
  return absl::OkStatus();
}

// `pod_set_index` names the pod set in a resource error, which Kueue reports against the
// Workload's own fields wherever the manifest sits.
absl::Status ParsePodTemplate(const Ctx& ctx, const YAML::Node& node, absl::string_view path,
                              size_t pod_set_index, v1::PodSet* out) {
  // Template metadata counts for its annotations (Kueue's topology annotations); labels and the
  // rest do not affect admission.
  TOLLGATE_ASSIGN_OR_RETURN(Fields t,
                            Fields::Read(ctx, node, std::string(path), {"spec", "metadata"}));
  if (const YAML::Node* m = t.Get("metadata"); m != nullptr && m->IsMap()) {
    // Kueue's webhook (WorkloadValidationForPodSetMetadata) refuses a template whose labels or
    // annotation keys the API server would refuse on a pod.
    if (const YAML::Node l = (*m)["labels"]; l.IsDefined() && !l.IsNull()) {
      const std::string labels_path = Join(t.Path("metadata"), "labels");
      StringMap labels;
      TOLLGATE_RETURN_IF_ERROR(StrMap(ctx, l, labels_path, &labels));
      for (const auto& [key, value] : labels) {
        absl::Status valid = core::ValidateQualifiedName(key);
        if (valid.ok()) valid = core::ValidateLabelValue(value);
        if (!valid.ok()) return ctx.BadValue(labels_path, valid.message());
      }
    }
    if (const YAML::Node a = (*m)["annotations"]; a.IsDefined() && !a.IsNull()) {
      const std::string annotations_path = Join(t.Path("metadata"), "annotations");
      StringMap annotations;
      TOLLGATE_RETURN_IF_ERROR(StrMap(ctx, a, annotations_path, &annotations));
      for (const auto& [key, value] : annotations) {
        if (absl::Status valid = core::ValidateQualifiedName(absl::AsciiStrToLower(key));
            !valid.ok()) {
          return ctx.BadValue(annotations_path, valid.message());
        }
      }
      absl::StatusOr<std::optional<v1::PodSetTopologyRequest>> request =
          TopologyRequestFromAnnotations(
              std::map<std::string, std::string>(annotations.begin(), annotations.end()),
              std::nullopt, annotations_path);
      if (!request.ok()) return ctx.BadValue("", request.status().message());
      if (request->has_value()) *out->mutable_topology_request() = **std::move(request);
    }
  }
  const YAML::Node* spec_node = t.Get("spec");
  if (spec_node == nullptr) return absl::OkStatus();
  std::initializer_list<absl::string_view> supported = {
      "containers",   "initContainers", "overhead", "resources",
      "nodeSelector", "tolerations",    "affinity"};
  TOLLGATE_ASSIGN_OR_RETURN(Fields s, Fields::Read(ctx, *spec_node, t.Path("spec"), supported, {},
                                                   kIgnoredPodSpecFields));

  core::PodResources pod;
  TOLLGATE_ASSIGN_OR_RETURN(pod.containers, ParseContainers(ctx, s, "containers"));
  TOLLGATE_ASSIGN_OR_RETURN(pod.init_containers, ParseContainers(ctx, s, "initContainers"));
  if (const YAML::Node* n = s.Get("resources")) {
    TOLLGATE_RETURN_IF_ERROR(ParseResourceRequirements(ctx, *n, s.Path("resources"),
                                                       &pod.pod_requests, &pod.pod_limits));
  }
  TOLLGATE_RETURN_IF_ERROR(ParseResourceList(ctx, s, "overhead", &pod.overhead));
  const std::string pod_spec_path = absl::StrCat("spec.podSets[", pod_set_index, "].template.spec");
  // Refused before anything is added up: a negative request could hide in a positive sum.
  if (std::vector<std::string> refused = core::RefusedResourceFields(pod, pod_spec_path);
      !refused.empty()) {
    return ctx.BadValue("", refused.size() == 1
                                ? refused.front()
                                : absl::StrCat("[", absl::StrJoin(refused, ", "), "]"));
  }
  for (const auto& [name, quantity] : core::EffectivePodRequests(pod)) {
    (*out->mutable_requests())[name] = quantity.ToString();
  }
  for (std::string& error : core::RequestsAboveLimits(pod, pod_spec_path)) {
    out->add_resource_errors(std::move(error));
  }

  if (const YAML::Node* n = s.Get("nodeSelector")) {
    TOLLGATE_RETURN_IF_ERROR(StrMap(ctx, *n, s.Path("nodeSelector"), out->mutable_node_selector()));
  }
  if (const YAML::Node* n = s.Get("tolerations")) {
    TOLLGATE_RETURN_IF_ERROR(
        ParseTolerations(ctx, *n, s.Path("tolerations"), out->mutable_tolerations()));
  }
  if (const YAML::Node* n = s.Get("affinity")) {
    // Required node affinity narrows the flavors (as nodeSelector does) and the nodes of a
    // topology placement; preferred terms rank the nodes of a topology placement with Kueue's
    // TASRespectNodeAffinityPreferred. Pod (anti-)affinity does not affect admission.
    const std::string affinity_path = s.Path("affinity");
    TOLLGATE_ASSIGN_OR_RETURN(Fields a, Fields::Read(ctx, *n, affinity_path, {"nodeAffinity"}, {},
                                                     {"podAffinity", "podAntiAffinity"}));
    if (const YAML::Node* na = a.Get("nodeAffinity")) {
      TOLLGATE_ASSIGN_OR_RETURN(Fields nf,
                                Fields::Read(ctx, *na, a.Path("nodeAffinity"),
                                             {"requiredDuringSchedulingIgnoredDuringExecution",
                                              "preferredDuringSchedulingIgnoredDuringExecution"}));
      if (const YAML::Node* req = nf.Get("requiredDuringSchedulingIgnoredDuringExecution")) {
        TOLLGATE_RETURN_IF_ERROR(ParseNodeSelectorTerms(
            ctx, *req, nf.Path("requiredDuringSchedulingIgnoredDuringExecution"), out));
      }
      if (const YAML::Node* pref = nf.Get("preferredDuringSchedulingIgnoredDuringExecution")) {
        TOLLGATE_RETURN_IF_ERROR(ParsePreferredSchedulingTerms(
            ctx, *pref, nf.Path("preferredDuringSchedulingIgnoredDuringExecution"), out));
      }
    }
  }
  return absl::OkStatus();
}

// Kueue's typed spec.podSets[].topologyRequest of a Workload manifest.
absl::Status ParseTopologyRequest(const Ctx& ctx, const YAML::Node& node, absl::string_view path,
                                  v1::PodSetTopologyRequest* out) {
  TOLLGATE_ASSIGN_OR_RETURN(
      Fields f,
      Fields::Read(ctx, node, std::string(path),
                   {"required", "preferred", "unconstrained", "podIndexLabel", "subGroupIndexLabel",
                    "subGroupCount", "podSetGroupName", "podSetSliceRequiredTopology",
                    "podSetSliceSize", "podsetSliceRequiredTopologyConstraints"}));
  auto str = [&](absl::string_view key, auto setter) -> absl::Status {
    if (const YAML::Node* n = f.Get(key)) {
      TOLLGATE_ASSIGN_OR_RETURN(std::string v, Str(ctx, *n, f.Path(key)));
      setter(std::move(v));
    }
    return absl::OkStatus();
  };
  TOLLGATE_RETURN_IF_ERROR(str("required", [&](std::string v) { out->set_required(v); }));
  TOLLGATE_RETURN_IF_ERROR(str("preferred", [&](std::string v) { out->set_preferred(v); }));
  TOLLGATE_RETURN_IF_ERROR(
      str("podIndexLabel", [&](std::string v) { out->set_pod_index_label(v); }));
  TOLLGATE_RETURN_IF_ERROR(
      str("subGroupIndexLabel", [&](std::string v) { out->set_sub_group_index_label(v); }));
  TOLLGATE_RETURN_IF_ERROR(
      str("podSetGroupName", [&](std::string v) { out->set_pod_set_group_name(v); }));
  TOLLGATE_RETURN_IF_ERROR(str("podSetSliceRequiredTopology", [&](std::string v) {
    out->set_pod_set_slice_required_topology(v);
  }));
  if (const YAML::Node* n = f.Get("unconstrained")) {
    TOLLGATE_ASSIGN_OR_RETURN(bool v, Bool(ctx, *n, f.Path("unconstrained")));
    out->set_unconstrained(v);
  }
  if (const YAML::Node* n = f.Get("subGroupCount")) {
    TOLLGATE_ASSIGN_OR_RETURN(int32_t v, Int32(ctx, *n, f.Path("subGroupCount")));
    out->set_sub_group_count(v);
  }
  if (const YAML::Node* n = f.Get("podSetSliceSize")) {
    TOLLGATE_ASSIGN_OR_RETURN(int32_t v, Int32(ctx, *n, f.Path("podSetSliceSize")));
    out->set_pod_set_slice_size(v);
  }
  if (const YAML::Node* n = f.Get("podsetSliceRequiredTopologyConstraints")) {
    const std::string cpath = f.Path("podsetSliceRequiredTopologyConstraints");
    TOLLGATE_RETURN_IF_ERROR(ExpectSeq(ctx, *n, cpath));
    size_t i = 0;
    for (const auto& item : *n) {
      TOLLGATE_ASSIGN_OR_RETURN(Fields c,
                                Fields::Read(ctx, item, Index(cpath, i++), {"topology", "size"}));
      v1::PodSetSliceTopologyConstraint* pc = out->add_podset_slice_required_topology_constraints();
      TOLLGATE_RETURN_IF_ERROR(StrInto(ctx, c, "topology", pc->mutable_topology()));
      if (const YAML::Node* sz = c.Get("size")) {
        TOLLGATE_ASSIGN_OR_RETURN(int32_t v, Int32(ctx, *sz, c.Path("size")));
        pc->set_size(v);
      }
    }
  }
  return absl::OkStatus();
}

absl::Status ParseWorkload(const Ctx& ctx, const YAML::Node& node, v1::Workload* out) {
  TOLLGATE_ASSIGN_OR_RETURN(const std::optional<YAML::Node> spec_node,
                            ReadSpecObject(ctx, node, true, out->mutable_metadata()));
  if (!spec_node.has_value()) return absl::OkStatus();
  // priorityClassSource (v1beta1) only says which kind priorityClassName refers to; the
  // service looks the name up in both, as Kueue's defaulting would.
  TOLLGATE_ASSIGN_OR_RETURN(
      Fields s, Fields::Read(ctx, *spec_node, "spec",
                             {"podSets", "queueName", "priorityClassName", "priorityClassRef",
                              "priority", "active", "nonPreemptible", "checkpointGraceSeconds",
                              "maximumExecutionTimeSeconds"},
                             {"preemptionGates"}, {"priorityClassSource"}));
  v1::WorkloadSpec* spec = out->mutable_spec();
  TOLLGATE_RETURN_IF_ERROR(StrInto(ctx, s, "queueName", spec->mutable_queue_name()));
  if (spec->queue_name().empty()) {
    // Jobs carry the queue as a label; a Workload copied from one may only have that.
    auto it = out->metadata().labels().find(std::string(kQueueNameLabel));
    if (it != out->metadata().labels().end()) spec->set_queue_name(it->second);
  }
  TOLLGATE_RETURN_IF_ERROR(
      StrInto(ctx, s, "priorityClassName", spec->mutable_priority_class_name()));
  if (const YAML::Node* n = s.Get("priorityClassRef")) {
    const std::string ref_path = s.Path("priorityClassRef");
    TOLLGATE_ASSIGN_OR_RETURN(Fields r, Fields::Read(ctx, *n, ref_path, {"group", "kind", "name"}));
    std::string group, kind, name;
    TOLLGATE_RETURN_IF_ERROR(StrInto(ctx, r, "group", &group));
    TOLLGATE_RETURN_IF_ERROR(StrInto(ctx, r, "kind", &kind));
    TOLLGATE_RETURN_IF_ERROR(StrInto(ctx, r, "name", &name));
    // Kueue's CRD: a reference names either priority class kind, in that kind's API group, and
    // says all three. A wrong value is the workload's, refused as the API server refuses it.
    const core::KindTraits& wpc = core::TraitsOf(core::ObjectKind::kWorkloadPriorityClass);
    const core::KindTraits& pc = core::TraitsOf(core::ObjectKind::kPriorityClass);
    for (const auto& [field, value] :
         {std::pair<absl::string_view, const std::string*>{"group", &group},
          {"kind", &kind},
          {"name", &name}}) {
      if (value->empty()) return ctx.BadValue(r.Path(field), "Required value");
    }
    if (group != wpc.group && group != pc.group) {
      return ctx.BadValue(r.Path("group"),
                          absl::StrCat("Unsupported value: \"", group, "\": supported values: \"",
                                       wpc.group, "\", \"", pc.group, "\""));
    }
    if (kind != wpc.name && kind != pc.name) {
      return ctx.BadValue(r.Path("kind"),
                          absl::StrCat("Unsupported value: \"", kind, "\": supported values: \"",
                                       pc.name, "\", \"", wpc.name, "\""));
    }
    const core::KindTraits& of_group = group == wpc.group ? wpc : pc;
    if (kind != of_group.name) {
      return ctx.BadValue(ref_path,
                          absl::StrCat("Invalid value: \"", kind, "\": only the ", of_group.name,
                                       " kind is allowed for the ", of_group.group, " group"));
    }
    if (!spec->priority_class_name().empty() && spec->priority_class_name() != name) {
      return ctx.Invalid(r.Path("name"),
                         absl::StrCat("\"", name, "\" conflicts with ", s.Path("priorityClassName"),
                                      " \"", spec->priority_class_name(), "\""));
    }
    spec->set_priority_class_name(name);
  }
  if (const YAML::Node* n = s.Get("priority")) {
    TOLLGATE_ASSIGN_OR_RETURN(int32_t v, Int32(ctx, *n, s.Path("priority")));
    spec->set_priority(v);
  }
  if (const YAML::Node* n = s.Get("active")) {
    TOLLGATE_ASSIGN_OR_RETURN(bool v, Bool(ctx, *n, s.Path("active")));
    spec->set_active(v);
  }
  if (const YAML::Node* n = s.Get("nonPreemptible")) {
    TOLLGATE_ASSIGN_OR_RETURN(bool v, Bool(ctx, *n, s.Path("nonPreemptible")));
    spec->set_non_preemptible(v);
  }
  if (const YAML::Node* n = s.Get("checkpointGraceSeconds")) {
    TOLLGATE_ASSIGN_OR_RETURN(
        int64_t v, Int(ctx, *n, s.Path("checkpointGraceSeconds"),
                       std::numeric_limits<int64_t>::min(), std::numeric_limits<int64_t>::max()));
    spec->set_checkpoint_grace_seconds(v);
  }
  if (const YAML::Node* n = s.Get("maximumExecutionTimeSeconds")) {
    TOLLGATE_ASSIGN_OR_RETURN(int32_t v, Int32(ctx, *n, s.Path("maximumExecutionTimeSeconds")));
    spec->set_maximum_execution_time_seconds(v);
  }
  if (const YAML::Node* n = s.Get("podSets")) {
    const std::string sets_path = s.Path("podSets");
    TOLLGATE_RETURN_IF_ERROR(ExpectSeq(ctx, *n, sets_path));
    size_t next_index = 0;
    for (const auto& item : *n) {
      const size_t index = next_index++;
      const std::string set_path = Index(sets_path, index);
      TOLLGATE_ASSIGN_OR_RETURN(
          Fields p, Fields::Read(ctx, item, set_path,
                                 {"name", "template", "count", "minCount", "topologyRequest"}));
      v1::PodSet* set = spec->add_pod_sets();
      TOLLGATE_RETURN_IF_ERROR(StrInto(ctx, p, "name", set->mutable_name()));
      if (set->name().empty()) set->set_name("main");  // Kueue's default
      set->set_count(1);                               // Kueue's default
      if (const YAML::Node* c = p.Get("count")) {
        TOLLGATE_ASSIGN_OR_RETURN(int32_t v, Int32(ctx, *c, p.Path("count")));
        set->set_count(v);
      }
      if (const YAML::Node* c = p.Get("minCount")) {
        TOLLGATE_ASSIGN_OR_RETURN(int32_t v, Int32(ctx, *c, p.Path("minCount")));
        set->set_min_count(v);
      }
      if (const YAML::Node* t = p.Get("template")) {
        TOLLGATE_RETURN_IF_ERROR(ParsePodTemplate(ctx, *t, p.Path("template"), index, set));
      }
      if (const YAML::Node* t = p.Get("topologyRequest")) {
        // Kueue's job integrations build this field from the template's annotations; a
        // Workload written by hand has one or the other.
        if (set->has_topology_request()) {
          return ctx.BadValue(p.Path("topologyRequest"),
                              "set either topologyRequest or the template's topology annotations, "
                              "not both");
        }
        TOLLGATE_RETURN_IF_ERROR(ParseTopologyRequest(ctx, *t, p.Path("topologyRequest"),
                                                      set->mutable_topology_request()));
      }
    }
  }
  return absl::OkStatus();
}

// ---------------------------------------------------------------------------------------------
// Kinds and API versions.

absl::Status CheckApiVersion(const Ctx& ctx, const core::KindTraits& info,
                             absl::string_view api_version) {
  if (api_version.empty()) return absl::OkStatus();
  absl::string_view group, version;
  if (size_t slash = api_version.find('/'); slash == absl::string_view::npos) {
    version = api_version;  // the core group has no prefix
  } else {
    group = api_version.substr(0, slash);
    version = api_version.substr(slash + 1);
  }
  if (!absl::c_any_of(core::AllKinds(),
                      [&](const core::KindTraits& k) { return k.group == group; })) {
    return ctx.Invalid("apiVersion", absl::StrCat("unknown apiVersion group \"", group, "\" in \"",
                                                  api_version, "\""));
  }
  std::vector<std::string> wanted;
  for (absl::string_view v : info.versions) {
    wanted.push_back(info.group.empty() ? std::string(v) : absl::StrCat(info.group, "/", v));
  }
  if (group != info.group || !absl::c_linear_search(info.versions, version)) {
    return ctx.Invalid("apiVersion",
                       absl::StrCat("\"", api_version, "\" does not serve kind ", info.name,
                                    " (want ", absl::StrJoin(wanted, " or "), ")"));
  }
  return absl::OkStatus();
}

// Best effort: the name for error messages, before the metadata has been validated.
std::string PeekName(const YAML::Node& node, bool namespaced) {
  const YAML::Node metadata = node["metadata"];
  if (!metadata.IsDefined() || !metadata.IsMap()) return "";
  std::string name, ns;
  if (const YAML::Node n = metadata["name"]; n.IsDefined() && n.IsScalar()) name = n.Scalar();
  if (const YAML::Node n = metadata["namespace"]; namespaced && n.IsDefined() && n.IsScalar()) {
    ns = n.Scalar();
  }
  if (name.empty()) return "(unnamed)";
  return ns.empty() ? name : absl::StrCat(ns, "/", name);
}

absl::StatusOr<Manifest> ParseManifestNodeOrThrow(const YAML::Node& node,
                                                  absl::string_view path_prefix) {
  const std::string prefix = path_prefix.empty() ? "" : absl::StrCat(path_prefix, ": ");
  if (!node.IsMap()) {
    return absl::InvalidArgumentError(absl::StrCat(
        prefix, "expected a manifest (a map with kind and metadata), got ", Describe(node)));
  }
  const YAML::Node kind_node = node["kind"];
  if (!kind_node.IsDefined() || !kind_node.IsScalar() || kind_node.Scalar().empty()) {
    return absl::InvalidArgumentError(
        absl::StrCat(prefix, "manifest ", PeekName(node, true), ": missing kind"));
  }
  const std::string kind = kind_node.Scalar();
  const core::KindTraits* info = core::FindKind(kind);
  const Ctx ctx(
      absl::StrCat(prefix, kind, " ", PeekName(node, info != nullptr && info->namespaced)));
  if (info == nullptr) {
    std::vector<absl::string_view> supported;
    for (const core::KindTraits& k : core::AllKinds()) supported.push_back(k.name);
    return absl::InvalidArgumentError(
        absl::StrCat(prefix, kind, " ", PeekName(node, false), ": unknown kind \"", kind,
                     "\" (supported: ", absl::StrJoin(supported, ", "), ")"));
  }
  if (const YAML::Node api = node["apiVersion"]; api.IsDefined() && !api.IsNull()) {
    TOLLGATE_ASSIGN_OR_RETURN(std::string api_version, Str(ctx, api, "apiVersion"));
    TOLLGATE_RETURN_IF_ERROR(CheckApiVersion(ctx, *info, api_version));
  }

  Manifest m;
  m.kind = kind;
  if (!info->config_kind.has_value()) {
    v1::Workload wl;
    TOLLGATE_RETURN_IF_ERROR(ParseWorkload(ctx, node, &wl));
    m.object = std::move(wl);
    return m;
  }
  // The per-kind parsers; the switch has no default, so a new kind cannot be forgotten here.
  v1::ConfigObject obj;
  switch (*info->config_kind) {
    case core::ObjectKind::kNamespace:
      TOLLGATE_RETURN_IF_ERROR(ParseNamespace(ctx, node, obj.mutable_namespace_()));
      break;
    case core::ObjectKind::kResourceFlavor:
      TOLLGATE_RETURN_IF_ERROR(ParseResourceFlavor(ctx, node, obj.mutable_resource_flavor()));
      break;
    case core::ObjectKind::kClusterQueue:
      TOLLGATE_RETURN_IF_ERROR(ParseClusterQueue(ctx, node, obj.mutable_cluster_queue()));
      break;
    case core::ObjectKind::kCohort:
      TOLLGATE_RETURN_IF_ERROR(ParseCohort(ctx, node, obj.mutable_cohort()));
      break;
    case core::ObjectKind::kLocalQueue:
      TOLLGATE_RETURN_IF_ERROR(ParseLocalQueue(ctx, node, obj.mutable_local_queue()));
      break;
    case core::ObjectKind::kWorkloadPriorityClass:
      TOLLGATE_RETURN_IF_ERROR(
          ParseWorkloadPriorityClass(ctx, node, obj.mutable_workload_priority_class()));
      break;
    case core::ObjectKind::kPriorityClass:
      TOLLGATE_RETURN_IF_ERROR(ParsePriorityClass(ctx, node, obj.mutable_priority_class()));
      break;
    case core::ObjectKind::kAdmissionCheck:
      TOLLGATE_RETURN_IF_ERROR(ParseAdmissionCheck(ctx, node, obj.mutable_admission_check()));
      break;
    case core::ObjectKind::kTopology:
      TOLLGATE_RETURN_IF_ERROR(ParseTopology(ctx, node, obj.mutable_topology()));
      break;
    case core::ObjectKind::kMultiKueueConfig:
      TOLLGATE_RETURN_IF_ERROR(ParseMultiKueueConfig(ctx, node, obj.mutable_multi_kueue_config()));
      break;
    case core::ObjectKind::kMultiKueueCluster:
      TOLLGATE_RETURN_IF_ERROR(
          ParseMultiKueueCluster(ctx, node, obj.mutable_multi_kueue_cluster()));
      break;
    case core::ObjectKind::kRole:
    case core::ObjectKind::kRoleBinding:
    case core::ObjectKind::kQueueGrant: {
      // The --authz-policy file's reader, so a policy file applies unchanged.
      auth::Policy policy;
      TOLLGATE_RETURN_IF_ERROR(auth::ParsePolicyDocument(node, path_prefix, policy));
      if (!policy.roles.empty()) *obj.mutable_role() = api::RoleToProto(policy.roles[0]);
      if (!policy.bindings.empty()) {
        *obj.mutable_role_binding() = api::RoleBindingToProto(policy.bindings[0]);
      }
      if (!policy.queue_grants.empty()) {
        *obj.mutable_queue_grant() = api::QueueGrantToProto(policy.queue_grants[0]);
      }
      break;
    }
  }
  m.object = std::move(obj);
  return m;
}

}  // namespace

absl::StatusOr<Manifest> ParseManifestNode(const YAML::Node& node, absl::string_view path_prefix) {
  // yaml-cpp reports misuse by throwing; nothing above this layer expects exceptions.
  try {
    return ParseManifestNodeOrThrow(node, path_prefix);
  } catch (const YAML::Exception& e) {
    return absl::InvalidArgumentError(
        absl::StrCat(path_prefix, path_prefix.empty() ? "" : ": ", "malformed YAML: ", e.what()));
  }
}

absl::StatusOr<std::vector<Manifest>> ParseManifests(absl::string_view yaml_text,
                                                     absl::string_view source_name) {
  std::vector<std::string> notes;
  return ParseManifests(yaml_text, source_name, NoObjects(), notes);
}

absl::StatusOr<std::vector<Manifest>> ParseManifests(absl::string_view yaml_text,
                                                     absl::string_view source_name,
                                                     const ObjectLookup& lookup,
                                                     std::vector<std::string>& notes,
                                                     GatedKindsInput* gated) {
  const size_t notes_before = notes.size();
  const size_t gated_before = gated != nullptr ? gated->PendingPods() : 0;
  TOLLGATE_ASSIGN_OR_RETURN(std::vector<YAML::Node> documents,
                            common::LoadYamlDocuments(yaml_text, source_name));
  std::vector<Manifest> out;
  for (size_t i = 0; i < documents.size(); ++i) {
    if (documents[i].IsNull()) continue;  // `---` with nothing (or only comments) after it
    const std::string where = absl::StrCat(source_name, ": document ", i + 1);
    // The API server refuses an object without apiVersion, and so does a file here (scenario
    // steps, which embed objects, may leave it out).
    // Policy kinds are the exception: --authz-policy files never needed one, and apply as they
    // are.
    if (documents[i].IsMap()) {
      const YAML::Node kind = documents[i]["kind"];
      const YAML::Node api = documents[i]["apiVersion"];
      const core::KindTraits* traits =
          kind.IsDefined() && kind.IsScalar() ? core::FindKind(kind.Scalar()) : nullptr;
      const bool policy_kind = traits != nullptr && traits->policy;
      if (kind.IsDefined() && kind.IsScalar() && !policy_kind &&
          (!api.IsDefined() || api.IsNull())) {
        const std::string name = PeekName(documents[i], true);
        return absl::InvalidArgumentError(absl::StrCat(where, ": ", kind.Scalar(),
                                                       name.empty() ? "" : " ", name,
                                                       ": apiVersion: required value, got none"));
      }
    }
    TOLLGATE_ASSIGN_OR_RETURN(std::vector<Manifest> parsed,
                              ParseInputDocument(documents[i], where, lookup, notes, gated));
    std::move(parsed.begin(), parsed.end(), std::back_inserter(out));
  }
  // An empty file is almost always the wrong file: say so rather than apply nothing.
  if (out.empty() && notes.size() == notes_before &&
      (gated == nullptr || gated->PendingPods() == gated_before)) {
    return absl::InvalidArgumentError(
        absl::StrCat(source_name, ": no manifests found (the file is empty or only comments)"));
  }
  return out;
}

bool IsValueError(const absl::Status& status) {
  return !status.ok() && status.GetPayload(kValueErrorPayload).has_value();
}

}  // namespace tollgate::manifest
