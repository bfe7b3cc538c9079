#include "adapters/kube/workload_reports.h"

#include <algorithm>
#include <optional>
#include <string>

#include "absl/strings/str_cat.h"
#include "common/json_log.h"
#include "core/admission_gates.h"
#include "core/status_macros.h"

namespace tollgate::kube {
namespace {

std::optional<std::string> AdmissionGatedByOf(const v1::Workload& wl) {
  const auto& annotations = wl.metadata().annotations();
  auto it = annotations.find(std::string(core::kAdmissionGatedByAnnotation));
  if (it == annotations.end()) return std::nullopt;
  return it->second;
}

}  // namespace

absl::Status ReportPodsReadyIfChanged(client::AdmissionClient& admission, const v1::Workload& wl,
                                      const v1::WorkloadRef& ref, bool ready) {
  if (wl.status().pods_ready() == ready) return absl::OkStatus();
  v1::ReportPodsReadyRequest request;
  *request.mutable_workload() = ref;
  if (!ready) request.set_ready(false);
  absl::Status reported = admission.ReportPodsReady(request).status();
  return absl::IsFailedPrecondition(reported) ? absl::OkStatus() : reported;
}

absl::Status ReportReclaimablePodsIfChanged(client::AdmissionClient& admission,
                                            const v1::Workload& wl, const v1::WorkloadRef& ref,
                                            const std::map<std::string, int32_t>& finished) {
  std::map<std::string, int32_t> counts;
  for (const v1::PodSet& ps : wl.spec().pod_sets()) counts[ps.name()] = ps.count();
  std::map<std::string, int32_t> want;
  for (const auto& [name, count] : finished) {
    auto it = counts.find(name);
    if (it != counts.end() && count > 0) want[name] = std::min(count, it->second);
  }
  std::map<std::string, int32_t> have;
  for (const v1::ReclaimablePod& p : wl.status().reclaimable_pods()) have[p.name()] = p.count();
  if (want == have) return absl::OkStatus();
  v1::ReportReclaimablePodsRequest request;
  *request.mutable_workload() = ref;
  for (const auto& [name, count] : want) {
    v1::ReclaimablePod* p = request.add_reclaimable_pods();
    p->set_name(name);
    p->set_count(count);
  }
  absl::Status reported = admission.ReportReclaimablePods(request).status();
  if (absl::IsFailedPrecondition(reported) || absl::IsInvalidArgument(reported)) {
    return absl::OkStatus();
  }
  return reported;
}

absl::Status ReportJobStatusIfChanged(client::AdmissionClient& admission, const v1::Workload& copy,
                                      const v1::WorkloadPayload& report) {
  const v1::WorkloadPayload& had = copy.status().job_status();
  if (copy.status().has_job_status() && had.content_type() == report.content_type() &&
      had.api_version() == report.api_version() && had.kind() == report.kind() &&
      had.data() == report.data()) {
    return absl::OkStatus();
  }
  v1::ReportJobStateRequest request;
  request.mutable_workload()->set_namespace_(copy.metadata().namespace_());
  request.mutable_workload()->set_name(copy.metadata().name());
  *request.mutable_job_status() = report;
  absl::Status reported = admission.ReportJobState(request).status();
  return absl::IsFailedPrecondition(reported) ? absl::OkStatus() : reported;
}

absl::StatusOr<v1::Workload> PropagateAdmissionGates(client::AdmissionClient& admission,
                                                     const v1::Workload& from_job,
                                                     v1::Workload stored) {
  const std::optional<std::string> want = AdmissionGatedByOf(from_job);
  const std::optional<std::string> have = AdmissionGatedByOf(stored);
  if (want == have) return stored;
  // Removals only (core::ValidateAdmissionGatesOnUpdate): what the service would refuse is not
  // sent on every pass.
  if (!core::ValidateAdmissionGatesOnUpdate(have, want).ok()) return stored;
  v1::SetAdmissionGatesRequest request;
  request.mutable_workload()->set_namespace_(stored.metadata().namespace_());
  request.mutable_workload()->set_name(stored.metadata().name());
  if (want.has_value()) request.set_admission_gated_by(*want);
  TOLLGATE_ASSIGN_OR_RETURN(v1::SetAdmissionGatesResponse updated,
                            admission.SetAdmissionGates(request));
  common::Log(
      "info", "updated workload AdmissionGatedBy",
      {{"workload", absl::StrCat(stored.metadata().namespace_(), "/", stored.metadata().name())},
       {"admissionGatedBy", want.value_or("")}});
  return updated.workload();
}

void DropAdmissionGates(v1::Workload& wl) {
  wl.mutable_metadata()->mutable_annotations()->erase(
      std::string(core::kAdmissionGatedByAnnotation));
}

}  // namespace tollgate::kube
