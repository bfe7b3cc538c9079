#pragma once

// Reads an admission scenario file (docs/scenario-format.md) into a typed structure
// without running any of it. The runner executes the steps against a service.
//
// The parser refuses what is wrong with the *scenario* (unknown keys, a non-map pod set, an
// unknown step kind, a malformed duration) and names the file, the 1-based step and the field:
//   foo.yaml: step 3 (expect): unknown key "admited"
// It does not refuse what is wrong with a submitted *workload's values* (count -3, quantity
// "12 cores", name "Bad_Name!"): those reach the service as written, because a scenario may
// test that the service refuses them (`expect: rejected`).

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "services/manifest/kueue_configuration.h"
#include "services/manifest/manifest_parser.h"
#include "tollgate/v1/inventory.pb.h"
#include "tollgate/v1/objects.pb.h"
#include "tollgate/v1/service.pb.h"

namespace tollgate::sim {

// One workload of a submit step.
struct SubmitItem {
  // As written (may be invalid; the service decides), for matching names in later steps.
  std::string name;
  std::string ns;
  // The workload to submit, or, when one of its values cannot even be represented (a quantity
  // that must be added up but does not parse, a count that is not an integer), the refusal
  // message, which the runner reports as the submit's error.
  absl::StatusOr<tollgate::v1::Workload> workload;
  // Finishes by itself this long after admission (virtual clock).
  std::optional<absl::Duration> runtime;
};

struct ObjectRef {
  std::string kind;
  std::string name;
  // Empty for cluster-scoped kinds.
  std::string ns;
  // delete: the deletion must be refused with a message containing this text.
  std::optional<std::string> refused;
  // stop: HoldAndDrain instead of Hold.
  bool drain = false;
};

struct WorkloadExpectation {
  // `name` or `namespace/name`.
  std::string name;
  // Resource -> flavor, checked in every pod set.
  std::map<std::string, std::string> flavors;
  // Pod set -> resource -> flavor.
  std::map<std::string, std::map<std::string, std::string>> pod_set_flavors;
  // Pod set -> resource -> quantity: the admission's resourceUsage of that pod set, exactly
  // these resources (quantities compared as Kueue's scalars).
  std::map<std::string, std::map<std::string, std::string>> pod_set_usage;
};

// --- Admission checks (docs/scenario-format.md, "Admission checks") --------------------------

// One item of a setCheck step: a controller's update, posted at the workload's current revision.
struct CheckUpdateItem {
  // `name` or `namespace/name`.
  std::string workload;
  // check, state, message, requeue_after_seconds and pod_set_updates as written (the service
  // validates them); the workload ref and expected revision are the runner's to fill.
  tollgate::v1::UpdateAdmissionCheckStateRequest request;
  // The update must be refused with a message containing this text.
  std::optional<std::string> refused;
};

// What one check's state must be; unset fields are not checked (`message` as a substring).
struct CheckStateExpectation {
  std::optional<std::string> state;
  std::optional<std::string> message;
  std::optional<int32_t> retry_count;
  std::optional<int32_t> requeue_after_seconds;
};

struct EvictedExpectation {
  std::string reason;
  // A substring of the Evicted condition's message.
  std::optional<std::string> message;
};

// What one pod set's pods get once admitted (WorkloadStatus.admitted_pod_sets); each given map
// exactly.
struct PodSetInfoExpectation {
  std::optional<std::map<std::string, std::string>> labels;
  std::optional<std::map<std::string, std::string>> annotations;
  std::optional<std::map<std::string, std::string>> node_selector;
};

// MultiKueue (docs/multicluster.md): where a manager's workload was dispatched; each given
// field exactly ("" / [] for none).
struct DispatchExpectation {
  std::optional<std::string> cluster_name;
  std::optional<std::vector<std::string>> nominated;
};

struct CheckExpectations {
  // Exact set of workloads whose quota is reserved but that wait for their checks.
  std::optional<std::vector<WorkloadExpectation>> quota_reserved;
  // Workload -> check -> state: the workload carries exactly these checks.
  std::map<std::string, std::map<std::string, CheckStateExpectation>> checks;
  std::map<std::string, EvictedExpectation> evicted;
  // ClusterQueue -> inactive reason; every queue not named must be active.
  std::optional<std::map<std::string, std::string>> inactive;
  // Workload -> pod set -> what its pods get.
  std::map<std::string, std::map<std::string, PodSetInfoExpectation>> pod_set_info;
  // Workload -> its status.clusterName and status.nominatedClusterNames.
  std::map<std::string, DispatchExpectation> dispatch;
  // MultiKueue, with the simulated controller (`multiKueue:`): workload -> worker -> the state
  // of that worker's copy (Pending, Admitted, Evicted, Finished); exactly the workers holding
  // one (`{}` for none).
  std::map<std::string, std::map<std::string, std::string>> remote_copies;
};

// One item of a remoteAdmit, remoteEvict, remoteFinish or remoteDelete step: what a worker did
// with its copy of a workload (docs/scenario-format.md, "MultiKueue").
struct RemoteReport {
  // `name` or `namespace/name` of the manager's workload.
  std::string workload;
  std::string cluster;
  // remoteAdmit: the worker's admission time, this long before the scenario's now.
  absl::Duration ago = absl::ZeroDuration();
  // remoteEvict, remoteFinish: the worker's condition reason and message.
  std::string reason;
  std::string message;
};

// `multiKueue:`: the scenario plays tollgate-multikueue and its workers.
struct MultiKueueSetup {
  // The workers that answer from the start.
  std::vector<std::string> workers;
};

// --- end of admission checks -------------------------------------------------------------------

struct UsageExpectation {
  std::string cluster_queue;
  std::string flavor;
  std::string resource;
  // Quantity strings as written.
  std::string used;
  std::optional<std::string> borrowed;
};

// --- Topology (issue 28): one pod set's expected topology assignment (docs/topology.md).
struct TopologyDomainExpectation {
  // One value per level of the assignment.
  std::vector<std::string> values;
  int32_t count = 0;
};

struct TopologyAssignmentExpectation {
  // Checked when given: the levels the domains' values name.
  std::optional<std::vector<std::string>> levels;
  // The exact domains and counts (in any order).
  std::vector<TopologyDomainExpectation> domains;
};

// One condition of a workload (the `conditions` expectation): `absent` says it has none of that
// type; otherwise each given field must match, `status` ("True"/"False") and `reason` exactly,
// `message` as a substring.
struct ConditionExpectation {
  bool absent = false;
  std::optional<std::string> status;
  std::optional<std::string> reason;
  std::optional<std::string> message;
};

// Every key is optional; absent means "not checked". admitted/pending/finished are exact sets,
// so an explicit `[]` (present, empty) differs from absent.
struct Expectation {
  std::optional<std::vector<WorkloadExpectation>> admitted;
  std::optional<std::vector<WorkloadExpectation>> pending;
  std::optional<std::vector<WorkloadExpectation>> finished;
  std::map<std::string, int32_t> preempted;
  std::map<std::string, std::string> preemption_reasons;
  std::map<std::string, int64_t> fair_share;
  // Workload -> substring of its pending message.
  std::map<std::string, std::string> reasons;
  // Workload -> the reason of its QuotaReserved=False condition (it must be pending).
  std::map<std::string, std::string> pending_reasons;
  std::vector<UsageExpectation> usage;
  // "namespace/localQueue" -> pending workloads, head first.
  std::map<std::string, std::vector<std::string>> queue_order;
  // Workload -> substring of the submit's error.
  std::map<std::string, std::string> rejected;
  // Objects that must exist and be terminating (deleted while in use).
  std::vector<ObjectRef> terminating;
  // Objects that must not exist.
  std::vector<ObjectRef> absent;
  // Workloads submitted earlier in the scenario that must no longer exist (deleted, e.g. by
  // objectRetentionPolicies).
  std::vector<std::string> deleted;
  // Workloads that must be deactivated (spec.active false, or by backoffLimitCount).
  std::vector<std::string> deactivated;
  // Admission checks: quotaReserved, checks, evicted, inactive, podSetInfo, dispatch.
  CheckExpectations checks;
  // --- Topology (issue 28).
  // Workload -> pod set -> its topology assignment; a pod set given without domains (`{}`)
  // must have none.
  std::map<std::string, std::map<std::string, TopologyAssignmentExpectation>> topology_assignments;
  // Workload -> its status.unhealthyNodes, exactly (in any order).
  std::map<std::string, std::vector<std::string>> unhealthy_nodes;

  // --- Owners, holds, missing pods, cost attribution (docs/scenario-format.md).
  // Exact sets: the workloads on hold, resp. waiting for replacement pods.
  std::optional<std::vector<std::string>> on_hold;
  std::optional<std::vector<std::string>> waiting_for_pods;
  // Owner uid -> the workloads it controls, in submission order.
  std::map<std::string, std::vector<std::string>> owned_by;
  // Workload -> its admission's cost-attribution labels, exactly.
  std::map<std::string, std::map<std::string, std::string>> pod_labels;
  // Exact set: the workloads whose admission-gated-by annotation names a gate (Kueue's
  // AdmissionGatedBy); an active one must also say so in its QuotaReserved condition.
  std::optional<std::vector<std::string>> admission_gated;
  // Workload -> condition type -> what it must be (any state).
  std::map<std::string, std::map<std::string, ConditionExpectation>> conditions;
};

// One item of an admissionGates step: a new value of the workload's
// kueue.x-k8s.io/admission-gated-by annotation (Kueue's AdmissionGatedBy), as kubectl annotate
// would write it.
struct AdmissionGatesItem {
  std::string workload;
  // The gates left (comma-separated); nullopt removes the annotation.
  std::optional<std::string> gated_by;
  // The change must be refused with a message containing this text.
  std::optional<std::string> refused;
};

// One item of a priorityBoost step: a new value of the workload's kueue.x-k8s.io/priority-boost
// annotation (Kueue's PriorityBoost), as an external controller would patch it.
struct PriorityBoostItem {
  std::string workload;
  // The annotation's new value; nullopt removes it.
  std::optional<std::string> value;
  // The change must be refused with a message containing this text.
  std::optional<std::string> refused;
};

// One binding of a bindOwner step (Kueue's prebuilt workload).
struct OwnerBinding {
  std::string workload;
  v1::OwnerReference owner;
  // The binding must be refused with a message containing this text.
  std::optional<std::string> refused;
};

enum class StepKind {
  kSubmit,
  kApply,
  kDelete,
  kSettle,
  kAdvance,
  kFinish,
  kPodsReady,
  // A workload that was ready lost a pod (waitForPodsReady.recoveryTimeout).
  kPodsNotReady,
  // An evicting workload's pods stopped (the adapter's ReportStopped), with `evictionsNeedAck`.
  kStopped,
  kExpect,
  // Operator controls (Tollgate's own): evict on request, spec.active, priority, stopPolicy.
  kPreempt,
  kDeactivate,
  kActivate,
  kReprioritize,
  kStop,
  kResume,
  // Admission checks: a check's state on a workload; AdmissionChecks' Active condition.
  kSetCheck,
  kActivateChecks,
  kDeactivateChecks,
  // --- Restart (issue 25): tollgated stops and starts again on the same store, so what follows
  // runs on the state reloaded from it.
  kRestart,
  // --- Job kinds (docs/job-kinds.md): an adapter's report of reclaimable pods.
  kReclaimablePods,
  // --- Topology (issue 28): the node inventory (docs/topology.md).
  // Nodes created or replaced (a node with `ready: false` has failed).
  kNodes,
  kDeleteNodes,
  // Pods Tollgate does not place, reported on nodes, and their removal.
  kReportPods,
  kRemovePods,
  // What a workload's job reports (Tollgate's own): on hold and released, a prebuilt workload
  // bound or out of sync, pod-group members missing and back.
  kHold,
  kRelease,
  kBindOwner,
  kOutOfSync,
  kPodsMissing,
  kPodsReplaced,
  // Kueue's AdmissionGatedBy: the annotation changed on a workload (gates removed).
  kAdmissionGates,
  // Kueue's PriorityBoost: the annotation set or removed on a workload.
  kPriorityBoost,
  // --- MultiKueue (docs/scenario-format.md, "MultiKueue"): what a worker did with its copy,
  // and whether it answers.
  kRemoteAdmit,
  kRemoteEvict,
  kRemoteFinish,
  kRemoteDelete,
  kConnectWorkers,
  kDisconnectWorkers,
};

// The step's key in the file: "submit", "podsReady", ...
absl::string_view StepKindName(StepKind kind);

struct Step {
  StepKind kind = StepKind::kSettle;
  // 1-based position in `steps`, as error messages and the runner's report name it.
  int index = 0;
  // Only the member for `kind` is filled.
  std::vector<SubmitItem> submit;             // kSubmit
  std::vector<manifest::Manifest> apply;      // kApply
  std::vector<ObjectRef> del;                 // kDelete, kStop, kResume
  std::map<std::string, int32_t> priorities;  // kReprioritize
  // kReclaimablePods: workload -> pod set -> pods that finished for good.
  std::map<std::string, std::map<std::string, int32_t>> reclaimable_pods;
  absl::Duration advance;  // kAdvance
  // kFinish, kPodsReady, kPodsNotReady, kStopped, kPreempt, kDeactivate, kActivate; the check names
  // of kActivateChecks, kDeactivateChecks; kHold, kRelease, kOutOfSync, kPodsMissing, kPodsReplaced
  std::vector<std::string> workload_names;
  std::vector<CheckUpdateItem> check_updates;    // kSetCheck
  std::vector<OwnerBinding> bindings;            // kBindOwner
  std::vector<AdmissionGatesItem> gate_changes;  // kAdmissionGates
  std::vector<PriorityBoostItem> boost_changes;  // kPriorityBoost
  // kRemoteAdmit, kRemoteEvict, kRemoteFinish, kRemoteDelete; the worker names of
  // kConnectWorkers and kDisconnectWorkers are in `names`.
  std::vector<RemoteReport> remote_reports;
  Expectation expect;  // kExpect
  // --- Topology (issue 28).
  std::vector<v1::Node> nodes;     // kNodes
  std::vector<v1::NodePod> pods;   // kReportPods
  std::vector<std::string> names;  // kDeleteNodes, kRemovePods, kConnectWorkers, ...
};

struct Scenario {
  std::string name;
  std::string description;
  // The path it was read from.
  std::string file;
  // `config:`, read by the same parser as tollgated's --config (a scenario's config and a
  // daemon's file mean the same thing); without an apiVersion it reads as v1beta1.
  manifest::KueueConfiguration config;
  // `costAttributionLabels:`, tollgated's --cost-attribution-labels.
  std::vector<std::string> cost_attribution_labels;
  // `evictionsNeedAck:`, tollgated's --evictions-need-ack: an evicted workload holds its quota
  // until a `stopped` step reports its pods stopped (otherwise evictions complete at once).
  bool evictions_need_ack = false;
  std::vector<manifest::Manifest> objects;
  // --- Topology (issue 28): nodes of the inventory, created after `objects`.
  std::vector<v1::Node> nodes;
  // --- MultiKueue: set when the scenario plays the MultiKueue controller; its settings are
  // config's multiKueue section.
  std::optional<MultiKueueSetup> multi_kueue;
  std::vector<Step> steps;
};

absl::StatusOr<Scenario> ParseScenarioFile(const std::string& path);

// `file_name` only labels error messages and Scenario::file.
absl::StatusOr<Scenario> ParseScenarioText(absl::string_view text, absl::string_view file_name);

// A node list in the scenario format's `nodes:` shape (docs/scenario-format.md, "Topology"):
// a YAML document that is the list itself or a map with the one key `nodes`. For `simulate
// --nodes`; `file_name` labels error messages.
absl::StatusOr<std::vector<v1::Node>> ParseNodeListText(absl::string_view text,
                                                        absl::string_view file_name);

// Go-style duration ("90s", "1h30m", "500ms"); negative and infinite durations are refused.
absl::StatusOr<absl::Duration> ParseGoDuration(absl::string_view text);

// The scenario files under `paths`: files as given, directories searched recursively for
// *.yaml (each directory's files sorted). A path that does not exist is NOT_FOUND.
absl::StatusOr<std::vector<std::string>> CollectScenarioFiles(
    const std::vector<std::string>& paths);

}  // namespace tollgate::sim
