#include "services/manifest/ray_cluster_spec.h"

#include <cstdint>
#include <set>
#include <string>
#include <utility>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "core/quantity.h"

namespace tollgate::manifest {
namespace {

// KubeRay's GCS fault tolerance switch on the object (besides spec.gcsFaultToleranceOptions).
constexpr absl::string_view kRayFtEnabledAnnotation = "ray.io/ft-enabled";

// What KubeRay's Redis cleanup job requests; Kueue reserves it in the head pod set, since the
// job runs when the cluster is deleted, on the cluster's quota.
constexpr std::pair<absl::string_view, absl::string_view> kRedisCleanupRequests[] = {
    {"cpu", "200m"}, {"memory", "256Mi"}};

// "/spec/rayClusterSpec" as "spec.rayClusterSpec", for messages.
std::string PathOf(absl::string_view pointer) {
  std::string out;
  for (char c : pointer) out += c == '/' ? '.' : c;
  if (!out.empty() && out[0] == '.') out.erase(0, 1);
  return out;
}

bool GcsFaultToleranceEnabled(const Json& cluster, const Json& obj) {
  if (const Json* options = Find(cluster, {"gcsFaultToleranceOptions"});
      options != nullptr && !options->is_null()) {
    return true;
  }
  return absl::AsciiStrToLower(
             GetString(obj, {"metadata", "annotations", kRayFtEnabledAnnotation})) == "true";
}

// Kueue's MergeResourceListKeepMax on the head's Ray container (the first one).
absl::Status ReserveRedisCleanup(Json& head_template, absl::string_view path) {
  Json* containers = nullptr;
  if (head_template.is_object() && head_template.contains("spec") &&
      head_template["spec"].is_object() && head_template["spec"].contains("containers")) {
    containers = &head_template["spec"]["containers"];
  }
  if (containers == nullptr || !containers->is_array() || containers->empty()) {
    return absl::InvalidArgumentError(absl::StrCat(
        path, ".spec.containers: the head needs its Ray container to reserve the Redis cleanup"));
  }
  Json& requests = Ensure((*containers)[0], {"resources", "requests"});
  for (const auto& [resource, amount] : kRedisCleanupRequests) {
    const std::string key(resource);
    if (requests.contains(key) && requests[key].is_string()) {
      absl::StatusOr<core::Quantity> have = core::Quantity::Parse(requests[key].get<std::string>());
      absl::StatusOr<core::Quantity> need = core::Quantity::Parse(amount);
      if (have.ok() && need.ok() && have->MilliValue() >= need->MilliValue()) continue;
    } else if (requests.contains(key) && requests[key].is_number()) {
      // A bare number: cores for cpu, bytes for memory.
      if (requests[key].get<double>() >= (resource == "cpu" ? 0.2 : 268435456.0)) continue;
    }
    requests[key] = std::string(amount);
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<std::vector<PodSetSource>> RayClusterPodSets(const Json& cluster,
                                                            absl::string_view pointer,
                                                            const Json& obj) {
  const std::string path = PathOf(pointer);
  if (!cluster.is_object()) return absl::InvalidArgumentError(absl::StrCat(path, ": required"));
  if (GetBool(cluster, {"enableInTreeAutoscaling"}).value_or(false)) {
    return absl::InvalidArgumentError(absl::StrCat(
        path,
        ".enableInTreeAutoscaling: a queued Ray cluster cannot autoscale (Kueue allows it "
        "only for elastic workloads, which Tollgate does not have)"));
  }
  const Json* head = Find(cluster, {"headGroupSpec", "template"});
  if (head == nullptr || !head->is_object()) {
    return absl::InvalidArgumentError(absl::StrCat(path, ".headGroupSpec.template: required"));
  }
  std::vector<PodSetSource> out;
  PodSetSource head_set{"head", 1,   std::nullopt, absl::StrCat(pointer, "/headGroupSpec/template"),
                        *head,  true};
  if (GcsFaultToleranceEnabled(cluster, obj)) {
    absl::Status reserved =
        ReserveRedisCleanup(head_set.pod_template, absl::StrCat(path, ".headGroupSpec.template"));
    if (!reserved.ok()) return reserved;
  }
  out.push_back(std::move(head_set));
  std::set<std::string> names = {"head"};
  const Json* groups = Find(cluster, {"workerGroupSpecs"});
  if (groups == nullptr || !groups->is_array()) return out;
  for (size_t i = 0; i < groups->size(); ++i) {
    const Json& group = (*groups)[i];
    const std::string group_path = absl::StrCat(path, ".workerGroupSpecs[", i, "]");
    const std::string raw = GetString(group, {"groupName"});
    const std::string name = PodSetNameFrom(raw);
    if (name.empty() || !names.insert(name).second) {
      return absl::InvalidArgumentError(
          absl::StrCat(group_path, ".groupName: \"", raw,
                       "\" is empty, \"head\" (reserved for the head group) or repeats a group"));
    }
    const Json* tmpl = Find(group, {"template"});
    if (tmpl == nullptr || !tmpl->is_object()) {
      return absl::InvalidArgumentError(absl::StrCat(group_path, ".template: required"));
    }
    const int64_t replicas = GetInt(group, {"replicas"}).value_or(1);
    const int64_t hosts = GetInt(group, {"numOfHosts"}).value_or(1);
    if (replicas < 0 || hosts < 0 || replicas > INT32_MAX ||
        replicas * std::max<int64_t>(hosts, 1) > INT32_MAX) {
      return absl::InvalidArgumentError(absl::StrCat(
          group_path, ": replicas (", replicas, ") x numOfHosts (", hosts, ") is out of range"));
    }
    // Kueue multiplies only when numOfHosts is above 1 (0 and unset mean one host).
    const int64_t count = hosts > 1 ? replicas * hosts : replicas;
    out.push_back(PodSetSource{name, static_cast<int32_t>(count), std::nullopt,
                               absl::StrCat(pointer, "/workerGroupSpecs/", i, "/template"), *tmpl,
                               true});
  }
  return out;
}

std::string RayHeadPriorityClassName(const Json& cluster) {
  return GetString(cluster, {"headGroupSpec", "template", "spec", "priorityClassName"});
}

}  // namespace tollgate::manifest
