#include "adapters/kube/node_feed.h"

#include <algorithm>
#include <cstdint>
#include <string>

#include "absl/strings/str_cat.h"
#include "absl/time/time.h"
#include "services/manifest/pod_set_info.h"
#include "services/manifest/pod_translator.h"
#include "services/manifest/topology_enactment.h"

namespace tollgate::kube {

using manifest::Find;
using manifest::GetString;
using manifest::Json;

absl::StatusOr<v1::Node> NodeFromKube(const Json& node) {
  v1::Node out;
  const std::string name = GetString(node, {"metadata", "name"});
  if (name.empty()) return absl::InvalidArgumentError("node: metadata.name is empty");
  out.mutable_metadata()->set_name(name);
  for (const auto& [key, value] : manifest::StringMap(Find(node, {"metadata", "labels"}))) {
    (*out.mutable_metadata()->mutable_labels())[key] = value;
  }
  if (const Json* taints = Find(node, {"spec", "taints"});
      taints != nullptr && taints->is_array()) {
    for (const Json& t : *taints) {
      v1::Taint* taint = out.mutable_spec()->add_taints();
      taint->set_key(GetString(t, {"key"}));
      taint->set_value(GetString(t, {"value"}));
      taint->set_effect(GetString(t, {"effect"}));
    }
  }
  out.mutable_spec()->set_unschedulable(
      manifest::GetBool(node, {"spec", "unschedulable"}).value_or(false));
  if (const Json* allocatable = Find(node, {"status", "allocatable"});
      allocatable != nullptr && allocatable->is_object()) {
    for (auto it = allocatable->begin(); it != allocatable->end(); ++it) {
      // Quantities are strings in the API; a number is accepted as a client might send one.
      if (it.value().is_string()) {
        (*out.mutable_status()->mutable_allocatable())[it.key()] = it.value().get<std::string>();
      } else if (it.value().is_number()) {
        (*out.mutable_status()->mutable_allocatable())[it.key()] = it.value().dump();
      }
    }
  }
  const Json* ready = manifest::FindCondition(node, "Ready");
  out.mutable_status()->set_ready(ready != nullptr && GetString(*ready, {"status"}) == "True");
  // Since when it is not ready, for Kueue's fixed failure delay. Without a readable time
  // tollgated takes the time the update arrives.
  absl::Time since;
  std::string unused_error;
  if (ready != nullptr && !out.status().ready() &&
      absl::ParseTime(absl::RFC3339_full, GetString(*ready, {"lastTransitionTime"}), &since,
                      &unused_error)) {
    const int64_t seconds = absl::ToUnixSeconds(since);
    out.mutable_status()->mutable_not_ready_since()->set_seconds(seconds);
    out.mutable_status()->mutable_not_ready_since()->set_nanos(
        static_cast<int32_t>(absl::ToInt64Nanoseconds(since - absl::FromUnixSeconds(seconds))));
  }
  return out;
}

bool NeedsRunningWorkloads(const Json& node) {
  const Json* ready = manifest::FindCondition(node, "Ready");
  if (ready == nullptr) return false;
  if (GetString(*ready, {"status"}) != "True") return true;
  const Json* taints = Find(node, {"spec", "taints"});
  if (taints == nullptr || !taints->is_array()) return false;
  return std::any_of(taints->begin(), taints->end(), [](const Json& taint) {
    const std::string effect = GetString(taint, {"effect"});
    return effect == "NoSchedule" || effect == "NoExecute";
  });
}

std::vector<std::string> RunningWorkloadsOn(const v1::Node& node, const WorkloadPods& pods) {
  const std::string& name = node.metadata().name();
  std::vector<std::string> out;
  for (const auto& [ns, workloads] : pods) {
    for (const auto& [workload, members] : workloads) {
      for (const auto& [unused, pod] : members) {
        if (GetString(pod, {"spec", "nodeName"}) != name || manifest::IsTerminatedPod(pod) ||
            Find(pod, {"metadata", "deletionTimestamp"}) != nullptr) {
          continue;
        }
        out.push_back(absl::StrCat(ns, "/", workload));
        break;
      }
    }
  }
  return out;  // Sorted: the maps are.
}

std::string ReportedPodName(const Json& pod) {
  return absl::StrCat(GetString(pod, {"metadata", "namespace"}), "/",
                      GetString(pod, {"metadata", "name"}));
}

std::optional<v1::NodePod> ReportedPodFromKube(const Json& pod) {
  const std::string node = GetString(pod, {"spec", "nodeName"});
  if (node.empty() || manifest::IsTerminatedPod(pod) || manifest::IsTopologyPod(pod)) {
    return std::nullopt;
  }
  const Json* spec = Find(pod, {"spec"});
  if (spec == nullptr) return std::nullopt;
  absl::StatusOr<v1::PodSet> requests =
      manifest::PodSetFromTemplate("pod", 1, std::nullopt, Json{{"spec", *spec}}, "pod");
  if (!requests.ok()) return std::nullopt;
  v1::NodePod out;
  out.set_name(ReportedPodName(pod));
  out.set_node_name(node);
  *out.mutable_requests() = requests->requests();
  return out;
}

}  // namespace tollgate::kube
