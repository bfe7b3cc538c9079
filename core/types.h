#pragma once

// The scheduling core's model of Kueue's objects, with every quantity already parsed into
// Kueue's scalar convention (milli-units for cpu, whole units otherwise; see core/quantity.h).
// The service layer converts its protobuf API objects into these after validating them, so
// everything here is known to be well-formed.

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/time/time.h"
#include "core/boxed.h"

namespace tollgate::core {

enum class QueueingStrategy { kBestEffortFifo, kStrictFifo };
enum class PreemptionPolicy { kNever, kLowerPriority, kLowerOrNewerEqualPriority, kAny };
enum class BorrowWithinCohortPolicy { kNever, kLowerPriority };
enum class StopPolicy { kNone, kHold, kHoldAndDrain };
enum class WhenCanBorrow { kBorrow, kTryNextFlavor };
enum class WhenCanPreempt { kTryNextFlavor, kPreempt };
enum class AdmissionMode { kDefault, kUsageBasedFairSharing, kNoFairSharing };

using Labels = std::map<std::string, std::string>;

struct Taint {
  std::string key;
  std::string value;
  std::string effect;
  bool operator==(const Taint&) const = default;
};

struct Toleration {
  std::string key;
  // "Equal" or "Exists".
  std::string op = "Equal";
  std::string value;
  // Empty matches every effect.
  std::string effect;
  // NoExecute only: the pod stays this long after the taint appears, then is evicted. A
  // toleration with it tolerates the taint only for a while (Kueue's TASReplaceNodeOnNodeTaints
  // waits for the pods to leave, docs/topology.md).
  std::optional<int64_t> toleration_seconds = {};
  bool operator==(const Toleration&) const = default;
};

struct LabelSelectorRequirement {
  std::string key;
  // In, NotIn, Exists, DoesNotExist.
  std::string op;
  std::vector<std::string> values;
  bool operator==(const LabelSelectorRequirement&) const = default;
};

struct LabelSelector {
  Labels match_labels;
  std::vector<LabelSelectorRequirement> match_expressions;
  bool operator==(const LabelSelector&) const = default;
};

struct NamespaceSpec {
  std::string name;
  Labels labels;
  bool operator==(const NamespaceSpec&) const = default;
};

struct ResourceFlavorSpec {
  std::string name;
  Labels node_labels;
  std::vector<Taint> node_taints;
  std::vector<Toleration> tolerations;
  // Kueue's spec.topologyName: a topology flavor places pods on the Topology's domains
  // (core/topology_flavor.h). Empty for a quota-only flavor.
  std::string topology_name = {};
  bool operator==(const ResourceFlavorSpec&) const = default;
};

struct ResourceQuotaSpec {
  std::string resource;
  int64_t nominal = 0;
  std::optional<int64_t> borrowing_limit;
  std::optional<int64_t> lending_limit;
  bool operator==(const ResourceQuotaSpec&) const = default;
};

struct FlavorQuotasSpec {
  std::string flavor;
  std::vector<ResourceQuotaSpec> resources;
  bool operator==(const FlavorQuotasSpec&) const = default;
};

struct ResourceGroupSpec {
  std::vector<std::string> covered_resources;
  std::vector<FlavorQuotasSpec> flavors;
  bool operator==(const ResourceGroupSpec&) const = default;
};

struct PreemptionSpec {
  PreemptionPolicy within_cluster_queue = PreemptionPolicy::kNever;
  PreemptionPolicy reclaim_within_cohort = PreemptionPolicy::kNever;
  BorrowWithinCohortPolicy borrow_within_cohort = BorrowWithinCohortPolicy::kNever;
  std::optional<int32_t> max_priority_threshold;
  bool operator==(const PreemptionSpec&) const = default;
};

// Kueue's flavorFungibility.preference: which comes first when ranking the flavors a search
// went through, the preemption mode (fit > reclaim > preempt) or the borrowing level.
enum class FungibilityPreference { kBorrowingOverPreemption, kPreemptionOverBorrowing };

struct FlavorFungibilitySpec {
  WhenCanBorrow when_can_borrow = WhenCanBorrow::kBorrow;
  WhenCanPreempt when_can_preempt = WhenCanPreempt::kTryNextFlavor;
  // Unset ranks as kBorrowingOverPreemption, as in Kueue; kept apart from it so that a queue
  // reads back as written (Kueue allows the field only with both policies TryNextFlavor).
  std::optional<FungibilityPreference> preference;
  bool operator==(const FlavorFungibilitySpec&) const = default;
};

// Kueue's AdmissionCheckParametersReference: the check controller's own configuration object,
// which Tollgate stores and hands to the controller but never reads.
struct AdmissionCheckParameters {
  std::string api_group;
  std::string kind;
  std::string name;
  bool operator==(const AdmissionCheckParameters&) const = default;
};

// Kueue's AdmissionCheck spec. Its status (the Active condition its controller reports) is
// ClusterState's (core/admission_checks.h).
struct AdmissionCheckSpec {
  std::string name;
  // Which controller decides the check's state on workloads; immutable, as in Kueue.
  std::string controller_name;
  std::optional<AdmissionCheckParameters> parameters;
  bool operator==(const AdmissionCheckSpec&) const = default;
};

// One entry of a ClusterQueue's admissionChecksStrategy; v1beta1's spec.admissionChecks are
// entries without onFlavors.
struct AdmissionCheckStrategyRule {
  std::string name;
  // The flavors whose workloads the check runs for; empty means every flavor of the queue.
  std::vector<std::string> on_flavors;
  bool operator==(const AdmissionCheckStrategyRule&) const = default;
};

struct ClusterQueueSpec {
  std::string name;
  std::string cohort;
  std::vector<ResourceGroupSpec> resource_groups;
  QueueingStrategy queueing_strategy = QueueingStrategy::kBestEffortFifo;
  // Absent selects every namespace, as does an empty selector.
  std::optional<LabelSelector> namespace_selector;
  PreemptionSpec preemption;
  FlavorFungibilitySpec flavor_fungibility;
  double fair_weight = 1.0;
  StopPolicy stop_policy = StopPolicy::kNone;
  AdmissionMode admission_mode = AdmissionMode::kDefault;
  // Tollgate extension: at most this many victims per admission (0: unlimited).
  int32_t max_preempted_workloads = 0;
  // Tollgate extension: a workload of this queue preempted this many times within the window is
  // not chosen as a victim again until the oldest of those preemptions leaves the window, so
  // nothing thrashes. 0: no limit.
  int32_t max_preemptions_per_window = 0;
  absl::Duration preemption_window = absl::ZeroDuration();
  // The admission checks a workload must pass after its quota is reserved and before it is
  // admitted, by name (at most one entry per check).
  std::vector<AdmissionCheckStrategyRule> admission_checks;
  bool operator==(const ClusterQueueSpec&) const = default;
};

struct CohortSpec {
  std::string name;
  std::string parent;
  std::vector<ResourceGroupSpec> resource_groups;
  double fair_weight = 1.0;
  bool operator==(const CohortSpec&) const = default;
};

struct LocalQueueSpec {
  std::string namespace_name;
  std::string name;
  std::string cluster_queue;
  StopPolicy stop_policy = StopPolicy::kNone;
  double fair_weight = 1.0;
  // metadata.labels: the keys SchedulerConfig::local_queue_label_keys_to_copy names are copied
  // onto the workloads it admits (cost attribution). Initialized so that the many positional
  // initializations of the fields above stay complete.
  Labels labels = {};
  bool operator==(const LocalQueueSpec&) const = default;
};

struct PriorityClassSpec {
  std::string name;
  int32_t value = 0;
  // True for scheduling.k8s.io PriorityClass, false for kueue WorkloadPriorityClass; the two
  // kinds live in separate namespaces of names, as in Kueue.
  bool is_pod_priority_class = false;
  bool operator==(const PriorityClassSpec&) const = default;
};

// A resource request or usage: resource name and scalar, sorted by resource name.
using ResourceAmounts = std::vector<std::pair<std::string, int64_t>>;

// Kueue's Topology: node labels from the highest level (e.g. block) to the lowest (e.g. host).
struct TopologySpec {
  std::string name;
  std::vector<std::string> levels;
  bool operator==(const TopologySpec&) const = default;
};

// --- MultiKueue (docs/multicluster.md) --------------------------------------------------------

// Kueue's MultiKueueConfig: the worker clusters a MultiKueue AdmissionCheck dispatches to, in
// the order the Incremental dispatcher nominates them. Validated: 1 to 20 distinct names.
struct MultiKueueConfigSpec {
  std::string name;
  std::vector<std::string> clusters;
  bool operator==(const MultiKueueConfigSpec&) const = default;
};

// Kueue's kubeConfig reference of a MultiKueueCluster: a Secret (read by tollgate-kube) or a
// file on the manager holding the connection settings of the worker.
enum class KubeConfigLocationType { kSecret, kPath };
struct MultiKueueKubeConfig {
  std::string location;
  KubeConfigLocationType location_type = KubeConfigLocationType::kSecret;
  bool operator==(const MultiKueueKubeConfig&) const = default;
};

// Tollgate's own way to name a worker: its tollgated's gRPC address and the files of the TLS
// and credential material the manager presents. Files are read by the connection, never here.
struct MultiKueueWorkerEndpoint {
  // host:port.
  std::string address;
  // PEM files: the CA the worker's certificate must chain to, and the manager's client
  // certificate and key for mutual TLS (both or neither).
  std::string ca_file;
  std::string cert_file;
  std::string key_file;
  // A bearer token file (the worker's --auth-token-file entry for the manager).
  std::string token_file;
  // Plaintext, allowed only to a loopback address (as tollgated listens without TLS only there).
  bool insecure = false;
  bool operator==(const MultiKueueWorkerEndpoint&) const = default;
};

// Kueue's MultiKueueCluster: where a worker is. Exactly one of the two sources is set. Its
// status (the Active condition its connection reports) is ClusterState's
// (core/multikueue_checks.h).
struct MultiKueueClusterSpec {
  std::string name;
  std::optional<MultiKueueKubeConfig> kube_config;
  std::optional<MultiKueueWorkerEndpoint> endpoint;
  bool operator==(const MultiKueueClusterSpec&) const = default;
};

// One layer of Kueue's slice constraints: `size` pods form a slice that must sit in one domain
// of `level`.
struct SliceConstraint {
  std::string level;
  int32_t size = 0;
  bool operator==(const SliceConstraint&) const = default;
};

// A node selector term of required node affinity: its expressions (on node labels: In, NotIn,
// Exists, DoesNotExist, Gt, Lt) and fields (Kubernetes has one, metadata.name, the node's name,
// with In or NotIn and one value) are all ANDed; the terms of a pod set are ORed. A term with
// neither matches no node.
struct NodeSelectorTerm {
  std::vector<LabelSelectorRequirement> match_expressions;
  std::vector<LabelSelectorRequirement> match_fields;
  bool operator==(const NodeSelectorTerm&) const = default;
};

// A term of preferred node affinity (Kubernetes' PreferredSchedulingTerm): a node matching
// `preference` scores `weight` (1..100); a node's score is the sum over the terms it matches.
struct PreferredSchedulingTerm {
  int32_t weight = 0;
  NodeSelectorTerm preference;
  bool operator==(const PreferredSchedulingTerm&) const = default;
};

// Kueue's PodSetTopologyRequest as typed fields (Kueue keeps them in pod-template annotations;
// the manifest reader maps those onto these). At most one of required, preferred and
// unconstrained is set; slices alone mean "slices anywhere" (Kueue's slice-only request).
struct PodSetTopologyRequest {
  std::optional<std::string> required;
  std::optional<std::string> preferred;
  bool unconstrained = false;
  // Outermost layer first; each inner layer is at a lower level and divides the outer size.
  std::vector<SliceConstraint> slices;
  // Pod sets of one workload with the same group are placed together (leader and workers).
  std::optional<std::string> pod_set_group;
  // Kueue's podIndexLabel, subGroupIndexLabel and subGroupCount: how the adapter tells a pod's
  // index when it assigns pods to the placement's domains. Placement does not read them.
  std::optional<std::string> pod_index_label;
  std::optional<std::string> sub_group_index_label;
  std::optional<int32_t> sub_group_count;
  bool operator==(const PodSetTopologyRequest&) const = default;
};

// A pod set's fields that almost no pod set sets: one 8-byte pointer in PodSetSpec for all of
// them keeps PodSetSpec at 160 bytes, inside jemalloc's 160-byte size class (each field boxed on
// its own took it to 168 bytes and the 192-byte class: +32 bytes per pending workload).
struct PodSetRareFields {
  std::optional<std::vector<NodeSelectorTerm>> required_node_affinity;
  std::optional<std::vector<PreferredSchedulingTerm>> preferred_node_affinity;
  std::optional<std::vector<std::string>> resource_errors;
  bool operator==(const PodSetRareFields&) const = default;
};

struct PodSetSpec {
  std::string name;
  int32_t count = 1;
  std::optional<int32_t> min_count;
  // Per pod.
  ResourceAmounts requests;
  Labels node_selector;
  std::vector<Toleration> tolerations;
  // Topology Aware Scheduling; most pod sets have none.
  Boxed<PodSetTopologyRequest> topology_request = {};
  // Fields almost every pod set leaves unset, behind one pointer (read and set them through the
  // functions below). Created only by a setter, so an empty box never stands for "nothing set".
  Boxed<PodSetRareFields> rare = {};

  // The pod template's required node affinity (terms ORed): it narrows the flavors as the
  // nodeSelector does, and the nodes of a topology placement. Null when it has none.
  const std::vector<NodeSelectorTerm>* required_node_affinity() const {
    return rare && rare->required_node_affinity ? &*rare->required_node_affinity : nullptr;
  }
  void set_required_node_affinity(std::vector<NodeSelectorTerm> terms) {
    rare.mutable_value().required_node_affinity = std::move(terms);
  }
  // The pod template's preferred node affinity: with Kueue's TASRespectNodeAffinityPreferred
  // gate on, it ranks the nodes and domains of a topology placement. Null when it has none.
  const std::vector<PreferredSchedulingTerm>* preferred_node_affinity() const {
    return rare && rare->preferred_node_affinity ? &*rare->preferred_node_affinity : nullptr;
  }
  void set_preferred_node_affinity(std::vector<PreferredSchedulingTerm> terms) {
    rare.mutable_value().preferred_node_affinity = std::move(terms);
  }
  // What the pod template's reader found wrong with its resources (a request above its limit,
  // RequestsAboveLimits); such a workload waits, Misconfigured, as in Kueue. Null when none.
  const std::vector<std::string>* resource_errors() const {
    return rare && rare->resource_errors ? &*rare->resource_errors : nullptr;
  }
  void set_resource_errors(std::vector<std::string> errors) {
    rare.mutable_value().resource_errors = std::move(errors);
  }
  bool operator==(const PodSetSpec&) const = default;
};

// A workload's metadata the scheduler does not read but keeps for its users and adapters (who
// select on labels). Boxed in WorkloadSpec: most pending workloads carry none.
struct WorkloadMetadata {
  Labels labels;
  Labels annotations;
  bool operator==(const WorkloadMetadata&) const = default;
};

// An opaque object carried with a workload (MultiKueue's job manifest, a job's status): stored and
// copied, never read by the core (docs/multicluster.md).
struct WorkloadPayload {
  std::string content_type;
  // For a Kubernetes object: "batch/v1", "Job".
  std::string api_version;
  std::string kind;
  std::string data;
  bool operator==(const WorkloadPayload&) const = default;
};

// What the MultiKueue controller last saw of one worker's copy of a manager's workload
// (informational: shown by describe, read by no decision; docs/multicluster.md).
struct MultiKueueRemoteState {
  std::string cluster;
  // Admitted, Pending, Evicted, Finished, NoCopy or Unreachable.
  std::string state;
  bool operator==(const MultiKueueRemoteState&) const = default;
};

// Why a workload is deactivated (Kueue's DeactivationTarget condition): names the eviction.
struct DeactivationCause {
  std::string reason;
  std::string message;
};

struct WorkloadSpec {
  std::string namespace_name;
  std::string name;
  // Labels and annotations; empty (8 bytes) when there are none. Part of equality, so a
  // resubmission with other labels is a different workload, not a silent no-op.
  Boxed<WorkloadMetadata> metadata;
  // Resolved LocalQueue name (the namespace's "default" when the request named none).
  std::string queue_name;
  std::string priority_class_name;
  std::optional<int32_t> priority;
  std::vector<PodSetSpec> pod_sets;
  bool active = true;
  bool non_preemptible = false;
  int64_t checkpoint_grace_seconds = 0;
  // Kueue's maximumExecutionTimeSeconds; read by start-time estimates (core/start_estimator.h).
  std::optional<int32_t> maximum_execution_time_seconds;
  // Carried for whoever runs the workload elsewhere (a MultiKueue worker); part of equality, so
  // a resubmission with another manifest is another workload.
  Boxed<WorkloadPayload> payload = {};
  bool operator==(const WorkloadSpec&) const = default;
};

}  // namespace tollgate::core
