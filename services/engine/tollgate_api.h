#pragma once

#include <functional>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "services/engine/admission_executor.h"
#include "services/engine/config_objects.h"
#include "services/engine/list_pages.h"
#include "services/engine/start_estimates.h"
#include "services/engine/workload_uids.h"
#include "tollgate/v1/inventory.pb.h"
#include "tollgate/v1/objects.pb.h"
#include "tollgate/v1/service.pb.h"

namespace tollgate::engine {

// Tollgate's API as plain calls: protobuf requests in, protobuf responses or absl::Status out.
// The gRPC services are thin adapters over it, and the scenario runner drives it directly, so
// both take exactly the same path to the state. Errors follow proto/tollgate/v1/service.proto:
// INVALID_ARGUMENT names field and value, NOT_FOUND, FAILED_PRECONDITION, ALREADY_EXISTS,
// UNAVAILABLE. Thread-safe.
class TollgateApi {
 public:
  explicit TollgateApi(AdmissionExecutor& executor)
      : executor_(executor), last_object_write_(executor.revision()) {}

  // Callback for the non-blocking variants: runs on the executor thread once the change is
  // durable (or failed); must be quick.
  template <typename T>
  using Done = std::function<void(absl::StatusOr<T>)>;

  absl::StatusOr<v1::SubmitResponse> Submit(const v1::SubmitRequest& request);
  void SubmitAsync(const v1::SubmitRequest& request, Done<v1::SubmitResponse> done);
  absl::StatusOr<v1::AdmitResponse> Admit(const v1::AdmitRequest& request);
  absl::StatusOr<v1::PreemptResponse> Preempt(const v1::PreemptRequest& request);
  absl::StatusOr<v1::FinishResponse> Finish(const v1::FinishRequest& request);
  void FinishAsync(const v1::FinishRequest& request, Done<v1::FinishResponse> done);
  absl::StatusOr<v1::ReportStoppedResponse> ReportStopped(const v1::ReportStoppedRequest& request);
  absl::StatusOr<v1::ReportPodsReadyResponse> ReportPodsReady(
      const v1::ReportPodsReadyRequest& request);
  absl::StatusOr<v1::ReportCheckpointResponse> ReportCheckpoint(
      const v1::ReportCheckpointRequest& request);
  absl::StatusOr<v1::ReportReclaimablePodsResponse> ReportReclaimablePods(
      const v1::ReportReclaimablePodsRequest& request);
  absl::StatusOr<v1::DeleteWorkloadResponse> DeleteWorkload(
      const v1::DeleteWorkloadRequest& request);
  absl::StatusOr<v1::Workload> GetWorkload(const v1::GetWorkloadRequest& request);
  absl::StatusOr<v1::ListWorkloadsResponse> ListWorkloads(const v1::ListWorkloadsRequest& request);
  // Streams changes after request.since_revision (the current state first when it is 0) until
  // `send` returns false or `cancelled` returns true, blocking the calling thread; for
  // in-process callers (tollgated serves Watch through rpc::WatchHub instead). Fails as
  // CheckWatchStart says, and with OUT_OF_RANGE when the revision has been compacted away: the
  // client re-lists.
  absl::Status Watch(const v1::WatchRequest& request,
                     const std::function<bool(const v1::WatchEvent&)>& send,
                     const std::function<bool()>& cancelled);

  // The checks a Watch makes before sending anything: INVALID_ARGUMENT for a negative
  // since_revision, FAILED_PRECONDITION for another store id or epoch, OUT_OF_RANGE for a
  // revision ahead of the store's.
  absl::Status CheckWatchStart(const v1::WatchRequest& request) const;

  absl::StatusOr<v1::ApplyResponse> Apply(const v1::ApplyRequest& request);
  absl::StatusOr<v1::ConfigObject> GetObject(const v1::GetObjectRequest& request);
  absl::StatusOr<v1::ListObjectsResponse> ListObjects(const v1::ListObjectsRequest& request);
  absl::StatusOr<v1::DeleteObjectResponse> DeleteObject(const v1::DeleteObjectRequest& request);
  absl::StatusOr<v1::SetStopPolicyResponse> SetStopPolicy(const v1::SetStopPolicyRequest& request);
  absl::StatusOr<v1::SetWorkloadActiveResponse> SetWorkloadActive(
      const v1::SetWorkloadActiveRequest& request);
  absl::StatusOr<v1::ReprioritizeResponse> Reprioritize(const v1::ReprioritizeRequest& request);
  // What a workload's job reports (docs/api.md, "Owners and what a job reports").
  absl::StatusOr<v1::ReportJobStateResponse> ReportJobState(
      const v1::ReportJobStateRequest& request);
  // A new spec.payload for a workload carrying one (core's SetPayload); compare-and-swap on the
  // workload's revision when expected_revision is set.
  absl::StatusOr<v1::UpdateWorkloadPayloadResponse> UpdateWorkloadPayload(
      const v1::UpdateWorkloadPayloadRequest& request);
  // A new value of the workload's admission gates annotation, which may only lose gates (core's
  // SetAdmissionGates); compare-and-swap on the workload's revision when expected_revision is
  // set.
  absl::StatusOr<v1::SetAdmissionGatesResponse> SetAdmissionGates(
      const v1::SetAdmissionGatesRequest& request);
  // Kueue's kueue.x-k8s.io/priority-boost annotation set, or removed (nullopt), as an external
  // controller patches it (core's SetPriorityBoost); compare-and-swap on the workload's revision
  // when expected_revision is set. Answers the workload as stored. Served by
  // AdmissionService.SetPriorityBoost.
  absl::StatusOr<v1::Workload> SetPriorityBoost(const v1::WorkloadRef& workload,
                                                const std::optional<std::string>& value,
                                                int64_t expected_revision = 0);

  absl::StatusOr<v1::ListPendingWorkloadsResponse> ListPendingWorkloads(
      const v1::ListPendingWorkloadsRequest& request);
  // Who holds and borrows a cohort's quota and which policy keeps a pending workload from it.
  absl::StatusOr<v1::CohortBreakdown> GetCohortBreakdown(
      const v1::GetCohortBreakdownRequest& request);

  // The check-controller API (tollgate_api_checks.cc, docs/admission-checks.md). Updates are
  // compare-and-swap on the workload's revision: FAILED_PRECONDITION naming both revisions
  // when it changed since expected_revision, and nothing changes.
  absl::StatusOr<v1::UpdateAdmissionCheckStateResponse> UpdateAdmissionCheckState(
      const v1::UpdateAdmissionCheckStateRequest& request);
  absl::StatusOr<v1::SetAdmissionCheckActiveResponse> SetAdmissionCheckActive(
      const v1::SetAdmissionCheckActiveRequest& request);
  // A MultiKueueCluster's Active condition, as the MultiKueue controller's connection to the
  // worker reports it (docs/multicluster.md).
  absl::StatusOr<v1::SetMultiKueueClusterActiveResponse> SetMultiKueueClusterActive(
      const v1::SetMultiKueueClusterActiveRequest& request);
  // On a MultiKueue worker: the manager's copy that won (core's MarkMultiKueueWinner).
  absl::StatusOr<v1::MarkMultiKueueWinnerResponse> MarkMultiKueueWinner(
      const v1::MarkMultiKueueWinnerRequest& request);
  // WatchAdmissionChecks' checks before it sends anything: a controller name, then
  // CheckWatchStart's. Returns the equivalent WatchRequest (revision, namespace, identity).
  absl::StatusOr<v1::WatchRequest> CheckWatchChecksStart(
      const v1::WatchAdmissionChecksRequest& request) const;
  // The controllerName of an AdmissionCheck (for authorization); NOT_FOUND if absent.
  absl::StatusOr<std::string> AdmissionCheckController(const std::string& name);
  // Topology Aware Scheduling's node inventory (tollgate_api_inventory.cc; docs/topology.md).
  // Upserts and pod reports are all or none; DeleteNode of an unknown node is NOT_FOUND.
  absl::StatusOr<v1::UpsertNodesResponse> UpsertNodes(const v1::UpsertNodesRequest& request);
  absl::StatusOr<v1::DeleteNodeResponse> DeleteNode(const v1::DeleteNodeRequest& request);
  absl::StatusOr<v1::ReportPodsResponse> ReportPods(const v1::ReportPodsRequest& request);
  absl::StatusOr<v1::ListNodesResponse> ListNodes(const v1::ListNodesRequest& request);
  absl::StatusOr<v1::NodeDetails> GetNode(const v1::GetNodeRequest& request);
  absl::StatusOr<v1::GetTopologyUsageResponse> GetTopologyUsage(
      const v1::GetTopologyUsageRequest& request);

  // For the gRPC layer's Watch streams, which read the store directly.
  AdmissionExecutor& executor() { return executor_; }

  // Runs admission until it settles (the scenario runner's `settle`).
  absl::Status Settle() { return executor_.Settle(); }
  // When the next time-based transition is due (pods-ready timeout, backoff expiry, eviction
  // grace, fair-sharing usage sample), so a virtual clock can stop there.
  absl::StatusOr<std::optional<absl::Time>> NextTimer();

 private:
  // A validated request turned into the work the executor runs; shared by the blocking and
  // the non-blocking variant of a call.
  template <typename T>
  using Operation = std::function<absl::StatusOr<T>(AdmissionExecutor::Txn&)>;
  // A dry run's start estimate, made by the caller after the operation: what it reads.
  struct SubmissionEstimate {
    std::shared_ptr<const core::EstimateSnapshot> snapshot;
    core::WorkloadSpec spec;
    int64_t revision = 0;
  };
  // `estimate` (a dry run's, may be null) is set by the operation when there is one to make;
  // it must outlive the operation.
  absl::StatusOr<Operation<v1::SubmitResponse>> SubmitOperation(
      const v1::SubmitRequest& request, std::optional<SubmissionEstimate>* estimate);
  absl::StatusOr<Operation<v1::FinishResponse>> FinishOperation(const v1::FinishRequest& request);
  // A dry-run Submit's answer: what would be stored, nothing changed.
  absl::StatusOr<v1::SubmitResponse> PreviewSubmit(AdmissionExecutor::Txn& txn,
                                                   const core::WorkloadSpec& spec,
                                                   const std::string& uid,
                                                   const std::optional<core::WorkloadOwner>& owner,
                                                   std::optional<SubmissionEstimate>* estimate);
  // Runs a prepared operation (or reports why it could not be prepared), blocking or not.
  template <typename T>
  absl::StatusOr<T> Await(absl::StatusOr<Operation<T>> op) {
    if (!op.ok()) return op.status();
    return executor_.Run<T>(*std::move(op));
  }
  template <typename T>
  void Dispatch(absl::StatusOr<Operation<T>> op, Done<T> done) {
    if (!op.ok()) return done(op.status());
    executor_.RunAsync<T>(*std::move(op), std::move(done));
  }

  // INVALID_ARGUMENT when the object would change a field Kueue makes immutable (an
  // AdmissionCheck's controllerName). Executor thread only.
  absl::Status CheckImmutable(const AdmissionExecutor::Txn& txn,
                              const ValidatedObject& object) const;
  // OUT_OF_RANGE when a deletion made by an earlier operation of the running batch (not yet in
  // the change log) touches the rest of a listing. Executor thread only.
  absl::Status CheckNoDeletionInFlight(
      const AdmissionExecutor::Txn& txn, const ContinueToken& token,
      const std::function<bool(absl::string_view, absl::string_view)>& touches_rest);

  AdmissionExecutor& executor_;
  // What continue tokens are checked against. Touched only by operations, which all run on the
  // executor thread, so they need no lock.
  //  * The revision of the last configuration write (Apply, DeleteObject); before any, the
  //    revision at start, so tokens from an earlier process expire.
  int64_t last_object_write_;
  //  * Workload deletions not yet committed: (the revision they will commit as, key).
  std::vector<std::pair<int64_t, std::string>> deletions_in_flight_;
  // Live workloads by uid, and the sequence that makes service-assigned uids unique within a
  // batch. Executor thread only.
  WorkloadUids uids_;
  int64_t uid_sequence_ = 0;
  // Start-time estimates, cached per revision (services/engine/start_estimates.h): an operation
  // takes a ticket on the executor thread, the calling thread resolves it after the operation.
  StartEstimateCache start_estimates_;
  // What the estimates of the state an operation sees need: the cached ones when current, else
  // a snapshot. Executor thread only.
  StartEstimateCache::Ticket EstimateTicket(AdmissionExecutor::Txn& txn);
};

}  // namespace tollgate::engine
