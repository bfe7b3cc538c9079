#include "services/manifest/kueue_configuration.h"

#include <algorithm>
#include <cstdint>
#include <initializer_list>
#include <limits>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/algorithm/container.h"
#include "absl/status/status.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/time/time.h"
#include "common/file_util.h"
#include "common/yaml_documents.h"
#include "core/names.h"
#include "core/quantity.h"
#include "core/status_macros.h"
#include "nlohmann/json.hpp"
#include "services/manifest/kueue_feature_gates.h"

namespace tollgate::manifest {
namespace {

using manifest::Describe;
using manifest::Index;
using manifest::MapFields;
using manifest::Where;

enum class Version { kV1beta1, kV1beta2 };

// Kueue's defaults that differ between the versions (apis/config/*/defaults.go).
constexpr absl::Duration kV1beta1PodsReadyTimeout = absl::Minutes(5);
constexpr absl::Duration kV1beta2PodsReadyTimeout = absl::Minutes(30);

// Top-level fields that configure Kueue's controller process inside Kubernetes. Tollgate has
// its own flags for what they cover (listen address, TLS, metrics), so they are read past.
struct IgnoredField {
  absl::string_view name;
  absl::string_view why;
};
constexpr IgnoredField kIgnoredFields[] = {
    {"namespace", "the namespace Kueue's controller runs in"},
    {"webhook", "Kueue's admission webhook server"},
    {"leaderElection", "leader election between Kueue controller replicas"},
    {"metrics", "Kueue's metrics endpoint (tollgated: --metrics-listen)"},
    {"health", "Kueue's health probe endpoint (tollgated: gRPC health service)"},
    {"pprofBindAddress", "Kueue's pprof endpoint"},
    {"controller", "controller-runtime reconcile concurrency"},
    {"tls", "TLS of Kueue's webhook and metrics servers (tollgated: --tls-cert and friends)"},
    {"internalCertManagement", "certificates of Kueue's webhook"},
    {"clientConnection", "Kueue's Kubernetes API client rate limits"},
};
constexpr IgnoredField kIgnoredV1beta1[] = {
    {"queueVisibility",
     "deprecated ClusterQueue status snapshots (use tollgate's visibility API)"}};
constexpr IgnoredField kIgnoredV1beta2[] = {
    {"visibilityServer", "Kueue's visibility API server address (tollgated serves it over gRPC)"}};

// Every framework name Kueue's configuration validation accepts.
constexpr absl::string_view kKueueFrameworks[] = {"batch/job",
                                                  "kubeflow.org/mpijob",
                                                  "ray.io/rayjob",
                                                  "ray.io/rayservice",
                                                  "ray.io/raycluster",
                                                  "jobset.x-k8s.io/jobset",
                                                  "kubeflow.org/paddlejob",
                                                  "kubeflow.org/pytorchjob",
                                                  "kubeflow.org/tfjob",
                                                  "kubeflow.org/xgboostjob",
                                                  "kubeflow.org/jaxjob",
                                                  "trainer.kubeflow.org/trainjob",
                                                  "workload.codeflare.dev/appwrapper",
                                                  "sparkoperator.k8s.io/sparkapplication",
                                                  "pod",
                                                  "deployment",
                                                  "statefulset",
                                                  "leaderworkerset.x-k8s.io/leaderworkerset"};

// The only preemptionStrategies lists Kueue's validation accepts.
const std::vector<std::vector<std::string>>& AllowedStrategyLists() {
  static const auto* lists = new std::vector<std::vector<std::string>>{
      {"LessThanOrEqualToFinalShare"},
      {"LessThanInitialShare"},
      {"LessThanOrEqualToFinalShare", "LessThanInitialShare"}};
  return *lists;
}

// The feature gates that change what Tollgate reads; any other gate is accepted only at the value
// Tollgate implements (kueue_feature_gates.h).
constexpr absl::string_view kAdmissionFairSharingGate = "AdmissionFairSharing";
constexpr absl::string_view kDisableWaitForPodsReadyGate = "DisableWaitForPodsReady";
// The gates that switch one bool of the scheduler, read at Kueue's default when unset
// (kueue_feature_gates.cc); core/scheduler_config.h says what each does. A gate joins this list
// once Tollgate implements both of its values.
struct SchedulerGate {
  absl::string_view name;
  bool core::SchedulerConfig::*field;
};
constexpr SchedulerGate kSchedulerGates[] = {
    // Alpha in Kueue 0.18.x, 0.19.x and 0.20 (kueue#13797).
    {"PrioritizePreemptorWorkloads", &core::SchedulerConfig::prioritize_preemptor_workloads},
    // Alpha since Kueue 0.17 (KEP-7990): the kueue.x-k8s.io/priority-boost annotation.
    {"PriorityBoost", &core::SchedulerConfig::priority_boost},
    // Deprecated in Kueue 0.19; it depends on TopologyAwareScheduling and
    // TASFailedNodeReplacement, which Tollgate always has on (their Kueue default).
    {"TASReplaceNodeDueToNotReadyOverFixedTime",
     &core::SchedulerConfig::replace_node_not_ready_over_fixed_time},
    // Beta in Kueue, on by default.
    {"PrioritySortingWithinCohort", &core::SchedulerConfig::priority_sorting_within_cohort},
    // Beta in Kueue, on by default (core/admission_planner.cc).
    {"RecomputeAssignmentUponPreemptionTargetsOverlap",
     &core::SchedulerConfig::recompute_assignment_upon_preemption_targets_overlap},
    // Beta in Kueue, on by default; tollgate-kube reads it too (adapters/kube/main.cc).
    {"PartialAdmission", &core::SchedulerConfig::partial_admission},
    // Beta in Kueue, on by default; tollgate-kube reads it too (adapters/kube/main.cc).
    {"ReclaimablePods", &core::SchedulerConfig::reclaimable_pods},
    // Beta in Kueue, on by default; tollgate-kube reads it too (adapters/kube/main.cc).
    {"AdmissionGatedBy", &core::SchedulerConfig::admission_gated_by},
    // Beta in Kueue, on by default.
    {"TASFailedNodeReplacementFailFast",
     &core::SchedulerConfig::tas_failed_node_replacement_fail_fast},
    // Beta in Kueue, on by default.
    {"TASRecomputeAssignmentWithinSchedulingCycle",
     &core::SchedulerConfig::tas_recompute_assignment_within_scheduling_cycle},
    // Alpha since Kueue 0.15 (core/topology_balanced_placement.cc).
    {"TASBalancedPlacement", &core::SchedulerConfig::tas_balanced_placement},
    // Alpha in Kueue 0.18 (kueue#10902): preferred node affinity ranks topology domains.
    {"TASRespectNodeAffinityPreferred",
     &core::SchedulerConfig::tas_respect_node_affinity_preferred},
};

const SchedulerGate* FindSchedulerGate(absl::string_view name) {
  for (const SchedulerGate& g : kSchedulerGates) {
    if (g.name == name) return &g;
  }
  return nullptr;
}

// Beta in Kueue 0.19, on by default: off, resources.quotaCheckStrategy is neither checked nor
// read (BlockUndeclared applies).
constexpr absl::string_view kQuotaCheckStrategyGate = "QuotaCheckStrategy";

class Parser {
 public:
  Parser(const Where& where, KueueConfiguration& out) : where_(where), out_(out) {}

  absl::Status Parse(const YAML::Node& node, absl::string_view path, bool require_kind) {
    // `config:` with nothing under it is the defaults.
    if (node.IsNull() && !require_kind) return absl::OkStatus();
    TOLLGATE_RETURN_IF_ERROR(manifest::ExpectMap(where_, node, path));
    TOLLGATE_RETURN_IF_ERROR(ReadVersion(node, path, require_kind));
    std::vector<absl::string_view> allowed = {"apiVersion",
                                              "kind",
                                              "manageJobsWithoutQueueName",
                                              "managedJobsNamespaceSelector",
                                              "waitForPodsReady",
                                              "integrations",
                                              "multiKueue",
                                              "fairSharing",
                                              "admissionFairSharing",
                                              "resources",
                                              "featureGates",
                                              "objectRetentionPolicies"};
    std::vector<IgnoredField> ignored(std::begin(kIgnoredFields), std::end(kIgnoredFields));
    if (version_ == Version::kV1beta1) {
      ignored.insert(ignored.end(), std::begin(kIgnoredV1beta1), std::end(kIgnoredV1beta1));
    } else {
      ignored.insert(ignored.end(), std::begin(kIgnoredV1beta2), std::end(kIgnoredV1beta2));
    }
    for (const IgnoredField& f : ignored) allowed.push_back(f.name);
    TOLLGATE_ASSIGN_OR_RETURN(MapFields top, Fields(node, std::string(path), allowed));

    for (const IgnoredField& f : ignored) {
      if (const YAML::Node* n = top.Get(f.name); n != nullptr && !manifest::IsEmpty(*n)) {
        out_.warnings.push_back(absl::StrCat(top.Path(f.name), ": ignored: configures ", f.why,
                                             ", which has no meaning outside Kubernetes"));
      }
    }
    // Feature gates first: they decide whether admissionFairSharing and waitForPodsReady count.
    if (const YAML::Node* n = top.Get("featureGates")) {
      TOLLGATE_RETURN_IF_ERROR(ReadFeatureGates(*n, top.Path("featureGates")));
    }
    for (const SchedulerGate& g : kSchedulerGates) {
      out_.scheduler.*g.field = Gate(g.name, FindKueueFeatureGate(g.name)->default_value);
    }
    if (const YAML::Node* n = top.Get("objectRetentionPolicies"); n && !n->IsNull()) {
      TOLLGATE_RETURN_IF_ERROR(
          ReadObjectRetentionPolicies(*n, top.Path("objectRetentionPolicies")));
    }
    if (const YAML::Node* n = top.Get("manageJobsWithoutQueueName")) {
      TOLLGATE_ASSIGN_OR_RETURN(out_.adapter.manage_jobs_without_queue_name,
                                manifest::Bool(where_, *n, top.Path("manageJobsWithoutQueueName")));
    }
    if (const YAML::Node* n = top.Get("managedJobsNamespaceSelector"); n && !n->IsNull()) {
      TOLLGATE_RETURN_IF_ERROR(ReadSelector(*n, top.Path("managedJobsNamespaceSelector"),
                                            out_.adapter.managed_jobs_namespace_selector));
      out_.adapter.has_managed_jobs_namespace_selector = true;
    }
    if (const YAML::Node* n = top.Get("integrations")) {
      TOLLGATE_RETURN_IF_ERROR(ReadIntegrations(*n, top.Path("integrations")));
    }
    if (const YAML::Node* n = top.Get("fairSharing")) {
      TOLLGATE_RETURN_IF_ERROR(ReadFairSharing(*n, top.Path("fairSharing")));
    }
    if (const YAML::Node* n = top.Get("admissionFairSharing"); n && !n->IsNull()) {
      TOLLGATE_RETURN_IF_ERROR(ReadAdmissionFairSharing(*n, top.Path("admissionFairSharing")));
    }
    const YAML::Node* pods_ready = top.Get("waitForPodsReady");
    if (pods_ready != nullptr && !pods_ready->IsNull()) {
      TOLLGATE_RETURN_IF_ERROR(ReadWaitForPodsReady(*pods_ready, top.Path("waitForPodsReady")));
    } else if (version_ == Version::kV1beta2 && !Gate(kDisableWaitForPodsReadyGate, false)) {
      // Kueue 0.19's v1beta2 defaulting turns waitForPodsReady on when the section is absent.
      TOLLGATE_RETURN_IF_ERROR(
          ReadWaitForPodsReady(YAML::Node(YAML::NodeType::Map), top.Path("waitForPodsReady")));
      out_.warnings.push_back(absl::StrCat(
          top.Path("waitForPodsReady"),
          ": not set; enabled with Kueue's v1beta2 defaults (timeout 30m, blockAdmission false): "
          "an admitted workload whose pods are not reported ready (ReportPodsReady) within the "
          "timeout is evicted; featureGates.DisableWaitForPodsReady: true turns it off"));
    }
    if (const YAML::Node* n = top.Get("resources")) {
      TOLLGATE_RETURN_IF_ERROR(ReadResources(*n, top.Path("resources")));
    }
    if (const YAML::Node* n = top.Get("multiKueue"); n && !n->IsNull()) {
      TOLLGATE_RETURN_IF_ERROR(ReadMultiKueue(*n, top.Path("multiKueue")));
    }
    return absl::OkStatus();
  }

 private:
  absl::Status ReadVersion(const YAML::Node& node, absl::string_view path, bool require_kind) {
    const YAML::Node api_version = node["apiVersion"];
    if (!api_version.IsDefined() || api_version.IsNull()) {
      if (require_kind) {
        return where_.Error(manifest::Join(path, "apiVersion"),
                            absl::StrCat("required: ", kConfigV1beta1, " or ", kConfigV1beta2));
      }
    } else {
      TOLLGATE_ASSIGN_OR_RETURN(
          std::string v, manifest::Str(where_, api_version, manifest::Join(path, "apiVersion")));
      if (v == kConfigV1beta2) {
        version_ = Version::kV1beta2;
      } else if (v != kConfigV1beta1) {
        return where_.Error(manifest::Join(path, "apiVersion"),
                            absl::StrCat("unsupported \"", v, "\" (want ", kConfigV1beta1, " or ",
                                         kConfigV1beta2, ")"));
      }
      out_.api_version = v;
    }
    const YAML::Node kind = node["kind"];
    if (!kind.IsDefined() || kind.IsNull()) {
      if (require_kind)
        return where_.Error(manifest::Join(path, "kind"), "required: Configuration");
    } else {
      TOLLGATE_ASSIGN_OR_RETURN(std::string k,
                                manifest::Str(where_, kind, manifest::Join(path, "kind")));
      if (k != "Configuration") {
        return where_.Error(manifest::Join(path, "kind"),
                            absl::StrCat("expected Configuration, got \"", k, "\""));
      }
    }
    return absl::OkStatus();
  }

  // The keys of a map, each in `allowed`; an unknown one is refused by name. `hint` explains a
  // key that only the other API version has.
  absl::StatusOr<MapFields> Fields(const YAML::Node& node, std::string path,
                                   const std::vector<absl::string_view>& allowed) {
    const std::string map_path = path;
    return MapFields::Read(
        where_, node, std::move(path),
        [&](const std::string& key, const YAML::Node&,
            const std::string& key_path) -> absl::StatusOr<bool> {
          if (absl::c_linear_search(allowed, key)) return true;
          std::string hint;
          if (key == "enable" && version_ == Version::kV1beta2 &&
              (map_path.ends_with("fairSharing") || map_path.ends_with("waitForPodsReady"))) {
            hint = absl::StrCat(" (", kConfigV1beta1,
                                " only; in v1beta2 the section's presence enables it)");
          }
          return where_.Error(key_path, absl::StrCat("unknown field", hint, " (expected one of: ",
                                                     absl::StrJoin(allowed, ", "), ")"));
        });
  }
  absl::StatusOr<MapFields> Fields(const YAML::Node& node, std::string path,
                                   std::initializer_list<absl::string_view> allowed) {
    return Fields(node, std::move(path), std::vector<absl::string_view>(allowed));
  }

  // metav1.Duration: Go's syntax ("90s", "1h30m", "168h"); negative values are refused, as
  // Kueue's validation refuses them.
  absl::StatusOr<absl::Duration> Duration(const YAML::Node& node, absl::string_view path) {
    absl::Duration d;
    if (!node.IsScalar() || node.Scalar().empty() || !absl::ParseDuration(node.Scalar(), &d) ||
        d == absl::InfiniteDuration() || d == -absl::InfiniteDuration()) {
      return where_.Error(path, absl::StrCat("invalid duration ", Describe(node),
                                             " (Go syntax: units ms, s, m, h, e.g. 90s or 1h30m)"));
    }
    if (d < absl::ZeroDuration()) {
      return where_.Error(path, absl::StrCat("must not be negative, got ", Describe(node)));
    }
    return d;
  }

  absl::StatusOr<int32_t> NonNegativeInt32(const YAML::Node& node, absl::string_view path) {
    int64_t v = 0;
    if (!manifest::ScalarInt(node, 0, std::numeric_limits<int32_t>::max(), &v)) {
      return where_.Error(
          path, absl::StrCat("expected an integer from 0 to 2147483647, got ", Describe(node)));
    }
    return static_cast<int32_t>(v);
  }

  absl::StatusOr<std::vector<std::string>> StrList(const YAML::Node& node, absl::string_view path) {
    std::vector<std::string> out;
    if (node.IsNull()) return out;
    TOLLGATE_RETURN_IF_ERROR(manifest::ExpectList(where_, node, path));
    size_t i = 0;
    for (const auto& item : node) {
      TOLLGATE_ASSIGN_OR_RETURN(std::string s, manifest::Str(where_, item, Index(path, i++)));
      out.push_back(std::move(s));
    }
    return out;
  }

  bool Gate(absl::string_view name, bool default_value) const {
    auto it = out_.feature_gates.find(std::string(name));
    return it == out_.feature_gates.end() ? default_value : it->second;
  }

  // A gate Tollgate does not read is accepted at the value Tollgate behaves as (Kueue's default,
  // or either value for a gate that changes nothing Tollgate shows), so a Configuration written
  // for Kueue that spells out defaults still loads; another value would promise behaviour Tollgate
  // does not have, and a name Kueue does not know is refused as Kueue refuses it.
  absl::Status CheckGateAtWhatTollgateDoes(const std::string& gate, bool on,
                                           const std::string& gate_path) const {
    const KueueFeatureGate* known = FindKueueFeatureGate(gate);
    if (known == nullptr) {
      return where_.Error(gate_path, "unrecognized feature gate (not one of Kueue's)");
    }
    if (on == known->default_value || known->either_value_honoured) return absl::OkStatus();
    std::vector<absl::string_view> switchable = {
        kAdmissionFairSharingGate, kDisableWaitForPodsReadyGate, kQuotaCheckStrategyGate};
    for (const SchedulerGate& g : kSchedulerGates) switchable.push_back(g.name);
    std::sort(switchable.begin(), switchable.end());
    return where_.Error(
        gate_path,
        absl::StrCat("feature gate not supported by Tollgate at this value (value ",
                     on ? "true" : "false", "); Tollgate behaves as Kueue does with the gate at ",
                     "its default, ", known->default_value ? "true" : "false",
                     "; the gates it can switch are ", absl::StrJoin(switchable, ", ")));
  }

  absl::Status ReadFeatureGates(const YAML::Node& node, const std::string& path) {
    if (node.IsNull()) return absl::OkStatus();
    TOLLGATE_RETURN_IF_ERROR(manifest::ExpectMap(where_, node, path));
    for (const auto& kv : node) {
      if (!kv.first.IsScalar()) return where_.Error(path, "keys must be strings");
      const std::string& gate = kv.first.Scalar();
      const std::string gate_path = manifest::Join(path, gate);
      TOLLGATE_ASSIGN_OR_RETURN(bool on, manifest::Bool(where_, kv.second, gate_path));
      if (gate != kAdmissionFairSharingGate && gate != kDisableWaitForPodsReadyGate &&
          gate != kQuotaCheckStrategyGate && FindSchedulerGate(gate) == nullptr) {
        TOLLGATE_RETURN_IF_ERROR(CheckGateAtWhatTollgateDoes(gate, on, gate_path));
      }
      out_.feature_gates[gate] = on;
    }
    return absl::OkStatus();
  }

  absl::Status ReadSelector(const YAML::Node& node, const std::string& path,
                            core::LabelSelector& out) {
    TOLLGATE_ASSIGN_OR_RETURN(MapFields f, Fields(node, path, {"matchLabels", "matchExpressions"}));
    if (const YAML::Node* labels = f.Get("matchLabels"); labels && !labels->IsNull()) {
      TOLLGATE_RETURN_IF_ERROR(manifest::ExpectMap(where_, *labels, f.Path("matchLabels")));
      for (const auto& kv : *labels) {
        const std::string key_path = manifest::MapKey(f.Path("matchLabels"), kv.first.Scalar());
        TOLLGATE_ASSIGN_OR_RETURN(std::string value, manifest::Str(where_, kv.second, key_path));
        out.match_labels[kv.first.Scalar()] = std::move(value);
      }
    }
    if (const YAML::Node* exprs = f.Get("matchExpressions"); exprs && !exprs->IsNull()) {
      TOLLGATE_RETURN_IF_ERROR(manifest::ExpectList(where_, *exprs, f.Path("matchExpressions")));
      size_t i = 0;
      for (const auto& e : *exprs) {
        const std::string e_path = Index(f.Path("matchExpressions"), i++);
        TOLLGATE_ASSIGN_OR_RETURN(MapFields ef, Fields(e, e_path, {"key", "operator", "values"}));
        core::LabelSelectorRequirement req;
        const YAML::Node* key = ef.Get("key");
        const YAML::Node* op = ef.Get("operator");
        if (key == nullptr) return where_.Error(ef.Path("key"), "required");
        if (op == nullptr) return where_.Error(ef.Path("operator"), "required");
        TOLLGATE_ASSIGN_OR_RETURN(req.key, manifest::Str(where_, *key, ef.Path("key")));
        TOLLGATE_ASSIGN_OR_RETURN(req.op, manifest::Str(where_, *op, ef.Path("operator")));
        if (req.op != "In" && req.op != "NotIn" && req.op != "Exists" && req.op != "DoesNotExist") {
          return where_.Error(
              ef.Path("operator"),
              absl::StrCat("expected In, NotIn, Exists or DoesNotExist, got \"", req.op, "\""));
        }
        if (const YAML::Node* values = ef.Get("values")) {
          TOLLGATE_ASSIGN_OR_RETURN(req.values, StrList(*values, ef.Path("values")));
        }
        out.match_expressions.push_back(std::move(req));
      }
    }
    return absl::OkStatus();
  }

  absl::Status ReadIntegrations(const YAML::Node& node, const std::string& path) {
    std::vector<absl::string_view> allowed = {"frameworks", "externalFrameworks",
                                              "labelKeysToCopy"};
    if (version_ == Version::kV1beta1) allowed.push_back("podOptions");
    TOLLGATE_ASSIGN_OR_RETURN(MapFields f, Fields(node, path, allowed));
    if (const YAML::Node* n = f.Get("frameworks")) {
      TOLLGATE_ASSIGN_OR_RETURN(std::vector<std::string> frameworks,
                                StrList(*n, f.Path("frameworks")));
      for (size_t i = 0; i < frameworks.size(); ++i) {
        if (!absl::c_linear_search(kKueueFrameworks, frameworks[i])) {
          return where_.Error(
              Index(f.Path("frameworks"), i),
              absl::StrCat("unknown framework \"", frameworks[i],
                           "\" (Kueue knows: ", absl::StrJoin(kKueueFrameworks, ", "), ")"));
        }
      }
      // Kueue: an empty list means the default, batch/job.
      if (!frameworks.empty()) out_.adapter.frameworks = std::move(frameworks);
    }
    if (const YAML::Node* n = f.Get("externalFrameworks"); n != nullptr && !manifest::IsEmpty(*n)) {
      return where_.Error(f.Path("externalFrameworks"), "not supported by Tollgate");
    }
    // Kueue takes any strings here (a key no job can carry is never copied); so does Tollgate.
    if (const YAML::Node* n = f.Get("labelKeysToCopy")) {
      TOLLGATE_ASSIGN_OR_RETURN(out_.adapter.label_keys_to_copy,
                                StrList(*n, f.Path("labelKeysToCopy")));
    }
    if (const YAML::Node* n = f.Get("podOptions"); n != nullptr && !manifest::IsEmpty(*n)) {
      out_.warnings.push_back(absl::StrCat(
          f.Path("podOptions"),
          ": ignored: deprecated in Kueue, and tollgate-kube does not manage plain Pods"));
    }
    return absl::OkStatus();
  }

  // Kueue's ObjectRetentionPolicies (the same in both versions; no longer gated). Each duration
  // unset keeps the objects; zero deletes at once; negative is refused, as Kueue's validation
  // refuses it.
  absl::Status ReadObjectRetentionPolicies(const YAML::Node& node, const std::string& path) {
    TOLLGATE_ASSIGN_OR_RETURN(MapFields f, Fields(node, path, {"workloads"}));
    const YAML::Node* workloads = f.Get("workloads");
    if (workloads == nullptr || workloads->IsNull()) return absl::OkStatus();
    TOLLGATE_ASSIGN_OR_RETURN(MapFields w, Fields(*workloads, f.Path("workloads"),
                                                  {"afterFinished", "afterDeactivatedByKueue"}));
    if (const YAML::Node* d = w.Get("afterFinished"); d && !d->IsNull()) {
      TOLLGATE_ASSIGN_OR_RETURN(out_.scheduler.finished_workload_retention,
                                Duration(*d, w.Path("afterFinished")));
    }
    if (const YAML::Node* d = w.Get("afterDeactivatedByKueue"); d && !d->IsNull()) {
      TOLLGATE_ASSIGN_OR_RETURN(out_.adapter.after_deactivated_by_kueue,
                                Duration(*d, w.Path("afterDeactivatedByKueue")));
    }
    return absl::OkStatus();
  }

  absl::Status ReadFairSharing(const YAML::Node& node, const std::string& path) {
    core::SchedulerConfig::FairSharing& fs = out_.scheduler.fair_sharing;
    if (node.IsNull()) {
      // v1beta2: the section's presence enables it, and then its strategies are required.
      if (version_ == Version::kV1beta2) {
        return where_.Error(manifest::Join(path, "preemptionStrategies"), "required in v1beta2");
      }
      return absl::OkStatus();
    }
    std::vector<absl::string_view> allowed = {"preemptionStrategies"};
    if (version_ == Version::kV1beta1) allowed.push_back("enable");
    TOLLGATE_ASSIGN_OR_RETURN(MapFields f, Fields(node, path, allowed));
    bool enable = version_ == Version::kV1beta2;
    if (const YAML::Node* e = f.Get("enable")) {
      TOLLGATE_ASSIGN_OR_RETURN(enable, manifest::Bool(where_, *e, f.Path("enable")));
    }
    std::vector<std::string> strategies;
    if (const YAML::Node* s = f.Get("preemptionStrategies")) {
      TOLLGATE_ASSIGN_OR_RETURN(strategies, StrList(*s, f.Path("preemptionStrategies")));
    }
    if (strategies.empty()) {
      if (version_ == Version::kV1beta2) {
        return where_.Error(f.Path("preemptionStrategies"), "required in v1beta2");
      }
      // v1beta1's default when enabled.
      strategies = AllowedStrategyLists().back();
    }
    if (!absl::c_linear_search(AllowedStrategyLists(), strategies)) {
      return where_.Error(
          f.Path("preemptionStrategies"),
          absl::StrCat("unsupported list [", absl::StrJoin(strategies, ", "),
                       "]; use [LessThanOrEqualToFinalShare], [LessThanInitialShare] or "
                       "[LessThanOrEqualToFinalShare, LessThanInitialShare]"));
    }
    fs.enable = enable;
    fs.preemption_strategies.clear();
    for (const std::string& s : strategies) {
      fs.preemption_strategies.push_back(
          s == "LessThanInitialShare" ? core::FairSharingStrategy::kLessThanInitialShare
                                      : core::FairSharingStrategy::kLessThanOrEqualToFinalShare);
    }
    return absl::OkStatus();
  }

  absl::Status ReadAdmissionFairSharing(const YAML::Node& node, const std::string& path) {
    core::SchedulerConfig::AdmissionFairSharing& afs = out_.scheduler.admission_fair_sharing;
    TOLLGATE_ASSIGN_OR_RETURN(
        MapFields f,
        Fields(node, path, {"usageHalfLifeTime", "usageSamplingInterval", "resourceWeights"}));
    if (const YAML::Node* d = f.Get("usageHalfLifeTime")) {
      TOLLGATE_ASSIGN_OR_RETURN(afs.usage_half_life_time,
                                Duration(*d, f.Path("usageHalfLifeTime")));
    }
    if (const YAML::Node* d = f.Get("usageSamplingInterval")) {
      TOLLGATE_ASSIGN_OR_RETURN(afs.usage_sampling_interval,
                                Duration(*d, f.Path("usageSamplingInterval")));
      // Kueue's defaulting treats zero as unset.
      if (afs.usage_sampling_interval == absl::ZeroDuration()) {
        afs.usage_sampling_interval = absl::Minutes(5);
      }
    }
    if (const YAML::Node* w = f.Get("resourceWeights"); w && !w->IsNull()) {
      const std::string weights_path = f.Path("resourceWeights");
      TOLLGATE_RETURN_IF_ERROR(manifest::ExpectMap(where_, *w, weights_path));
      for (const auto& kv : *w) {
        if (!kv.first.IsScalar()) return where_.Error(weights_path, "keys must be strings");
        const std::string key_path = manifest::MapKey(weights_path, kv.first.Scalar());
        double weight = 0;
        if (!kv.second.IsScalar() || !absl::SimpleAtod(kv.second.Scalar(), &weight) ||
            !(weight >= 0) || weight == std::numeric_limits<double>::infinity()) {
          return where_.Error(
              key_path, absl::StrCat("expected a non-negative number, got ", Describe(kv.second)));
        }
        afs.resource_weights[kv.first.Scalar()] = weight;
      }
    }
    // Kueue: the section enables it, unless the AdmissionFairSharing gate (on by default) is off.
    afs.enable = Gate(kAdmissionFairSharingGate, true);
    if (!afs.enable) {
      out_.warnings.push_back(
          absl::StrCat(path, ": ignored: featureGates.AdmissionFairSharing is false"));
    }
    return absl::OkStatus();
  }

  absl::Status ReadWaitForPodsReady(const YAML::Node& node, const std::string& path) {
    core::SchedulerConfig::WaitForPodsReady& w = out_.scheduler.wait_for_pods_ready;
    std::vector<absl::string_view> allowed = {"timeout", "blockAdmission", "requeuingStrategy",
                                              "recoveryTimeout"};
    if (version_ == Version::kV1beta1) allowed.push_back("enable");
    TOLLGATE_ASSIGN_OR_RETURN(MapFields f, Fields(node, path, allowed));
    bool enable = version_ == Version::kV1beta2;
    if (const YAML::Node* e = f.Get("enable")) {
      TOLLGATE_ASSIGN_OR_RETURN(enable, manifest::Bool(where_, *e, f.Path("enable")));
    }
    // Kueue's defaults differ by version: v1beta1 5m and blockAdmission = enable; v1beta2 30m
    // and blockAdmission false. A zero timeout means "the default" in both.
    absl::Duration timeout =
        version_ == Version::kV1beta1 ? kV1beta1PodsReadyTimeout : kV1beta2PodsReadyTimeout;
    if (const YAML::Node* d = f.Get("timeout"); d && !d->IsNull()) {
      TOLLGATE_ASSIGN_OR_RETURN(absl::Duration t, Duration(*d, f.Path("timeout")));
      if (t != absl::ZeroDuration()) timeout = t;
    }
    bool block_admission = version_ == Version::kV1beta1 ? enable : false;
    if (const YAML::Node* b = f.Get("blockAdmission"); b && !b->IsNull()) {
      TOLLGATE_ASSIGN_OR_RETURN(block_admission,
                                manifest::Bool(where_, *b, f.Path("blockAdmission")));
    }
    absl::Duration recovery = timeout;
    if (const YAML::Node* d = f.Get("recoveryTimeout"); d && !d->IsNull()) {
      TOLLGATE_ASSIGN_OR_RETURN(recovery, Duration(*d, f.Path("recoveryTimeout")));
    }
    core::RequeuingTimestamp timestamp = core::RequeuingTimestamp::kEviction;
    int64_t base_seconds = 60;
    int64_t max_seconds = 3600;
    std::optional<int32_t> limit_count;
    if (const YAML::Node* r = f.Get("requeuingStrategy"); r && !r->IsNull()) {
      TOLLGATE_ASSIGN_OR_RETURN(MapFields rs, Fields(*r, f.Path("requeuingStrategy"),
                                                     {"timestamp", "backoffLimitCount",
                                                      "backoffBaseSeconds", "backoffMaxSeconds"}));
      if (const YAML::Node* t = rs.Get("timestamp"); t && !t->IsNull()) {
        TOLLGATE_ASSIGN_OR_RETURN(std::string ts, manifest::Str(where_, *t, rs.Path("timestamp")));
        if (ts == "Creation") {
          timestamp = core::RequeuingTimestamp::kCreation;
        } else if (ts != "Eviction") {
          return where_.Error(rs.Path("timestamp"),
                              absl::StrCat("expected Eviction or Creation, got \"", ts, "\""));
        }
      }
      if (const YAML::Node* v = rs.Get("backoffLimitCount"); v && !v->IsNull()) {
        TOLLGATE_ASSIGN_OR_RETURN(limit_count, NonNegativeInt32(*v, rs.Path("backoffLimitCount")));
      }
      if (const YAML::Node* v = rs.Get("backoffBaseSeconds"); v && !v->IsNull()) {
        TOLLGATE_ASSIGN_OR_RETURN(base_seconds,
                                  NonNegativeInt32(*v, rs.Path("backoffBaseSeconds")));
      }
      if (const YAML::Node* v = rs.Get("backoffMaxSeconds"); v && !v->IsNull()) {
        TOLLGATE_ASSIGN_OR_RETURN(max_seconds, NonNegativeInt32(*v, rs.Path("backoffMaxSeconds")));
      }
    }
    // v1beta1 with enable: false keeps everything off (Kueue drops the section), after checking
    // the values so a typo does not wait for the day someone enables it.
    if (!enable) return absl::OkStatus();
    if (Gate(kDisableWaitForPodsReadyGate, false)) {
      out_.warnings.push_back(
          absl::StrCat(path, ": ignored: featureGates.DisableWaitForPodsReady is true"));
      return absl::OkStatus();
    }
    w.enable = true;
    w.timeout = timeout;
    w.block_admission = block_admission;
    w.recovery_timeout = recovery;
    w.requeuing_timestamp = timestamp;
    w.backoff_base_seconds = base_seconds;
    w.backoff_max_seconds = max_seconds;
    w.backoff_limit_count = limit_count;
    return absl::OkStatus();
  }

  // tollgate-multikueue's settings. tollgated and tollgate-kube read past them once they are
  // valid, so one file can serve every process, as Kueue's one file serves its one controller.
  absl::Status ReadMultiKueue(const YAML::Node& node, const std::string& path) {
    core::MultiKueueSettings& mk = out_.multi_kueue;
    std::vector<absl::string_view> allowed = {"gcInterval", "origin", "workerLostTimeout",
                                              "dispatcherName", "externalFrameworks"};
    if (version_ == Version::kV1beta2) {
      allowed.push_back("clusterProfile");
      allowed.push_back("incrementalDispatcherConfig");
    }
    TOLLGATE_ASSIGN_OR_RETURN(MapFields f, Fields(node, path, allowed));
    if (const YAML::Node* n = f.Get("gcInterval"); n && !n->IsNull()) {
      TOLLGATE_ASSIGN_OR_RETURN(mk.gc_interval, Duration(*n, f.Path("gcInterval")));
    }
    if (const YAML::Node* n = f.Get("workerLostTimeout"); n && !n->IsNull()) {
      TOLLGATE_ASSIGN_OR_RETURN(mk.worker_lost_timeout, Duration(*n, f.Path("workerLostTimeout")));
    }
    // Kueue's defaulting: an empty origin or dispatcher name is the default one.
    if (const YAML::Node* n = f.Get("origin"); n && !n->IsNull()) {
      TOLLGATE_ASSIGN_OR_RETURN(std::string origin, manifest::Str(where_, *n, f.Path("origin")));
      if (absl::Status valid = core::ValidateLabelValue(origin); !valid.ok()) {
        return where_.Error(f.Path("origin"), absl::StrCat("invalid label value \"", origin,
                                                           "\": ", valid.message()));
      }
      if (!origin.empty()) mk.origin = std::move(origin);
    }
    if (const YAML::Node* n = f.Get("dispatcherName"); n && !n->IsNull()) {
      TOLLGATE_ASSIGN_OR_RETURN(std::string name,
                                manifest::Str(where_, *n, f.Path("dispatcherName")));
      if (!name.empty()) mk.dispatcher_name = std::move(name);
    }
    for (absl::string_view refused : {"externalFrameworks", "clusterProfile"}) {
      if (const YAML::Node* n = f.Get(refused); n != nullptr && !manifest::IsEmpty(*n)) {
        return where_.Error(f.Path(refused), "not supported by Tollgate");
      }
    }
    if (const YAML::Node* n = f.Get("incrementalDispatcherConfig"); n && !n->IsNull()) {
      const std::string idc_path = f.Path("incrementalDispatcherConfig");
      if (mk.dispatcher_name != core::kIncrementalDispatcherName) {
        return where_.Error(idc_path, absl::StrCat("only valid when dispatcherName is ",
                                                   core::kIncrementalDispatcherName, ", got \"",
                                                   mk.dispatcher_name, "\""));
      }
      TOLLGATE_ASSIGN_OR_RETURN(MapFields idc, Fields(*n, idc_path, {"stepSize"}));
      if (const YAML::Node* step = idc.Get("stepSize"); step && !step->IsNull()) {
        TOLLGATE_ASSIGN_OR_RETURN(int32_t size, NonNegativeInt32(*step, idc.Path("stepSize")));
        if (size < 1) {
          return where_.Error(idc.Path("stepSize"),
                              absl::StrCat("must be greater than or equal to 1, got ", size));
        }
        mk.incremental_step_size = size;
      }
    }
    return absl::OkStatus();
  }

  absl::Status ReadResources(const YAML::Node& node, const std::string& path) {
    std::vector<absl::string_view> allowed = {"excludeResourcePrefixes", "transformations",
                                              "deviceClassMappings"};
    if (version_ == Version::kV1beta2) allowed.push_back("quotaCheckStrategy");
    TOLLGATE_ASSIGN_OR_RETURN(MapFields f, Fields(node, path, allowed));
    if (const YAML::Node* n = f.Get("excludeResourcePrefixes")) {
      TOLLGATE_ASSIGN_OR_RETURN(out_.scheduler.exclude_resource_prefixes,
                                StrList(*n, f.Path("excludeResourcePrefixes")));
    }
    if (const YAML::Node* n = f.Get("deviceClassMappings");
        n != nullptr && !manifest::IsEmpty(*n)) {
      return where_.Error(f.Path("deviceClassMappings"), "not supported by Tollgate");
    }
    if (const YAML::Node* n = f.Get("transformations"); n && !n->IsNull()) {
      TOLLGATE_RETURN_IF_ERROR(ReadTransformations(*n, f.Path("transformations")));
    }
    if (const YAML::Node* n = f.Get("quotaCheckStrategy"); n && !n->IsNull()) {
      const std::string strategy_path = f.Path("quotaCheckStrategy");
      TOLLGATE_ASSIGN_OR_RETURN(std::string s, manifest::Str(where_, *n, strategy_path));
      if (!Gate(kQuotaCheckStrategyGate, true)) {
        // Kueue neither validates nor reads the field with its gate off.
        out_.warnings.push_back(absl::StrCat(strategy_path, ": ignored: featureGates.",
                                             kQuotaCheckStrategyGate,
                                             " is false, so BlockUndeclared applies"));
      } else if (s == "BlockUndeclared") {
        out_.scheduler.quota_check_strategy = core::QuotaCheckStrategy::kBlockUndeclared;
      } else if (s == "IgnoreUndeclared") {
        if (!out_.scheduler.exclude_resource_prefixes.empty()) {
          return where_.Error(strategy_path,
                              "\"IgnoreUndeclared\": excludeResourcePrefixes is not allowed when "
                              "quotaCheckStrategy is IgnoreUndeclared");
        }
        out_.scheduler.quota_check_strategy = core::QuotaCheckStrategy::kIgnoreUndeclared;
      } else {
        return where_.Error(strategy_path,
                            absl::StrCat("unsupported value \"", s,
                                         "\" (expected BlockUndeclared or IgnoreUndeclared)"));
      }
    }
    return absl::OkStatus();
  }

  // Kueue's resources.transformations: a list of {input, strategy, multiplyBy, outputs}, each
  // input once (Kueue's validation); strategy defaults to Retain.
  absl::Status ReadTransformations(const YAML::Node& node, const std::string& path) {
    TOLLGATE_RETURN_IF_ERROR(manifest::ExpectList(where_, node, path));
    std::vector<core::ResourceTransformation>& out = out_.scheduler.resource_transformations;
    size_t i = 0;
    for (const auto& item : node) {
      const std::string item_path = Index(path, i++);
      TOLLGATE_ASSIGN_OR_RETURN(
          MapFields f, Fields(item, item_path, {"input", "strategy", "multiplyBy", "outputs"}));
      core::ResourceTransformation t;
      const YAML::Node* input = f.Get("input");
      if (input == nullptr || input->IsNull()) return where_.Error(f.Path("input"), "required");
      TOLLGATE_ASSIGN_OR_RETURN(t.input, manifest::Str(where_, *input, f.Path("input")));
      if (t.input.empty()) return where_.Error(f.Path("input"), "required, got \"\"");
      for (const core::ResourceTransformation& earlier : out) {
        if (earlier.input == t.input) {
          return where_.Error(f.Path("input"),
                              absl::StrCat("duplicate value \"", t.input,
                                           "\" (each input may be transformed once)"));
        }
      }
      // Kueue's defaulting: an absent or empty strategy is Retain.
      if (const YAML::Node* n = f.Get("strategy"); n && !n->IsNull()) {
        TOLLGATE_ASSIGN_OR_RETURN(std::string strategy,
                                  manifest::Str(where_, *n, f.Path("strategy")));
        if (strategy == "Replace") {
          t.strategy = core::TransformationStrategy::kReplace;
        } else if (strategy != "Retain" && !strategy.empty()) {
          return where_.Error(f.Path("strategy"), absl::StrCat("unsupported value \"", strategy,
                                                               "\" (expected Retain or Replace)"));
        }
      }
      if (const YAML::Node* n = f.Get("multiplyBy"); n && !n->IsNull()) {
        TOLLGATE_ASSIGN_OR_RETURN(t.multiply_by, manifest::Str(where_, *n, f.Path("multiplyBy")));
      }
      if (const YAML::Node* outputs = f.Get("outputs"); outputs && !outputs->IsNull()) {
        TOLLGATE_RETURN_IF_ERROR(manifest::ExpectMap(where_, *outputs, f.Path("outputs")));
        for (const auto& kv : *outputs) {
          if (!kv.first.IsScalar()) return where_.Error(f.Path("outputs"), "keys must be strings");
          const std::string& resource = kv.first.Scalar();
          const std::string output_path = manifest::MapKey(f.Path("outputs"), resource);
          if (resource.empty()) return where_.Error(output_path, "resource name must not be empty");
          if (!kv.second.IsScalar()) {
            return where_.Error(output_path,
                                absl::StrCat("expected a quantity, got ", Describe(kv.second)));
          }
          absl::StatusOr<core::Quantity> q = core::Quantity::Parse(kv.second.Scalar());
          if (!q.ok()) {
            return where_.Error(output_path,
                                absl::StrCat("malformed quantity \"", kv.second.Scalar(), "\""));
          }
          // Outputs are added up exactly, so a factor is kept within what a request can be.
          if (!q->CheckedValue().has_value()) {
            return where_.Error(output_path,
                                absl::StrCat("out of range: \"", kv.second.Scalar(),
                                             "\" (at most 9223372036854775807 per unit of "
                                             "input, either sign)"));
          }
          t.outputs.emplace_back(resource, *std::move(q));
        }
        std::sort(t.outputs.begin(), t.outputs.end(),
                  [](const auto& a, const auto& b) { return a.first < b.first; });
      }
      out.push_back(std::move(t));
    }
    return absl::OkStatus();
  }

  const Where& where_;
  KueueConfiguration& out_;
  Version version_ = Version::kV1beta1;
};

std::string GoDuration(absl::Duration d) { return absl::FormatDuration(d); }

}  // namespace

absl::StatusOr<KueueConfiguration> ParseKueueConfigurationNode(const manifest::Where& where,
                                                               const YAML::Node& node,
                                                               absl::string_view path) {
  KueueConfiguration config;
  config.source = where.label();
  // yaml-cpp throws on misuse; keep that inside this layer.
  try {
    Parser parser(where, config);
    TOLLGATE_RETURN_IF_ERROR(parser.Parse(node, path, /*require_kind=*/false));
  } catch (const YAML::Exception& e) {
    return where.Error(path, absl::StrCat("invalid YAML: ", e.what()));
  }
  return config;
}

absl::StatusOr<KueueConfiguration> ParseKueueConfigurationText(absl::string_view text,
                                                               absl::string_view file_name) {
  TOLLGATE_ASSIGN_OR_RETURN(std::vector<YAML::Node> documents,
                            common::LoadYamlDocuments(text, file_name));
  std::vector<YAML::Node> non_empty;
  for (YAML::Node& doc : documents) {
    if (!doc.IsNull()) non_empty.push_back(doc);
  }
  if (non_empty.size() != 1) {
    return absl::InvalidArgumentError(absl::StrCat(
        file_name, ": want exactly one Configuration document, found ", non_empty.size()));
  }
  const Where where{std::string(file_name)};
  KueueConfiguration config;
  config.source = std::string(file_name);
  try {
    Parser parser(where, config);
    TOLLGATE_RETURN_IF_ERROR(parser.Parse(non_empty[0], "", /*require_kind=*/true));
  } catch (const YAML::Exception& e) {
    return where.Error("", absl::StrCat("invalid YAML: ", e.what()));
  }
  return config;
}

absl::StatusOr<KueueConfiguration> ParseKueueConfigurationFile(const std::string& path) {
  TOLLGATE_ASSIGN_OR_RETURN(std::string text, common::ReadFileToString(path));
  return ParseKueueConfigurationText(text, path);
}

absl::Status ApplyFairSharingFlag(std::optional<bool> flag, KueueConfiguration& config) {
  if (!flag.has_value()) return absl::OkStatus();
  if (*flag) {
    config.scheduler.fair_sharing.enable = true;
  } else if (config.scheduler.fair_sharing.enable) {
    return absl::InvalidArgumentError(absl::StrCat("--fair-sharing=false conflicts with ",
                                                   config.source,
                                                   ", which enables fairSharing; drop one"));
  }
  return absl::OkStatus();
}

std::string EffectiveConfigurationJson(const KueueConfiguration& config) {
  using Json = nlohmann::ordered_json;
  const core::SchedulerConfig& s = config.scheduler;
  Json out;
  out["apiVersion"] = std::string(kConfigV1beta2);
  out["kind"] = "Configuration";
  out["manageJobsWithoutQueueName"] = config.adapter.manage_jobs_without_queue_name;
  if (config.adapter.has_managed_jobs_namespace_selector) {
    const core::LabelSelector& sel = config.adapter.managed_jobs_namespace_selector;
    Json selector = Json::object();
    if (!sel.match_labels.empty()) selector["matchLabels"] = sel.match_labels;
    if (!sel.match_expressions.empty()) {
      Json exprs = Json::array();
      for (const core::LabelSelectorRequirement& r : sel.match_expressions) {
        Json e = {{"key", r.key}, {"operator", r.op}};
        if (!r.values.empty()) e["values"] = r.values;
        exprs.push_back(std::move(e));
      }
      selector["matchExpressions"] = std::move(exprs);
    }
    out["managedJobsNamespaceSelector"] = std::move(selector);
  }
  out["integrations"] = {{"frameworks", config.adapter.frameworks}};
  if (!config.adapter.label_keys_to_copy.empty()) {
    out["integrations"]["labelKeysToCopy"] = config.adapter.label_keys_to_copy;
  }
  if (s.finished_workload_retention.has_value() ||
      config.adapter.after_deactivated_by_kueue.has_value()) {
    Json workloads = Json::object();
    if (s.finished_workload_retention.has_value()) {
      workloads["afterFinished"] = GoDuration(*s.finished_workload_retention);
    }
    if (config.adapter.after_deactivated_by_kueue.has_value()) {
      workloads["afterDeactivatedByKueue"] = GoDuration(*config.adapter.after_deactivated_by_kueue);
    }
    out["objectRetentionPolicies"] = {{"workloads", std::move(workloads)}};
  }
  if (s.fair_sharing.enable) {
    Json strategies = Json::array();
    for (core::FairSharingStrategy st : s.fair_sharing.preemption_strategies) {
      strategies.push_back(st == core::FairSharingStrategy::kLessThanInitialShare
                               ? "LessThanInitialShare"
                               : "LessThanOrEqualToFinalShare");
    }
    out["fairSharing"] = {{"preemptionStrategies", std::move(strategies)}};
  }
  if (s.admission_fair_sharing.enable) {
    Json afs = {
        {"usageHalfLifeTime", GoDuration(s.admission_fair_sharing.usage_half_life_time)},
        {"usageSamplingInterval", GoDuration(s.admission_fair_sharing.usage_sampling_interval)}};
    if (!s.admission_fair_sharing.resource_weights.empty()) {
      afs["resourceWeights"] = s.admission_fair_sharing.resource_weights;
    }
    out["admissionFairSharing"] = std::move(afs);
  }
  // In v1beta2 an absent waitForPodsReady means "enabled with defaults", so "off" has to be
  // spelled with the gate for the document to read back as it is meant.
  std::map<std::string, bool> gates = config.feature_gates;
  if (s.wait_for_pods_ready.enable) {
    const core::SchedulerConfig::WaitForPodsReady& w = s.wait_for_pods_ready;
    Json strategy = {
        {"timestamp",
         w.requeuing_timestamp == core::RequeuingTimestamp::kCreation ? "Creation" : "Eviction"},
        {"backoffBaseSeconds", w.backoff_base_seconds},
        {"backoffMaxSeconds", w.backoff_max_seconds}};
    if (w.backoff_limit_count.has_value()) strategy["backoffLimitCount"] = *w.backoff_limit_count;
    out["waitForPodsReady"] = {
        {"timeout", GoDuration(w.timeout)},
        {"blockAdmission", w.block_admission},
        {"recoveryTimeout", GoDuration(w.recovery_timeout.value_or(w.timeout))},
        {"requeuingStrategy", std::move(strategy)}};
    gates.erase(std::string(kDisableWaitForPodsReadyGate));
  } else {
    gates[std::string(kDisableWaitForPodsReadyGate)] = true;
  }
  Json resources = Json::object();
  if (!s.exclude_resource_prefixes.empty()) {
    resources["excludeResourcePrefixes"] = s.exclude_resource_prefixes;
  }
  if (!s.resource_transformations.empty()) {
    Json transformations = Json::array();
    for (const core::ResourceTransformation& t : s.resource_transformations) {
      Json outputs = Json::object();
      for (const auto& [resource, factor] : t.outputs) outputs[resource] = factor.ToString();
      Json entry = {{"input", t.input},
                    {"strategy",
                     t.strategy == core::TransformationStrategy::kReplace ? "Replace" : "Retain"}};
      if (!t.multiply_by.empty()) entry["multiplyBy"] = t.multiply_by;
      entry["outputs"] = std::move(outputs);
      transformations.push_back(std::move(entry));
    }
    resources["transformations"] = std::move(transformations);
  }
  if (s.quota_check_strategy == core::QuotaCheckStrategy::kIgnoreUndeclared) {
    resources["quotaCheckStrategy"] = "IgnoreUndeclared";
  }
  if (!resources.empty()) out["resources"] = std::move(resources);
  const core::MultiKueueSettings& mk = config.multi_kueue;
  Json multi_kueue = {{"gcInterval", GoDuration(mk.gc_interval)},
                      {"origin", mk.origin},
                      {"workerLostTimeout", GoDuration(mk.worker_lost_timeout)},
                      {"dispatcherName", mk.dispatcher_name}};
  if (mk.dispatcher_name == core::kIncrementalDispatcherName) {
    multi_kueue["incrementalDispatcherConfig"] = {{"stepSize", mk.incremental_step_size}};
  }
  out["multiKueue"] = std::move(multi_kueue);
  if (!gates.empty()) out["featureGates"] = gates;
  return out.dump();
}

}  // namespace tollgate::manifest
