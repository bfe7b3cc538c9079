// tollgated: the Tollgate admission service. Serves tollgate.v1's AdmissionService,
// ConfigService and VisibilityService over gRPC on a RocksDB store, with gRPC reflection and the
// standard health service. Logs one JSON object per line on stderr.
#include <pthread.h>
#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <initializer_list>
#include <iostream>
#include <memory>
#include <optional>
#include <sstream>
#include <string>
#include <system_error>
#include <utility>
#include <variant>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/strings/string_view.h"
#include "absl/strings/strip.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "cmd/tollgated/observability.h"
#include "cmd/tollgated/replica.h"
#include "cmd/tollgated/server_assembly.h"
#include "cmd/tollgated/server_security.h"
#include "common/atomic_file.h"
#include "common/build_info.h"
#include "common/command_line.h"
#include "common/file_util.h"
#include "common/host_port.h"
#include "common/json_log.h"
#include "common/mutex_checks.h"
#include "common/stop_signals.h"
#include "core/error_text.h"
#include "core/names.h"
#include "core/real_clock.h"
#include "core/scheduler_config.h"
#include "core/status_macros.h"
#include "google/protobuf/util/message_differencer.h"
#include "grpc/support/log.h"
#include "grpcpp/ext/proto_server_reflection_plugin.h"
#include "grpcpp/grpcpp.h"
#include "grpcpp/health_check_service_interface.h"
#include "services/engine/admission_executor.h"
#include "services/engine/config_objects.h"
#include "services/engine/tollgate_api.h"
#include "services/ha/leader_election.h"
#include "services/manifest/kueue_configuration.h"
#include "services/manifest/manifest_input.h"
#include "services/manifest/manifest_parser.h"
#include "services/rpc/access_gate.h"
#include "services/rpc/watch_hub.h"
#include "storage/etcd_store.h"
#include "storage/rocksdb_store.h"

namespace tollgate {
namespace {

constexpr char kUsage[] = R"(usage: tollgated [FLAGS]
       tollgated backup --data-dir=PATH --to=DIR      (tollgated stopped; DIR must not exist)
       tollgated restore --from=DIR --data-dir=PATH   (PATH absent or empty)
       tollgated version | --version

Flags:
  --listen=HOST:PORT          address to serve on (default 127.0.0.1:50051; port 0 picks one)
  --data-dir=PATH             RocksDB state directory, created if missing (required)
  --manifests=PATH[,PATH...]  Kueue manifests applied at start, as `tollgate apply -f` reads them
                              (files, kind: List, folders); Workloads in them are submitted
  --evictions-need-ack        a preempted workload keeps its quota until ReportStopped
  --eviction-grace=DURATION   ... or until this long has passed (default 2m)
  --config=FILE               Kueue's Configuration (config.kueue.x-k8s.io/v1beta1 or v1beta2):
                              fairSharing, admissionFairSharing, waitForPodsReady, resources;
                              read at start (a change takes a restart; docs/configuration.md)
  --cost-attribution-labels=KEY[,KEY...]  LocalQueue label keys (e.g. team,cost-center) whose
                              values an admission copies onto the workload's pods, so cost
                              tools can charge them (docs/pod-integrations.md)
  --fair-sharing              enable fair sharing between ClusterQueues of a cohort (with
                              --config: adds to the file; =false where the file enables it is
                              refused)
  --port-file=PATH            write the bound port here once serving (atomically)
  --shutdown-grace=DURATION   how long in-flight calls may finish on SIGTERM (default 10s)
  --metrics-listen=HOST:PORT  serve Prometheus /metrics and the web dashboard here (default
                              off; a non-loopback host needs --insecure)
  --metrics-port-file=PATH    write the bound metrics port here once serving (atomically)
  --accept-data-loss          start even if recovery lost acknowledged revisions (logs what was
                              lost and bumps the store epoch so watchers re-list)
  --change-log-retention=N    change-log revisions kept for Watch (default 10000; 0 keeps all);
                              a Watch from an older revision gets OUT_OF_RANGE and re-lists
  --change-log-retention-age=DURATION  and none older than this (default 24h; 0 keeps any
                              age); history is bounded by both
  --watch-bookmark-interval=DURATION  an idle Watch stream gets a BOOKMARK this often (default
                              10s); watchers that tell a silent server from an idle one
                              (tollgate-multikueue's --worker-idle-timeout) count on it

Replicated on etcd (docs/ha.md):
  --store=rocksdb|etcd        where the state lives (default rocksdb, in --data-dir)
  --etcd-endpoints=H:P[,...]  etcd members' client addresses (tried in turn when one fails)
  --etcd-ca=FILE --etcd-cert=FILE --etcd-key=FILE   TLS (and client certificate) to etcd
  --etcd-user=NAME --etcd-password-file=FILE        etcd user/password authentication (the
                              file holds the password; a trailing newline is ignored)
  --etcd-prefix=PREFIX        key prefix of this Tollgate in etcd (default /tollgate/)
  --lease-ttl=DURATION        leader lease; a dead leader is replaced within about this long
                              (default 10s, whole seconds, at least 1s)
  --warm-followers=BOOL       followers keep the state in memory, following etcd, so a
                              promotion needs no reload (default true)
  --advertise=HOST:PORT       the address other replicas send clients to (default: the bound
                              --listen address)
)";

struct Flags {
  std::string listen = "127.0.0.1:50051";
  std::string data_dir;
  std::vector<std::string> manifests;
  bool evictions_need_ack = false;
  absl::Duration eviction_grace = absl::Minutes(2);
  std::vector<std::string> cost_attribution_labels;
  std::string config_file;
  // Unset when the flag is not given, so it can be told apart from an explicit false.
  std::optional<bool> fair_sharing;
  std::string port_file;
  absl::Duration shutdown_grace = absl::Seconds(10);
  std::string metrics_listen;
  std::string metrics_port_file;
  SecurityFlags security;
  bool accept_data_loss = false;
  int64_t change_log_retention = 10000;
  absl::Duration change_log_retention_age = absl::Hours(24);
  absl::Duration watch_bookmark_interval = absl::Seconds(10);
  // "rocksdb" or "etcd".
  std::string store = "rocksdb";
  std::string etcd_endpoints;
  std::string etcd_ca;
  std::string etcd_cert;
  std::string etcd_key;
  std::string etcd_user;
  std::string etcd_password_file;
  std::string etcd_prefix = "/tollgate/";
  absl::Duration lease_ttl = absl::Seconds(10);
  // Followers keep a warm copy of the state (docs/ha.md); off: a promotion loads from etcd.
  bool warm_followers = true;
  std::string advertise;
  // "" (serve), "backup" or "restore".
  std::string command;
  std::string backup_to;
  std::string restore_from;
  bool help = false;
};

// --- Logging -----------------------------------------------------------------------------------

using common::Log;

// gRPC's own diagnostics, as JSON lines like ours rather than in gpr's format.
void LogFromGrpc(gpr_log_func_args* args) {
  const absl::string_view level = args->severity == GPR_LOG_SEVERITY_ERROR  ? "error"
                                  : args->severity == GPR_LOG_SEVERITY_INFO ? "info"
                                                                            : "debug";
  Log(level, args->message,
      {{"source", "grpc"}, {"file", absl::StrCat(args->file, ":", args->line)}});
}

// --- Flags -------------------------------------------------------------------------------------

absl::StatusOr<Flags> ParseFlags(int argc, char** argv) {
  Flags flags;
  if (argc > 1 && argv[1][0] != '-') {
    flags.command = argv[1];
    if (flags.command != "backup" && flags.command != "restore") {
      return absl::InvalidArgumentError(
          absl::StrCat("unknown command \"", flags.command, "\" (want backup or restore)"));
    }
    argv[1] = argv[0];
    ++argv;
    --argc;
  }
  TOLLGATE_RETURN_IF_ERROR(
      common::ForEachFlag(argc, argv, flags.help, [&](const common::FlagArg& flag) -> absl::Status {
        if (flag.name == "listen") {
          TOLLGATE_ASSIGN_OR_RETURN(flags.listen, flag.String());
        } else if (flag.name == "data-dir") {
          TOLLGATE_ASSIGN_OR_RETURN(flags.data_dir, flag.String());
        } else if (flag.name == "manifests") {
          TOLLGATE_ASSIGN_OR_RETURN(std::string files, flag.String());
          for (absl::string_view file : absl::StrSplit(files, ',', absl::SkipEmpty())) {
            flags.manifests.emplace_back(file);
          }
        } else if (flag.name == "evictions-need-ack") {
          TOLLGATE_ASSIGN_OR_RETURN(flags.evictions_need_ack, flag.Bool());
        } else if (flag.name == "cost-attribution-labels") {
          TOLLGATE_ASSIGN_OR_RETURN(std::string keys, flag.String());
          for (absl::string_view key : absl::StrSplit(keys, ',', absl::SkipEmpty())) {
            if (absl::Status valid = core::ValidateQualifiedName(key); !valid.ok()) {
              return absl::InvalidArgumentError(
                  absl::StrCat("--cost-attribution-labels: ", core::QuoteValue(key),
                               " is not a label key: ", valid.message()));
            }
            flags.cost_attribution_labels.emplace_back(key);
          }
        } else if (flag.name == "fair-sharing") {
          TOLLGATE_ASSIGN_OR_RETURN(flags.fair_sharing, flag.Bool());
        } else if (flag.name == "config") {
          TOLLGATE_ASSIGN_OR_RETURN(flags.config_file, flag.String());
        } else if (flag.name == "eviction-grace") {
          TOLLGATE_ASSIGN_OR_RETURN(flags.eviction_grace, flag.Duration(/*allow_zero=*/true));
        } else if (flag.name == "shutdown-grace") {
          TOLLGATE_ASSIGN_OR_RETURN(flags.shutdown_grace, flag.Duration(/*allow_zero=*/true));
        } else if (flag.name == "port-file") {
          TOLLGATE_ASSIGN_OR_RETURN(flags.port_file, flag.String());
        } else if (flag.name == "metrics-listen") {
          TOLLGATE_ASSIGN_OR_RETURN(flags.metrics_listen, flag.String());
        } else if (flag.name == "metrics-port-file") {
          TOLLGATE_ASSIGN_OR_RETURN(flags.metrics_port_file, flag.String());
        } else if (flag.name == "accept-data-loss") {
          TOLLGATE_ASSIGN_OR_RETURN(flags.accept_data_loss, flag.Bool());
        } else if (flag.name == "change-log-retention") {
          TOLLGATE_ASSIGN_OR_RETURN(std::string value, flag.String());
          if (!absl::SimpleAtoi(value, &flags.change_log_retention) ||
              flags.change_log_retention < 0) {
            return absl::InvalidArgumentError(absl::StrCat(
                "--change-log-retention: want a revision count >= 0, got \"", value, "\""));
          }
        } else if (flag.name == "change-log-retention-age") {
          TOLLGATE_ASSIGN_OR_RETURN(flags.change_log_retention_age,
                                    flag.Duration(/*allow_zero=*/true));
        } else if (flag.name == "watch-bookmark-interval") {
          TOLLGATE_ASSIGN_OR_RETURN(flags.watch_bookmark_interval,
                                    flag.Duration(/*allow_zero=*/false));
        } else if (flag.name == "store") {
          TOLLGATE_ASSIGN_OR_RETURN(flags.store, flag.String());
          if (flags.store != "rocksdb" && flags.store != "etcd") {
            return absl::InvalidArgumentError(
                absl::StrCat("--store: want rocksdb or etcd, got \"", flags.store, "\""));
          }
        } else if (flag.name == "etcd-endpoints") {
          TOLLGATE_ASSIGN_OR_RETURN(flags.etcd_endpoints, flag.String());
        } else if (flag.name == "etcd-ca") {
          TOLLGATE_ASSIGN_OR_RETURN(flags.etcd_ca, flag.String());
        } else if (flag.name == "etcd-cert") {
          TOLLGATE_ASSIGN_OR_RETURN(flags.etcd_cert, flag.String());
        } else if (flag.name == "etcd-key") {
          TOLLGATE_ASSIGN_OR_RETURN(flags.etcd_key, flag.String());
        } else if (flag.name == "etcd-user") {
          TOLLGATE_ASSIGN_OR_RETURN(flags.etcd_user, flag.String());
        } else if (flag.name == "etcd-password-file") {
          TOLLGATE_ASSIGN_OR_RETURN(flags.etcd_password_file, flag.String());
        } else if (flag.name == "etcd-prefix") {
          TOLLGATE_ASSIGN_OR_RETURN(flags.etcd_prefix, flag.String());
        } else if (flag.name == "lease-ttl") {
          TOLLGATE_ASSIGN_OR_RETURN(flags.lease_ttl, flag.Duration(/*allow_zero=*/false));
          if (flags.lease_ttl < absl::Seconds(1) ||
              flags.lease_ttl != absl::Seconds(absl::ToInt64Seconds(flags.lease_ttl))) {
            return absl::InvalidArgumentError(
                absl::StrCat("--lease-ttl: etcd leases count whole seconds, want 1s or more, got ",
                             absl::FormatDuration(flags.lease_ttl)));
          }
        } else if (flag.name == "warm-followers") {
          TOLLGATE_ASSIGN_OR_RETURN(flags.warm_followers, flag.Bool());
        } else if (flag.name == "advertise") {
          TOLLGATE_ASSIGN_OR_RETURN(flags.advertise, flag.String());
        } else if (flag.name == "to" && flags.command == "backup") {
          TOLLGATE_ASSIGN_OR_RETURN(flags.backup_to, flag.String());
        } else if (flag.name == "from" && flags.command == "restore") {
          TOLLGATE_ASSIGN_OR_RETURN(flags.restore_from, flag.String());
        } else {
          TOLLGATE_ASSIGN_OR_RETURN(const bool taken, ParseSecurityFlag(flag, flags.security));
          if (!taken) return common::UnknownFlag(flag);
        }
        return absl::OkStatus();
      }));
  if (!flags.help && flags.store == "etcd") {
    if (flags.etcd_endpoints.empty()) {
      return absl::InvalidArgumentError("--store=etcd needs --etcd-endpoints");
    }
    if (!flags.data_dir.empty()) {
      return absl::InvalidArgumentError(
          "--data-dir: not used with --store=etcd (the state lives in etcd)");
    }
    if (!flags.command.empty()) {
      return absl::InvalidArgumentError(absl::StrCat(
          flags.command, ": works on a RocksDB --data-dir; back etcd up with etcdctl snapshot"));
    }
    if (flags.etcd_user.empty() != flags.etcd_password_file.empty()) {
      return absl::InvalidArgumentError(
          "--etcd-user and --etcd-password-file go together (got only one)");
    }
    if (flags.etcd_prefix.empty() || flags.etcd_prefix.back() != '/') {
      return absl::InvalidArgumentError(absl::StrCat(
          "--etcd-prefix: want a prefix ending in '/', got \"", flags.etcd_prefix, "\""));
    }
  } else if (!flags.help && flags.data_dir.empty()) {
    return absl::InvalidArgumentError("--data-dir is required");
  }
  if (!flags.metrics_listen.empty()) {
    TOLLGATE_ASSIGN_OR_RETURN(const common::HostPort metrics,
                              common::ParseHostPort(flags.metrics_listen, "--metrics-listen"));
    // Secure by default, as for --listen: beyond loopback the HTTP port needs TLS (it serves
    // the gRPC port's certificate) and an authenticator, unless the operator says otherwise.
    if (!common::IsLoopbackHost(metrics.host) && !flags.security.insecure &&
        (flags.security.tls_cert.empty() || !HasAuthenticator(flags.security))) {
      return absl::InvalidArgumentError(
          absl::StrCat("--metrics-listen=", flags.metrics_listen,
                       ": serving metrics and the dashboard beyond loopback needs TLS (--tls-cert, "
                       "--tls-key) and an authenticator (--client-ca, --token-file or "
                       "--oidc-issuer-url); add --insecure to do it anyway"));
    }
  } else if (!flags.metrics_port_file.empty()) {
    return absl::InvalidArgumentError("--metrics-port-file needs --metrics-listen");
  }
  if (!flags.help && flags.command == "backup" && flags.backup_to.empty()) {
    return absl::InvalidArgumentError("backup: --to=DIR is required");
  }
  if (!flags.help && flags.command == "restore" && flags.restore_from.empty()) {
    return absl::InvalidArgumentError("restore: --from=DIR is required");
  }
  return flags;
}

// --- Startup -----------------------------------------------------------------------------------

// The scheduler configuration: --config (Kueue's Configuration) with --fair-sharing on top.
// Read once at start; a bad file refuses the start and names the field.
absl::StatusOr<manifest::KueueConfiguration> LoadConfiguration(const Flags& flags) {
  manifest::KueueConfiguration config;
  config.source.clear();
  if (!flags.config_file.empty()) {
    TOLLGATE_ASSIGN_OR_RETURN(config, manifest::ParseKueueConfigurationFile(flags.config_file));
  }
  TOLLGATE_RETURN_IF_ERROR(manifest::ApplyFairSharingFlag(flags.fair_sharing, config));
  config.scheduler.evictions_need_ack = flags.evictions_need_ack;
  config.scheduler.eviction_grace_period = flags.eviction_grace;
  config.scheduler.local_queue_label_keys_to_copy = flags.cost_attribution_labels;
  return config;
}

// What `tollgate get config` shows.
rpc::WatchHub::Options WatchOptions(const Flags& flags) {
  rpc::WatchHub::Options options;
  options.bookmark_interval = flags.watch_bookmark_interval;
  return options;
}

v1::SchedulerConfiguration DescribeConfiguration(const manifest::KueueConfiguration& config) {
  v1::SchedulerConfiguration out;
  out.set_source(config.source);
  if (!config.source.empty()) out.set_api_version(config.api_version);
  out.set_effective_json(manifest::EffectiveConfigurationJson(config));
  for (const std::string& w : config.warnings) out.add_warnings(w);
  out.set_evictions_need_ack(config.scheduler.evictions_need_ack);
  out.set_eviction_grace_seconds(absl::ToInt64Seconds(config.scheduler.eviction_grace_period));
  for (const std::string& key : config.scheduler.local_queue_label_keys_to_copy) {
    out.add_cost_attribution_labels(key);
  }
  return out;
}

void LogConfiguration(const manifest::KueueConfiguration& config) {
  const core::SchedulerConfig& s = config.scheduler;
  if (config.source.empty()) {
    Log("info", "scheduler configuration: built-in defaults (no --config)",
        {{"fair_sharing", s.fair_sharing.enable ? "true" : "false"}});
    return;
  }
  for (const std::string& warning : config.warnings) {
    Log("warning", "configuration field without effect",
        {{"config", config.source}, {"field", warning}});
  }
  Log("info", "scheduler configuration loaded",
      {{"config", config.source},
       {"api_version", config.api_version},
       {"fair_sharing", s.fair_sharing.enable ? "true" : "false"},
       {"admission_fair_sharing", s.admission_fair_sharing.enable ? "true" : "false"},
       {"wait_for_pods_ready", s.wait_for_pods_ready.enable ? "true" : "false"},
       {"exclude_resource_prefixes", absl::StrJoin(s.exclude_resource_prefixes, ",")},
       {"resource_transformations",
        absl::StrJoin(
            s.resource_transformations, ",",
            [](std::string* out, const core::ResourceTransformation& t) { out->append(t.input); })},
       {"quota_check_strategy",
        s.quota_check_strategy == core::QuotaCheckStrategy::kIgnoreUndeclared
            ? "IgnoreUndeclared"
            : "BlockUndeclared"}});
}

// A configuration object as its author wrote it: without what the server fills in, so a stored
// object compares equal to the manifest it was applied from.
v1::ConfigObject Intent(v1::ConfigObject object) {
  v1::ObjectMeta* meta = engine::MutableMetadataOf(object);
  meta->clear_uid();
  meta->clear_resource_version();
  meta->clear_generation();
  meta->clear_creation_timestamp();
  if (!engine::IsNamespaced(engine::KindOf(object))) {
    meta->clear_namespace_();
  } else if (meta->namespace_().empty()) {
    meta->set_namespace_("default");
  }
  engine::ClearStatus(object);
  return object;
}

std::string ObjectName(const v1::ConfigObject& object) {
  const v1::ObjectMeta& meta = engine::MetadataOf(object);
  return engine::IsNamespaced(engine::KindOf(object))
             ? absl::StrCat(meta.namespace_().empty() ? "default" : meta.namespace_(), "/",
                            meta.name())
             : meta.name();
}

// The --manifests files are declarative: every start makes the stored objects match them, so an
// object an admin deleted or changed with the CLI since is created or changed back. Each such
// object is logged by kind and name (docs/configuration.md).
//
// Applies every changed configuration object of every file in one request, so a bad manifest
// leaves the stored configuration as it was; then submits the workloads. Each file is validated
// on its own first only so an error names the file it came from.
absl::Status ApplyManifests(const std::vector<std::string>& files, engine::TollgateApi& api) {
  v1::ApplyRequest apply;
  struct Change {
    std::string file;
    std::string kind;
    std::string name;
    bool created = false;
  };
  std::vector<Change> changes;
  int unchanged = 0;
  std::vector<std::pair<std::string, v1::Workload>> workloads;
  for (const std::string& file : files) {
    // What `tollgate apply -f` reads: a file (kind: List and job kinds too) or a folder.
    std::istringstream no_stdin;
    TOLLGATE_ASSIGN_OR_RETURN(std::vector<manifest::Manifest> manifests,
                              manifest::ReadManifests(no_stdin, {file}));
    v1::ApplyRequest check;
    check.set_dry_run(true);
    for (manifest::Manifest& m : manifests) {
      if (auto* workload = std::get_if<v1::Workload>(&m.object)) {
        workloads.emplace_back(file, std::move(*workload));
      } else {
        *check.add_objects() = std::get<v1::ConfigObject>(m.object);
      }
    }
    if (check.objects_size() == 0) continue;
    absl::Status valid = api.Apply(check).status();
    if (!valid.ok()) {
      return absl::Status(valid.code(), absl::StrCat(file, ": ", valid.message()));
    }
    for (v1::ConfigObject& object : *check.mutable_objects()) {
      v1::GetObjectRequest get;
      get.mutable_ref()->set_kind(engine::KindOf(object));
      get.mutable_ref()->set_name(engine::MetadataOf(object).name());
      if (engine::IsNamespaced(engine::KindOf(object))) {
        const std::string& ns = engine::MetadataOf(object).namespace_();
        get.mutable_ref()->set_namespace_(ns.empty() ? "default" : ns);
      }
      absl::StatusOr<v1::ConfigObject> stored = api.GetObject(get);
      if (!stored.ok() && !absl::IsNotFound(stored.status())) return stored.status();
      if (stored.ok() &&
          google::protobuf::util::MessageDifferencer::Equals(Intent(*stored), Intent(object))) {
        ++unchanged;
        continue;
      }
      changes.push_back(
          Change{file, engine::KindName(engine::KindOf(object)), ObjectName(object), !stored.ok()});
      *apply.add_objects() = std::move(object);
    }
  }
  int64_t revision = 0;
  if (apply.objects_size() > 0) {
    TOLLGATE_ASSIGN_OR_RETURN(v1::ApplyResponse applied, api.Apply(apply));
    revision = applied.revision();
    for (const Change& c : changes) {
      Log("info", c.created ? "manifest object created" : "manifest object changed",
          {{"kind", c.kind}, {"name", c.name}, {"file", c.file}});
    }
  }
  if (!files.empty()) {
    int created = 0;
    for (const Change& c : changes) created += c.created ? 1 : 0;
    Log("info", "applied manifests",
        {{"created", absl::StrCat(created)},
         {"changed", absl::StrCat(changes.size() - created)},
         {"unchanged", absl::StrCat(unchanged)},
         {"revision", absl::StrCat(revision)}});
  }
  int submitted_count = 0;
  for (auto& [file, workload] : workloads) {
    v1::SubmitRequest submit;
    *submit.mutable_workload() = std::move(workload);
    absl::StatusOr<v1::SubmitResponse> submitted = api.Submit(submit);
    if (!submitted.ok()) {
      return absl::Status(
          submitted.status().code(),
          absl::StrCat(file, ": submit workload ", submit.workload().metadata().name(), ": ",
                       submitted.status().message()));
    }
    if (submitted->created()) {
      ++submitted_count;
      const v1::ObjectMeta& meta = submit.workload().metadata();
      Log("info", "manifest workload submitted",
          {{"kind", "Workload"},
           {"name", absl::StrCat(meta.namespace_().empty() ? "default" : meta.namespace_(), "/",
                                 meta.name())},
           {"file", file}});
    }
  }
  if (!workloads.empty()) {
    Log("info", "submitted manifest workloads",
        {{"submitted", absl::StrCat(submitted_count)},
         {"unchanged", absl::StrCat(workloads.size() - submitted_count)}});
  }
  return absl::OkStatus();
}

// Says what recovery found: a dropped torn tail (harmless) or accepted data loss (loud).
void LogRecovery(const storage::RocksDbStore& store) {
  const storage::RecoveryReport& report = store.recovery();
  const storage::StoreIdentity identity = store.Identity();
  const std::string acknowledged = report.acknowledged_revision.has_value()
                                       ? absl::StrCat(*report.acknowledged_revision)
                                       : "unknown";
  if (report.epoch_bumped) {
    Log("error", "started after accepting data loss (--accept-data-loss)",
        {{"recovered_revision", absl::StrCat(report.recovered_revision)},
         {"acknowledged_revision", acknowledged},
         {"lost_revisions", absl::StrCat(report.lost_revisions)},
         {"wal_error", report.wal_error.empty() ? "none reported" : report.wal_error},
         {"damaged_wal_copied_to", report.saved_wal_dir},
         {"new_epoch", absl::StrCat(identity.epoch)}});
  } else if (report.dropped_torn_tail) {
    Log("warning", "dropped the torn tail of an unacknowledged write from the WAL",
        {{"recovered_revision", absl::StrCat(report.recovered_revision)},
         {"acknowledged_revision", acknowledged},
         {"wal_error", report.wal_error}});
  }
  Log("info", "store opened",
      {{"revision", absl::StrCat(report.recovered_revision)},
       {"store_id", identity.store_id},
       {"store_epoch", absl::StrCat(identity.epoch)}});
}

absl::Status RunBackup(const Flags& flags) {
  absl::StatusOr<std::unique_ptr<storage::RocksDbStore>> store =
      storage::RocksDbStore::Open(flags.data_dir);
  if (!store.ok()) {
    return absl::Status(store.status().code(),
                        absl::StrCat(store.status().message(),
                                     " (backup needs the store to itself: stop tollgated first)"));
  }
  TOLLGATE_ASSIGN_OR_RETURN(int64_t revision, (*store)->Backup(flags.backup_to));
  const storage::StoreIdentity identity = (*store)->Identity();
  Log("info", "backup written",
      {{"to", flags.backup_to},
       {"revision", absl::StrCat(revision)},
       {"store_id", identity.store_id},
       {"store_epoch", absl::StrCat(identity.epoch)}});
  return absl::OkStatus();
}

absl::Status RunRestore(const Flags& flags) {
  TOLLGATE_ASSIGN_OR_RETURN(storage::RocksDbStore::Restored restored,
                            storage::RocksDbStore::Restore(flags.restore_from, flags.data_dir));
  Log("info", "restored",
      {{"from", flags.restore_from},
       {"data_dir", flags.data_dir},
       {"revision", absl::StrCat(restored.revision)},
       {"store_id", restored.identity.store_id},
       {"store_epoch", absl::StrCat(restored.identity.epoch)}});
  return absl::OkStatus();
}

// What every kind of start checks before anything is opened, so a refused start changes
// nothing and listens nowhere: the scheduler configuration (returned, and logged) and the
// --insecure rule for the listen address.
absl::StatusOr<manifest::KueueConfiguration> CheckStart(const Flags& flags) {
  TOLLGATE_ASSIGN_OR_RETURN(manifest::KueueConfiguration configuration, LoadConfiguration(flags));
  LogConfiguration(configuration);
  TOLLGATE_ASSIGN_OR_RETURN(const bool insecure, CheckListenSecurity(flags.listen, flags.security));
  if (insecure) {
    Log("warning", "listening beyond loopback without TLS and authentication (--insecure)",
        {{"listen", flags.listen}});
  }
  return configuration;
}

absl::Status Serve(const Flags& flags, const sigset_t& stop_signals) {
  TOLLGATE_ASSIGN_OR_RETURN(const manifest::KueueConfiguration configuration, CheckStart(flags));
  TOLLGATE_ASSIGN_OR_RETURN(std::shared_ptr<grpc::ServerCredentials> credentials,
                            ServerCredentials(flags.security));
  TOLLGATE_ASSIGN_OR_RETURN(rpc::Authenticators authenticators, LoadAuthenticators(flags.security));
  TOLLGATE_ASSIGN_OR_RETURN(std::shared_ptr<const auth::Authorizer> policy,
                            LoadPolicy(flags.security));
  TOLLGATE_ASSIGN_OR_RETURN(std::unique_ptr<auth::AuditLog> audit_log,
                            OpenAuditLog(flags.security));
  std::error_code ec;
  std::filesystem::create_directories(flags.data_dir, ec);
  if (ec) {
    return absl::FailedPreconditionError(
        absl::StrCat("--data-dir=", flags.data_dir, ": ", ec.message()));
  }
  // A store that refuses writes (disk full, I/O error) cannot recover in this process: the
  // failed write's outcome is known only after a reopen replays the WAL. Say so loudly and turn
  // health NOT_SERVING so an orchestrator restarts us (after space is freed). Set before the
  // server exists, hence the atomics.
  std::atomic<bool> store_failed{false};
  std::atomic<grpc::HealthCheckServiceInterface*> health{nullptr};
  storage::RocksDbStoreOptions store_options;
  store_options.accept_data_loss = flags.accept_data_loss;
  store_options.on_write_failure = [&](const absl::Status& cause) {
    Log("error", "store write failed; refusing writes and reporting NOT_SERVING until restarted",
        {{"error", cause.ToString()}, {"data_dir", flags.data_dir}});
    store_failed.store(true);
    if (grpc::HealthCheckServiceInterface* service = health.load()) {
      service->SetServingStatus(false);
    }
  };
  TOLLGATE_ASSIGN_OR_RETURN(std::unique_ptr<storage::RocksDbStore> store,
                            storage::RocksDbStore::Open(flags.data_dir, store_options));
  LogRecovery(*store);

  const core::SchedulerConfig& config = configuration.scheduler;
  core::RealClock clock;
  std::unique_ptr<Observability> observability;
  engine::AdmissionExecutor::Options executor_options;
  executor_options.change_log_retention = flags.change_log_retention;
  executor_options.change_log_retention_age = flags.change_log_retention_age;
  if (!flags.metrics_listen.empty()) {
    observability = Observability::Create(tollgate::common::Current().version);
    executor_options.observer = observability->executor_observer();
  }
  TOLLGATE_ASSIGN_OR_RETURN(
      std::unique_ptr<engine::AdmissionExecutor> executor,
      engine::AdmissionExecutor::Open(*store, clock, config, executor_options));
  engine::TollgateApi api(*executor);
  TOLLGATE_RETURN_IF_ERROR(ApplyManifests(flags.manifests, api));

  const bool authenticating = authenticators.any();
  if (!authenticating && !flags.security.authz_policy.empty()) {
    Log("warning",
        "--authz-policy has no effect without --client-ca or --token-file: every caller is the "
        "anonymous admin");
  }
  std::unique_ptr<ServingServices> services = ServingServices::Create(
      api,
      {.store = store.get(),
       .clock = &clock,
       .audit_log = audit_log.get(),
       .authenticators = std::move(authenticators),
       .policy = std::move(policy),
       .described_configuration = DescribeConfiguration(configuration),
       .backup = [&store](const std::string& dir) -> absl::StatusOr<int64_t> {
         TOLLGATE_ASSIGN_OR_RETURN(int64_t revision, store->Backup(dir));
         Log("info", "online backup written", {{"to", dir}, {"revision", absl::StrCat(revision)}});
         return revision;
       },
       .observability = observability.get(),
       .loaded_revision = executor->revision(),
       .watch = WatchOptions(flags)});
  rpc::AccessGate& gate = services->gate();
  grpc::EnableDefaultHealthCheckService(true);
  grpc::reflection::InitProtoReflectionServerBuilderPlugin();
  grpc::ServerBuilder builder;
  int port = 0;
  builder.AddListeningPort(flags.listen, credentials, &port);
  services->AddTo(builder);
  std::unique_ptr<grpc::Server> server = builder.BuildAndStart();
  if (server == nullptr || port == 0) {
    return absl::UnavailableError(absl::StrCat("cannot listen on ", flags.listen));
  }
  health.store(server->GetHealthCheckService());
  if (store_failed.load()) server->GetHealthCheckService()->SetServingStatus(false);
  const std::string bound = common::WithPort(flags.listen, port);
  if (!flags.port_file.empty()) {
    absl::Status written = common::WriteFileAtomically(flags.port_file, absl::StrCat(port, "\n"));
    if (!written.ok()) {
      server->Shutdown();
      return written;
    }
  }
  // HTTPS for --metrics-listen from the same files; outlives the HTTP server (stopped below).
  std::unique_ptr<web::TlsFiles> http_tls;
  if (observability != nullptr) {
    TOLLGATE_ASSIGN_OR_RETURN(const common::HostPort host_port,
                              common::ParseHostPort(flags.metrics_listen, "--metrics-listen"));
    if (!flags.security.tls_cert.empty()) {
      TOLLGATE_ASSIGN_OR_RETURN(http_tls,
                                web::TlsFiles::Load(flags.security.tls_cert, flags.security.tls_key,
                                                    flags.security.client_ca));
    }
    absl::Status serving = observability->Serve(host_port.host, host_port.port, api, *executor,
                                                store.get(), gate, http_tls.get());
    if (serving.ok() && !flags.metrics_port_file.empty()) {
      serving = common::WriteFileAtomically(flags.metrics_port_file,
                                            absl::StrCat(observability->port(), "\n"));
    }
    if (!serving.ok()) {
      server->Shutdown();
      observability->Stop();
      return serving;
    }
    Log("info", "serving metrics and the dashboard",
        {{"metrics_listen", common::WithPort(flags.metrics_listen, observability->port())},
         {"tls", http_tls == nullptr ? "off" : "on"}});
  }
  Log("info", "serving",
      {{"listen", bound},
       {"data_dir", flags.data_dir},
       {"revision", absl::StrCat(executor->revision())},
       {"tls", flags.security.tls_cert.empty() ? "off" : "on"},
       {"authentication", authenticating ? "on" : "off (anonymous admin)"}});

  int signal_number = 0;
  while (true) {
    if (int err = sigwait(&stop_signals, &signal_number); err != 0) {
      // Its handlers read the executor, which goes away first on return.
      if (observability != nullptr) observability->Stop();
      return absl::InternalError(absl::StrCat("sigwait: ", std::strerror(err)));
    }
    if (signal_number != SIGHUP) break;
    // Tokens and policy are re-read together; a bad file keeps the previous ones in force.
    if (absl::Status reloaded = ReloadAccess(flags.security, gate); !reloaded.ok()) {
      Log("error", "reload failed; keeping the previous tokens and policy",
          {{"error", reloaded.ToString()}});
      continue;
    }
    Log("info", "reloaded tokens, OIDC keys and policy");
  }
  Log("info", "stopping", {{"signal", strsignal(signal_number)}, {"listen", bound}});
  // Health first so load balancers stop sending new calls, then end the watches (they never end
  // by themselves), then give unary calls the grace period to finish.
  server->GetHealthCheckService()->Shutdown();
  services->StopWatches();
  server->Shutdown(absl::ToChronoTime(absl::Now() + flags.shutdown_grace));
  server->Wait();
  // The HTTP handlers read the executor: stop them first.
  if (observability != nullptr) observability->Stop();
  services.reset();
  health.store(nullptr);
  // The executor answers nothing once the server is gone; stop it before the store it writes.
  executor.reset();
  store.reset();
  return absl::OkStatus();
}

// How to reach etcd: endpoints, TLS files, user and password (read from its file now).
absl::StatusOr<storage::EtcdConnectionOptions> EtcdConnection(const Flags& flags) {
  storage::EtcdConnectionOptions connection;
  TOLLGATE_ASSIGN_OR_RETURN(connection.endpoints,
                            storage::ParseEtcdEndpoints(flags.etcd_endpoints));
  connection.ca_file = flags.etcd_ca;
  connection.cert_file = flags.etcd_cert;
  connection.key_file = flags.etcd_key;
  if (!flags.etcd_user.empty()) {
    connection.user = flags.etcd_user;
    absl::StatusOr<std::string> password = common::ReadFileToString(flags.etcd_password_file);
    if (!password.ok()) {
      return absl::Status(password.status().code(),
                          absl::StrCat("--etcd-password-file: ", password.status().message()));
    }
    connection.password = std::string(absl::StripSuffix(absl::StripSuffix(*password, "\n"), "\r"));
    if (connection.password.empty()) {
      return absl::InvalidArgumentError(
          absl::StrCat("--etcd-password-file=", flags.etcd_password_file, ": the file is empty"));
    }
  }
  return connection;
}

// The store's options: the state under <etcd-prefix>store/.
storage::EtcdStoreOptions EtcdStoreOptionsFor(const Flags& flags,
                                              const storage::EtcdConnectionOptions& connection) {
  storage::EtcdStoreOptions options;
  options.connection = connection;
  // Promotion loads every workload: keep the store's own per-call deadline, not the election's.
  options.key_prefix = absl::StrCat(flags.etcd_prefix, "store/");
  return options;
}

// The leader's store: the state under <etcd-prefix>store/, every write conditional on the
// leadership key (a deposed leader's writes fail in etcd, see docs/ha.md).
absl::StatusOr<std::unique_ptr<storage::EtcdStore>> OpenFencedEtcdStore(
    const Flags& flags, const storage::EtcdConnectionOptions& connection,
    const ha::Leadership& leadership) {
  const storage::EtcdStoreOptions options = EtcdStoreOptionsFor(flags, connection);
  TOLLGATE_ASSIGN_OR_RETURN(std::unique_ptr<storage::EtcdStore> store,
                            storage::EtcdStore::Open(options));
  store->SetFence(storage::EtcdFence{leadership.key, leadership.create_revision});
  const storage::StoreIdentity identity = store->Identity();
  Log("info", "store opened",
      {{"store", "etcd"},
       {"key_prefix", options.key_prefix},
       {"revision", absl::StrCat(store->CurrentRevision())},
       {"store_id", identity.store_id},
       {"store_epoch", absl::StrCat(identity.epoch)}});
  return store;
}

// A replica of a replicated tollgated (docs/ha.md): the state in etcd, one leader at a time.
absl::Status ServeEtcd(const Flags& flags, const sigset_t& stop_signals) {
  TOLLGATE_ASSIGN_OR_RETURN(const manifest::KueueConfiguration configuration, CheckStart(flags));
  ReplicaOptions options;
  options.listen = flags.listen;
  options.advertise = flags.advertise;
  options.port_file = flags.port_file;
  options.shutdown_grace = flags.shutdown_grace;
  options.security = flags.security;
  TOLLGATE_ASSIGN_OR_RETURN(options.credentials, ServerCredentials(flags.security));
  TOLLGATE_ASSIGN_OR_RETURN(std::unique_ptr<auth::AuditLog> audit_log,
                            OpenAuditLog(flags.security));
  options.audit_log = audit_log.get();
  options.config = configuration.scheduler;
  options.described_configuration = DescribeConfiguration(configuration);
  options.executor_options.change_log_retention = flags.change_log_retention;
  options.executor_options.change_log_retention_age = flags.change_log_retention_age;
  options.watch_options = WatchOptions(flags);
  options.election.prefix = absl::StrCat(flags.etcd_prefix, "election/");
  options.election.lease_ttl = flags.lease_ttl;
  options.metrics_listen = flags.metrics_listen;
  options.metrics_port_file = flags.metrics_port_file;
  options.version = tollgate::common::Current().version;
  // HTTPS for --metrics-listen from the gRPC port's files, as a single tollgated does.
  std::unique_ptr<web::TlsFiles> http_tls;
  if (!flags.metrics_listen.empty() && !flags.security.tls_cert.empty()) {
    TOLLGATE_ASSIGN_OR_RETURN(http_tls,
                              web::TlsFiles::Load(flags.security.tls_cert, flags.security.tls_key,
                                                  flags.security.client_ca));
  }
  options.http_tls = http_tls.get();

  TOLLGATE_ASSIGN_OR_RETURN(const storage::EtcdConnectionOptions store_connection,
                            EtcdConnection(flags));
  storage::EtcdConnectionOptions election_connection = store_connection;
  // A renewal stuck on one member must leave time to try another before the lease runs out.
  election_connection.rpc_timeout = std::min(absl::Seconds(5), flags.lease_ttl / 4);
  // Authenticates now when --etcd-user is set: a refused password stops the start here.
  TOLLGATE_ASSIGN_OR_RETURN(std::unique_ptr<storage::EtcdClient> etcd,
                            storage::EtcdClient::Connect(election_connection));
  options.etcd = etcd.get();
  options.open_store = [&flags, &store_connection](const ha::Leadership& leadership) {
    return OpenFencedEtcdStore(flags, store_connection, leadership);
  };
  if (flags.warm_followers) {
    // A follower's warm copy reads the same store, unfenced (it never writes).
    options.open_follower_store =
        [&flags, &store_connection]() -> absl::StatusOr<std::unique_ptr<storage::EtcdStore>> {
      return storage::EtcdStore::Open(EtcdStoreOptionsFor(flags, store_connection));
    };
  }
  options.on_lead = [&flags](engine::TollgateApi& api) -> absl::Status {
    absl::Status applied = ApplyManifests(flags.manifests, api);
    // An earlier leader already submitted the manifests' workloads.
    if (absl::IsAlreadyExists(applied)) return absl::OkStatus();
    return applied;
  };
  return ServeReplica(options, stop_signals);
}

}  // namespace
}  // namespace tollgate

int main(int argc, char** argv) {
  using tollgate::Log;
  tollgate::common::DisableMutexDeadlockDetection();
  // Before any thread exists; the main thread alone takes them, through sigwait in Serve.
  // SIGHUP reloads the token file and the policy (see Serve).
  const sigset_t stop_signals = tollgate::common::BlockStopSignals({SIGHUP});

  if (tollgate::common::AsksForVersion(argc, argv)) {
    std::cout << tollgate::common::VersionLine("tollgated");
    return 0;
  }
  absl::StatusOr<tollgate::Flags> flags = tollgate::ParseFlags(argc, argv);
  if (!flags.ok()) {
    Log("error", "bad flags",
        {{"error", absl::StrCat(flags.status().message(), " (tollgated --help lists the flags)")}});
    return 2;
  }
  if (flags->help) {
    std::cout << tollgate::kUsage << tollgate::kSecurityUsage;
    return 0;
  }
  gpr_set_log_function(&tollgate::LogFromGrpc);
  absl::Status status = flags->command == "backup"    ? tollgate::RunBackup(*flags)
                        : flags->command == "restore" ? tollgate::RunRestore(*flags)
                        : flags->store == "etcd"      ? tollgate::ServeEtcd(*flags, stop_signals)
                                                      : tollgate::Serve(*flags, stop_signals);
  if (!status.ok()) {
    Log("error", "tollgated failed", {{"error", status.ToString()}});
    return 1;
  }
  Log("info", "stopped");
  return 0;
}
