#include "services/manifest/pod_admission.h"

#include <openssl/evp.h>

#include <set>
#include <utility>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "core/names.h"
#include "services/manifest/pod_translator.h"

namespace tollgate::manifest {
namespace {

constexpr size_t kMaxWorkloadNameLength = 253;
constexpr size_t kHashLength = 5;

// Tolerations are the same when key, operator (Equal when empty), value and effect are, as
// Kubernetes' MatchToleration compares them.
bool SameToleration(const Json& a, const Json& b) {
  auto op = [](const Json& t) {
    const std::string o = GetString(t, {"operator"});
    return o.empty() ? std::string("Equal") : o;
  };
  return GetString(a, {"key"}) == GetString(b, {"key"}) && op(a) == op(b) &&
         GetString(a, {"value"}) == GetString(b, {"value"}) &&
         GetString(a, {"effect"}) == GetString(b, {"effect"});
}

absl::Status MergeMap(Json& into, const std::map<std::string, std::string>& from,
                      absl::string_view field) {
  if (from.empty()) return absl::OkStatus();
  if (!into.is_object()) into = Json::object();
  for (const auto& [key, value] : from) {
    auto it = into.find(key);
    if (it != into.end() && it->is_string() && it->get<std::string>() != value) {
      return absl::FailedPreconditionError(absl::StrCat(field, "[", key, "]: the pod has \"",
                                                        it->get<std::string>(),
                                                        "\", the admission wants \"", value, "\""));
    }
    into[key] = value;
  }
  return absl::OkStatus();
}

}  // namespace

std::string OwnerWorkloadName(absl::string_view kind, absl::string_view group,
                              absl::string_view name, absl::string_view uid) {
  std::string prefix = absl::StrCat(absl::AsciiStrToLower(kind), "-", name);
  const size_t max_prefix = kMaxWorkloadNameLength - 1 - kHashLength;
  if (prefix.size() > max_prefix) prefix.resize(max_prefix);
  const std::string input = absl::StrCat(kind, "\n", group, "\n", name, "\n", uid);
  unsigned char digest[EVP_MAX_MD_SIZE];
  unsigned int length = 0;
  EVP_Digest(input.data(), input.size(), digest, &length, EVP_sha1(), nullptr);
  std::string hex;
  for (unsigned int i = 0; i < length; ++i) absl::StrAppendFormat(&hex, "%02x", digest[i]);
  return absl::StrCat(prefix, "-", hex.substr(0, kHashLength));
}

std::map<std::string, std::string> AdmissionPodLabels(const v1::Workload& wl) {
  std::map<std::string, std::string> labels(wl.status().admission().pod_labels().begin(),
                                            wl.status().admission().pod_labels().end());
  labels["kueue.x-k8s.io/local-queue-name"] = wl.spec().queue_name();
  const std::string& cq = wl.status().admission().cluster_queue();
  if (core::ValidateDns1123Label(cq).ok()) labels["kueue.x-k8s.io/cluster-queue-name"] = cq;
  return labels;
}

absl::StatusOr<PodAdmission> PodAdmissionFor(const v1::Workload& wl, absl::string_view pod_set,
                                             const FlavorMap& flavors) {
  const v1::PodSetAssignment* assignment = nullptr;
  for (const v1::PodSetAssignment& a : wl.status().admission().pod_set_assignments()) {
    if (a.name() == pod_set) assignment = &a;
  }
  if (assignment == nullptr) {
    return absl::NotFoundError(absl::StrCat("workload ", wl.metadata().name(),
                                            " has no admitted pod set \"", pod_set, "\""));
  }
  PodAdmission out;
  out.pod_set = std::string(pod_set);
  out.labels = AdmissionPodLabels(wl);
  out.labels["kueue.x-k8s.io/podset"] = out.pod_set;
  std::set<std::string> names;
  for (const auto& [resource, flavor] : assignment->flavors()) names.insert(flavor);
  for (const std::string& name : names) {
    auto it = flavors.find(name);
    if (it == flavors.end()) {
      return absl::NotFoundError(absl::StrCat("ResourceFlavor ", name, " not found"));
    }
    const v1::ResourceFlavorSpec& flavor = it->second.spec();
    for (const auto& [key, value] : flavor.node_labels()) out.node_selector[key] = value;
    for (const v1::Toleration& t : flavor.tolerations()) {
      Json json = TolerationToJson(t);
      bool present = false;
      for (const Json& existing : out.tolerations)
        present = present || SameToleration(existing, json);
      if (!present) out.tolerations.push_back(std::move(json));
    }
  }
  return out;
}

absl::Status MergePodAdmission(Json& pod, const PodAdmission& admission) {
  Json& labels = Ensure(pod, {"metadata"})["labels"];
  if (absl::Status s = MergeMap(labels, admission.labels, "metadata.labels"); !s.ok()) return s;
  Json& spec = Ensure(pod, {"spec"});
  if (absl::Status s = MergeMap(spec["nodeSelector"], admission.node_selector, "spec.nodeSelector");
      !s.ok()) {
    return s;
  }
  if (spec["nodeSelector"].is_object() && spec["nodeSelector"].empty()) spec.erase("nodeSelector");
  if (!admission.tolerations.empty()) {
    Json& list = spec["tolerations"];
    if (!list.is_array()) list = Json::array();
    for (const Json& t : admission.tolerations) {
      bool present = false;
      for (const Json& existing : list) present = present || SameToleration(existing, t);
      if (!present) list.push_back(t);
    }
  }
  return absl::OkStatus();
}

}  // namespace tollgate::manifest
