#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "clients/cpp/admission_client.h"

namespace tollgate::client {

// An in-memory Tollgate for adapter tests. It keeps the API's contract (idempotent Submit,
// ALREADY_EXISTS for a changed spec, FAILED_PRECONDITION for a call the state does not allow)
// but decides nothing: tests move workloads with Admit and Evict. Every call is logged as
// "<Method> <ns>/<name>". Watch blocks until its stop signal. Thread-safe.
class FakeAdmissionClient final : public AdmissionClient {
 public:
  void AddFlavor(const std::string& name, const std::map<std::string, std::string>& node_labels,
                 const std::vector<v1::Toleration>& tolerations = {});
  void AddLocalQueue(const std::string& ns, const std::string& name);
  void AddWorkloadPriorityClass(const std::string& name, int32_t value);
  // PENDING -> ADMITTED with `admission`.
  void Admit(const std::string& ns, const std::string& name, const v1::Admission& admission);
  // ADMITTED -> EVICTING.
  void Evict(const std::string& ns, const std::string& name, const std::string& message);
  // Kueue's deactivation of an admitted workload (backoffLimitCount, maximumExecutionTime...),
  // its eviction complete: PENDING, status.deactivated, Evicted True with `reason` at `at`.
  void DeactivateAndEvict(const std::string& ns, const std::string& name, const std::string& reason,
                          absl::Time at);
  // A user's spec.active false, its eviction complete: Evicted True, reason Deactivated.
  void DeactivateByUser(const std::string& ns, const std::string& name, absl::Time at);
  // Makes Submit fail with `status` (OK restores normal behaviour).
  void FailSubmits(absl::Status status);
  std::optional<v1::Workload> Find(const std::string& ns, const std::string& name) const;
  std::vector<std::string> calls() const;
  // Calls of one method, e.g. Count("ReportStopped").
  int Count(absl::string_view method) const;
  std::vector<v1::Namespace> applied_namespaces() const;

  absl::StatusOr<v1::SubmitResponse> Submit(const v1::SubmitRequest& request) override;
  absl::StatusOr<v1::Workload> GetWorkload(const v1::WorkloadRef& ref) override;
  absl::StatusOr<v1::ListWorkloadsResponse> ListWorkloads(
      const v1::ListWorkloadsRequest& request) override;
  absl::StatusOr<v1::FinishResponse> Finish(const v1::FinishRequest& request) override;
  absl::StatusOr<v1::ReportStoppedResponse> ReportStopped(
      const v1::ReportStoppedRequest& request) override;
  absl::StatusOr<v1::ReportPodsReadyResponse> ReportPodsReady(
      const v1::ReportPodsReadyRequest& request) override;
  absl::StatusOr<v1::ReportCheckpointResponse> ReportCheckpoint(
      const v1::ReportCheckpointRequest& request) override;
  absl::StatusOr<v1::ReportReclaimablePodsResponse> ReportReclaimablePods(
      const v1::ReportReclaimablePodsRequest& request) override;
  absl::StatusOr<v1::ReportJobStateResponse> ReportJobState(
      const v1::ReportJobStateRequest& request) override;
  absl::Status DeleteWorkload(const v1::DeleteWorkloadRequest& request) override;
  absl::StatusOr<v1::UpdateWorkloadPayloadResponse> UpdateWorkloadPayload(
      const v1::UpdateWorkloadPayloadRequest& request) override;
  // Sets or removes the annotation as asked; refuses (as the service does) a value naming a
  // gate the stored one does not.
  absl::StatusOr<v1::SetAdmissionGatesResponse> SetAdmissionGates(
      const v1::SetAdmissionGatesRequest& request) override;
  absl::StatusOr<v1::SetPriorityBoostResponse> SetPriorityBoost(
      const v1::SetPriorityBoostRequest& request) override;
  absl::Status Watch(const v1::WatchRequest& request,
                     const std::function<bool(const v1::WatchEvent&)>& on_event,
                     const common::StopSignal& stop) override;
  absl::StatusOr<v1::ConfigObject> GetObject(const v1::ObjectRef& ref) override;
  absl::StatusOr<v1::ListObjectsResponse> ListObjects(
      const v1::ListObjectsRequest& request) override;
  absl::StatusOr<v1::ApplyResponse> Apply(const v1::ApplyRequest& request) override;
  absl::Status DeleteObject(const v1::ObjectRef& ref) override;

 private:
  static std::string Key(absl::string_view ns, absl::string_view name);
  void LogLocked(absl::string_view method, absl::string_view ns, absl::string_view name)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  mutable absl::Mutex mu_;
  std::map<std::string, v1::Workload> workloads_ ABSL_GUARDED_BY(mu_);
  std::map<std::string, v1::ResourceFlavor> flavors_ ABSL_GUARDED_BY(mu_);
  std::vector<v1::LocalQueue> local_queues_ ABSL_GUARDED_BY(mu_);
  std::map<std::string, v1::WorkloadPriorityClass> workload_priority_classes_ ABSL_GUARDED_BY(mu_);
  std::vector<v1::Namespace> namespaces_ ABSL_GUARDED_BY(mu_);
  std::vector<std::string> calls_ ABSL_GUARDED_BY(mu_);
  absl::Status submit_error_ ABSL_GUARDED_BY(mu_);
  int64_t revision_ ABSL_GUARDED_BY(mu_) = 0;
};

}  // namespace tollgate::client
