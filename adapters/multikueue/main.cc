// tollgate-multikueue: the MultiKueue admission check controller (docs/multicluster.md). Runs
// beside a manager tollgated and dispatches the workloads of its MultiKueue checks to worker
// tollgateds over gRPC. Logs one JSON object per line on stderr.
#include <curl/curl.h>
#include <pthread.h>
#include <signal.h>

#include <cstring>
#include <iostream>
#include <memory>
#include <string>
#include <thread>

#include "absl/algorithm/container.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "adapters/multikueue/dispatch_controller.h"
#include "adapters/multikueue/secret_reader.h"
#include "clients/cpp/connection.h"
#include "clients/cpp/tollgate_client.h"
#include "common/build_info.h"
#include "common/command_line.h"
#include "common/json_log.h"
#include "common/mutex_checks.h"
#include "common/stop_signal.h"
#include "common/stop_signals.h"
#include "core/names.h"
#include "core/real_clock.h"
#include "core/status_macros.h"
#include "services/kubeapi/cluster_config.h"
#include "services/kubeapi/kube_client.h"
#include "services/manifest/kueue_configuration.h"

namespace tollgate::multikueue {
namespace {

constexpr char kUsage[] = R"(usage: tollgate-multikueue [FLAGS]
       tollgate-multikueue version | --version

Dispatches the workloads of the manager tollgated's MultiKueue admission checks
(controllerName kueue.x-k8s.io/multikueue) to the worker tollgateds its MultiKueueClusters
name (spec.endpoint, or a kubeconfig: spec.kubeConfig with locationType Path or Secret), and
reports the clusters' and the checks' Active conditions.

Flags:
  --manager=HOST:PORT              the manager tollgated (default 127.0.0.1:50051)
  --manager-ca=FILE                CA of the manager's certificate (enables TLS)
  --manager-cert=FILE              client certificate for mTLS (with --manager-key)
  --manager-key=FILE               the client certificate's key
  --manager-token-file=FILE        bearer token for the manager
  --config=FILE                    Kueue's Configuration (v1beta1/v1beta2): its multiKueue
                                   section sets the five flags below, which may then not be
                                   given; the other sections are tollgated's and tollgate-kube's
  --dispatcher-name=NAME           Kueue's multiKueue.dispatcherName:
                                   kueue.x-k8s.io/multikueue-dispatcher-all-at-once (default),
                                   kueue.x-k8s.io/multikueue-dispatcher-incremental, or any
                                   other name for an external dispatcher
  --incremental-step-size=N        workers added per Incremental round (default 3)
  --origin=VALUE                   the kueue.x-k8s.io/multikueue-origin label of the copies
                                   (default multikueue)
  --worker-lost-timeout=DURATION   how long a Ready check waits for a lost worker (default 15m)
  --gc-interval=DURATION           between garbage collections of orphaned copies; 0 turns
                                   them off (default 1m)
  --config-sync-period=DURATION    re-read AdmissionChecks, MultiKueueConfigs and
                                   MultiKueueClusters this often (default 10s)
  --call-timeout=DURATION          deadline of each call (default 10s)
  --kubeconfig-dir=DIR             where MultiKueueClusters' kubeConfig paths must lie, symlinks
                                   resolved (Kueue's; default /etc/multikueue/kubeconfigs)
  --kubeconfig-secrets-dir=DIR     where kubeConfig Secrets (locationType: Secret) are mounted:
                                   the Secret NAME's key kubeconfig at DIR/NAME/kubeconfig, as a
                                   Secret volume mounted at DIR/NAME lays it out (absolute; default
                                   none: such clusters stay inactive with BadKubeConfig)
  --secrets-namespace=NS           read kubeConfig Secrets through the Kubernetes API from
                                   namespace NS instead (Kueue's way: its own namespace), and
                                   watch them there; the service account needs get, list and
                                   watch on secrets there
  --cluster-kubeconfig=PATH        with --secrets-namespace: the kubeconfig of the manager's own
                                   cluster (default: the pod's service account, $KUBECONFIG,
                                   ~/.kube/config)
  --worker-idle-timeout=DURATION   a worker whose watch brings nothing, not even a bookmark,
                                   this long counts as lost, as one that closed the connection
                                   (default 30s; keep it several times the workers'
                                   --watch-bookmark-interval, 10s by default; 0: never)
)";

struct Flags {
  std::string manager = "127.0.0.1:50051";
  client::ConnectionFiles manager_security;
  std::string config_file;
  // Where kubeConfig Secrets are read through the API ("": they are not).
  std::string secrets_namespace;
  std::string cluster_kubeconfig;
  DispatchController::Options options;
  bool help = false;
};

// The flags that stand for a field of Kueue's multiKueue section.
constexpr absl::string_view kSettingFlags[] = {"dispatcher-name", "incremental-step-size", "origin",
                                               "worker-lost-timeout", "gc-interval"};

absl::StatusOr<Flags> ParseFlags(int argc, char** argv) {
  Flags flags;
  core::MultiKueueSettings& settings = flags.options.settings;
  std::string setting_flag;
  TOLLGATE_RETURN_IF_ERROR(
      common::ForEachFlag(argc, argv, flags.help, [&](const common::FlagArg& flag) -> absl::Status {
        const absl::string_view name = flag.name;
        if (absl::c_linear_search(kSettingFlags, name)) setting_flag = std::string(name);
        if (name == "manager") {
          TOLLGATE_ASSIGN_OR_RETURN(flags.manager, flag.String());
        } else if (name == "manager-ca") {
          TOLLGATE_ASSIGN_OR_RETURN(flags.manager_security.ca_file, flag.String());
        } else if (name == "manager-cert") {
          TOLLGATE_ASSIGN_OR_RETURN(flags.manager_security.cert_file, flag.String());
        } else if (name == "manager-key") {
          TOLLGATE_ASSIGN_OR_RETURN(flags.manager_security.key_file, flag.String());
        } else if (name == "manager-token-file") {
          TOLLGATE_ASSIGN_OR_RETURN(flags.manager_security.token_file, flag.String());
        } else if (name == "config") {
          TOLLGATE_ASSIGN_OR_RETURN(flags.config_file, flag.String());
        } else if (name == "dispatcher-name") {
          TOLLGATE_ASSIGN_OR_RETURN(settings.dispatcher_name, flag.String());
        } else if (name == "incremental-step-size") {
          TOLLGATE_ASSIGN_OR_RETURN(std::string value, flag.String());
          if (!absl::SimpleAtoi(value, &settings.incremental_step_size) ||
              settings.incremental_step_size < 1) {
            return absl::InvalidArgumentError(absl::StrCat(
                "--incremental-step-size: want a positive integer, got \"", value, "\""));
          }
        } else if (name == "origin") {
          TOLLGATE_ASSIGN_OR_RETURN(settings.origin, flag.String());
        } else if (name == "worker-lost-timeout") {
          TOLLGATE_ASSIGN_OR_RETURN(settings.worker_lost_timeout,
                                    flag.Duration(/*allow_zero=*/false));
        } else if (name == "gc-interval") {
          TOLLGATE_ASSIGN_OR_RETURN(settings.gc_interval, flag.Duration(/*allow_zero=*/true));
        } else if (name == "config-sync-period") {
          TOLLGATE_ASSIGN_OR_RETURN(flags.options.config_sync_period,
                                    flag.Duration(/*allow_zero=*/false));
        } else if (name == "worker-idle-timeout") {
          TOLLGATE_ASSIGN_OR_RETURN(flags.options.worker_idle_timeout,
                                    flag.Duration(/*allow_zero=*/true));
        } else if (name == "kubeconfig-dir") {
          TOLLGATE_ASSIGN_OR_RETURN(flags.options.kubeconfig_dir, flag.String());
        } else if (name == "kubeconfig-secrets-dir") {
          TOLLGATE_ASSIGN_OR_RETURN(flags.options.kubeconfig_secrets_dir, flag.String());
          if (!absl::StartsWith(flags.options.kubeconfig_secrets_dir, "/")) {
            return absl::InvalidArgumentError(
                absl::StrCat("--kubeconfig-secrets-dir: must be an absolute path, got \"",
                             flags.options.kubeconfig_secrets_dir, "\""));
          }
        } else if (name == "secrets-namespace") {
          TOLLGATE_ASSIGN_OR_RETURN(flags.secrets_namespace, flag.String());
          if (absl::Status valid = core::ValidateDns1123Label(flags.secrets_namespace);
              !valid.ok()) {
            return absl::InvalidArgumentError(absl::StrCat(
                "--secrets-namespace: \"", flags.secrets_namespace, "\": ", valid.message()));
          }
        } else if (name == "cluster-kubeconfig") {
          TOLLGATE_ASSIGN_OR_RETURN(flags.cluster_kubeconfig, flag.String());
        } else if (name == "call-timeout") {
          TOLLGATE_ASSIGN_OR_RETURN(flags.options.call_timeout,
                                    flag.Duration(/*allow_zero=*/false));
        } else {
          return common::UnknownFlag(flag);
        }
        return absl::OkStatus();
      }));
  flags.options.manager_address = flags.manager;
  if (!flags.secrets_namespace.empty() && !flags.options.kubeconfig_secrets_dir.empty()) {
    return absl::InvalidArgumentError(
        "--secrets-namespace and --kubeconfig-secrets-dir both say where kubeConfig Secrets are "
        "read: give one");
  }
  if (!flags.cluster_kubeconfig.empty() && flags.secrets_namespace.empty()) {
    return absl::InvalidArgumentError(
        "--cluster-kubeconfig is used only to read Secrets: give --secrets-namespace too");
  }
  if (!flags.help && !flags.config_file.empty()) {
    // One place says each setting, as tollgate-kube refuses --frameworks beside --config.
    if (!setting_flag.empty()) {
      return absl::InvalidArgumentError(absl::StrCat(
          "--", setting_flag, " and --config both set the multiKueue settings; set it in ",
          flags.config_file, " (multiKueue)"));
    }
    TOLLGATE_ASSIGN_OR_RETURN(manifest::KueueConfiguration config,
                              manifest::ParseKueueConfigurationFile(flags.config_file));
    settings = config.multi_kueue;
  }
  return flags;
}

absl::Status Run(const Flags& flags, const common::StopSignal& stop) {
  TOLLGATE_ASSIGN_OR_RETURN(client::Credentials credentials,
                            client::LoadCredentials(flags.manager_security));
  client::ClientOptions client_options = client::AdapterClientOptions(flags.options.call_timeout);
  client_options.unreachable_hint = "is the manager tollgated running? (--manager)";
  client::TollgateClient manager(flags.manager, std::move(credentials), std::move(client_options));
  DispatchController::Options options = flags.options;
  std::unique_ptr<kubeapi::CurlKubeClient> kube;
  if (!flags.secrets_namespace.empty()) {
    TOLLGATE_ASSIGN_OR_RETURN(manifest::KubeConfig cluster,
                              kubeapi::LoadClusterConfig(flags.cluster_kubeconfig, ""));
    kubeapi::CurlKubeClient::Options kube_options;
    kube_options.user_agent = "tollgate-multikueue";
    kube_options.request_timeout = flags.options.call_timeout;
    TOLLGATE_ASSIGN_OR_RETURN(kube, kubeapi::CurlKubeClient::Create(cluster, kube_options));
    options.read_secret = ApiSecretReader(*kube, flags.secrets_namespace);
  }
  core::RealClock clock;
  common::Log("info", "starting",
              {{"manager", flags.manager},
               {"dispatcher", flags.options.settings.dispatcher_name},
               {"origin", flags.options.settings.origin},
               {"secrets_namespace", flags.secrets_namespace}});
  DispatchController controller(manager, clock, std::move(options));
  // Kueue watches the Secrets too: a rotation reconnects at once, not at the next sync.
  std::thread secret_watch;
  if (kube != nullptr) {
    secret_watch = std::thread([&] {
      WatchSecrets(
          *kube, flags.secrets_namespace, clock,
          [&controller](const std::string& secret) { controller.SecretChanged(secret); }, stop);
    });
  }
  controller.Run(stop);
  if (secret_watch.joinable()) secret_watch.join();
  return absl::OkStatus();
}

}  // namespace
}  // namespace tollgate::multikueue

int main(int argc, char** argv) {
  namespace common = tollgate::common;
  namespace mk = tollgate::multikueue;
  common::DisableMutexDeadlockDetection();
  // Before any thread exists; signal_thread below takes them through sigwait.
  const sigset_t stop_signals = common::BlockStopSignals();
  if (common::AsksForVersion(argc, argv)) {
    std::cout << common::VersionLine("tollgate-multikueue");
    return 0;
  }
  absl::StatusOr<mk::Flags> flags = mk::ParseFlags(argc, argv);
  if (!flags.ok()) {
    common::Log("error", "bad flags", {{"error", std::string(flags.status().message())}});
    std::cerr << mk::kUsage;
    return 2;
  }
  if (flags->help) {
    std::cout << mk::kUsage;
    return 0;
  }
  // Before any thread: libcurl's global state (the Kubernetes client of --secrets-namespace).
  if (curl_global_init(CURL_GLOBAL_DEFAULT) != CURLE_OK) {
    common::Log("error", "curl_global_init failed");
    return 1;
  }
  common::StopSignal stop;
  std::thread signal_thread([&] {
    int signal_number = 0;
    sigwait(&stop_signals, &signal_number);
    if (!stop.stopped()) common::Log("info", "stopping", {{"signal", strsignal(signal_number)}});
    stop.Stop();
  });
  absl::Status status = mk::Run(*flags, stop);
  if (!stop.stopped()) {
    stop.Stop();
    pthread_kill(signal_thread.native_handle(), SIGTERM);
  }
  signal_thread.join();
  curl_global_cleanup();
  if (!status.ok()) {
    common::Log("error", "tollgate-multikueue failed", {{"error", status.ToString()}});
    return 1;
  }
  common::Log("info", "stopped");
  return 0;
}
