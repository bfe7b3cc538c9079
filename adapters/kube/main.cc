// tollgate-kube: lets a Kubernetes cluster queue its Jobs, RayJobs and PyTorchJobs through
// Tollgate instead of Kueue, without changing their manifests. Logs one JSON object per line on
// stderr.
#include <curl/curl.h>
#include <pthread.h>
#include <signal.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>
#include <iostream>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "adapters/kube/job_controller.h"
#include "adapters/kube/kube_adapter.h"
#include "adapters/kube/pod_controller.h"
#include "adapters/kube/provisioning_controller.h"
#include "adapters/kube/topology_controller.h"
#include "clients/cpp/grpc_admission_client.h"
#include "clients/cpp/grpc_inventory_client.h"
#include "common/build_info.h"
#include "common/command_line.h"
#include "common/json_log.h"
#include "common/mutex_checks.h"
#include "common/stop_signal.h"
#include "common/stop_signals.h"
#include "core/real_clock.h"
#include "core/status_macros.h"
#include "core/types.h"
#include "services/kubeapi/cluster_config.h"
#include "services/kubeapi/kube_client.h"
#include "services/manifest/job_kinds.h"
#include "services/manifest/kube_config.h"
#include "services/manifest/kueue_configuration.h"

namespace tollgate::kube {
namespace {

constexpr char kUsage[] = R"(usage: tollgate-kube [FLAGS]
       tollgate-kube version | --version

Where the cluster is (first that applies): --kubeconfig; the pod's service account when
KUBERNETES_SERVICE_HOST is set; $KUBECONFIG; ~/.kube/config.

Flags:
  --tollgate=HOST:PORT               tollgated's gRPC address (default 127.0.0.1:50051)
  --tollgate-ca=FILE                 CA of tollgated's certificate (enables TLS)
  --tollgate-cert=FILE               client certificate for mTLS (with --tollgate-key)
  --tollgate-key=FILE                the client certificate's key
  --tollgate-token-file=FILE         bearer token for tollgated (e.g. a mounted Secret)
  --kubeconfig=PATH                  kubeconfig file (run outside the cluster)
  --context=NAME                     kubeconfig context (default: current-context)
  --config=FILE                      Kueue's Configuration (v1beta1/v1beta2): integrations.frameworks
                                     and labelKeysToCopy, manageJobsWithoutQueueName,
                                     managedJobsNamespaceSelector, objectRetentionPolicies'
                                     afterDeactivatedByKueue, featureGates' PartialAdmission
                                     (then the four flags below must not be given)
  --frameworks=LIST                  the kinds to manage, by Kueue's framework names
                                     (integrations.frameworks): batch/job (the default),
                                     jobset.x-k8s.io/jobset, kubeflow.org/mpijob,
                                     kubeflow.org/pytorchjob, kubeflow.org/tfjob,
                                     kubeflow.org/jaxjob, kubeflow.org/paddlejob,
                                     kubeflow.org/xgboostjob, trainer.kubeflow.org/trainjob,
                                     ray.io/rayjob, ray.io/raycluster, ray.io/rayservice,
                                     sparkoperator.k8s.io/sparkapplication,
                                     workload.codeflare.dev/appwrapper, and the gated
                                     kinds pod, deployment, statefulset and
                                     leaderworkerset.x-k8s.io/leaderworkerset
  --enable-jobs=BOOL                 also (or not) batch/job (default true)
  --enable-rayjobs=BOOL              also ray.io/rayjob (default false)
  --enable-pytorchjobs=BOOL          also kubeflow.org/pytorchjob (default false)
  --manage-jobs-without-queue-name   also manage unlabeled jobs in namespaces that have a
                                     LocalQueue named "default"
  --sync-namespaces=BOOL             mirror Namespaces and their labels into Tollgate (default true)
  --state-file=PATH                  keep the last Tollgate revision seen here
  --health-file=PATH                 rewrite every second: "synced" or "syncing" (for probes)
  --workers=N                        concurrent reconciles (default 2)
  --resync-period=DURATION           re-examine every object this often (default 5m)
  --watch-timeout=DURATION           server-side timeout of each Kubernetes watch (default 5m)
  --call-timeout=DURATION            deadline of each tollgated call (default 10s)
  --instance=NAME                    reportingInstance of Events (default: host name)
  --enable-provisioning-requests=BOOL
                                     run the kueue.x-k8s.io/provisioning-request admission
                                     check: cluster-autoscaler ProvisioningRequests per
                                     workload (default true; docs/admission-checks.md)
  --provisioning-check-sync-period=DURATION
                                     re-read that controller's AdmissionChecks and their
                                     ProvisioningRequestConfigs this often (default 10s)
  --enable-topology=BOOL             topology-aware scheduling: feed tollgated's node
                                     inventory from Nodes and from the pods it does not place,
                                     and release gated pods onto their domains (default false:
                                     it watches every Node and Pod; docs/topology.md)
  --topology-resync-period=DURATION  flush the inventory and look at gated pods again this
                                     often (default 10s)
)";

struct Flags {
  std::string tollgate = "127.0.0.1:50051";
  client::ConnectionFiles tollgate_security;
  std::string kubeconfig;
  std::string context;
  bool jobs = true;
  bool rayjobs = false;
  bool pytorchjobs = false;
  // --frameworks, or integrations.frameworks of --config: every kind named here is managed.
  std::vector<std::string> frameworks;
  // The gated kinds (PodController): not rows of the kinds table (docs/pod-integrations.md).
  bool pods = false;
  bool deployments = false;
  bool statefulsets = false;
  bool leaderworkersets = false;
  bool manage_without_queue_name = false;
  std::optional<core::LabelSelector> managed_namespaces;
  // From --config only: integrations.labelKeysToCopy,
  // objectRetentionPolicies.workloads.afterDeactivatedByKueue, the PartialAdmission,
  // ReclaimablePods and AdmissionGatedBy gates.
  std::vector<std::string> label_keys_to_copy;
  std::optional<absl::Duration> after_deactivated_by_kueue;
  bool partial_admission = true;
  bool reclaimable_pods = true;
  bool admission_gated_by = true;
  std::string config_file;
  bool sync_namespaces = true;
  std::string state_file;
  std::string health_file;
  int workers = 2;
  absl::Duration resync_period = absl::Minutes(5);
  absl::Duration watch_timeout = absl::Minutes(5);
  absl::Duration call_timeout = absl::Seconds(10);
  std::string instance;
  bool provisioning = true;
  absl::Duration provisioning_sync_period = absl::Seconds(10);
  bool topology = false;
  absl::Duration topology_resync_period = absl::Seconds(10);
  bool help = false;
};

// The adapter's part of Kueue's Configuration (services/manifest/kueue_configuration.h, the
// parser tollgated uses): which kinds to manage and which unlabelled jobs.
// Sets the flag of a gated kind (PodController) named by its Kueue framework name; false for any
// other name.
bool EnableGatedFramework(absl::string_view framework, Flags& flags) {
  if (framework == "pod") {
    flags.pods = true;
  } else if (framework == "deployment") {
    flags.deployments = true;
  } else if (framework == "statefulset") {
    flags.statefulsets = true;
  } else if (framework == "leaderworkerset.x-k8s.io/leaderworkerset") {
    flags.leaderworkersets = true;
  } else {
    return false;
  }
  return true;
}

absl::Status ApplyConfiguration(Flags& flags) {
  TOLLGATE_ASSIGN_OR_RETURN(manifest::KueueConfiguration config,
                            manifest::ParseKueueConfigurationFile(flags.config_file));
  flags.jobs = flags.rayjobs = flags.pytorchjobs = false;
  std::vector<std::string> unsupported;
  for (const std::string& framework : config.adapter.frameworks) {
    if (EnableGatedFramework(framework, flags)) continue;
    if (manifest::FindJobKindByFramework(framework) != nullptr) {
      flags.frameworks.push_back(framework);
    } else {
      unsupported.push_back(framework);
    }
  }
  if (!unsupported.empty()) {
    common::Log("warning", "integrations.frameworks not supported by tollgate-kube; not managed",
                {{"config", flags.config_file}, {"frameworks", absl::StrJoin(unsupported, ",")}});
  }
  flags.manage_without_queue_name = config.adapter.manage_jobs_without_queue_name;
  if (config.adapter.has_managed_jobs_namespace_selector) {
    flags.managed_namespaces = config.adapter.managed_jobs_namespace_selector;
  } else {
    // Kueue's default: every namespace but the system's and the controller's own.
    core::LabelSelector selector;
    selector.match_expressions.push_back(core::LabelSelectorRequirement{
        "kubernetes.io/metadata.name", "NotIn", {"kube-system", "kueue-system"}});
    flags.managed_namespaces = std::move(selector);
  }
  flags.label_keys_to_copy = config.adapter.label_keys_to_copy;
  flags.after_deactivated_by_kueue = config.adapter.after_deactivated_by_kueue;
  flags.partial_admission = config.scheduler.partial_admission;
  flags.reclaimable_pods = config.scheduler.reclaimable_pods;
  flags.admission_gated_by = config.scheduler.admission_gated_by;
  // The scheduler's fields (fairSharing, waitForPodsReady, objectRetentionPolicies'
  // afterFinished, ...) are tollgated's: the same file goes to `tollgated --config`.
  return absl::OkStatus();
}

absl::StatusOr<Flags> ParseFlags(int argc, char** argv) {
  Flags flags;
  std::string integration_flag;
  bool jobs_flag_given = false;
  TOLLGATE_RETURN_IF_ERROR(
      common::ForEachFlag(argc, argv, flags.help, [&](const common::FlagArg& flag) -> absl::Status {
        const absl::string_view name = flag.name;
        if (name == "tollgate") {
          TOLLGATE_ASSIGN_OR_RETURN(flags.tollgate, flag.String());
        } else if (name == "tollgate-ca") {
          TOLLGATE_ASSIGN_OR_RETURN(flags.tollgate_security.ca_file, flag.String());
        } else if (name == "tollgate-cert") {
          TOLLGATE_ASSIGN_OR_RETURN(flags.tollgate_security.cert_file, flag.String());
        } else if (name == "tollgate-key") {
          TOLLGATE_ASSIGN_OR_RETURN(flags.tollgate_security.key_file, flag.String());
        } else if (name == "tollgate-token-file") {
          TOLLGATE_ASSIGN_OR_RETURN(flags.tollgate_security.token_file, flag.String());
        } else if (name == "kubeconfig") {
          TOLLGATE_ASSIGN_OR_RETURN(flags.kubeconfig, flag.String());
        } else if (name == "context") {
          TOLLGATE_ASSIGN_OR_RETURN(flags.context, flag.String());
        } else if (name == "config") {
          TOLLGATE_ASSIGN_OR_RETURN(flags.config_file, flag.String());
        } else if (name == "frameworks") {
          TOLLGATE_ASSIGN_OR_RETURN(std::string value, flag.String());
          for (absl::string_view f : absl::StrSplit(value, ',', absl::SkipWhitespace())) {
            if (EnableGatedFramework(f, flags)) continue;
            if (manifest::FindJobKindByFramework(f) == nullptr) {
              return absl::InvalidArgumentError(absl::StrCat(
                  "--frameworks: unknown framework \"", f, "\"; tollgate-kube manages ",
                  manifest::FrameworkList(), ", pod, deployment, statefulset, ",
                  "leaderworkerset.x-k8s.io/leaderworkerset"));
            }
            flags.frameworks.push_back(std::string(f));
          }
          // The list replaces the default (batch/job), as Kueue's integrations.frameworks does.
          if (!jobs_flag_given) flags.jobs = false;
        } else if (name == "enable-jobs") {
          TOLLGATE_ASSIGN_OR_RETURN(flags.jobs, flag.Bool());
          jobs_flag_given = true;
        } else if (name == "enable-rayjobs") {
          TOLLGATE_ASSIGN_OR_RETURN(flags.rayjobs, flag.Bool());
        } else if (name == "enable-pytorchjobs") {
          TOLLGATE_ASSIGN_OR_RETURN(flags.pytorchjobs, flag.Bool());
        } else if (name == "manage-jobs-without-queue-name") {
          TOLLGATE_ASSIGN_OR_RETURN(flags.manage_without_queue_name, flag.Bool());
        } else if (name == "sync-namespaces") {
          TOLLGATE_ASSIGN_OR_RETURN(flags.sync_namespaces, flag.Bool());
        } else if (name == "state-file") {
          TOLLGATE_ASSIGN_OR_RETURN(flags.state_file, flag.String());
        } else if (name == "health-file") {
          TOLLGATE_ASSIGN_OR_RETURN(flags.health_file, flag.String());
        } else if (name == "workers") {
          TOLLGATE_ASSIGN_OR_RETURN(std::string value, flag.String());
          if (!absl::SimpleAtoi(value, &flags.workers) || flags.workers < 1 || flags.workers > 64) {
            return absl::InvalidArgumentError(
                absl::StrCat("--workers: want 1..64, got \"", value, "\""));
          }
        } else if (name == "resync-period") {
          TOLLGATE_ASSIGN_OR_RETURN(flags.resync_period, flag.Duration(/*allow_zero=*/false));
        } else if (name == "watch-timeout") {
          TOLLGATE_ASSIGN_OR_RETURN(flags.watch_timeout, flag.Duration(/*allow_zero=*/false));
        } else if (name == "call-timeout") {
          TOLLGATE_ASSIGN_OR_RETURN(flags.call_timeout, flag.Duration(/*allow_zero=*/false));
        } else if (name == "instance") {
          TOLLGATE_ASSIGN_OR_RETURN(flags.instance, flag.String());
        } else if (name == "enable-provisioning-requests") {
          TOLLGATE_ASSIGN_OR_RETURN(flags.provisioning, flag.Bool());
        } else if (name == "provisioning-check-sync-period") {
          TOLLGATE_ASSIGN_OR_RETURN(flags.provisioning_sync_period,
                                    flag.Duration(/*allow_zero=*/false));
        } else if (name == "enable-topology") {
          TOLLGATE_ASSIGN_OR_RETURN(flags.topology, flag.Bool());
        } else if (name == "topology-resync-period") {
          TOLLGATE_ASSIGN_OR_RETURN(flags.topology_resync_period,
                                    flag.Duration(/*allow_zero=*/false));
        } else {
          return common::UnknownFlag(flag);
        }
        if (name == "enable-jobs" || name == "enable-rayjobs" || name == "enable-pytorchjobs" ||
            name == "frameworks" || name == "manage-jobs-without-queue-name") {
          integration_flag = std::string(name);
        }
        return absl::OkStatus();
      }));
  if (!flags.help && !flags.config_file.empty()) {
    // One source for what is managed: the file, like Kueue's.
    if (!integration_flag.empty()) {
      return absl::InvalidArgumentError(absl::StrCat(
          "--", integration_flag, " and --config both say what to manage; set it in ",
          flags.config_file, " (integrations.frameworks, manageJobsWithoutQueueName)"));
    }
    TOLLGATE_RETURN_IF_ERROR(ApplyConfiguration(flags));
  }
  if (!flags.help && !flags.jobs && !flags.rayjobs && !flags.pytorchjobs &&
      flags.frameworks.empty() && !flags.pods && !flags.deployments && !flags.statefulsets &&
      !flags.leaderworkersets) {
    return absl::InvalidArgumentError("every integration is disabled; enable at least one");
  }
  return flags;
}

absl::Status Run(const Flags& flags, const common::StopSignal& stop) {
  TOLLGATE_ASSIGN_OR_RETURN(manifest::KubeConfig config,
                            kubeapi::LoadClusterConfig(flags.kubeconfig, flags.context));
  kubeapi::CurlKubeClient::Options kube_options;
  kube_options.watch_timeout = flags.watch_timeout;
  TOLLGATE_ASSIGN_OR_RETURN(std::unique_ptr<kubeapi::CurlKubeClient> kube,
                            kubeapi::CurlKubeClient::Create(config, kube_options));
  TOLLGATE_ASSIGN_OR_RETURN(std::unique_ptr<client::GrpcAdmissionClient> admission,
                            client::GrpcAdmissionClient::Connect(flags.tollgate, flags.call_timeout,
                                                                 flags.tollgate_security));
  std::unique_ptr<client::GrpcInventoryClient> inventory;
  if (flags.topology) {
    TOLLGATE_ASSIGN_OR_RETURN(
        inventory, client::GrpcInventoryClient::Connect(flags.tollgate, flags.call_timeout,
                                                        flags.tollgate_security));
  }

  // The enabled rows of the kinds table, in its order.
  std::set<std::string> enabled(flags.frameworks.begin(), flags.frameworks.end());
  if (flags.jobs) enabled.insert("batch/job");
  if (flags.rayjobs) enabled.insert("ray.io/rayjob");
  if (flags.pytorchjobs) enabled.insert("kubeflow.org/pytorchjob");
  std::vector<const manifest::JobKindTranslator*> kinds;
  for (const manifest::JobKindTranslator* t : manifest::AllJobKinds()) {
    if (enabled.count(t->traits().framework) > 0) kinds.push_back(t);
  }

  JobController::Options controller_options;
  controller_options.manage_jobs_without_queue_name = flags.manage_without_queue_name;
  controller_options.managed_jobs_namespace_selector = flags.managed_namespaces;
  controller_options.sync_namespaces = flags.sync_namespaces;
  controller_options.label_keys_to_copy = flags.label_keys_to_copy;
  controller_options.partial_admission = flags.partial_admission;
  controller_options.reclaimable_pods = flags.reclaimable_pods;
  controller_options.admission_gated_by = flags.admission_gated_by;
  controller_options.after_deactivated_by_kueue = flags.after_deactivated_by_kueue;
  controller_options.instance = flags.instance;
  if (controller_options.instance.empty()) {
    char host[256] = {0};
    if (gethostname(host, sizeof(host) - 1) == 0) controller_options.instance = host;
  }
  // A worker creates the object of a MultiKueue copy only of a kind its PodController runs.
  if (flags.pods) controller_options.multikueue_gated_kinds.insert("Pod");
  if (flags.statefulsets) controller_options.multikueue_gated_kinds.insert("StatefulSet");
  if (flags.leaderworkersets) {
    controller_options.multikueue_gated_kinds.insert("LeaderWorkerSet");
  }
  core::RealClock clock;
  JobController controller(*kube, *admission, clock, kinds, controller_options);
  PodController::Options pod_options;
  pod_options.pods = flags.pods;
  pod_options.deployments = flags.deployments;
  pod_options.statefulsets = flags.statefulsets;
  pod_options.leaderworkersets = flags.leaderworkersets;
  pod_options.topology = flags.topology;
  pod_options.manage_jobs_without_queue_name = flags.manage_without_queue_name;
  pod_options.managed_jobs_namespace_selector = flags.managed_namespaces;
  pod_options.label_keys_to_copy = flags.label_keys_to_copy;
  pod_options.after_deactivated_by_kueue = flags.after_deactivated_by_kueue;
  pod_options.reclaimable_pods = flags.reclaimable_pods;
  pod_options.admission_gated_by = flags.admission_gated_by;
  pod_options.instance = controller_options.instance;
  PodController pods(*kube, *admission, clock, pod_options);

  KubeAdapter::Options adapter_options;
  adapter_options.workers = flags.workers;
  adapter_options.resync_period = flags.resync_period;
  adapter_options.state_file = flags.state_file;
  adapter_options.health_file = flags.health_file;
  adapter_options.watch_namespaces = flags.sync_namespaces;
  KubeAdapter adapter(*kube, *admission, controller, clock, adapter_options, &pods);

  std::vector<std::string> names;
  for (const manifest::JobKindTranslator* k : kinds) names.push_back(k->resource().plural);
  for (const manifest::ResourceKind* k : pods.WatchedResources()) names.push_back(k->plural);
  common::Log("info", "starting",
              {{"server", config.server},
               {"tollgate", flags.tollgate},
               {"kinds", absl::StrJoin(names, ",")}});
  std::thread provisioning_thread;
  std::optional<ProvisioningController> provisioning;
  if (flags.provisioning) {
    ProvisioningController::Options provisioning_options;
    provisioning_options.check_sync_period = flags.provisioning_sync_period;
    provisioning.emplace(*kube, *admission, controller, clock, provisioning_options);
    provisioning_thread = std::thread([&] { provisioning->Run(stop); });
  }
  std::thread topology_thread;
  std::optional<TopologyController> topology;
  if (flags.topology) {
    TopologyController::Options topology_options;
    topology_options.resync_period = flags.topology_resync_period;
    topology_options.events.instance = controller_options.instance;
    topology.emplace(*kube, *admission, *inventory, clock, topology_options);
    topology_thread = std::thread([&] { topology->Run(stop); });
  }
  adapter.Run(stop);
  if (provisioning_thread.joinable()) provisioning_thread.join();
  if (topology_thread.joinable()) topology_thread.join();
  return absl::OkStatus();
}

}  // namespace
}  // namespace tollgate::kube

int main(int argc, char** argv) {
  namespace common = tollgate::common;
  namespace kube = tollgate::kube;
  common::DisableMutexDeadlockDetection();
  // Before any thread exists; signal_thread below takes them through sigwait.
  const sigset_t stop_signals = common::BlockStopSignals();

  if (tollgate::common::AsksForVersion(argc, argv)) {
    std::cout << tollgate::common::VersionLine("tollgate-kube");
    return 0;
  }
  absl::StatusOr<kube::Flags> flags = kube::ParseFlags(argc, argv);
  if (!flags.ok()) {
    common::Log("error", "bad flags", {{"error", std::string(flags.status().message())}});
    std::cerr << kube::kUsage;
    return 2;
  }
  if (flags->help) {
    std::cout << kube::kUsage;
    return 0;
  }
  if (curl_global_init(CURL_GLOBAL_DEFAULT) != CURLE_OK) {
    common::Log("error", "curl_global_init failed");
    return 1;
  }
  tollgate::common::StopSignal stop;
  std::thread signal_thread([&] {
    int signal_number = 0;
    sigwait(&stop_signals, &signal_number);
    if (!stop.stopped()) common::Log("info", "stopping", {{"signal", strsignal(signal_number)}});
    stop.Stop();
  });
  absl::Status status = kube::Run(*flags, stop);
  if (!stop.stopped()) {
    // Run returned on its own (an error): wake the signal thread so it can be joined.
    stop.Stop();
    pthread_kill(signal_thread.native_handle(), SIGTERM);
  }
  signal_thread.join();
  curl_global_cleanup();
  if (!status.ok()) {
    common::Log("error", "tollgate-kube failed", {{"error", status.ToString()}});
    return 1;
  }
  common::Log("info", "stopped");
  return 0;
}
