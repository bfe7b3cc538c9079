#include "services/manifest/manifest_parser.h"

#include <map>
#include <ostream>
#include <string>
#include <variant>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "google/protobuf/text_format.h"
#include "google/protobuf/util/message_differencer.h"
#include "gtest/gtest.h"

namespace tollgate::manifest {
namespace {

using ::testing::AllOf;
using ::testing::HasSubstr;
using ::testing::StartsWith;

template <typename Proto>
Proto FromText(const std::string& text) {
  Proto proto;
  EXPECT_TRUE(google::protobuf::TextFormat::ParseFromString(text, &proto)) << text;
  return proto;
}

// The apiVersion a manifest's kind is served at.
std::string ApiVersionFor(const std::string& yaml) {
  if (yaml.find("kind: PriorityClass") != std::string::npos) return "scheduling.k8s.io/v1";
  if (yaml.find("kind: Namespace") != std::string::npos) return "v1";
  return "kueue.x-k8s.io/v1beta1";
}

std::string ToText(const google::protobuf::Message& m) {
  std::string out;
  google::protobuf::TextFormat::PrintToString(m, &out);
  return out;
}

// The file-level rules (apiVersion required, no empty file) have their own tests below; the
// kind tables here leave apiVersion out where it does not matter.
absl::StatusOr<Manifest> ParseOne(const std::string& yaml) {
  YAML::Node node = YAML::Load(yaml);
  if (node.IsMap() && node["kind"].IsDefined() && !node["apiVersion"].IsDefined()) {
    node["apiVersion"] = ApiVersionFor(yaml);
  }
  absl::StatusOr<std::vector<Manifest>> all = ParseManifests(YAML::Dump(node), "test.yaml");
  if (!all.ok()) return all.status();
  if (all->size() != 1) return absl::InternalError(absl::StrCat(all->size(), " manifests"));
  return (*all)[0];
}

// ---------------------------------------------------------------------------------------------
// Every kind maps onto the proto field by field.

struct KindCase {
  std::string name;
  std::string yaml;
  std::string kind;
  // Text format of the expected ConfigObject, or of the Workload when kind is Workload.
  std::string expected;
};

void PrintTo(const KindCase& c, std::ostream* os) { *os << c.name; }

class KindTest : public ::testing::TestWithParam<KindCase> {};

TEST(PolicyManifestTest, APolicyFileAppliesWithoutApiVersion) {
  absl::StatusOr<std::vector<Manifest>> parsed = ParseManifests(R"(kind: Role
metadata: {name: r}
rules: [{verbs: [get], kinds: [ClusterQueue]}]
---
apiVersion: tollgate.dev/v1alpha1
kind: RoleBinding
metadata: {name: b, uid: x, resourceVersion: "7"}
role: r
subjects: [{kind: User, name: alice}]
namespaces: [team-a]
---
kind: QueueGrant
metadata: {name: g}
cohort: research
verbs: [submit]
subjects: [{kind: Group, name: researchers}]
)",
                                                                "p.yaml");
  ASSERT_TRUE(parsed.ok()) << parsed.status();
  ASSERT_EQ(parsed->size(), 3u);
  const auto& role = std::get<tollgate::v1::ConfigObject>((*parsed)[0].object).role();
  EXPECT_EQ(role.metadata().name(), "r");
  EXPECT_EQ(role.max_priority(), 0);  // the file's default
  const auto& binding = std::get<tollgate::v1::ConfigObject>((*parsed)[1].object).role_binding();
  EXPECT_EQ(binding.role(), "r");
  EXPECT_EQ(binding.subjects(0).name(), "alice");
  EXPECT_EQ(binding.namespaces(0), "team-a");
  EXPECT_EQ(std::get<tollgate::v1::ConfigObject>((*parsed)[2].object).queue_grant().cohort(),
            "research");
}

TEST(PolicyManifestTest, ErrorsNameTheDocumentFieldAndValue) {
  absl::StatusOr<std::vector<Manifest>> parsed = ParseManifests(
      "apiVersion: rbac.authorization.k8s.io/v1\nkind: Role\nmetadata: {name: r}\nrules: []\n",
      "k8s.yaml");
  EXPECT_TRUE(absl::IsInvalidArgument(parsed.status()));
  EXPECT_THAT(std::string(parsed.status().message()),
              HasSubstr("apiVersion: unknown apiVersion group \"rbac.authorization.k8s.io\""));
  parsed = ParseManifests(
      "kind: RoleBinding\nmetadata: {name: b}\nrole: viewer\nsubjects: [{kind: Robot, name: x}]\n",
      "p.yaml");
  EXPECT_TRUE(absl::IsInvalidArgument(parsed.status()));
  EXPECT_THAT(std::string(parsed.status().message()),
              AllOf(StartsWith("p.yaml: document 1"), HasSubstr("subjects[0].kind"),
                    HasSubstr("\"Robot\"")));
}

TEST_P(KindTest, MapsOntoProto) {
  const KindCase& c = GetParam();
  absl::StatusOr<Manifest> m = ParseOne(c.yaml);
  ASSERT_TRUE(m.ok()) << m.status();
  EXPECT_EQ(m->kind, c.kind);
  if (c.kind == "Workload") {
    ASSERT_TRUE(std::holds_alternative<v1::Workload>(m->object));
    const auto& got = std::get<v1::Workload>(m->object);
    const auto want = FromText<v1::Workload>(c.expected);
    EXPECT_TRUE(google::protobuf::util::MessageDifferencer::Equals(got, want))
        << "got:\n"
        << ToText(got) << "want:\n"
        << ToText(want);
  } else {
    ASSERT_TRUE(std::holds_alternative<v1::ConfigObject>(m->object));
    const auto& got = std::get<v1::ConfigObject>(m->object);
    const auto want = FromText<v1::ConfigObject>(c.expected);
    EXPECT_TRUE(google::protobuf::util::MessageDifferencer::Equals(got, want))
        << "got:\n"
        << ToText(got) << "want:\n"
        << ToText(want);
  }
}

INSTANTIATE_TEST_SUITE_P(
    Kinds, KindTest,
    ::testing::Values(
        KindCase{"Namespace",
                 R"(
apiVersion: v1
kind: Namespace
metadata:
  name: team-a
  labels: {team: a}
  uid: 1234
  resourceVersion: "55"
  creationTimestamp: "2025-01-01T00:00:00Z"
spec: {finalizers: [kubernetes]}
status: {phase: Active}
)",
                 "Namespace",
                 R"(namespace { metadata { name: "team-a" labels { key: "team" value: "a" } } })"},
        KindCase{"ResourceFlavor",
                 R"(
apiVersion: kueue.x-k8s.io/v1beta1
kind: ResourceFlavor
metadata: {name: spot}
spec:
  nodeLabels: {pool: spot, "cloud.google.com/gke-spot": "true"}
  nodeTaints: [{key: spot, value: "true", effect: NoSchedule, timeAdded: "2025-01-01T00:00:00Z"}]
  tolerations: [{key: dedicated, operator: Exists, effect: NoExecute, tolerationSeconds: 30}]
  topologyName: ""
)",
                 "ResourceFlavor",
                 R"(resource_flavor {
                      metadata { name: "spot" }
                      spec {
                        node_labels { key: "pool" value: "spot" }
                        node_labels { key: "cloud.google.com/gke-spot" value: "true" }
                        node_taints { key: "spot" value: "true" effect: "NoSchedule" }
                        tolerations { key: "dedicated" operator: "Exists" effect: "NoExecute"
                                      toleration_seconds: 30 }
                      }
                    })"},
        KindCase{"ClusterQueueV1beta1AllFields",
                 R"(
apiVersion: kueue.x-k8s.io/v1beta1
kind: ClusterQueue
metadata:
  name: team-a
  uid: 0b7d
  generation: 3
  managedFields: [{manager: kubectl}]
  finalizers: [kueue.x-k8s.io/resource-in-use]
spec:
  cohort: shared
  queueingStrategy: StrictFIFO
  namespaceSelector:
    matchLabels: {team: a}
    matchExpressions: [{key: env, operator: In, values: [prod, staging]}]
  preemption:
    withinClusterQueue: LowerPriority
    reclaimWithinCohort: Any
    borrowWithinCohort: {policy: LowerPriority, maxPriorityThreshold: 100}
  flavorFungibility: {whenCanBorrow: TryNextFlavor, whenCanPreempt: Preempt}
  fairSharing: {weight: "2"}
  stopPolicy: Hold
  admissionScope: {admissionMode: UsageBasedAdmissionFairSharing}
  admissionChecksStrategy: {admissionChecks: [{name: prov, onFlavors: [default]}]}
  resourceGroups:
  - coveredResources: [cpu, memory]
    flavors:
    - name: default
      resources:
      - {name: cpu, nominalQuota: 32, borrowingLimit: "500m", lendingLimit: 1.5}
      - {name: memory, nominalQuota: 128Gi}
status:
  pendingWorkloads: 3
  conditions: [{type: Active, status: "True"}]
)",
                 "ClusterQueue",
                 R"(cluster_queue {
                      metadata { name: "team-a" }
                      spec {
                        cohort: "shared"
                        queueing_strategy: "StrictFIFO"
                        namespace_selector {
                          match_labels { key: "team" value: "a" }
                          match_expressions { key: "env" operator: "In"
                                              values: "prod" values: "staging" }
                        }
                        preemption {
                          within_cluster_queue: "LowerPriority"
                          reclaim_within_cohort: "Any"
                          borrow_within_cohort { policy: "LowerPriority"
                                                 max_priority_threshold: 100 }
                        }
                        flavor_fungibility { when_can_borrow: "TryNextFlavor"
                                             when_can_preempt: "Preempt" }
                        fair_sharing { weight: "2" }
                        stop_policy: "Hold"
                        admission_scope { admission_mode: "UsageBasedAdmissionFairSharing" }
                        admission_checks_strategy {
                          admission_checks { name: "prov" on_flavors: "default" }
                        }
                        resource_groups {
                          covered_resources: "cpu" covered_resources: "memory"
                          flavors {
                            name: "default"
                            resources { name: "cpu" nominal_quota: "32" borrowing_limit: "500m"
                                        lending_limit: "1.5" }
                            resources { name: "memory" nominal_quota: "128Gi" }
                          }
                        }
                      }
                    })"},
        KindCase{"ClusterQueueV1beta2CohortName",
                 R"(
apiVersion: kueue.x-k8s.io/v1beta2
kind: ClusterQueue
metadata: {name: team-b}
spec: {cohortName: shared, namespaceSelector: {}}
)",
                 "ClusterQueue",
                 R"(cluster_queue { metadata { name: "team-b" }
                                    spec { cohort: "shared" namespace_selector {} } })"},
        KindCase{"ClusterQueueV1beta2FungibilityPreference",
                 R"(
apiVersion: kueue.x-k8s.io/v1beta2
kind: ClusterQueue
metadata: {name: q}
spec:
  flavorFungibility:
    whenCanBorrow: TryNextFlavor
    whenCanPreempt: TryNextFlavor
    preference: PreemptionOverBorrowing
)",
                 "ClusterQueue",
                 R"(cluster_queue { metadata { name: "q" }
                                    spec { flavor_fungibility {
                                      when_can_borrow: "TryNextFlavor"
                                      when_can_preempt: "TryNextFlavor"
                                      preference: "PreemptionOverBorrowing" } } })"},
        KindCase{"ClusterQueueV1beta1AdmissionChecks",
                 R"({kind: ClusterQueue, metadata: {name: q}, spec: {admissionChecks: [prov, b]}})",
                 "ClusterQueue",
                 R"(cluster_queue { metadata { name: "q" }
                                    spec { admission_checks: "prov" admission_checks: "b" } })"},
        KindCase{"AdmissionCheckV1beta1",
                 R"(
apiVersion: kueue.x-k8s.io/v1beta1
kind: AdmissionCheck
metadata: {name: prov}
spec:
  controllerName: kueue.x-k8s.io/provisioning-request
  retryDelayMinutes: 15
  parameters: {apiGroup: kueue.x-k8s.io, kind: ProvisioningRequestConfig, name: prov-config}
status:
  conditions: [{type: Active, status: "True", reason: Active, message: ok}]
)",
                 "AdmissionCheck",
                 R"(admission_check {
                      metadata { name: "prov" }
                      spec {
                        controller_name: "kueue.x-k8s.io/provisioning-request"
                        parameters { api_group: "kueue.x-k8s.io"
                                     kind: "ProvisioningRequestConfig" name: "prov-config" }
                        retry_delay_minutes: 15
                      }
                    })"},
        KindCase{"AdmissionCheckV1beta2",
                 R"({apiVersion: kueue.x-k8s.io/v1beta2, kind: AdmissionCheck,
                     metadata: {name: multikueue},
                     spec: {controllerName: kueue.x-k8s.io/multikueue}})",
                 "AdmissionCheck",
                 R"(admission_check { metadata { name: "multikueue" }
                                      spec { controller_name: "kueue.x-k8s.io/multikueue" } })"},
        KindCase{"MultiKueueConfig",
                 R"(
apiVersion: kueue.x-k8s.io/v1beta1
kind: MultiKueueConfig
metadata: {name: multikueue-test}
spec:
  clusters: [worker-h100, worker-a100]
)",
                 "MultiKueueConfig",
                 R"(multi_kueue_config { metadata { name: "multikueue-test" }
                      spec { clusters: "worker-h100" clusters: "worker-a100" } })"},
        KindCase{"MultiKueueClusterV1beta1KubeConfig",
                 R"(
apiVersion: kueue.x-k8s.io/v1beta1
kind: MultiKueueCluster
metadata: {name: worker1}
spec:
  kubeConfig: {locationType: Secret, location: worker1-secret}
status:
  conditions: [{type: Active, status: "True", reason: Active, message: Connected}]
)",
                 "MultiKueueCluster",
                 R"(multi_kueue_cluster { metadata { name: "worker1" }
                      spec { kube_config { location: "worker1-secret"
                                           location_type: "Secret" } } })"},
        KindCase{"MultiKueueClusterV1beta2ClusterSource",
                 R"({apiVersion: kueue.x-k8s.io/v1beta2, kind: MultiKueueCluster,
                     metadata: {name: worker2},
                     spec: {clusterSource: {kubeConfig: {locationType: Path,
                                                         location: /etc/tollgate/worker2.yaml}}}})",
                 "MultiKueueCluster",
                 R"(multi_kueue_cluster { metadata { name: "worker2" }
                      spec { kube_config { location: "/etc/tollgate/worker2.yaml"
                                           location_type: "Path" } } })"},
        KindCase{"MultiKueueClusterTollgateEndpoint",
                 R"(
apiVersion: kueue.x-k8s.io/v1beta2
kind: MultiKueueCluster
metadata: {name: worker3}
spec:
  endpoint:
    address: worker3.example.com:7443
    caFile: /etc/tollgate/ca.pem
    certFile: /etc/tollgate/manager.pem
    keyFile: /etc/tollgate/manager-key.pem
    tokenFile: /etc/tollgate/worker3.token
    insecure: false
)",
                 "MultiKueueCluster",
                 R"(multi_kueue_cluster { metadata { name: "worker3" }
                      spec { endpoint { address: "worker3.example.com:7443"
                                        ca_file: "/etc/tollgate/ca.pem"
                                        cert_file: "/etc/tollgate/manager.pem"
                                        key_file: "/etc/tollgate/manager-key.pem"
                                        token_file: "/etc/tollgate/worker3.token" } } })"},
        KindCase{"ClusterQueueNoSelector",
                 R"({kind: ClusterQueue, metadata: {name: q}, spec: {cohort: c}})", "ClusterQueue",
                 R"(cluster_queue { metadata { name: "q" } spec { cohort: "c" } })"},
        KindCase{"ClusterQueueTollgateExtension",
                 R"({kind: ClusterQueue, metadata: {name: q}, spec: {maxPreemptedWorkloads: 3}})",
                 "ClusterQueue",
                 R"(cluster_queue { metadata { name: "q" } spec { max_preempted_workloads: 3 } })"},
        KindCase{"ClusterQueuePreemptionRateLimit",
                 R"({kind: ClusterQueue, metadata: {name: q},
                    spec: {preemptionRateLimit: {maxPreemptions: 2, windowSeconds: 600}}})",
                 "ClusterQueue",
                 R"(cluster_queue { metadata { name: "q" }
                    spec { preemption_rate_limit { max_preemptions: 2 window_seconds: 600 } } })"},
        KindCase{"CohortV1alpha1Parent",
                 R"(
apiVersion: kueue.x-k8s.io/v1alpha1
kind: Cohort
metadata: {name: child}
spec:
  parent: root
  fairSharing: {weight: 500m}
  resourceGroups:
  - coveredResources: [nvidia.com/gpu]
    flavors: [{name: a100, resources: [{name: nvidia.com/gpu, nominalQuota: 8}]}]
)",
                 "Cohort",
                 R"(cohort { metadata { name: "child" }
                             spec {
                               parent: "root"
                               fair_sharing { weight: "500m" }
                               resource_groups {
                                 covered_resources: "nvidia.com/gpu"
                                 flavors { name: "a100"
                                           resources { name: "nvidia.com/gpu"
                                                       nominal_quota: "8" } }
                               }
                             } })"},
        KindCase{"CohortV1beta2ParentName",
                 R"({apiVersion: kueue.x-k8s.io/v1beta2, kind: Cohort, metadata: {name: c},
                     spec: {parentName: root}})",
                 "Cohort", R"(cohort { metadata { name: "c" } spec { parent: "root" } })"},
        KindCase{"LocalQueue",
                 R"(
apiVersion: kueue.x-k8s.io/v1beta2
kind: LocalQueue
metadata: {name: research, namespace: team-a, annotations: {owner: bob}}
spec: {clusterQueue: team-a-cq, stopPolicy: HoldAndDrain, fairSharing: {weight: 3}}
status: {pendingWorkloads: 1}
)",
                 "LocalQueue",
                 R"(local_queue {
                      metadata { name: "research" namespace: "team-a"
                                 annotations { key: "owner" value: "bob" } }
                      spec { cluster_queue: "team-a-cq" stop_policy: "HoldAndDrain"
                             fair_sharing { weight: "3" } }
                    })"},
        KindCase{"LocalQueueDefaultNamespace",
                 R"({kind: LocalQueue, metadata: {name: q}, spec: {clusterQueue: cq}})",
                 "LocalQueue",
                 R"(local_queue { metadata { name: "q" namespace: "default" }
                                  spec { cluster_queue: "cq" } })"},
        KindCase{"WorkloadPriorityClass",
                 R"({apiVersion: kueue.x-k8s.io/v1beta1, kind: WorkloadPriorityClass,
                     metadata: {name: high}, value: 10000, description: "for prod"})",
                 "WorkloadPriorityClass",
                 R"(workload_priority_class { metadata { name: "high" } value: 10000
                                              description: "for prod" })"},
        KindCase{"PriorityClass",
                 R"({apiVersion: scheduling.k8s.io/v1, kind: PriorityClass,
                     metadata: {name: batch}, value: -5, preemptionPolicy: Never,
                     globalDefault: false, description: batch jobs, status: {x: 1}})",
                 "PriorityClass",
                 R"(priority_class { metadata { name: "batch" } value: -5
                                     preemption_policy: "Never" description: "batch jobs" })"},
        KindCase{"WorkloadV1beta1",
                 R"(
apiVersion: kueue.x-k8s.io/v1beta1
kind: Workload
metadata: {name: train, namespace: ml, resourceVersion: "9"}
spec:
  queueName: research
  priorityClassName: high
  priorityClassSource: kueue.x-k8s.io/workloadpriorityclass
  priority: 10000
  active: false
  podSets:
  - name: workers
    count: 4
    minCount: 2
    template:
      metadata: {labels: {app: train}}
      spec:
        restartPolicy: Never
        nodeSelector: {pool: spot}
        tolerations: [{key: spot, operator: Equal, value: "true", effect: NoSchedule}]
        containers:
        - name: main
          image: trainer:latest
          args: [--epochs, "3"]
          resources:
            requests: {cpu: "500m", memory: 4Gi}
            limits: {nvidia.com/gpu: 1, memory: 8Gi}
status:
  conditions: []
)",
                 "Workload",
                 R"(metadata { name: "train" namespace: "ml" }
                    spec {
                      queue_name: "research"
                      priority_class_name: "high"
                      priority: 10000
                      active: false
                      pod_sets {
                        name: "workers" count: 4 min_count: 2
                        requests { key: "cpu" value: "500m" }
                        requests { key: "memory" value: "4Gi" }
                        requests { key: "nvidia.com/gpu" value: "1" }
                        node_selector { key: "pool" value: "spot" }
                        tolerations { key: "spot" operator: "Equal" value: "true"
                                      effect: "NoSchedule" }
                      }
                    })"},
        KindCase{
            "TopologyFlavor",
            "{kind: ResourceFlavor, metadata: {name: tas}, spec: {topologyName: default}}",
            "ResourceFlavor",
            R"(resource_flavor { metadata { name: "tas" } spec { topology_name: "default" } })"},
        KindCase{"WorkloadTopologyRequestAndNodeAffinity",
                 R"(
apiVersion: kueue.x-k8s.io/v1beta1
kind: Workload
metadata: {name: w, namespace: ml}
spec:
  podSets:
  - name: workers
    count: 2
    topologyRequest: {required: rack, podIndexLabel: idx}
    template:
      spec:
        affinity:
          nodeAffinity:
            requiredDuringSchedulingIgnoredDuringExecution:
              nodeSelectorTerms:
              - matchExpressions: [{key: zone, operator: In, values: [a]}]
              - matchFields: [{key: metadata.name, operator: NotIn, values: [n1]}]
            preferredDuringSchedulingIgnoredDuringExecution:
            - weight: 30
              preference:
                matchExpressions: [{key: region, operator: In, values: [us-west]}]
            - weight: 1
              preference:
                matchFields: [{key: metadata.name, operator: In, values: [n2]}]
        containers: [{name: c, resources: {requests: {cpu: 1}}}]
)",
                 "Workload",
                 R"(metadata { name: "w" namespace: "ml" }
                    spec {
                      pod_sets {
                        name: "workers" count: 2
                        requests { key: "cpu" value: "1" }
                        topology_request { required: "rack" pod_index_label: "idx" }
                        required_node_affinity {
                          match_expressions { key: "zone" operator: "In" values: "a" }
                        }
                        required_node_affinity {
                          match_fields { key: "metadata.name" operator: "NotIn" values: "n1" }
                        }
                        preferred_node_affinity {
                          weight: 30
                          preference {
                            match_expressions { key: "region" operator: "In" values: "us-west" }
                          }
                        }
                        preferred_node_affinity {
                          weight: 1
                          preference {
                            match_fields { key: "metadata.name" operator: "In" values: "n2" }
                          }
                        }
                      }
                    })"},
        KindCase{"WorkloadV1beta2PriorityClassRefAndDefaults",
                 R"(
apiVersion: kueue.x-k8s.io/v1beta2
kind: Workload
metadata: {name: w, labels: {kueue.x-k8s.io/queue-name: from-label}}
spec:
  priorityClassRef: {group: kueue.x-k8s.io, kind: WorkloadPriorityClass, name: low}
  priority: 10
  podSets:
  - template: {spec: {containers: [{name: c, resources: {requests: {cpu: 1}}}]}}
)",
                 "Workload",
                 R"(metadata { name: "w" namespace: "default"
                               labels { key: "kueue.x-k8s.io/queue-name" value: "from-label" } }
                    spec {
                      queue_name: "from-label"
                      priority_class_name: "low"
                      priority: 10
                      pod_sets { name: "main" count: 1 requests { key: "cpu" value: "1" } }
                    })"}),
    [](const ::testing::TestParamInfo<KindCase>& info) { return info.param.name; });

// ---------------------------------------------------------------------------------------------
// Errors name the kind, the object and the field path.

struct ErrorCase {
  std::string name;
  std::string yaml;
  absl::StatusCode code;
  // The whole message, when it must match exactly; otherwise substrings.
  std::string exact;
  std::vector<std::string> substrings;
  bool value_error = false;
};

// The whole message must match.
ErrorCase Exact(std::string name, std::string yaml, absl::StatusCode code, std::string message) {
  return ErrorCase{std::move(name), std::move(yaml), code, std::move(message), {}, false};
}

// The message must contain every substring; `value_error` is what IsValueError must say.
ErrorCase Contains(std::string name, std::string yaml, absl::StatusCode code,
                   std::vector<std::string> substrings, bool value_error = false) {
  return ErrorCase{std::move(name), std::move(yaml), code, "", std::move(substrings), value_error};
}

void PrintTo(const ErrorCase& c, std::ostream* os) { *os << c.name; }

class ErrorTest : public ::testing::TestWithParam<ErrorCase> {};

TEST_P(ErrorTest, NamesKindObjectAndPath) {
  const ErrorCase& c = GetParam();
  absl::StatusOr<Manifest> m = ParseManifestNode(YAML::Load(c.yaml), "");
  ASSERT_FALSE(m.ok());
  EXPECT_EQ(m.status().code(), c.code) << m.status();
  if (!c.exact.empty()) {
    EXPECT_EQ(m.status().message(), c.exact);
  }
  for (const std::string& s : c.substrings)
    EXPECT_THAT(std::string(m.status().message()), HasSubstr(s));
  EXPECT_EQ(IsValueError(m.status()), c.value_error) << m.status();
}

constexpr auto kInvalid = absl::StatusCode::kInvalidArgument;
constexpr auto kUnimplemented = absl::StatusCode::kUnimplemented;

INSTANTIATE_TEST_SUITE_P(
    Errors, ErrorTest,
    ::testing::Values(
        Exact("UnknownNestedField",
              R"(
kind: ClusterQueue
metadata: {name: team-a}
spec:
  resourceGroups:
  - coveredResources: [cpu, memory]
    flavors:
    - name: default
      resources:
      - {name: cpu, nominalQuota: 1}
      - {name: memory, nominalQuote: 1Gi}
)",
              kInvalid,
              "ClusterQueue team-a: unknown field "
              "spec.resourceGroups[0].flavors[0].resources[1].nominalQuote"),
        Exact("UnknownTopLevelField", "{kind: ResourceFlavor, metadata: {name: rf}, specs: {}}",
              kInvalid, "ResourceFlavor rf: unknown field specs"),
        Exact("AdmissionChecksStrategyUnknownField",
              R"({kind: ClusterQueue, metadata: {name: team-a},
                      spec: {admissionChecksStrategy: {admissionChecks: [{name: prov,
                             flavors: [a]}]}}})",
              kInvalid,
              "ClusterQueue team-a: unknown field "
              "spec.admissionChecksStrategy.admissionChecks[0].flavors"),
        Exact("MultiKueueConfigQuotaManagementUnsupported",
              R"({kind: MultiKueueConfig, metadata: {name: c},
                      spec: {clusters: [w1], quotaManagement: Automatic}})",
              kUnimplemented,
              "MultiKueueConfig c: spec.quotaManagement is not supported by Tollgate"),
        Exact("MultiKueueConfigClustersNotAList",
              "{kind: MultiKueueConfig, metadata: {name: c}, spec: {clusters: w1}}", kInvalid,
              "MultiKueueConfig c: spec.clusters: expected a list, got \"w1\""),
        Exact("MultiKueueClusterProfileUnsupported",
              R"({kind: MultiKueueCluster, metadata: {name: w1},
                      spec: {clusterSource: {clusterProfileRef: {name: p}}}})",
              kUnimplemented,
              "MultiKueueCluster w1: spec.clusterSource.clusterProfileRef is not supported by "
              "Tollgate"),
        Exact("MultiKueueClusterBothSpellings",
              R"({kind: MultiKueueCluster, metadata: {name: w1},
                      spec: {kubeConfig: {location: a}, clusterSource: {kubeConfig: {location: b}}}})",
              kInvalid,
              "MultiKueueCluster w1: spec.clusterSource.kubeConfig: spec.kubeConfig is set too; "
              "give only one"),
        Exact("MultiKueueClusterEndpointUnknownField",
              R"({kind: MultiKueueCluster, metadata: {name: w1},
                      spec: {endpoint: {address: "127.0.0.1:1", caCert: /ca.pem}}})",
              kInvalid, "MultiKueueCluster w1: unknown field spec.endpoint.caCert"),
        Exact("AdmissionCheckUnknownField",
              "{kind: AdmissionCheck, metadata: {name: ac}, spec: {controller: x}}", kInvalid,
              "AdmissionCheck ac: unknown field spec.controller"),
        // The value itself is the API's to judge (services/api/config_codec.cc).
        Contains("FungibilityPreferenceNotAString",
                 R"({kind: ClusterQueue, metadata: {name: q},
                      spec: {flavorFungibility: {preference: [PreemptionOverBorrowing]}}})",
                 kInvalid, {"ClusterQueue q: spec.flavorFungibility.preference", "got a list"}),
        Exact("PreemptionGatesUnsupported",
              R"({kind: Workload, metadata: {name: w, namespace: ns},
                      spec: {preemptionGates: [{name: g}]}})",
              kUnimplemented, "Workload ns/w: spec.preemptionGates is not supported by Tollgate"),
        Exact("GenerateNameUnsupported",
              "{kind: ClusterQueue, metadata: {name: q, generateName: q-}}", kUnimplemented,
              "ClusterQueue q: metadata.generateName is not supported by Tollgate"),
        Exact("GlobalDefaultUnsupported",
              R"({apiVersion: scheduling.k8s.io/v1, kind: PriorityClass,
                      metadata: {name: p}, value: 1, globalDefault: true})",
              kUnimplemented, "PriorityClass p: globalDefault is not supported by Tollgate"),
        Contains("UnknownKind", "{kind: Job, metadata: {name: j}}", kInvalid,
                 {"Job j", "unknown kind \"Job\""}),
        Contains("MissingKind", "{metadata: {name: j}}", kInvalid, {"j", "missing kind"}),
        Contains("UnknownApiGroup",
                 "{apiVersion: batch/v1, kind: ClusterQueue, metadata: {name: q}}", kInvalid,
                 {"ClusterQueue q: apiVersion", "unknown apiVersion group \"batch\""}),
        Contains(
            "WrongGroupForKind",
            "{apiVersion: scheduling.k8s.io/v1, kind: ClusterQueue, metadata: {name: q}}", kInvalid,
            {"ClusterQueue q: apiVersion", "kueue.x-k8s.io/v1beta1 or kueue.x-k8s.io/v1beta2"}),
        Contains("UnknownVersion",
                 "{apiVersion: kueue.x-k8s.io/v2, kind: LocalQueue, metadata: {name: q}}", kInvalid,
                 {"LocalQueue q: apiVersion", "kueue.x-k8s.io/v2"}),
        Exact("MissingName", "{kind: ResourceFlavor, metadata: {}}", kInvalid,
              "ResourceFlavor (unnamed): metadata.name: required"),
        Contains("CohortNameConflict",
                 "{kind: ClusterQueue, metadata: {name: q}, spec: {cohort: a, cohortName: b}}",
                 kInvalid, {"ClusterQueue q: spec.cohortName", "conflicts with spec.cohort"}),
        Contains("MalformedQuota",
                 R"({kind: ClusterQueue, metadata: {name: q}, spec: {resourceGroups: [
                      {coveredResources: [cpu], flavors: [{name: f, resources: [
                        {name: cpu, nominalQuota: 12 cores}]}]}]}})",
                 kInvalid,
                 {"ClusterQueue q: spec.resourceGroups[0].flavors[0].resources[0].nominalQuota",
                  "\"12 cores\""},
                 true),
        Contains("MalformedWorkloadRequest",
                 R"({kind: Workload, metadata: {name: w, namespace: ns}, spec: {podSets: [
                      {template: {spec: {containers: [
                        {name: a, resources: {requests: {cpu: 1}}},
                        {name: b, resources: {requests: {cpu: 2 cores}}}]}}}]}})",
                 kInvalid,
                 {"Workload ns/w: spec.podSets[0].template.spec.containers[1].resources."
                  "requests[cpu]",
                  "malformed quantity \"2 cores\""},
                 true),
        Contains("PreferredNodeAffinityWeightOutOfRange",
                 R"({kind: Workload, metadata: {name: w}, spec: {podSets: [
                      {template: {spec: {containers: [{name: a}], affinity: {nodeAffinity: {
                        preferredDuringSchedulingIgnoredDuringExecution: [
                          {weight: 5, preference: {matchExpressions: [
                            {key: zone, operator: In, values: [a]}]}},
                          {weight: 0, preference: {}}]}}}}}]}})",
                 kInvalid,
                 {"Workload w: spec.podSets[0].template.spec.affinity.nodeAffinity."
                  "preferredDuringSchedulingIgnoredDuringExecution[1].weight",
                  "0: must be in the range 1-100"},
                 true),
        Contains("MalformedLimit",
                 R"({kind: Workload, metadata: {name: w}, spec: {podSets: [
                      {template: {spec: {containers: [
                        {name: a, resources: {limits: {memory: lots}}}]}}}]}})",
                 kInvalid,
                 {"Workload w: spec.podSets[0].template.spec.containers[0].resources."
                  "limits[memory]",
                  "\"lots\""},
                 true),
        // Kueue's webhook refuses these workloads; the refusal is the workload's, not the
        // manifest's (value_error).
        Contains("NegativeContainerRequestInPositiveSum",
                 R"({kind: Workload, metadata: {name: w}, spec: {podSets: [
                      {template: {spec: {containers: [
                        {name: a, resources: {requests: {cpu: -1}}},
                        {name: b, resources: {requests: {cpu: 2}}}]}}}]}})",
                 kInvalid,
                 {"Workload w: spec.podSets[0].template.spec.containers[0].resources."
                  "requests[cpu]: Invalid value: \"-1\": must be greater than or equal to 0"},
                 true),
        Contains("ReservedPodsAtPodLevel",
                 R"({kind: Workload, metadata: {name: w}, spec: {podSets: [{name: a}, {name: b,
                      template: {spec: {resources: {limits: {pods: 1}}, containers: [{name: c}]}}}]}})",
                 kInvalid,
                 {"spec.podSets[1].template.spec.resources.limits[pods]: Invalid value: \"pods\""},
                 true),
        Contains("TemplateLabelValue",
                 R"({kind: Workload, metadata: {name: w}, spec: {podSets: [
                      {template: {metadata: {labels: {app: "a b"}}, spec: {containers: [{name: c}]}}}]}})",
                 kInvalid, {"spec.podSets[0].template.metadata.labels", "\"a b\""}, true),
        Contains("TemplateAnnotationKey",
                 R"({kind: Workload, metadata: {name: w}, spec: {podSets: [
                      {template: {metadata: {annotations: {a/b/c: x}}, spec: {containers: [{name: c}]}}}]}})",
                 kInvalid, {"spec.podSets[0].template.metadata.annotations", "\"a/b/c\""}, true),
        Contains("PriorityClassRefUnknownGroup",
                 R"({kind: Workload, metadata: {name: w}, spec: {priority: 1,
                      priorityClassRef: {group: test, kind: PriorityClass, name: low}}})",
                 kInvalid, {"spec.priorityClassRef.group", "Unsupported value: \"test\""}, true),
        Contains("PriorityClassRefKindOfTheOtherGroup",
                 R"({kind: Workload, metadata: {name: w}, spec: {priority: 1,
                      priorityClassRef: {group: kueue.x-k8s.io, kind: PriorityClass, name: low}}})",
                 kInvalid,
                 {"spec.priorityClassRef: Invalid value: \"PriorityClass\": only the "
                  "WorkloadPriorityClass kind is allowed for the kueue.x-k8s.io group"},
                 true),
        Contains("PriorityClassRefWithoutKind",
                 R"({kind: Workload, metadata: {name: w}, spec: {priority: 1,
                      priorityClassRef: {group: kueue.x-k8s.io, name: low}}})",
                 kInvalid, {"spec.priorityClassRef.kind: Required value"}, true),
        Contains("NonIntegerCount",
                 "{kind: Workload, metadata: {name: w}, spec: {podSets: [{count: many}]}}",
                 kInvalid, {"Workload w: spec.podSets[0].count", "\"many\""}, true),
        Exact("PodSetsNotAList",
              "{kind: Workload, metadata: {name: w}, spec: {podSets: {count: 1}}}", kInvalid,
              "Workload w: spec.podSets: expected a list, got a map"),
        Exact("ContainerTypo",
              R"({kind: Workload, metadata: {name: w}, spec: {podSets: [
                      {template: {spec: {containers: [{name: a, resource: {}}]}}}]}})",
              kInvalid,
              "Workload w: unknown field spec.podSets[0].template.spec.containers[0].resource"),
        Contains("NotAMap", "[a, b]", kInvalid, {"expected a manifest"}),
        Exact("LabelsNotAMap", "{kind: Namespace, metadata: {name: n, labels: [a]}}", kInvalid,
              "Namespace n: metadata.labels: expected a map, got a list")),
    [](const ::testing::TestParamInfo<ErrorCase>& info) { return info.param.name; });

// ---------------------------------------------------------------------------------------------
// Effective pod requests.

struct RequestsCase {
  std::string name;
  // The pod template's spec.
  std::string pod_spec;
  std::map<std::string, std::string> want;
};

void PrintTo(const RequestsCase& c, std::ostream* os) { *os << c.name; }

class EffectiveRequestsTest : public ::testing::TestWithParam<RequestsCase> {};

TEST_P(EffectiveRequestsTest, MatchesKubernetes) {
  const RequestsCase& c = GetParam();
  const std::string yaml = absl::StrCat(
      "{kind: Workload, metadata: {name: w}, spec: {podSets: [{template: {spec: ", c.pod_spec,
      "}}]}}");
  absl::StatusOr<Manifest> m = ParseOne(yaml);
  ASSERT_TRUE(m.ok()) << m.status();
  const v1::PodSet& set = std::get<v1::Workload>(m->object).spec().pod_sets(0);
  std::map<std::string, std::string> got(set.requests().begin(), set.requests().end());
  EXPECT_EQ(got, c.want);
}

INSTANTIATE_TEST_SUITE_P(
    Requests, EffectiveRequestsTest,
    ::testing::Values(
        // As the API server would store them: Quantity's own spelling of each term.
        RequestsCase{"SingleContainerKeepsQuantitySpelling",
                     "{containers: [{name: a, resources: {requests: {cpu: 0.5, memory: 1e9}}}]}",
                     {{"cpu", "500m"}, {"memory", "1e9"}}},
        RequestsCase{"LimitsFillMissingRequests",
                     R"({containers: [{name: a, resources: {requests: {cpu: 250m},
                                                           limits: {cpu: 1, memory: 2Gi}}}]})",
                     {{"cpu", "250m"}, {"memory", "2Gi"}}},
        RequestsCase{"ContainersAreSummed",
                     R"({containers: [
                          {name: a, resources: {requests: {cpu: 500m, memory: 1Gi}}},
                          {name: b, resources: {requests: {cpu: 1500m, memory: 512Mi}}},
                          {name: c, resources: {limits: {nvidia.com/gpu: 1}}},
                          {name: d, resources: {limits: {nvidia.com/gpu: 1}}}]})",
                     {{"cpu", "2"}, {"memory", "1536Mi"}, {"nvidia.com/gpu", "2"}}},
        RequestsCase{"InitContainerPeakWins",
                     R"({initContainers: [
                          {name: setup, resources: {requests: {cpu: 4, memory: 1Gi}}}],
                         containers: [
                          {name: a, resources: {requests: {cpu: 1, memory: 2Gi}}}]})",
                     {{"cpu", "4"}, {"memory", "2Gi"}}},
        RequestsCase{"InitContainerOnlyResource",
                     R"({initContainers: [
                          {name: setup, resources: {requests: {ephemeral-storage: 10Gi}}}],
                         containers: [{name: a, resources: {requests: {cpu: 1}}}]})",
                     {{"cpu", "1"}, {"ephemeral-storage", "10Gi"}}},
        RequestsCase{"SidecarAddsToBoth",
                     // Main: 1 + sidecar 0.5 = 1.5; the later init runs next to the sidecar:
                     // 2 + 0.5 = 2.5, which is the peak.
                     R"({initContainers: [
                          {name: proxy, restartPolicy: Always,
                           resources: {requests: {cpu: 500m}}},
                          {name: migrate, resources: {requests: {cpu: 2}}}],
                         containers: [{name: a, resources: {requests: {cpu: 1}}}]})",
                     {{"cpu", "2500m"}}},
        RequestsCase{"OverheadOnTop",
                     R"({overhead: {cpu: 250m, memory: 64Mi},
                         containers: [{name: a, resources: {requests: {cpu: 1, memory: 1Gi}}}]})",
                     {{"cpu", "1250m"}, {"memory", "1088Mi"}}},
        RequestsCase{"OverheadAfterInitPeak",
                     R"({overhead: {cpu: 100m},
                         initContainers: [{name: i, resources: {requests: {cpu: 3}}}],
                         containers: [{name: a, resources: {requests: {cpu: 1}}}]})",
                     {{"cpu", "3100m"}}},
        RequestsCase{"PodLevelResourcesReplaceAggregate",
                     R"({resources: {requests: {cpu: 4}, limits: {memory: 8Gi}},
                         containers: [
                          {name: a, resources: {requests: {cpu: 1, memory: 1Gi}}},
                          {name: b, resources: {requests: {cpu: 1, nvidia.com/gpu: 1}}}]})",
                     {{"cpu", "4"}, {"memory", "8Gi"}, {"nvidia.com/gpu", "1"}}},
        RequestsCase{
            "ZeroRequestsAreKept",
            "{containers: [{name: a, resources: {requests: {cpu: 1, example.com/fpga: 0}}}]}",
            {{"cpu", "1"}, {"example.com/fpga", "0"}}},
        RequestsCase{"NoContainers", "{}", {}}),
    [](const ::testing::TestParamInfo<RequestsCase>& info) { return info.param.name; });

TEST(ResourceErrorsTest, ARequestAboveItsLimitIsKeptAsThePodSetsResourceError) {
  // Kueue keeps such a workload and lets it wait (docs/scheduling.md): a parse error would refuse
  // it. The field path is the Workload's own, whatever document path the parser is at.
  absl::StatusOr<Manifest> m = ParseOne(R"(
kind: Workload
metadata: {name: w}
spec:
  podSets:
    - {name: fine, template: {spec: {containers: [{name: a, resources: {requests: {cpu: 1}}}]}}}
    - name: over
      template:
        spec:
          containers:
            - {name: a, resources: {requests: {cpu: 1}, limits: {cpu: 1}}}
            - {name: b, resources: {requests: {cpu: 2, memory: 1Gi}, limits: {cpu: 1}}}
)");
  ASSERT_TRUE(m.ok()) << m.status();
  const v1::WorkloadSpec& spec = std::get<v1::Workload>(m->object).spec();
  EXPECT_THAT(spec.pod_sets(0).resource_errors(), ::testing::IsEmpty());
  EXPECT_THAT(spec.pod_sets(1).resource_errors(),
              ::testing::ElementsAre("spec.podSets[1].template.spec.containers[1]: Invalid value: "
                                     "[\"cpu\"]: requests must not exceed its limits"));
  EXPECT_EQ(spec.pod_sets(1).requests().at("cpu"), "3");
}

// ---------------------------------------------------------------------------------------------
// Multi-document streams.

TEST(ParseManifestsTest, MultiDocumentSkipsEmptyDocuments) {
  absl::StatusOr<std::vector<Manifest>> all = ParseManifests(R"(
---
# only a comment
---
apiVersion: kueue.x-k8s.io/v1beta1
kind: ResourceFlavor
metadata: {name: default}
---
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: ClusterQueue
metadata: {name: cq}
spec: {cohortName: all}
---
apiVersion: kueue.x-k8s.io/v1beta1
kind: Workload
metadata: {name: w}
spec: {podSets: [{count: 2}]}
)",
                                                             "stream.yaml");
  ASSERT_TRUE(all.ok()) << all.status();
  ASSERT_EQ(all->size(), 3u);
  EXPECT_EQ((*all)[0].kind, "ResourceFlavor");
  EXPECT_EQ((*all)[1].kind, "ClusterQueue");
  EXPECT_EQ(std::get<v1::ConfigObject>((*all)[1].object).cluster_queue().spec().cohort(), "all");
  EXPECT_EQ((*all)[2].kind, "Workload");
  EXPECT_EQ(std::get<v1::Workload>((*all)[2].object).spec().pod_sets(0).count(), 2);
}

TEST(ParseManifestsTest, ErrorNamesSourceAndDocument) {
  absl::StatusOr<std::vector<Manifest>> all = ParseManifests(
      "apiVersion: kueue.x-k8s.io/v1beta1\nkind: ResourceFlavor\nmetadata: {name: a}\n---\n"
      "apiVersion: kueue.x-k8s.io/v1beta1\nkind: ResourceFlavor\n"
      "metadata: {name: b}\nspec: {nodeLabel: {}}\n",
      "flavors.yaml");
  ASSERT_FALSE(all.ok());
  EXPECT_EQ(all.status().message(),
            "flavors.yaml: document 2: ResourceFlavor b: unknown field spec.nodeLabel");
}

TEST(ParseManifestsTest, SyntaxErrorNamesLine) {
  absl::StatusOr<std::vector<Manifest>> all =
      ParseManifests("kind: ResourceFlavor\nmetadata: {name: a\n", "bad.yaml");
  ASSERT_FALSE(all.ok());
  EXPECT_THAT(std::string(all.status().message()),
              AllOf(StartsWith("bad.yaml:"), HasSubstr("invalid YAML")));
}

TEST(ParseManifestsTest, AFileWithoutManifestsIsAnError) {
  for (const std::string text : {"", "\n", "# only a comment\n", "---\n---\n"}) {
    absl::StatusOr<std::vector<Manifest>> all = ParseManifests(text, "empty.yaml");
    EXPECT_EQ(all.status().code(), absl::StatusCode::kInvalidArgument);
    EXPECT_THAT(all.status().message(), HasSubstr("empty.yaml: no manifests found"));
  }
}

TEST(ParseManifestsTest, ApiVersionIsRequiredInAFile) {
  absl::StatusOr<std::vector<Manifest>> all =
      ParseManifests("kind: ResourceFlavor\nmetadata: {name: a}\n", "flavors.yaml");
  ASSERT_EQ(all.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(all.status().message(),
            "flavors.yaml: document 1: ResourceFlavor a: apiVersion: required value, got none");
}

// What `tollgate get -o yaml` prints (a kind: List) loads wherever a manifest file is read,
// `tollgated --manifests` included, and so do the job kinds `tollgate apply -f` takes.
TEST(ParseManifestsTest, AListAndJobKindsLoadFromAFile) {
  absl::StatusOr<std::vector<Manifest>> all = ParseManifests(R"(apiVersion: v1
kind: List
items:
- apiVersion: kueue.x-k8s.io/v1beta1
  kind: ResourceFlavor
  metadata: {name: default}
- apiVersion: v1
  kind: List
  items:
  - apiVersion: kueue.x-k8s.io/v1beta1
    kind: LocalQueue
    metadata: {name: main, namespace: team-a}
    spec: {clusterQueue: cq}
---
apiVersion: batch/v1
kind: Job
metadata:
  name: train
  namespace: team-a
  labels: {kueue.x-k8s.io/queue-name: main}
spec:
  parallelism: 2
  template:
    spec:
      containers:
      - name: c
        resources: {requests: {cpu: "1"}}
)",
                                                             "export.yaml");
  ASSERT_TRUE(all.ok()) << all.status();
  ASSERT_EQ(all->size(), 3u);
  EXPECT_EQ((*all)[0].kind, "ResourceFlavor");
  EXPECT_EQ((*all)[1].kind, "LocalQueue");
  EXPECT_EQ((*all)[2].kind, "Workload");
  EXPECT_EQ(std::get<v1::Workload>((*all)[2].object).spec().pod_sets(0).count(), 2);
}

TEST(ParseManifestsTest, AListItemErrorNamesItsPlace) {
  absl::StatusOr<std::vector<Manifest>> all = ParseManifests(
      "apiVersion: v1\nkind: List\nitems:\n- apiVersion: kueue.x-k8s.io/v1beta1\n"
      "  kind: ResourceFlavor\n  metadata: {name: a}\n  spec: {nodeLabel: {}}\n",
      "export.yaml");
  ASSERT_EQ(all.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(all.status().message(),
            "export.yaml: document 1: items[0]: ResourceFlavor a: unknown field spec.nodeLabel");
}

TEST(ParseManifestNodeTest, PrefixLeadsTheMessage) {
  absl::StatusOr<Manifest> m = ParseManifestNode(
      YAML::Load("{kind: LocalQueue, metadata: {name: q, namespace: ns}, spec: {cq: x}}"),
      "s.yaml: objects[3]");
  ASSERT_FALSE(m.ok());
  EXPECT_EQ(m.status().message(), "s.yaml: objects[3]: LocalQueue ns/q: unknown field spec.cq");
}

TEST(ParseManifestNodeTest, NullFieldsAreAbsent) {
  absl::StatusOr<Manifest> m = ParseManifestNode(
      YAML::Load("{kind: ClusterQueue, metadata: {name: q}, spec: {namespaceSelector: null, "
                 "admissionChecks: null, cohort: ~}}"),
      "");
  ASSERT_TRUE(m.ok()) << m.status();
  EXPECT_FALSE(
      std::get<v1::ConfigObject>(m->object).cluster_queue().spec().has_namespace_selector());
}

}  // namespace
}  // namespace tollgate::manifest
