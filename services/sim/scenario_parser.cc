#include "services/sim/scenario_parser.h"

#include <algorithm>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <initializer_list>
#include <iterator>
#include <limits>
#include <set>
#include <sstream>
#include <string>
#include <system_error>
#include <utility>
#include <vector>

#include "absl/algorithm/container.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "common/file_util.h"
#include "common/yaml_documents.h"
#include "core/object_kind.h"
#include "core/quantity.h"
#include "core/status_macros.h"
#include "services/manifest/job_kinds.h"
#include "services/manifest/manifest_input.h"
#include "services/manifest/yaml_json.h"
#include "services/manifest/yaml_reader.h"
#include "yaml-cpp/yaml.h"

namespace tollgate::sim {
namespace {

using manifest::Manifest;

using manifest::Bool;
using manifest::Describe;
using manifest::Index;
using manifest::Str;

// Names the place in the scenario ("foo.yaml: step 3 (expect)") in front of every message.
class Where : public manifest::Where {
 public:
  using manifest::Where::Where;

  Where Sub(absl::string_view more) const { return Where(absl::StrCat(label(), ": ", more)); }
};

// The keys of one YAML map, each checked against the keys the format allows.
class Keys : public manifest::MapFields {
 public:
  static absl::StatusOr<Keys> Read(const Where& where, const YAML::Node& node, std::string path,
                                   std::initializer_list<absl::string_view> allowed) {
    const std::string map_path = path;
    TOLLGATE_ASSIGN_OR_RETURN(
        manifest::MapFields keys,
        manifest::MapFields::Read(where, node, std::move(path),
                                  [&](const std::string& key, const YAML::Node&,
                                      const std::string&) -> absl::StatusOr<bool> {
                                    if (absl::c_linear_search(allowed, key)) return true;
                                    return where.Error(
                                        map_path,
                                        absl::StrCat("unknown key \"", key, "\" (expected one of: ",
                                                     absl::StrJoin(allowed, ", "), ")"));
                                  }));
    return Keys(std::move(keys));
  }

 private:
  explicit Keys(manifest::MapFields keys) : manifest::MapFields(std::move(keys)) {}
};

absl::StatusOr<std::string> RequiredStr(const Where& where, const Keys& keys,
                                        absl::string_view key) {
  const YAML::Node* n = keys.Get(key);
  if (n == nullptr || n->IsNull()) {
    return where.Error(keys.Path(key), "required");
  }
  TOLLGATE_ASSIGN_OR_RETURN(std::string s, Str(where, *n, keys.Path(key)));
  if (s.empty()) return where.Error(keys.Path(key), "must not be empty");
  return s;
}

absl::StatusOr<int64_t> Int(const Where& where, const YAML::Node& node, absl::string_view path,
                            int64_t lo, int64_t hi) {
  int64_t v = 0;
  if (!manifest::ScalarInt(node, lo, hi, &v)) {
    return where.Error(path, absl::StrCat("expected an integer, got ", Describe(node)));
  }
  return v;
}

absl::StatusOr<int32_t> Int32(const Where& where, const YAML::Node& node, absl::string_view path) {
  TOLLGATE_ASSIGN_OR_RETURN(int64_t v, Int(where, node, path, std::numeric_limits<int32_t>::min(),
                                           std::numeric_limits<int32_t>::max()));
  return static_cast<int32_t>(v);
}

absl::StatusOr<absl::Duration> Duration(const Where& where, const YAML::Node& node,
                                        absl::string_view path) {
  if (!node.IsScalar()) {
    return where.Error(path, absl::StrCat("expected a duration, got ", Describe(node)));
  }
  absl::StatusOr<absl::Duration> d = ParseGoDuration(node.Scalar());
  if (!d.ok()) return where.Error(path, d.status().message());
  return *d;
}

// A null list or map is an empty one: `pending:` reads as "none".
absl::Status ExpectSeq(const Where& where, const YAML::Node& node, absl::string_view path) {
  return node.IsNull() ? absl::OkStatus() : manifest::ExpectList(where, node, path);
}

absl::Status ExpectMap(const Where& where, const YAML::Node& node, absl::string_view path) {
  return node.IsNull() ? absl::OkStatus() : manifest::ExpectMap(where, node, path);
}

absl::StatusOr<std::vector<std::string>> StrList(const Where& where, const YAML::Node& node,
                                                 absl::string_view path) {
  TOLLGATE_RETURN_IF_ERROR(ExpectSeq(where, node, path));
  std::vector<std::string> out;
  size_t i = 0;
  for (const auto& item : node) {
    TOLLGATE_ASSIGN_OR_RETURN(std::string s, Str(where, item, Index(path, i++)));
    out.push_back(std::move(s));
  }
  return out;
}

// A map whose values are read by `read`; keys must be unique strings.
template <typename T, typename ReadFn>
absl::StatusOr<std::map<std::string, T>> MapOf(const Where& where, const YAML::Node& node,
                                               absl::string_view path, ReadFn read) {
  TOLLGATE_RETURN_IF_ERROR(ExpectMap(where, node, path));
  std::map<std::string, T> out;
  if (node.IsNull()) return out;
  for (const auto& kv : node) {
    if (!kv.first.IsScalar()) return where.Error(path, "map keys must be strings");
    const std::string& key = kv.first.Scalar();
    TOLLGATE_ASSIGN_OR_RETURN(T value, read(kv.second, absl::StrCat(path, "[", key, "]")));
    if (!out.emplace(key, std::move(value)).second) {
      return where.Error(path, absl::StrCat("duplicate key \"", key, "\""));
    }
  }
  return out;
}

absl::StatusOr<std::map<std::string, std::string>> StrMap(const Where& where,
                                                          const YAML::Node& node,
                                                          absl::string_view path) {
  return MapOf<std::string>(where, node, path, [&](const YAML::Node& n, const std::string& p) {
    return Str(where, n, p);
  });
}

// ---------------------------------------------------------------------------------------------
// --- Topology (issue 28): nodes, pods Tollgate does not place, a short-form pod set's topology
// request and the topology expectations (docs/scenario-format.md, "Topology").

absl::StatusOr<std::vector<v1::Node>> ParseNodes(const Where& where, const YAML::Node& node,
                                                 absl::string_view path) {
  TOLLGATE_RETURN_IF_ERROR(ExpectSeq(where, node, path));
  std::vector<v1::Node> out;
  size_t i = 0;
  for (const auto& item : node) {
    const std::string item_path = Index(path, i++);
    TOLLGATE_ASSIGN_OR_RETURN(
        Keys k, Keys::Read(where, item, item_path,
                           {"name", "labels", "allocatable", "taints", "unschedulable", "ready",
                            "notReadySince", "runningWorkloads"}));
    v1::Node n;
    TOLLGATE_ASSIGN_OR_RETURN(*n.mutable_metadata()->mutable_name(), RequiredStr(where, k, "name"));
    if (const YAML::Node* v = k.Get("labels")) {
      TOLLGATE_ASSIGN_OR_RETURN(auto labels, StrMap(where, *v, k.Path("labels")));
      n.mutable_metadata()->mutable_labels()->insert(labels.begin(), labels.end());
    }
    if (const YAML::Node* v = k.Get("allocatable")) {
      // Quantities as written: the service validates them.
      TOLLGATE_ASSIGN_OR_RETURN(auto allocatable, StrMap(where, *v, k.Path("allocatable")));
      n.mutable_status()->mutable_allocatable()->insert(allocatable.begin(), allocatable.end());
    }
    if (const YAML::Node* v = k.Get("taints")) {
      const std::string taints_path = k.Path("taints");
      TOLLGATE_RETURN_IF_ERROR(ExpectSeq(where, *v, taints_path));
      size_t j = 0;
      for (const auto& t : *v) {
        TOLLGATE_ASSIGN_OR_RETURN(
            Keys tk, Keys::Read(where, t, Index(taints_path, j++), {"key", "value", "effect"}));
        v1::Taint* taint = n.mutable_spec()->add_taints();
        for (auto [key, field] :
             {std::pair{"key", taint->mutable_key()}, std::pair{"value", taint->mutable_value()},
              std::pair{"effect", taint->mutable_effect()}}) {
          if (const YAML::Node* f = tk.Get(key); f != nullptr && !f->IsNull()) {
            TOLLGATE_ASSIGN_OR_RETURN(*field, Str(where, *f, tk.Path(key)));
          }
        }
      }
    }
    if (const YAML::Node* v = k.Get("unschedulable"); v != nullptr && !v->IsNull()) {
      TOLLGATE_ASSIGN_OR_RETURN(bool b, Bool(where, *v, k.Path("unschedulable")));
      n.mutable_spec()->set_unschedulable(b);
    }
    if (const YAML::Node* v = k.Get("ready"); v != nullptr && !v->IsNull()) {
      TOLLGATE_ASSIGN_OR_RETURN(bool b, Bool(where, *v, k.Path("ready")));
      n.mutable_status()->set_ready(b);
    }
    if (const YAML::Node* v = k.Get("notReadySince"); v != nullptr && !v->IsNull()) {
      const std::string since_path = k.Path("notReadySince");
      TOLLGATE_ASSIGN_OR_RETURN(std::string text, Str(where, *v, since_path));
      absl::Time since;
      std::string error;
      if (!absl::ParseTime(absl::RFC3339_full, text, &since, &error)) {
        return where.Error(since_path, absl::StrCat("expected an RFC 3339 time such as "
                                                    "2026-01-01T00:00:10Z, got \"",
                                                    text, "\""));
      }
      if (!n.status().has_ready() || n.status().ready()) {
        return where.Error(since_path, "only on a node with ready: false");
      }
      const int64_t seconds = absl::ToUnixSeconds(since);
      n.mutable_status()->mutable_not_ready_since()->set_seconds(seconds);
      n.mutable_status()->mutable_not_ready_since()->set_nanos(
          static_cast<int32_t>(absl::ToInt64Nanoseconds(since - absl::FromUnixSeconds(seconds))));
    }
    if (const YAML::Node* v = k.Get("runningWorkloads"); v != nullptr && !v->IsNull()) {
      // As the feeder sends them ("namespace/name"): the service checks them.
      TOLLGATE_ASSIGN_OR_RETURN(std::vector<std::string> running,
                                StrList(where, *v, k.Path("runningWorkloads")));
      for (std::string& w : running) n.mutable_status()->add_running_workloads(std::move(w));
    }
    out.push_back(std::move(n));
  }
  return out;
}

absl::StatusOr<std::vector<v1::NodePod>> ParseNodePods(const Where& where, const YAML::Node& node,
                                                       absl::string_view path) {
  TOLLGATE_RETURN_IF_ERROR(ExpectSeq(where, node, path));
  std::vector<v1::NodePod> out;
  size_t i = 0;
  for (const auto& item : node) {
    TOLLGATE_ASSIGN_OR_RETURN(
        Keys k, Keys::Read(where, item, Index(path, i++), {"name", "node", "requests"}));
    v1::NodePod pod;
    TOLLGATE_ASSIGN_OR_RETURN(*pod.mutable_name(), RequiredStr(where, k, "name"));
    TOLLGATE_ASSIGN_OR_RETURN(*pod.mutable_node_name(), RequiredStr(where, k, "node"));
    if (const YAML::Node* v = k.Get("requests")) {
      TOLLGATE_ASSIGN_OR_RETURN(auto requests, StrMap(where, *v, k.Path("requests")));
      pod.mutable_requests()->insert(requests.begin(), requests.end());
    }
    out.push_back(std::move(pod));
  }
  return out;
}

// Kueue's PodSetTopologyRequest under its own field names; the service checks the combination.
absl::Status ParseCompactTopologyRequest(const Where& where, const YAML::Node& node,
                                         absl::string_view path, v1::PodSetTopologyRequest* out) {
  TOLLGATE_ASSIGN_OR_RETURN(Keys k,
                            Keys::Read(where, node, std::string(path),
                                       {"required", "preferred", "unconstrained", "podSetGroupName",
                                        "podSetSliceRequiredTopology", "podSetSliceSize",
                                        "podsetSliceRequiredTopologyConstraints"}));
  auto str = [&](absl::string_view key) -> absl::StatusOr<std::optional<std::string>> {
    const YAML::Node* v = k.Get(key);
    if (v == nullptr || v->IsNull()) return std::optional<std::string>();
    TOLLGATE_ASSIGN_OR_RETURN(std::string s, Str(where, *v, k.Path(key)));
    return std::optional<std::string>(std::move(s));
  };
  TOLLGATE_ASSIGN_OR_RETURN(std::optional<std::string> required, str("required"));
  if (required.has_value()) out->set_required(*required);
  TOLLGATE_ASSIGN_OR_RETURN(std::optional<std::string> preferred, str("preferred"));
  if (preferred.has_value()) out->set_preferred(*preferred);
  TOLLGATE_ASSIGN_OR_RETURN(std::optional<std::string> group, str("podSetGroupName"));
  if (group.has_value()) out->set_pod_set_group_name(*group);
  TOLLGATE_ASSIGN_OR_RETURN(std::optional<std::string> slice, str("podSetSliceRequiredTopology"));
  if (slice.has_value()) out->set_pod_set_slice_required_topology(*slice);
  if (const YAML::Node* v = k.Get("unconstrained"); v != nullptr && !v->IsNull()) {
    TOLLGATE_ASSIGN_OR_RETURN(bool b, Bool(where, *v, k.Path("unconstrained")));
    out->set_unconstrained(b);
  }
  if (const YAML::Node* v = k.Get("podSetSliceSize"); v != nullptr && !v->IsNull()) {
    TOLLGATE_ASSIGN_OR_RETURN(int32_t size, Int32(where, *v, k.Path("podSetSliceSize")));
    out->set_pod_set_slice_size(size);
  }
  if (const YAML::Node* v = k.Get("podsetSliceRequiredTopologyConstraints")) {
    const std::string layers_path = k.Path("podsetSliceRequiredTopologyConstraints");
    TOLLGATE_RETURN_IF_ERROR(ExpectSeq(where, *v, layers_path));
    size_t i = 0;
    for (const auto& layer : *v) {
      TOLLGATE_ASSIGN_OR_RETURN(
          Keys l, Keys::Read(where, layer, Index(layers_path, i++), {"topology", "size"}));
      v1::PodSetSliceTopologyConstraint* c = out->add_podset_slice_required_topology_constraints();
      TOLLGATE_ASSIGN_OR_RETURN(*c->mutable_topology(), RequiredStr(where, l, "topology"));
      if (const YAML::Node* s = l.Get("size"); s != nullptr && !s->IsNull()) {
        TOLLGATE_ASSIGN_OR_RETURN(int32_t size, Int32(where, *s, l.Path("size")));
        c->set_size(size);
      }
    }
  }
  return absl::OkStatus();
}

absl::StatusOr<TopologyAssignmentExpectation> ParseAssignmentExpectation(const Where& where,
                                                                         const YAML::Node& node,
                                                                         absl::string_view path) {
  TOLLGATE_ASSIGN_OR_RETURN(Keys k,
                            Keys::Read(where, node, std::string(path), {"levels", "domains"}));
  TopologyAssignmentExpectation out;
  if (const YAML::Node* v = k.Get("levels")) {
    TOLLGATE_ASSIGN_OR_RETURN(out.levels, StrList(where, *v, k.Path("levels")));
  }
  if (const YAML::Node* v = k.Get("domains")) {
    const std::string domains_path = k.Path("domains");
    TOLLGATE_RETURN_IF_ERROR(ExpectSeq(where, *v, domains_path));
    size_t i = 0;
    for (const auto& d : *v) {
      const std::string domain_path = Index(domains_path, i++);
      TOLLGATE_ASSIGN_OR_RETURN(Keys dk, Keys::Read(where, d, domain_path, {"values", "count"}));
      TopologyDomainExpectation domain;
      const YAML::Node* values = dk.Get("values");
      const YAML::Node* count = dk.Get("count");
      if (values == nullptr) return where.Error(dk.Path("values"), "required");
      if (count == nullptr) return where.Error(dk.Path("count"), "required");
      TOLLGATE_ASSIGN_OR_RETURN(domain.values, StrList(where, *values, dk.Path("values")));
      TOLLGATE_ASSIGN_OR_RETURN(domain.count, Int32(where, *count, dk.Path("count")));
      out.domains.push_back(std::move(domain));
    }
  }
  return out;
}

absl::Status ParseTopologyExpectations(const Where& where, const Keys& keys, Expectation& e) {
  if (const YAML::Node* n = keys.Get("topologyAssignments")) {
    using PodSets = std::map<std::string, TopologyAssignmentExpectation>;
    TOLLGATE_ASSIGN_OR_RETURN(
        e.topology_assignments,
        MapOf<PodSets>(
            where, *n, "topologyAssignments",
            [&](const YAML::Node& sets, const std::string& p) -> absl::StatusOr<PodSets> {
              return MapOf<TopologyAssignmentExpectation>(
                  where, sets, p, [&](const YAML::Node& a, const std::string& ap) {
                    return ParseAssignmentExpectation(where, a, ap);
                  });
            }));
  }
  if (const YAML::Node* n = keys.Get("unhealthyNodes")) {
    TOLLGATE_ASSIGN_OR_RETURN(
        e.unhealthy_nodes,
        MapOf<std::vector<std::string>>(
            where, *n, "unhealthyNodes",
            [&](const YAML::Node& v, const std::string& p) { return StrList(where, v, p); }));
  }
  return absl::OkStatus();
}

// ---------------------------------------------------------------------------------------------
// submit

// Values that cannot be put into the proto as written (a count of "many") become the submit's
// refusal, worded like the service's: field path and value.
absl::Status Refusal(absl::string_view name, absl::string_view path, absl::string_view what) {
  return absl::InvalidArgumentError(absl::StrCat("workload ", name, ": ", path, ": ", what));
}

// Reads an int32 the workload carries. Structure (a list where a number belongs) fails the
// scenario; a scalar that is no int32 is recorded as the submit's refusal in `refusal`.
absl::Status WorkloadInt(const Where& where, const YAML::Node& node, absl::string_view path,
                         absl::string_view name, int64_t lo, int64_t hi, int64_t* out,
                         absl::Status* refusal) {
  if (!node.IsScalar()) {
    return where.Error(path, absl::StrCat("expected an integer, got ", Describe(node)));
  }
  if (!absl::SimpleAtoi(node.Scalar(), out) || *out < lo || *out > hi) {
    if (refusal->ok()) {
      *refusal = Refusal(name, path, absl::StrCat("invalid integer \"", node.Scalar(), "\""));
    }
  }
  return absl::OkStatus();
}

absl::Status ParseCompactTolerations(const Where& where, const YAML::Node& node,
                                     absl::string_view path, absl::string_view name,
                                     v1::PodSet* set, absl::Status* refusal) {
  TOLLGATE_RETURN_IF_ERROR(ExpectSeq(where, node, path));
  size_t i = 0;
  for (const auto& item : node) {
    TOLLGATE_ASSIGN_OR_RETURN(
        Keys t, Keys::Read(where, item, Index(path, i++),
                           {"key", "operator", "value", "effect", "tolerationSeconds"}));
    v1::Toleration* tol = set->add_tolerations();
    for (auto [key, field] :
         {std::pair{"key", tol->mutable_key()}, std::pair{"operator", tol->mutable_operator_()},
          std::pair{"value", tol->mutable_value()}, std::pair{"effect", tol->mutable_effect()}}) {
      if (const YAML::Node* n = t.Get(key); n != nullptr && !n->IsNull()) {
        TOLLGATE_ASSIGN_OR_RETURN(*field, Str(where, *n, t.Path(key)));
      }
    }
    if (const YAML::Node* n = t.Get("tolerationSeconds"); n != nullptr && !n->IsNull()) {
      int64_t seconds = 0;
      TOLLGATE_RETURN_IF_ERROR(WorkloadInt(where, *n, t.Path("tolerationSeconds"), name,
                                           std::numeric_limits<int64_t>::min(),
                                           std::numeric_limits<int64_t>::max(), &seconds, refusal));
      tol->set_toleration_seconds(seconds);
    }
  }
  return absl::OkStatus();
}

// --- Owners (docs/scenario-format.md, "Owners, holds, ..."): apiVersion, kind, name and uid
// of the map `keys` read, all required.
absl::StatusOr<v1::OwnerReference> OwnerFromKeys(const Where& where, const Keys& keys) {
  v1::OwnerReference owner;
  TOLLGATE_ASSIGN_OR_RETURN(*owner.mutable_api_version(), RequiredStr(where, keys, "apiVersion"));
  TOLLGATE_ASSIGN_OR_RETURN(*owner.mutable_kind(), RequiredStr(where, keys, "kind"));
  TOLLGATE_ASSIGN_OR_RETURN(*owner.mutable_name(), RequiredStr(where, keys, "name"));
  TOLLGATE_ASSIGN_OR_RETURN(*owner.mutable_uid(), RequiredStr(where, keys, "uid"));
  owner.set_controller(true);
  return owner;
}

absl::StatusOr<SubmitItem> ParseCompactWorkload(const Where& where, const YAML::Node& node) {
  TOLLGATE_ASSIGN_OR_RETURN(
      Keys keys, Keys::Read(where, node, "",
                            {"name", "namespace", "queue", "priority", "priorityClass", "podSets",
                             "runtime", "owner", "annotations"}));
  SubmitItem item;
  TOLLGATE_ASSIGN_OR_RETURN(item.name, RequiredStr(where, keys, "name"));
  item.ns = "default";
  if (const YAML::Node* n = keys.Get("namespace"); n != nullptr && !n->IsNull()) {
    TOLLGATE_ASSIGN_OR_RETURN(item.ns, Str(where, *n, "namespace"));
  }
  const std::string label = absl::StrCat(item.ns, "/", item.name);
  absl::Status refusal;

  v1::Workload wl;
  wl.mutable_metadata()->set_name(item.name);
  wl.mutable_metadata()->set_namespace_(item.ns);
  v1::WorkloadSpec* spec = wl.mutable_spec();
  if (const YAML::Node* n = keys.Get("queue"); n != nullptr && !n->IsNull()) {
    TOLLGATE_ASSIGN_OR_RETURN(*spec->mutable_queue_name(), Str(where, *n, "queue"));
  }
  if (const YAML::Node* n = keys.Get("priority"); n != nullptr && !n->IsNull()) {
    int64_t v = 0;
    TOLLGATE_RETURN_IF_ERROR(WorkloadInt(where, *n, "priority", label,
                                         std::numeric_limits<int32_t>::min(),
                                         std::numeric_limits<int32_t>::max(), &v, &refusal));
    spec->set_priority(static_cast<int32_t>(v));
  }
  if (const YAML::Node* n = keys.Get("priorityClass"); n != nullptr && !n->IsNull()) {
    TOLLGATE_ASSIGN_OR_RETURN(*spec->mutable_priority_class_name(),
                              Str(where, *n, "priorityClass"));
  }
  if (const YAML::Node* n = keys.Get("runtime"); n != nullptr && !n->IsNull()) {
    TOLLGATE_ASSIGN_OR_RETURN(item.runtime, Duration(where, *n, "runtime"));
  }
  if (const YAML::Node* n = keys.Get("owner"); n != nullptr && !n->IsNull()) {
    TOLLGATE_ASSIGN_OR_RETURN(
        Keys owner, Keys::Read(where, *n, "owner", {"apiVersion", "kind", "name", "uid"}));
    TOLLGATE_ASSIGN_OR_RETURN(*wl.mutable_metadata()->add_owner_references(),
                              OwnerFromKeys(where, owner));
  }

  if (const YAML::Node* n = keys.Get("annotations"); n != nullptr && !n->IsNull()) {
    TOLLGATE_ASSIGN_OR_RETURN(auto annotations, StrMap(where, *n, "annotations"));
    wl.mutable_metadata()->mutable_annotations()->insert(annotations.begin(), annotations.end());
  }

  const YAML::Node* sets = keys.Get("podSets");
  if (sets == nullptr || sets->IsNull()) {
    v1::PodSet* set = spec->add_pod_sets();
    set->set_name("main");
    set->set_count(1);
  } else {
    TOLLGATE_RETURN_IF_ERROR(ExpectSeq(where, *sets, "podSets"));
    size_t i = 0;
    for (const auto& set_node : *sets) {
      const std::string set_path = Index("podSets", i++);
      if (set_node.IsNull()) return where.Error(set_path, "expected a map, got null");
      TOLLGATE_ASSIGN_OR_RETURN(Keys p,
                                Keys::Read(where, set_node, set_path,
                                           {"name", "count", "requests", "minCount", "nodeSelector",
                                            "tolerations", "topologyRequest"}));
      v1::PodSet* set = spec->add_pod_sets();
      set->set_name("main");
      set->set_count(1);
      if (const YAML::Node* n = p.Get("name"); n != nullptr && !n->IsNull()) {
        TOLLGATE_ASSIGN_OR_RETURN(*set->mutable_name(), Str(where, *n, p.Path("name")));
      }
      if (const YAML::Node* n = p.Get("count"); n != nullptr && !n->IsNull()) {
        int64_t v = 0;
        TOLLGATE_RETURN_IF_ERROR(WorkloadInt(where, *n, p.Path("count"), label,
                                             std::numeric_limits<int32_t>::min(),
                                             std::numeric_limits<int32_t>::max(), &v, &refusal));
        set->set_count(static_cast<int32_t>(v));
      }
      if (const YAML::Node* n = p.Get("minCount"); n != nullptr && !n->IsNull()) {
        int64_t v = 0;
        TOLLGATE_RETURN_IF_ERROR(WorkloadInt(where, *n, p.Path("minCount"), label,
                                             std::numeric_limits<int32_t>::min(),
                                             std::numeric_limits<int32_t>::max(), &v, &refusal));
        set->set_min_count(static_cast<int32_t>(v));
      }
      if (const YAML::Node* n = p.Get("requests")) {
        // The scalar's text as written ("12 cores" included): the service validates it.
        TOLLGATE_ASSIGN_OR_RETURN(
            auto requests,
            MapOf<std::string>(
                where, *n, p.Path("requests"),
                [&](const YAML::Node& v, const std::string& path) -> absl::StatusOr<std::string> {
                  if (v.IsNull()) return std::string();
                  return Str(where, v, path);
                }));
        for (auto& [resource, quantity] : requests) {
          (*set->mutable_requests())[resource] = std::move(quantity);
        }
      }
      if (const YAML::Node* n = p.Get("nodeSelector")) {
        TOLLGATE_ASSIGN_OR_RETURN(auto selector, StrMap(where, *n, p.Path("nodeSelector")));
        set->mutable_node_selector()->insert(selector.begin(), selector.end());
      }
      if (const YAML::Node* n = p.Get("tolerations")) {
        TOLLGATE_RETURN_IF_ERROR(
            ParseCompactTolerations(where, *n, p.Path("tolerations"), label, set, &refusal));
      }
      if (const YAML::Node* n = p.Get("topologyRequest"); n != nullptr && !n->IsNull()) {
        TOLLGATE_RETURN_IF_ERROR(ParseCompactTopologyRequest(where, *n, p.Path("topologyRequest"),
                                                             set->mutable_topology_request()));
      }
    }
  }
  if (refusal.ok()) {
    item.workload = std::move(wl);
  } else {
    item.workload = refusal;
  }
  return item;
}

// --- Job kinds (docs/job-kinds.md): a submit item that is a job manifest (apiVersion and kind
// of a row of services/manifest/job_kinds.h) becomes the workload tollgate-kube would submit
// for it, named after the job so later steps can name it. A job the kind's rules refuse (a
// Spark application in client mode) is the submit's refusal, as a bad value is; another
// version of a known kind is a scenario error. nullopt for anything that is no job.
absl::StatusOr<std::optional<SubmitItem>> ParseJobSubmitItem(const Where& where,
                                                             const YAML::Node& node) {
  const YAML::Node api = node["apiVersion"];
  const std::string api_version = api.IsDefined() && api.IsScalar() ? api.Scalar() : "";
  absl::StatusOr<const manifest::JobKindTranslator*> kind =
      manifest::JobKindOfManifest(api_version, node["kind"].Scalar());
  if (!kind.ok()) return where.Error("apiVersion", kind.status().message());
  if (*kind == nullptr) return std::nullopt;
  manifest::Json obj = manifest::JsonFromYaml(node);
  manifest::Json& meta = obj["metadata"];
  if (!meta.is_object()) meta = manifest::Json::object();
  if (!meta.contains("namespace")) meta["namespace"] = "default";
  SubmitItem item;
  item.name = manifest::GetString(obj, {"metadata", "name"});
  item.ns = manifest::GetString(obj, {"metadata", "namespace"});
  if (item.name.empty()) return where.Error("metadata.name", "required");
  // A stand-in for the uid the API server would give: the workload carries none of it.
  meta["uid"] = absl::StrCat("scenario-", item.ns, "-", item.name);
  absl::StatusOr<v1::Workload> wl =
      manifest::TranslateWorkload(**kind, obj, "", manifest::NoObjects(), item.name);
  if (wl.ok()) {
    wl->mutable_metadata()->clear_uid();
    wl->mutable_metadata()->mutable_labels()->erase(std::string(manifest::kJobUidLabel));
  }
  item.workload = std::move(wl);
  return item;
}

absl::StatusOr<SubmitItem> ParseSubmitItem(const Where& where, const YAML::Node& node) {
  const YAML::Node kind = node.IsMap() ? node["kind"] : YAML::Node();
  if (!kind.IsDefined() || kind.IsNull()) return ParseCompactWorkload(where, node);

  // --- Job kinds: a job manifest of any kind Tollgate admits, as tollgate-kube would submit it.
  if (absl::StatusOr<std::optional<SubmitItem>> job = ParseJobSubmitItem(where, node); !job.ok()) {
    return job.status();
  } else if (job->has_value()) {
    return **job;
  }

  // A full Workload manifest.
  absl::StatusOr<Manifest> m = manifest::ParseManifestNode(node, where.label());
  SubmitItem item;
  if (!m.ok() && !manifest::IsValueError(m.status())) return m.status();
  if (m.ok()) {
    if (m->kind != "Workload") {
      return where.Error("kind", absl::StrCat("submit takes workloads, not ", m->kind));
    }
    v1::Workload wl = std::get<v1::Workload>(std::move(m->object));
    item.name = wl.metadata().name();
    item.ns = wl.metadata().namespace_();
    item.workload = std::move(wl);
    return item;
  }
  // The manifest is well-formed but one of its values is not: the submit is refused, and the
  // scenario goes on. Its name is still needed to match `rejected`.
  const YAML::Node metadata = node["metadata"];
  if (metadata.IsDefined() && metadata.IsMap()) {
    if (const YAML::Node n = metadata["name"]; n.IsDefined() && n.IsScalar())
      item.name = n.Scalar();
    if (const YAML::Node n = metadata["namespace"]; n.IsDefined() && n.IsScalar()) {
      item.ns = n.Scalar();
    }
  }
  if (item.ns.empty()) item.ns = "default";
  item.workload = m.status();
  return item;
}

// ---------------------------------------------------------------------------------------------
// expect

absl::StatusOr<std::vector<WorkloadExpectation>> ParseWorkloadExpectations(const Where& where,
                                                                           const YAML::Node& node,
                                                                           absl::string_view path) {
  TOLLGATE_RETURN_IF_ERROR(ExpectSeq(where, node, path));
  std::vector<WorkloadExpectation> out;
  size_t i = 0;
  for (const auto& item : node) {
    const std::string item_path = Index(path, i++);
    WorkloadExpectation e;
    if (item.IsScalar()) {
      e.name = item.Scalar();
    } else {
      if (!item.IsMap()) {
        return where.Error(item_path,
                           absl::StrCat("expected a name or a map, got ", Describe(item)));
      }
      TOLLGATE_ASSIGN_OR_RETURN(
          Keys k,
          Keys::Read(where, item, item_path, {"name", "flavors", "podSetFlavors", "podSetUsage"}));
      TOLLGATE_ASSIGN_OR_RETURN(e.name, RequiredStr(where, k, "name"));
      if (const YAML::Node* f = k.Get("flavors")) {
        TOLLGATE_ASSIGN_OR_RETURN(e.flavors, StrMap(where, *f, k.Path("flavors")));
      }
      if (const YAML::Node* f = k.Get("podSetFlavors")) {
        using FlavorMap = std::map<std::string, std::string>;
        TOLLGATE_ASSIGN_OR_RETURN(e.pod_set_flavors,
                                  MapOf<FlavorMap>(where, *f, k.Path("podSetFlavors"),
                                                   [&](const YAML::Node& v, const std::string& p) {
                                                     return StrMap(where, v, p);
                                                   }));
      }
      if (const YAML::Node* f = k.Get("podSetUsage")) {
        using UsageMap = std::map<std::string, std::string>;
        TOLLGATE_ASSIGN_OR_RETURN(
            e.pod_set_usage,
            MapOf<UsageMap>(
                where, *f, k.Path("podSetUsage"),
                [&](const YAML::Node& v, const std::string& p) -> absl::StatusOr<UsageMap> {
                  TOLLGATE_ASSIGN_OR_RETURN(UsageMap usage, StrMap(where, v, p));
                  for (const auto& [resource, text] : usage) {
                    if (!core::Quantity::Parse(text).ok()) {
                      return where.Error(manifest::MapKey(p, resource),
                                         absl::StrCat("malformed quantity \"", text, "\""));
                    }
                  }
                  return usage;
                }));
      }
    }
    if (e.name.empty()) return where.Error(item_path, "empty workload name");
    out.push_back(std::move(e));
  }
  return out;
}

// A list of {kind, name, namespace}, plus the one `extra` key the caller reads ("refused" for
// delete, "drain" for stop; empty for none).
absl::StatusOr<std::vector<ObjectRef>> ParseRefList(const Where& where, const YAML::Node& node,
                                                    absl::string_view path,
                                                    absl::string_view extra) {
  TOLLGATE_RETURN_IF_ERROR(ExpectSeq(where, node, path));
  std::vector<ObjectRef> out;
  size_t i = 0;
  for (const auto& item : node) {
    const std::string item_path = Index(path, i++);
    absl::StatusOr<Keys> keys =
        extra.empty() ? Keys::Read(where, item, item_path, {"kind", "name", "namespace"})
                      : Keys::Read(where, item, item_path, {"kind", "name", "namespace", extra});
    if (!keys.ok()) return keys.status();
    const Keys& k = *keys;
    ObjectRef ref;
    TOLLGATE_ASSIGN_OR_RETURN(ref.kind, RequiredStr(where, k, "kind"));
    if (core::FindKind(ref.kind) == nullptr) {
      return where.Error(k.Path("kind"), absl::StrCat("unknown kind \"", ref.kind, "\""));
    }
    TOLLGATE_ASSIGN_OR_RETURN(ref.name, RequiredStr(where, k, "name"));
    if (const YAML::Node* n = k.Get("namespace"); n != nullptr && !n->IsNull()) {
      TOLLGATE_ASSIGN_OR_RETURN(ref.ns, Str(where, *n, k.Path("namespace")));
    }
    if (const YAML::Node* n = k.Get("refused")) {
      TOLLGATE_ASSIGN_OR_RETURN(ref.refused, Str(where, *n, k.Path("refused")));
    }
    if (const YAML::Node* n = k.Get("drain")) {
      TOLLGATE_ASSIGN_OR_RETURN(ref.drain, Bool(where, *n, k.Path("drain")));
    }
    out.push_back(std::move(ref));
  }
  return out;
}

// --- Admission checks (docs/scenario-format.md, "Admission checks") --------------------------

absl::StatusOr<CheckStateExpectation> ParseCheckStateExpectation(const Where& where,
                                                                 const YAML::Node& node,
                                                                 const std::string& path) {
  CheckStateExpectation out;
  if (node.IsScalar()) {
    out.state = node.Scalar();
    return out;
  }
  TOLLGATE_ASSIGN_OR_RETURN(
      Keys k,
      Keys::Read(where, node, path, {"state", "message", "retryCount", "requeueAfterSeconds"}));
  if (const YAML::Node* n = k.Get("state")) {
    TOLLGATE_ASSIGN_OR_RETURN(out.state, Str(where, *n, k.Path("state")));
  }
  if (const YAML::Node* n = k.Get("message")) {
    TOLLGATE_ASSIGN_OR_RETURN(out.message, Str(where, *n, k.Path("message")));
  }
  if (const YAML::Node* n = k.Get("retryCount")) {
    TOLLGATE_ASSIGN_OR_RETURN(out.retry_count, Int32(where, *n, k.Path("retryCount")));
  }
  if (const YAML::Node* n = k.Get("requeueAfterSeconds")) {
    TOLLGATE_ASSIGN_OR_RETURN(out.requeue_after_seconds,
                              Int32(where, *n, k.Path("requeueAfterSeconds")));
  }
  return out;
}

absl::Status ParseCheckExpectations(const Where& where, const Keys& keys, CheckExpectations& e) {
  if (const YAML::Node* n = keys.Get("quotaReserved")) {
    TOLLGATE_ASSIGN_OR_RETURN(e.quota_reserved,
                              ParseWorkloadExpectations(where, *n, "quotaReserved"));
  }
  if (const YAML::Node* n = keys.Get("checks")) {
    using States = std::map<std::string, CheckStateExpectation>;
    TOLLGATE_ASSIGN_OR_RETURN(
        e.checks,
        MapOf<States>(where, *n, "checks", [&](const YAML::Node& v, const std::string& p) {
          return MapOf<CheckStateExpectation>(where, v, p,
                                              [&](const YAML::Node& s, const std::string& sp) {
                                                return ParseCheckStateExpectation(where, s, sp);
                                              });
        }));
  }
  if (const YAML::Node* n = keys.Get("evicted")) {
    TOLLGATE_ASSIGN_OR_RETURN(
        e.evicted,
        MapOf<EvictedExpectation>(
            where, *n, "evicted",
            [&](const YAML::Node& v, const std::string& p) -> absl::StatusOr<EvictedExpectation> {
              TOLLGATE_ASSIGN_OR_RETURN(Keys k, Keys::Read(where, v, p, {"reason", "message"}));
              EvictedExpectation out;
              TOLLGATE_ASSIGN_OR_RETURN(out.reason, RequiredStr(where, k, "reason"));
              if (const YAML::Node* m = k.Get("message")) {
                TOLLGATE_ASSIGN_OR_RETURN(out.message, Str(where, *m, k.Path("message")));
              }
              return out;
            }));
  }
  if (const YAML::Node* n = keys.Get("inactive")) {
    TOLLGATE_ASSIGN_OR_RETURN(e.inactive, StrMap(where, *n, "inactive"));
  }
  if (const YAML::Node* n = keys.Get("dispatch")) {
    TOLLGATE_ASSIGN_OR_RETURN(
        e.dispatch,
        MapOf<DispatchExpectation>(
            where, *n, "dispatch",
            [&](const YAML::Node& v, const std::string& p) -> absl::StatusOr<DispatchExpectation> {
              TOLLGATE_ASSIGN_OR_RETURN(Keys k,
                                        Keys::Read(where, v, p, {"clusterName", "nominated"}));
              DispatchExpectation out;
              if (const YAML::Node* m = k.Get("clusterName")) {
                TOLLGATE_ASSIGN_OR_RETURN(out.cluster_name, Str(where, *m, k.Path("clusterName")));
              }
              if (const YAML::Node* m = k.Get("nominated")) {
                TOLLGATE_ASSIGN_OR_RETURN(out.nominated, StrList(where, *m, k.Path("nominated")));
              }
              return out;
            }));
  }
  if (const YAML::Node* n = keys.Get("remoteCopies")) {
    using States = std::map<std::string, std::string>;
    TOLLGATE_ASSIGN_OR_RETURN(
        e.remote_copies,
        MapOf<States>(where, *n, "remoteCopies",
                      [&](const YAML::Node& v, const std::string& p) -> absl::StatusOr<States> {
                        TOLLGATE_ASSIGN_OR_RETURN(States states, StrMap(where, v, p));
                        for (const auto& [cluster, state] : states) {
                          if (state != "Pending" && state != "Admitted" && state != "Evicted" &&
                              state != "Finished") {
                            return where.Error(
                                absl::StrCat(p, "[", cluster, "]"),
                                absl::StrCat("want Pending, Admitted, Evicted or Finished, got \"",
                                             state, "\""));
                          }
                        }
                        return states;
                      }));
  }
  if (const YAML::Node* n = keys.Get("podSetInfo")) {
    using Sets = std::map<std::string, PodSetInfoExpectation>;
    TOLLGATE_ASSIGN_OR_RETURN(
        e.pod_set_info,
        MapOf<Sets>(where, *n, "podSetInfo", [&](const YAML::Node& v, const std::string& p) {
          return MapOf<PodSetInfoExpectation>(
              where, v, p,
              [&](const YAML::Node& s,
                  const std::string& sp) -> absl::StatusOr<PodSetInfoExpectation> {
                TOLLGATE_ASSIGN_OR_RETURN(
                    Keys k, Keys::Read(where, s, sp, {"labels", "annotations", "nodeSelector"}));
                PodSetInfoExpectation out;
                if (const YAML::Node* m = k.Get("labels")) {
                  TOLLGATE_ASSIGN_OR_RETURN(out.labels, StrMap(where, *m, k.Path("labels")));
                }
                if (const YAML::Node* m = k.Get("annotations")) {
                  TOLLGATE_ASSIGN_OR_RETURN(out.annotations,
                                            StrMap(where, *m, k.Path("annotations")));
                }
                if (const YAML::Node* m = k.Get("nodeSelector")) {
                  TOLLGATE_ASSIGN_OR_RETURN(out.node_selector,
                                            StrMap(where, *m, k.Path("nodeSelector")));
                }
                return out;
              });
        }));
  }
  return absl::OkStatus();
}

// --- Owners, holds, missing pods, cost attribution: the expectations.
absl::Status ParseJobExpectations(const Where& where, const Keys& keys, Expectation& e) {
  if (const YAML::Node* n = keys.Get("onHold")) {
    TOLLGATE_ASSIGN_OR_RETURN(e.on_hold, StrList(where, *n, "onHold"));
  }
  if (const YAML::Node* n = keys.Get("waitingForPods")) {
    TOLLGATE_ASSIGN_OR_RETURN(e.waiting_for_pods, StrList(where, *n, "waitingForPods"));
  }
  if (const YAML::Node* n = keys.Get("admissionGated")) {
    TOLLGATE_ASSIGN_OR_RETURN(e.admission_gated, StrList(where, *n, "admissionGated"));
  }
  if (const YAML::Node* n = keys.Get("conditions")) {
    using ByType = std::map<std::string, ConditionExpectation>;
    auto one = [&](const YAML::Node& v,
                   const std::string& p) -> absl::StatusOr<ConditionExpectation> {
      ConditionExpectation out;
      if (v.IsScalar()) {
        if (v.Scalar() != "absent") {
          return where.Error(p, absl::StrCat("expected a map {status, reason, message} or "
                                             "\"absent\", got \"",
                                             v.Scalar(), "\""));
        }
        out.absent = true;
        return out;
      }
      TOLLGATE_ASSIGN_OR_RETURN(Keys k, Keys::Read(where, v, p, {"status", "reason", "message"}));
      if (const YAML::Node* s = k.Get("status")) {
        TOLLGATE_ASSIGN_OR_RETURN(out.status, Str(where, *s, k.Path("status")));
        if (*out.status != "True" && *out.status != "False") {
          return where.Error(
              k.Path("status"),
              absl::StrCat("expected \"True\" or \"False\", got \"", *out.status, "\""));
        }
      }
      if (const YAML::Node* r = k.Get("reason")) {
        TOLLGATE_ASSIGN_OR_RETURN(out.reason, Str(where, *r, k.Path("reason")));
      }
      if (const YAML::Node* m = k.Get("message")) {
        TOLLGATE_ASSIGN_OR_RETURN(out.message, Str(where, *m, k.Path("message")));
      }
      return out;
    };
    TOLLGATE_ASSIGN_OR_RETURN(
        e.conditions,
        MapOf<ByType>(where, *n, "conditions", [&](const YAML::Node& v, const std::string& p) {
          return MapOf<ConditionExpectation>(where, v, p, one);
        }));
  }
  if (const YAML::Node* n = keys.Get("ownedBy")) {
    TOLLGATE_ASSIGN_OR_RETURN(
        e.owned_by, MapOf<std::vector<std::string>>(
                        where, *n, "ownedBy",
                        [&](const YAML::Node& v,
                            const std::string& p) -> absl::StatusOr<std::vector<std::string>> {
                          return StrList(where, v, p);
                        }));
  }
  if (const YAML::Node* n = keys.Get("podLabels")) {
    using LabelMap = std::map<std::string, std::string>;
    TOLLGATE_ASSIGN_OR_RETURN(
        e.pod_labels,
        MapOf<LabelMap>(where, *n, "podLabels", [&](const YAML::Node& v, const std::string& p) {
          return StrMap(where, v, p);
        }));
  }
  return absl::OkStatus();
}

// setCheck items: {workload, check, state, message, requeueAfterSeconds, podSetUpdates,
// refused, clusterName, nominatedClusterNames}. Values go to the service as written.
absl::StatusOr<std::vector<CheckUpdateItem>> ParseCheckUpdates(const Where& where,
                                                               const YAML::Node& node) {
  TOLLGATE_RETURN_IF_ERROR(ExpectSeq(where, node, "setCheck"));
  std::vector<CheckUpdateItem> out;
  size_t i = 0;
  for (const auto& item : node) {
    const std::string path = Index("setCheck", i++);
    TOLLGATE_ASSIGN_OR_RETURN(
        Keys k, Keys::Read(where, item, path,
                           {"workload", "check", "state", "message", "requeueAfterSeconds",
                            "podSetUpdates", "refused", "clusterName", "nominatedClusterNames"}));
    CheckUpdateItem update;
    TOLLGATE_ASSIGN_OR_RETURN(update.workload, RequiredStr(where, k, "workload"));
    v1::UpdateAdmissionCheckStateRequest& r = update.request;
    TOLLGATE_ASSIGN_OR_RETURN(*r.mutable_check(), RequiredStr(where, k, "check"));
    TOLLGATE_ASSIGN_OR_RETURN(*r.mutable_state(), RequiredStr(where, k, "state"));
    if (const YAML::Node* n = k.Get("message")) {
      TOLLGATE_ASSIGN_OR_RETURN(*r.mutable_message(), Str(where, *n, k.Path("message")));
    }
    if (const YAML::Node* n = k.Get("requeueAfterSeconds")) {
      TOLLGATE_ASSIGN_OR_RETURN(int32_t v, Int32(where, *n, k.Path("requeueAfterSeconds")));
      r.set_requeue_after_seconds(v);
    }
    // MultiKueue: the winner, or the nominees (the list replaces the stored one).
    if (const YAML::Node* n = k.Get("clusterName")) {
      TOLLGATE_ASSIGN_OR_RETURN(*r.mutable_cluster_name(), Str(where, *n, k.Path("clusterName")));
    }
    if (const YAML::Node* n = k.Get("nominatedClusterNames")) {
      TOLLGATE_ASSIGN_OR_RETURN(std::vector<std::string> nominees,
                                StrList(where, *n, k.Path("nominatedClusterNames")));
      r.set_set_nominated_cluster_names(true);
      for (std::string& nominee : nominees) r.add_nominated_cluster_names(std::move(nominee));
    }
    if (const YAML::Node* n = k.Get("podSetUpdates")) {
      const std::string updates_path = k.Path("podSetUpdates");
      TOLLGATE_RETURN_IF_ERROR(ExpectSeq(where, *n, updates_path));
      size_t j = 0;
      for (const auto& u : *n) {
        const std::string u_path = Index(updates_path, j++);
        TOLLGATE_ASSIGN_OR_RETURN(
            Keys uk, Keys::Read(where, u, u_path,
                                {"name", "labels", "annotations", "nodeSelector", "tolerations"}));
        v1::PodSetUpdate* p = r.add_pod_set_updates();
        TOLLGATE_ASSIGN_OR_RETURN(*p->mutable_name(), RequiredStr(where, uk, "name"));
        for (auto [key, field] : {std::pair{"labels", p->mutable_labels()},
                                  std::pair{"annotations", p->mutable_annotations()},
                                  std::pair{"nodeSelector", p->mutable_node_selector()}}) {
          if (const YAML::Node* m = uk.Get(key)) {
            TOLLGATE_ASSIGN_OR_RETURN(auto values, StrMap(where, *m, uk.Path(key)));
            field->insert(values.begin(), values.end());
          }
        }
        if (const YAML::Node* t = uk.Get("tolerations")) {
          const std::string t_path = uk.Path("tolerations");
          TOLLGATE_RETURN_IF_ERROR(ExpectSeq(where, *t, t_path));
          size_t l = 0;
          for (const auto& tol : *t) {
            TOLLGATE_ASSIGN_OR_RETURN(Keys tk, Keys::Read(where, tol, Index(t_path, l++),
                                                          {"key", "operator", "value", "effect"}));
            v1::Toleration* out_tol = p->add_tolerations();
            for (auto [key, field] : {std::pair{"key", out_tol->mutable_key()},
                                      std::pair{"operator", out_tol->mutable_operator_()},
                                      std::pair{"value", out_tol->mutable_value()},
                                      std::pair{"effect", out_tol->mutable_effect()}}) {
              if (const YAML::Node* m = tk.Get(key)) {
                TOLLGATE_ASSIGN_OR_RETURN(*field, Str(where, *m, tk.Path(key)));
              }
            }
          }
        }
      }
    }
    if (const YAML::Node* n = k.Get("refused")) {
      TOLLGATE_ASSIGN_OR_RETURN(update.refused, Str(where, *n, k.Path("refused")));
    }
    out.push_back(std::move(update));
  }
  return out;
}

// --- end of admission checks -------------------------------------------------------------------

absl::StatusOr<Expectation> ParseExpectation(const Where& where, const YAML::Node& node) {
  TOLLGATE_ASSIGN_OR_RETURN(
      Keys keys,
      Keys::Read(where, node, "",
                 {"admitted", "pending", "finished", "preempted", "preemptionReasons", "fairShare",
                  "reasons", "pendingReasons", "usage", "queueOrder", "rejected", "terminating",
                  "absent", "deleted", "deactivated", "quotaReserved", "checks", "evicted",
                  "inactive", "podSetInfo", "dispatch", "remoteCopies",
                  // --- Topology (issue 28).
                  "topologyAssignments", "unhealthyNodes",
                  // --- Owners, holds, missing pods, cost attribution (issue 27).
                  "onHold", "waitingForPods", "ownedBy", "podLabels",
                  // --- Admission gates.
                  "admissionGated",
                  // --- Any workload condition.
                  "conditions"}));
  Expectation e;
  TOLLGATE_RETURN_IF_ERROR(ParseCheckExpectations(where, keys, e.checks));
  TOLLGATE_RETURN_IF_ERROR(ParseTopologyExpectations(where, keys, e));
  TOLLGATE_RETURN_IF_ERROR(ParseJobExpectations(where, keys, e));
  if (const YAML::Node* n = keys.Get("terminating")) {
    TOLLGATE_ASSIGN_OR_RETURN(e.terminating, ParseRefList(where, *n, "terminating", ""));
  }
  if (const YAML::Node* n = keys.Get("absent")) {
    TOLLGATE_ASSIGN_OR_RETURN(e.absent, ParseRefList(where, *n, "absent", ""));
  }
  if (const YAML::Node* n = keys.Get("deactivated")) {
    TOLLGATE_ASSIGN_OR_RETURN(e.deactivated, StrList(where, *n, "deactivated"));
  }
  if (const YAML::Node* n = keys.Get("deleted")) {
    TOLLGATE_ASSIGN_OR_RETURN(e.deleted, StrList(where, *n, "deleted"));
  }
  for (auto [key, field] : {std::pair{"admitted", &e.admitted}, std::pair{"pending", &e.pending},
                            std::pair{"finished", &e.finished}}) {
    if (const YAML::Node* n = keys.Get(key)) {
      TOLLGATE_ASSIGN_OR_RETURN(*field, ParseWorkloadExpectations(where, *n, key));
    }
  }
  if (const YAML::Node* n = keys.Get("preempted")) {
    TOLLGATE_ASSIGN_OR_RETURN(
        e.preempted,
        MapOf<int32_t>(where, *n, "preempted", [&](const YAML::Node& v, const std::string& p) {
          return Int32(where, v, p);
        }));
  }
  if (const YAML::Node* n = keys.Get("preemptionReasons")) {
    TOLLGATE_ASSIGN_OR_RETURN(
        e.preemption_reasons,
        MapOf<std::string>(
            where, *n, "preemptionReasons",
            [&](const YAML::Node& v, const std::string& p) -> absl::StatusOr<std::string> {
              TOLLGATE_ASSIGN_OR_RETURN(std::string reason, Str(where, v, p));
              static constexpr std::initializer_list<absl::string_view> kReasons = {
                  "InClusterQueue", "InCohortReclamation", "InCohortFairSharing",
                  "InCohortReclaimWhileBorrowing"};
              if (!absl::c_linear_search(kReasons, reason)) {
                return where.Error(
                    p, absl::StrCat("unknown preemption reason \"", reason,
                                    "\" (expected one of: ", absl::StrJoin(kReasons, ", "), ")"));
              }
              return reason;
            }));
  }
  if (const YAML::Node* n = keys.Get("fairShare")) {
    TOLLGATE_ASSIGN_OR_RETURN(
        e.fair_share,
        MapOf<int64_t>(where, *n, "fairShare", [&](const YAML::Node& v, const std::string& p) {
          return Int(where, v, p, std::numeric_limits<int64_t>::min(),
                     std::numeric_limits<int64_t>::max());
        }));
  }
  if (const YAML::Node* n = keys.Get("reasons")) {
    TOLLGATE_ASSIGN_OR_RETURN(e.reasons, StrMap(where, *n, "reasons"));
  }
  if (const YAML::Node* n = keys.Get("pendingReasons")) {
    TOLLGATE_ASSIGN_OR_RETURN(
        e.pending_reasons,
        MapOf<std::string>(
            where, *n, "pendingReasons",
            [&](const YAML::Node& v, const std::string& p) -> absl::StatusOr<std::string> {
              TOLLGATE_ASSIGN_OR_RETURN(std::string reason, Str(where, v, p));
              // Kueue's QuotaReserved=False reasons of a pending workload: a misspelt one
              // would otherwise only ever fail as "saw X".
              static constexpr std::initializer_list<absl::string_view> kReasons = {
                  "PendingEvaluation",
                  "WaitingForQuota",
                  "NoMatchingFlavor",
                  "ExceedsMaxQuota",
                  "TopologyPlacementFailed",
                  "WaitingForPreemptedWorkloads",
                  "WaitingForPodsReady",
                  "Misconfigured",
                  "Suspended",
                  "AdmissionGated",
                  "Deactivated",
                  "OnHold"};
              if (!absl::c_linear_search(kReasons, reason)) {
                return where.Error(
                    p, absl::StrCat("unknown pending reason \"", reason,
                                    "\" (expected one of: ", absl::StrJoin(kReasons, ", "), ")"));
              }
              return reason;
            }));
  }
  if (const YAML::Node* n = keys.Get("rejected")) {
    TOLLGATE_ASSIGN_OR_RETURN(e.rejected, StrMap(where, *n, "rejected"));
  }
  if (const YAML::Node* n = keys.Get("usage")) {
    TOLLGATE_RETURN_IF_ERROR(ExpectSeq(where, *n, "usage"));
    size_t i = 0;
    for (const auto& item : *n) {
      TOLLGATE_ASSIGN_OR_RETURN(
          Keys u, Keys::Read(where, item, Index("usage", i++),
                             {"clusterQueue", "flavor", "resource", "used", "borrowed"}));
      UsageExpectation usage;
      TOLLGATE_ASSIGN_OR_RETURN(usage.cluster_queue, RequiredStr(where, u, "clusterQueue"));
      TOLLGATE_ASSIGN_OR_RETURN(usage.flavor, RequiredStr(where, u, "flavor"));
      TOLLGATE_ASSIGN_OR_RETURN(usage.resource, RequiredStr(where, u, "resource"));
      TOLLGATE_ASSIGN_OR_RETURN(usage.used, RequiredStr(where, u, "used"));
      if (const YAML::Node* b = u.Get("borrowed"); b != nullptr && !b->IsNull()) {
        TOLLGATE_ASSIGN_OR_RETURN(usage.borrowed, Str(where, *b, u.Path("borrowed")));
      }
      e.usage.push_back(std::move(usage));
    }
  }
  if (const YAML::Node* n = keys.Get("queueOrder")) {
    TOLLGATE_ASSIGN_OR_RETURN(
        e.queue_order, MapOf<std::vector<std::string>>(
                           where, *n, "queueOrder",
                           [&](const YAML::Node& v,
                               const std::string& p) -> absl::StatusOr<std::vector<std::string>> {
                             return StrList(where, v, p);
                           }));
    for (const auto& [queue, names] : e.queue_order) {
      const size_t slash = queue.find('/');
      if (slash == std::string::npos || slash == 0 || slash + 1 == queue.size() ||
          queue.find('/', slash + 1) != std::string::npos) {
        return where.Error(absl::StrCat("queueOrder[", queue, "]"),
                           "expected a key of the form namespace/localQueue");
      }
    }
  }
  return e;
}

// ---------------------------------------------------------------------------------------------
// steps

struct StepKindEntry {
  absl::string_view name;
  StepKind kind;
};

constexpr StepKindEntry kStepKinds[] = {
    {"submit", StepKind::kSubmit},
    {"apply", StepKind::kApply},
    {"delete", StepKind::kDelete},
    {"settle", StepKind::kSettle},
    {"advance", StepKind::kAdvance},
    {"finish", StepKind::kFinish},
    {"podsReady", StepKind::kPodsReady},
    {"expect", StepKind::kExpect},
    {"preempt", StepKind::kPreempt},
    {"deactivate", StepKind::kDeactivate},
    {"activate", StepKind::kActivate},
    {"reprioritize", StepKind::kReprioritize},
    {"stop", StepKind::kStop},
    {"resume", StepKind::kResume},
    {"podsNotReady", StepKind::kPodsNotReady},
    {"stopped", StepKind::kStopped},
    {"setCheck", StepKind::kSetCheck},
    {"activateChecks", StepKind::kActivateChecks},
    {"deactivateChecks", StepKind::kDeactivateChecks},
    {"restart", StepKind::kRestart},
    {"reclaimablePods", StepKind::kReclaimablePods},
    // --- Topology (issue 28).
    {"nodes", StepKind::kNodes},
    {"deleteNodes", StepKind::kDeleteNodes},
    {"reportPods", StepKind::kReportPods},
    {"removePods", StepKind::kRemovePods},
    {"hold", StepKind::kHold},
    {"release", StepKind::kRelease},
    {"bindOwner", StepKind::kBindOwner},
    {"outOfSync", StepKind::kOutOfSync},
    {"podsMissing", StepKind::kPodsMissing},
    {"podsReplaced", StepKind::kPodsReplaced},
    {"admissionGates", StepKind::kAdmissionGates},
    {"priorityBoost", StepKind::kPriorityBoost},
    // --- MultiKueue.
    {"remoteAdmit", StepKind::kRemoteAdmit},
    {"remoteEvict", StepKind::kRemoteEvict},
    {"remoteFinish", StepKind::kRemoteFinish},
    {"remoteDelete", StepKind::kRemoteDelete},
    {"connectWorkers", StepKind::kConnectWorkers},
    {"disconnectWorkers", StepKind::kDisconnectWorkers},
};

// remoteAdmit {workload, cluster, ago}, remoteEvict and remoteFinish {workload, cluster, reason,
// message}, remoteDelete {workload, cluster}.
absl::StatusOr<std::vector<RemoteReport>> ParseRemoteReports(const Where& where,
                                                             const YAML::Node& node,
                                                             StepKind kind) {
  const std::string name(StepKindName(kind));
  TOLLGATE_RETURN_IF_ERROR(ExpectSeq(where, node, name));
  std::vector<RemoteReport> out;
  size_t i = 0;
  for (const auto& item : node) {
    const std::string path = Index(name, i++);
    absl::StatusOr<Keys> read =
        kind == StepKind::kRemoteAdmit
            ? Keys::Read(where, item, path, {"workload", "cluster", "ago"})
        : kind == StepKind::kRemoteDelete
            ? Keys::Read(where, item, path, {"workload", "cluster"})
            : Keys::Read(where, item, path, {"workload", "cluster", "reason", "message"});
    if (!read.ok()) return read.status();
    const Keys& k = *read;
    RemoteReport report;
    TOLLGATE_ASSIGN_OR_RETURN(report.workload, RequiredStr(where, k, "workload"));
    TOLLGATE_ASSIGN_OR_RETURN(report.cluster, RequiredStr(where, k, "cluster"));
    if (const YAML::Node* n = k.Get("ago")) {
      TOLLGATE_ASSIGN_OR_RETURN(report.ago, Duration(where, *n, k.Path("ago")));
    }
    if (const YAML::Node* n = k.Get("reason")) {
      TOLLGATE_ASSIGN_OR_RETURN(report.reason, Str(where, *n, k.Path("reason")));
    } else if (kind == StepKind::kRemoteEvict) {
      report.reason = "Preempted";
    }
    if (const YAML::Node* n = k.Get("message")) {
      TOLLGATE_ASSIGN_OR_RETURN(report.message, Str(where, *n, k.Path("message")));
    }
    out.push_back(std::move(report));
  }
  return out;
}

absl::StatusOr<std::vector<Manifest>> ParseManifestList(const Where& where, const YAML::Node& node,
                                                        absl::string_view path) {
  TOLLGATE_RETURN_IF_ERROR(ExpectSeq(where, node, path));
  std::vector<Manifest> out;
  size_t i = 0;
  for (const auto& item : node) {
    // The document reader of `tollgate apply -f`: a kind: List and the job kinds load here too.
    TOLLGATE_ASSIGN_OR_RETURN(
        std::vector<Manifest> parsed,
        manifest::ParseInputDocument(item, absl::StrCat(where.label(), ": ", Index(path, i++))));
    std::move(parsed.begin(), parsed.end(), std::back_inserter(out));
  }
  return out;
}

absl::Status ParseStepBody(const Where& where, const YAML::Node& body, Step& step) {
  switch (step.kind) {
    case StepKind::kSubmit: {
      TOLLGATE_RETURN_IF_ERROR(ExpectSeq(where, body, ""));
      size_t i = 0;
      for (const auto& item : body) {
        std::string label = Index("submit", i++);
        if (item.IsMap()) {
          if (const YAML::Node n = item["name"]; n.IsDefined() && n.IsScalar()) {
            absl::StrAppend(&label, " (", n.Scalar(), ")");
          }
        }
        TOLLGATE_ASSIGN_OR_RETURN(SubmitItem s, ParseSubmitItem(where.Sub(label), item));
        step.submit.push_back(std::move(s));
      }
      return absl::OkStatus();
    }
    case StepKind::kApply: {
      TOLLGATE_ASSIGN_OR_RETURN(step.apply, ParseManifestList(where, body, "apply"));
      return absl::OkStatus();
    }
    case StepKind::kDelete: {
      TOLLGATE_ASSIGN_OR_RETURN(step.del, ParseRefList(where, body, "delete", "refused"));
      return absl::OkStatus();
    }
    case StepKind::kStop:
    case StepKind::kResume: {
      const std::string path(StepKindName(step.kind));
      TOLLGATE_ASSIGN_OR_RETURN(
          step.del, ParseRefList(where, body, path, step.kind == StepKind::kStop ? "drain" : ""));
      for (size_t i = 0; i < step.del.size(); ++i) {
        if (step.del[i].kind != "ClusterQueue" && step.del[i].kind != "LocalQueue") {
          return where.Error(
              Index(path, i) + ".kind",
              absl::StrCat("want ClusterQueue or LocalQueue, got \"", step.del[i].kind, "\""));
        }
      }
      return absl::OkStatus();
    }
    case StepKind::kReclaimablePods: {
      // --- Job kinds: {workload: {podSet: count, ...}, ...}
      TOLLGATE_ASSIGN_OR_RETURN(
          step.reclaimable_pods,
          (MapOf<std::map<std::string, int32_t>>(
              where, body, "reclaimablePods", [&](const YAML::Node& v, const std::string& p) {
                return MapOf<int32_t>(where, v, p, [&](const YAML::Node& c, const std::string& cp) {
                  return Int32(where, c, cp);
                });
              })));
      return absl::OkStatus();
    }
    case StepKind::kReprioritize: {
      TOLLGATE_ASSIGN_OR_RETURN(step.priorities,
                                MapOf<int32_t>(where, body, "reprioritize",
                                               [&](const YAML::Node& v, const std::string& p) {
                                                 return Int32(where, v, p);
                                               }));
      return absl::OkStatus();
    }
    case StepKind::kPreempt:
    case StepKind::kDeactivate:
    case StepKind::kActivate: {
      TOLLGATE_ASSIGN_OR_RETURN(step.workload_names, StrList(where, body, StepKindName(step.kind)));
      return absl::OkStatus();
    }
    case StepKind::kSettle:
    case StepKind::kRestart:
      if (!body.IsNull() && !(body.IsMap() && body.size() == 0)) {
        const absl::string_view name = StepKindName(step.kind);
        return where.Error("", absl::StrCat(name, " takes no arguments (write `", name,
                                            ": {}`), got ", Describe(body)));
      }
      return absl::OkStatus();
    case StepKind::kAdvance: {
      TOLLGATE_ASSIGN_OR_RETURN(step.advance, Duration(where, body, "advance"));
      return absl::OkStatus();
    }
    case StepKind::kFinish:
    case StepKind::kPodsReady:
    case StepKind::kPodsNotReady:
    case StepKind::kStopped: {
      TOLLGATE_ASSIGN_OR_RETURN(step.workload_names, StrList(where, body, StepKindName(step.kind)));
      return absl::OkStatus();
    }
    case StepKind::kExpect: {
      TOLLGATE_ASSIGN_OR_RETURN(step.expect, ParseExpectation(where, body));
      return absl::OkStatus();
    }
    case StepKind::kSetCheck: {
      TOLLGATE_ASSIGN_OR_RETURN(step.check_updates, ParseCheckUpdates(where, body));
      return absl::OkStatus();
    }
    case StepKind::kActivateChecks:
    case StepKind::kDeactivateChecks: {
      TOLLGATE_ASSIGN_OR_RETURN(step.workload_names, StrList(where, body, StepKindName(step.kind)));
      return absl::OkStatus();
    }
    // --- Topology (issue 28).
    case StepKind::kNodes: {
      TOLLGATE_ASSIGN_OR_RETURN(step.nodes, ParseNodes(where, body, "nodes"));
      return absl::OkStatus();
    }
    case StepKind::kReportPods: {
      TOLLGATE_ASSIGN_OR_RETURN(step.pods, ParseNodePods(where, body, "reportPods"));
      return absl::OkStatus();
    }
    case StepKind::kDeleteNodes:
    case StepKind::kRemovePods: {
      TOLLGATE_ASSIGN_OR_RETURN(step.names, StrList(where, body, StepKindName(step.kind)));
      return absl::OkStatus();
    }
    // --- Owners, holds, missing pods.
    case StepKind::kHold:
    case StepKind::kRelease:
    case StepKind::kOutOfSync:
    case StepKind::kPodsMissing:
    case StepKind::kPodsReplaced: {
      TOLLGATE_ASSIGN_OR_RETURN(step.workload_names, StrList(where, body, StepKindName(step.kind)));
      return absl::OkStatus();
    }
    case StepKind::kBindOwner: {
      TOLLGATE_RETURN_IF_ERROR(ExpectSeq(where, body, "bindOwner"));
      size_t i = 0;
      for (const auto& item : body) {
        TOLLGATE_ASSIGN_OR_RETURN(
            Keys k, Keys::Read(where, item, Index("bindOwner", i++),
                               {"workload", "apiVersion", "kind", "name", "uid", "refused"}));
        OwnerBinding binding;
        TOLLGATE_ASSIGN_OR_RETURN(binding.workload, RequiredStr(where, k, "workload"));
        TOLLGATE_ASSIGN_OR_RETURN(binding.owner, OwnerFromKeys(where, k));
        if (const YAML::Node* n = k.Get("refused")) {
          TOLLGATE_ASSIGN_OR_RETURN(binding.refused, Str(where, *n, k.Path("refused")));
        }
        step.bindings.push_back(std::move(binding));
      }
      return absl::OkStatus();
    }
    case StepKind::kAdmissionGates: {
      TOLLGATE_RETURN_IF_ERROR(ExpectSeq(where, body, "admissionGates"));
      size_t i = 0;
      for (const auto& item : body) {
        TOLLGATE_ASSIGN_OR_RETURN(Keys k, Keys::Read(where, item, Index("admissionGates", i++),
                                                     {"workload", "gatedBy", "refused"}));
        AdmissionGatesItem change;
        TOLLGATE_ASSIGN_OR_RETURN(change.workload, RequiredStr(where, k, "workload"));
        if (const YAML::Node* n = k.Get("gatedBy")) {
          TOLLGATE_ASSIGN_OR_RETURN(change.gated_by, Str(where, *n, k.Path("gatedBy")));
        }
        if (const YAML::Node* n = k.Get("refused")) {
          TOLLGATE_ASSIGN_OR_RETURN(change.refused, Str(where, *n, k.Path("refused")));
        }
        step.gate_changes.push_back(std::move(change));
      }
      return absl::OkStatus();
    }
    case StepKind::kPriorityBoost: {
      TOLLGATE_RETURN_IF_ERROR(ExpectSeq(where, body, "priorityBoost"));
      size_t i = 0;
      for (const auto& item : body) {
        TOLLGATE_ASSIGN_OR_RETURN(Keys k, Keys::Read(where, item, Index("priorityBoost", i++),
                                                     {"workload", "value", "refused"}));
        PriorityBoostItem change;
        TOLLGATE_ASSIGN_OR_RETURN(change.workload, RequiredStr(where, k, "workload"));
        if (const YAML::Node* n = k.Get("value")) {
          TOLLGATE_ASSIGN_OR_RETURN(change.value, Str(where, *n, k.Path("value")));
        }
        if (const YAML::Node* n = k.Get("refused")) {
          TOLLGATE_ASSIGN_OR_RETURN(change.refused, Str(where, *n, k.Path("refused")));
        }
        step.boost_changes.push_back(std::move(change));
      }
      return absl::OkStatus();
    }
    // --- MultiKueue.
    case StepKind::kRemoteAdmit:
    case StepKind::kRemoteEvict:
    case StepKind::kRemoteFinish:
    case StepKind::kRemoteDelete: {
      TOLLGATE_ASSIGN_OR_RETURN(step.remote_reports, ParseRemoteReports(where, body, step.kind));
      return absl::OkStatus();
    }
    case StepKind::kConnectWorkers:
    case StepKind::kDisconnectWorkers: {
      TOLLGATE_ASSIGN_OR_RETURN(step.names, StrList(where, body, StepKindName(step.kind)));
      return absl::OkStatus();
    }
  }
  return where.Error("", "unhandled step kind");
}

absl::StatusOr<Step> ParseStep(absl::string_view file, int index, const YAML::Node& node) {
  const Where bare(absl::StrCat(file, ": step ", index));
  std::vector<std::string> names;
  for (const StepKindEntry& e : kStepKinds) names.emplace_back(e.name);
  if (!node.IsMap() || node.size() != 1) {
    return bare.Error("", absl::StrCat("a step is a map with exactly one key (",
                                       absl::StrJoin(names, ", "), "), got ", Describe(node)));
  }
  const auto kv = *node.begin();
  if (!kv.first.IsScalar()) return bare.Error("", "step keys must be strings");
  const std::string& key = kv.first.Scalar();
  const StepKindEntry* entry = nullptr;
  for (const StepKindEntry& e : kStepKinds) {
    if (e.name == key) entry = &e;
  }
  if (entry == nullptr) {
    return bare.Error("", absl::StrCat("unknown step kind \"", key,
                                       "\" (expected one of: ", absl::StrJoin(names, ", "), ")"));
  }
  Step step;
  step.kind = entry->kind;
  step.index = index;
  const Where where(absl::StrCat(file, ": step ", index, " (", key, ")"));
  TOLLGATE_RETURN_IF_ERROR(ParseStepBody(where, kv.second, step));
  return step;
}

absl::StatusOr<Scenario> ParseScenarioNode(const YAML::Node& root, absl::string_view file_name) {
  const Where where{std::string(file_name)};
  TOLLGATE_ASSIGN_OR_RETURN(Keys keys,
                            Keys::Read(where, root, "",
                                       {"name", "description", "config", "objects", "steps",
                                        // --- Topology (issue 28).
                                        "nodes",
                                        // --- Cost attribution (issue 27).
                                        "costAttributionLabels",
                                        // --- tollgated --evictions-need-ack.
                                        "evictionsNeedAck",
                                        // --- MultiKueue.
                                        "multiKueue"}));
  if (!root.IsMap()) return where.Error("", "a scenario is a map with name and steps");
  Scenario scenario;
  scenario.file = std::string(file_name);
  TOLLGATE_ASSIGN_OR_RETURN(scenario.name, RequiredStr(where, keys, "name"));
  if (const YAML::Node* n = keys.Get("description"); n != nullptr && !n->IsNull()) {
    TOLLGATE_ASSIGN_OR_RETURN(scenario.description, Str(where, *n, "description"));
  }
  if (const YAML::Node* n = keys.Get("config")) {
    TOLLGATE_ASSIGN_OR_RETURN(
        scenario.config, manifest::ParseKueueConfigurationNode(where, *n, keys.Path("config")));
  }
  if (const YAML::Node* n = keys.Get("costAttributionLabels")) {
    TOLLGATE_ASSIGN_OR_RETURN(scenario.cost_attribution_labels,
                              StrList(where, *n, "costAttributionLabels"));
  }
  if (const YAML::Node* n = keys.Get("evictionsNeedAck")) {
    TOLLGATE_ASSIGN_OR_RETURN(scenario.evictions_need_ack, Bool(where, *n, "evictionsNeedAck"));
  }
  if (const YAML::Node* n = keys.Get("objects")) {
    TOLLGATE_ASSIGN_OR_RETURN(scenario.objects, ParseManifestList(where, *n, "objects"));
  }
  if (const YAML::Node* n = keys.Get("nodes")) {
    TOLLGATE_ASSIGN_OR_RETURN(scenario.nodes, ParseNodes(where, *n, "nodes"));
  }
  if (const YAML::Node* n = keys.Get("multiKueue")) {
    TOLLGATE_ASSIGN_OR_RETURN(Keys k, Keys::Read(where, *n, "multiKueue", {"workers"}));
    MultiKueueSetup setup;
    if (const YAML::Node* w = k.Get("workers")) {
      TOLLGATE_ASSIGN_OR_RETURN(setup.workers, StrList(where, *w, k.Path("workers")));
    }
    scenario.multi_kueue = std::move(setup);
  }
  const YAML::Node* steps = keys.Get("steps");
  if (steps == nullptr || steps->IsNull()) return where.Error("steps", "required");
  TOLLGATE_RETURN_IF_ERROR(ExpectSeq(where, *steps, "steps"));
  int index = 0;
  for (const auto& item : *steps) {
    TOLLGATE_ASSIGN_OR_RETURN(Step step, ParseStep(file_name, ++index, item));
    const bool multi_kueue_step =
        step.kind == StepKind::kRemoteAdmit || step.kind == StepKind::kRemoteEvict ||
        step.kind == StepKind::kRemoteFinish || step.kind == StepKind::kRemoteDelete ||
        step.kind == StepKind::kConnectWorkers || step.kind == StepKind::kDisconnectWorkers ||
        !step.expect.checks.remote_copies.empty();
    if (multi_kueue_step && !scenario.multi_kueue.has_value()) {
      return Where(absl::StrCat(file_name, ": step ", index, " (", StepKindName(step.kind), ")"))
          .Error("",
                 "needs the MultiKueue controller: add `multiKueue: {workers: [...]}` to the "
                 "scenario");
    }
    scenario.steps.push_back(std::move(step));
  }
  return scenario;
}

}  // namespace

absl::string_view StepKindName(StepKind kind) {
  for (const StepKindEntry& e : kStepKinds) {
    if (e.kind == kind) return e.name;
  }
  return "unknown";
}

absl::StatusOr<absl::Duration> ParseGoDuration(absl::string_view text) {
  absl::Duration d;
  // absl::ParseDuration takes Go's syntax, plus "inf", which no step can mean.
  if (text.empty() || !absl::ParseDuration(text, &d) || d == absl::InfiniteDuration() ||
      d == -absl::InfiniteDuration()) {
    return absl::InvalidArgumentError(
        absl::StrCat("invalid duration \"", text, "\" (use units ms, s, m, h, e.g. 90s or 1h30m)"));
  }
  if (d < absl::ZeroDuration()) {
    return absl::InvalidArgumentError(absl::StrCat("negative duration \"", text, "\""));
  }
  return d;
}

namespace {

// The documents of `text` that hold something.
absl::StatusOr<std::vector<YAML::Node>> NonEmptyDocuments(absl::string_view text,
                                                          absl::string_view file_name) {
  TOLLGATE_ASSIGN_OR_RETURN(std::vector<YAML::Node> documents,
                            common::LoadYamlDocuments(text, file_name));
  std::vector<YAML::Node> non_empty;
  for (YAML::Node& doc : documents) {
    if (!doc.IsNull()) non_empty.push_back(doc);
  }
  return non_empty;
}

}  // namespace

absl::StatusOr<Scenario> ParseScenarioText(absl::string_view text, absl::string_view file_name) {
  TOLLGATE_ASSIGN_OR_RETURN(std::vector<YAML::Node> non_empty, NonEmptyDocuments(text, file_name));
  if (non_empty.empty()) {
    return absl::InvalidArgumentError(absl::StrCat(file_name, ": empty scenario"));
  }
  if (non_empty.size() > 1) {
    return absl::InvalidArgumentError(
        absl::StrCat(file_name, ": a scenario file holds exactly one YAML document"));
  }
  // yaml-cpp throws on misuse; keep that inside this layer.
  try {
    return ParseScenarioNode(non_empty[0], file_name);
  } catch (const YAML::Exception& e) {
    return absl::InvalidArgumentError(absl::StrCat(file_name, ": invalid YAML: ", e.what()));
  }
}

absl::StatusOr<std::vector<v1::Node>> ParseNodeListText(absl::string_view text,
                                                        absl::string_view file_name) {
  TOLLGATE_ASSIGN_OR_RETURN(std::vector<YAML::Node> non_empty, NonEmptyDocuments(text, file_name));
  if (non_empty.size() != 1) {
    return absl::InvalidArgumentError(
        absl::StrCat(file_name, ": a node list is one YAML document (a list, or `nodes:`)"));
  }
  const Where where{std::string(file_name)};
  try {
    const YAML::Node& root = non_empty[0];
    if (root.IsSequence()) return ParseNodes(where, root, "nodes");
    TOLLGATE_ASSIGN_OR_RETURN(Keys k, Keys::Read(where, root, "", {"nodes"}));
    const YAML::Node* nodes = k.Get("nodes");
    if (nodes == nullptr) return absl::InvalidArgumentError(absl::StrCat(file_name, ": no nodes"));
    return ParseNodes(where, *nodes, "nodes");
  } catch (const YAML::Exception& e) {
    return absl::InvalidArgumentError(absl::StrCat(file_name, ": invalid YAML: ", e.what()));
  }
}

absl::StatusOr<Scenario> ParseScenarioFile(const std::string& path) {
  TOLLGATE_ASSIGN_OR_RETURN(std::string text, common::ReadFileToString(path));
  return ParseScenarioText(text, path);
}

absl::StatusOr<std::vector<std::string>> CollectScenarioFiles(
    const std::vector<std::string>& paths) {
  namespace fs = std::filesystem;
  std::vector<std::string> out;
  for (const std::string& path : paths) {
    std::error_code ec;
    const fs::file_status status = fs::status(path, ec);
    if (ec || !fs::exists(status)) {
      return absl::NotFoundError(absl::StrCat(path, ": no such file or directory"));
    }
    if (!fs::is_directory(status)) {
      out.push_back(path);
      continue;
    }
    std::vector<std::string> found;
    fs::recursive_directory_iterator it(path, fs::directory_options::follow_directory_symlink, ec);
    for (; !ec && it != fs::recursive_directory_iterator(); it.increment(ec)) {
      if (it->path().extension() == ".yaml" && it->is_regular_file(ec)) {
        found.push_back(it->path().string());
      }
    }
    if (ec) return absl::UnavailableError(absl::StrCat(path, ": ", ec.message()));
    std::sort(found.begin(), found.end());
    out.insert(out.end(), found.begin(), found.end());
  }
  return out;
}

}  // namespace tollgate::sim
