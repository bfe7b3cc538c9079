#include "services/manifest/pod_admission.h"

#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "core/names.h"
#include "core/status_macros.h"
#include "services/manifest/topology_enactment.h"

namespace tollgate::manifest {

std::map<std::string, std::string> AdmissionPodLabels(const v1::Workload& wl) {
  std::map<std::string, std::string> labels(wl.status().admission().pod_labels().begin(),
                                            wl.status().admission().pod_labels().end());
  labels["kueue.x-k8s.io/local-queue-name"] = wl.spec().queue_name();
  const std::string& cq = wl.status().admission().cluster_queue();
  if (core::ValidateDns1123Label(cq).ok()) labels["kueue.x-k8s.io/cluster-queue-name"] = cq;
  return labels;
}

absl::StatusOr<PodSetInfo> PodAdmissionFor(const v1::Workload& wl, absl::string_view pod_set,
                                           const FlavorMap& flavors) {
  const v1::Admission& admission = wl.status().admission();
  bool admitted = false;
  for (const v1::PodSetAssignment& a : admission.pod_set_assignments()) {
    admitted = admitted || a.name() == pod_set;
  }
  if (!admitted) {
    return absl::NotFoundError(absl::StrCat("workload ", wl.metadata().name(),
                                            " has no admitted pod set \"", pod_set, "\""));
  }
  TOLLGATE_ASSIGN_OR_RETURN(std::vector<PodSetInfo> infos,
                            PodSetInfosFromAdmission(admission, flavors, PodSetUpdatesOf(wl)));
  AddTopologyPodSetInfo(wl, infos);
  const PodSetInfo* found = FindInfo(infos, pod_set);
  if (found == nullptr) {
    return absl::NotFoundError(absl::StrCat("workload ", wl.metadata().name(),
                                            " has no admitted pod set \"", pod_set, "\""));
  }
  PodSetInfo info = *found;
  PodSetInfo queue_labels;
  queue_labels.labels = AdmissionPodLabels(wl);
  TOLLGATE_RETURN_IF_ERROR(
      MergeInfo(info, queue_labels, absl::StrCat("pod set ", pod_set, ": queue labels")));
  return info;
}

absl::Status MergePodAdmission(Json& pod, const PodSetInfo& info) {
  return MergeIntoTemplate(
      pod, info, absl::StrCat("pod ", GetString(pod, {"metadata", "name"}), " (", info.name, ")"));
}

}  // namespace tollgate::manifest
