#include "cmd/tollgated/replica.h"

#include <pthread.h>
#include <signal.h>

#include <atomic>
#include <cerrno>
#include <cstring>
#include <thread>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "absl/synchronization/notification.h"
#include "cmd/tollgated/observability.h"
#include "cmd/tollgated/server_assembly.h"
#include "common/atomic_file.h"
#include "common/host_port.h"
#include "common/json_log.h"
#include "core/real_clock.h"
#include "core/status_macros.h"
#include "grpcpp/ext/proto_server_reflection_plugin.h"
#include "grpcpp/health_check_service_interface.h"
#include "services/ha/follower_reads.h"
#include "services/ha/leader_redirect_service.h"
#include "services/ha/replica_phases.h"
#include "services/rpc/access_gate.h"
#include "services/rpc/grpc_services.h"
#include "services/rpc/store_identity_interceptor.h"
#include "storage/etcd_mirror.h"
#include "storage/warm_start_store.h"

namespace tollgate {
namespace {

using common::Log;

// The address to bind next: `listen` until a port is known, then the same port again.
struct Binding {
  std::string listen;
  int port = 0;
  std::string address() const { return port == 0 ? listen : common::WithPort(listen, port); }
};

absl::StatusOr<std::unique_ptr<grpc::Server>> BuildServer(grpc::ServerBuilder& builder,
                                                          const ReplicaOptions& options,
                                                          Binding& binding) {
  int port = 0;
  builder.AddListeningPort(binding.address(), options.credentials, &port);
  // A replica that just stepped down may still hold the port for a moment while its server
  // drains; let the new server share it rather than fail.
  builder.AddChannelArgument(GRPC_ARG_ALLOW_REUSEPORT, 1);
  std::unique_ptr<grpc::Server> server = builder.BuildAndStart();
  if (server == nullptr || port == 0) {
    return absl::UnavailableError(absl::StrCat("cannot listen on ", binding.address()));
  }
  binding.port = port;
  return server;
}

// Where loading the state spent its time, for the promotion's log line.
std::string LoadBreakdown(const engine::AdmissionExecutor::LoadStats& stats) {
  auto ms = [](absl::Duration d) { return absl::ToInt64Milliseconds(d); };
  return absl::StrCat("config ", ms(stats.config), " ms, scan ", ms(stats.scan), " ms, parse ",
                      ms(stats.parse_tail), " ms, sort ", ms(stats.sort), " ms, restore ",
                      ms(stats.restore), " ms");
}

// Waits for the election's view to change or `stop`; returns the new view.
ha::LeaderElection::View AwaitChange(const ha::LeaderElection& election, int64_t generation,
                                     const absl::Notification& stop,
                                     absl::Time until = absl::InfiniteFuture()) {
  while (!stop.HasBeenNotified() && absl::Now() < until) {
    ha::LeaderElection::View view =
        election.WaitForChange(generation, absl::Now() + absl::Milliseconds(100));
    if (view.generation != generation) return view;
  }
  return election.view();
}

// What a follower serves: health; the reads (Get, List, Watch, visibility) from its read view
// over the warm copy once it has one (services/ha/follower_reads.h), through the leader's own
// gRPC services, whose gate sends every other verb to the leader; and the redirect for every
// other tollgate.v1 call (InfoService included: its answers are behind the leader's gate).
struct FollowerServer {
  explicit FollowerServer(std::function<std::string()> leader_address)
      : redirect(std::move(leader_address)) {}
  void Stop() {
    if (server == nullptr) return;
    server->GetHealthCheckService()->Shutdown();
    // Watches never end by themselves.
    if (admission != nullptr) admission->StopWatches();
    server->Shutdown(absl::ToChronoTime(absl::Now() + absl::Seconds(1)));
    server->Wait();
    server.reset();
  }
  ~FollowerServer() { Stop(); }

  ha::LeaderRedirectService redirect;
  // The warm copy the reads are served from (null: no reads, everything is redirected).
  std::shared_ptr<storage::EtcdMirror> mirror;
  std::unique_ptr<ha::FollowerReads> reads;
  std::unique_ptr<rpc::AdmissionGrpcService> admission;
  std::unique_ptr<rpc::ConfigGrpcService> config;
  std::unique_ptr<rpc::VisibilityGrpcService> visibility;
  std::unique_ptr<rpc::AdmissionCheckGrpcService> checks;
  std::unique_ptr<grpc::Server> server;
};

// The read view over `mirror` and the services that answer from it, with the gate configured as
// the leader's is; an error leaves `follower` without reads.
absl::Status OpenFollowerReads(const ReplicaOptions& options,
                               const std::function<std::string()>& leader_address,
                               std::shared_ptr<storage::EtcdMirror> mirror,
                               FollowerServer& follower) {
  static const core::RealClock* const kClock = new core::RealClock();
  ha::FollowerReads::Options reads_options;
  reads_options.config = options.config;
  reads_options.leader_address = leader_address;
  reads_options.audit_log = options.audit_log;
  TOLLGATE_ASSIGN_OR_RETURN(std::unique_ptr<ha::FollowerReads> reads,
                            ha::FollowerReads::Open(mirror, *kClock, reads_options));
  TOLLGATE_ASSIGN_OR_RETURN(rpc::Authenticators authenticators,
                            LoadAuthenticators(options.security));
  TOLLGATE_ASSIGN_OR_RETURN(std::shared_ptr<const auth::Authorizer> policy,
                            LoadPolicy(options.security));
  reads->gate().Configure(std::move(authenticators), std::move(policy));
  follower.admission = std::make_unique<rpc::AdmissionGrpcService>(reads->api(), &reads->gate(),
                                                                   options.watch_options);
  follower.config = std::make_unique<rpc::ConfigGrpcService>(reads->api(), &reads->gate());
  follower.visibility = std::make_unique<rpc::VisibilityGrpcService>(reads->api(), &reads->gate());
  follower.checks = std::make_unique<rpc::AdmissionCheckGrpcService>(
      reads->api(), follower.admission->mutable_watch_hub(), &reads->gate());
  follower.reads = std::move(reads);
  follower.mirror = std::move(mirror);
  return absl::OkStatus();
}

// Binds the port (again) and serves health, the reads from `mirror` (may be null: none) and
// the redirect on it.
absl::StatusOr<std::unique_ptr<FollowerServer>> StartFollowerServer(
    const ReplicaOptions& options, Binding& binding,
    const std::function<std::string()>& leader_address,
    std::shared_ptr<storage::EtcdMirror> mirror = nullptr) {
  auto follower = std::make_unique<FollowerServer>(leader_address);
  grpc::ServerBuilder builder;
  builder.RegisterCallbackGenericService(&follower->redirect);
  if (mirror != nullptr) {
    if (absl::Status opened = OpenFollowerReads(options, leader_address, mirror, *follower);
        !opened.ok()) {
      // Not fatal: the follower redirects reads too, as it does without a warm copy.
      Log("warning", "follower reads not served; redirecting them to the leader",
          {{"error", opened.ToString()}});
    }
  }
  if (follower->reads != nullptr) {
    builder.RegisterService(follower->admission.get());
    builder.RegisterService(follower->config.get());
    builder.RegisterService(follower->visibility.get());
    builder.RegisterService(follower->checks.get());
    std::vector<std::unique_ptr<grpc::experimental::ServerInterceptorFactoryInterface>>
        interceptors;
    interceptors.push_back(ha::NewFollowerReadInterceptorFactory(*follower->reads));
    interceptors.push_back(rpc::NewStoreIdentityInterceptorFactory(follower->reads->store()));
    builder.experimental().SetInterceptorCreators(std::move(interceptors));
  }
  TOLLGATE_ASSIGN_OR_RETURN(follower->server, BuildServer(builder, options, binding));
  return follower;
}

constexpr absl::Duration kWarmUpRetry = absl::Seconds(2);

// Loads the warm copy into `mirror` when it has none, and serves reads from it: a second server
// takes the port before the first lets it go, as at a promotion, so clients never find it
// closed. Failures are logged, not fatal: this replica can still lead, loading from etcd.
void WarmUp(const ReplicaOptions& options, Binding& binding,
            const std::function<std::string()>& leader_address,
            std::shared_ptr<storage::EtcdMirror>& mirror,
            std::unique_ptr<FollowerServer>& follower) {
  if (mirror == nullptr && options.open_follower_store) {
    absl::StatusOr<std::unique_ptr<storage::EtcdMirror>> started =
        [&]() -> absl::StatusOr<std::unique_ptr<storage::EtcdMirror>> {
      TOLLGATE_ASSIGN_OR_RETURN(std::unique_ptr<storage::EtcdStore> read_store,
                                options.open_follower_store());
      return storage::EtcdMirror::Start(std::move(read_store));
    }();
    if (started.ok()) {
      mirror = *std::move(started);
      const storage::EtcdMirror::Stats stats = mirror->stats();
      Log("info", "warm state loaded",
          {{"revision", absl::StrCat(stats.revision)},
           {"keys", absl::StrCat(stats.keys)},
           {"load_ms", absl::StrCat(absl::ToInt64Milliseconds(stats.last_load))}});
    } else {
      // Tried again while following.
      Log("warning", "warm state not loaded; a promotion will load from etcd",
          {{"error", started.status().ToString()}});
    }
  }
  if (mirror != nullptr && follower->mirror != mirror) {
    absl::StatusOr<std::unique_ptr<FollowerServer>> with_reads =
        StartFollowerServer(options, binding, leader_address, mirror);
    if (with_reads.ok()) {
      follower = *std::move(with_reads);
    } else {
      Log("warning", "follower reads not served; redirecting them to the leader",
          {{"error", with_reads.status().ToString()}});
    }
  }
}

// The follower phase: serves until this replica leads or `stop`. Returns the server still
// running, so the promotion can load the state while it keeps answering; `view` is the view
// that ended the phase. `follower`: the server a leader that stepped down started
// already (null: start one). Loads the warm copy into `mirror` when it has none.
absl::StatusOr<std::unique_ptr<FollowerServer>> RunFollower(
    const ReplicaOptions& options, Binding& binding,
    const std::function<std::string()>& leader_address,
    const std::function<absl::StatusOr<ha::LeaderElection*>()>& ensure_election,
    const absl::Notification& stop, std::shared_ptr<storage::EtcdMirror>& mirror,
    ha::LeaderElection::View& view, std::unique_ptr<FollowerServer> follower) {
  if (follower == nullptr) {
    TOLLGATE_ASSIGN_OR_RETURN(follower, StartFollowerServer(options, binding, leader_address));
  }
  // Warm before campaigning: a replica that would win now would otherwise load from etcd anyway,
  // and one that waits its turn is then ready to take over without a reload.
  WarmUp(options, binding, leader_address, mirror, follower);
  // Campaign only once bound: the advertised address defaults to the port actually bound.
  TOLLGATE_ASSIGN_OR_RETURN(ha::LeaderElection * election, ensure_election());
  view = election->view();
  Log("info", "serving as follower",
      {{"listen", binding.address()},
       {"reads", follower->reads != nullptr
                     ? absl::StrCat("from revision ", follower->reads->revision())
                     : "redirected"},
       {"leader", view.leader_address.empty() ? "none" : view.leader_address}});
  absl::Time next_warm_up = absl::Now() + kWarmUpRetry;
  while (!view.leader && !stop.HasBeenNotified()) {
    view = AwaitChange(*election, view.generation, stop, next_warm_up);
    // A copy that could not be loaded (etcd had no quorum when this replica stepped down) is
    // tried again while following, so reads are served again once etcd is back.
    if (mirror == nullptr && absl::Now() >= next_warm_up && !view.leader) {
      WarmUp(options, binding, leader_address, mirror, follower);
      next_warm_up = absl::Now() + kWarmUpRetry;
    }
  }
  return follower;
}

// Brings the warm copy to the revision the store has now and freezes it there, so the state can
// be loaded from memory. The store is fenced on this replica's leadership, so nothing moves it
// after the read below but this process.
absl::Status CatchUp(const ReplicaOptions& options, storage::EtcdMirror& mirror,
                     const storage::Store& store) {
  if (!(mirror.identity() == store.Identity())) {
    return absl::FailedPreconditionError("the warm copy belongs to another store identity");
  }
  TOLLGATE_ASSIGN_OR_RETURN(const int64_t revision, mirror.store().FetchRevision());
  TOLLGATE_RETURN_IF_ERROR(mirror.WaitForRevision(revision, absl::Now() + options.warm_catch_up));
  mirror.Stop();
  if (mirror.revision() != revision) {
    return absl::FailedPreconditionError(
        absl::StrCat("the warm copy went past revision ", revision, " to ", mirror.revision()));
  }
  return absl::OkStatus();
}

// Where SIGHUP finds the leader's gate while one serves.
struct CurrentGate {
  absl::Mutex mu;
  rpc::AccessGate* gate ABSL_GUARDED_BY(mu) = nullptr;
};

// The leader phase: serves the full API until the leadership ends, the store is lost or
// `stop`. Returns the follower server started (before the leader's stops, so the port never
// goes quiet) when the phase ended without `stop`. `follower` keeps serving until the leader's
// server does, and is left running when the promotion fails before that. `mirror` (may be null)
// is the warm copy the follower phase kept.
absl::StatusOr<std::unique_ptr<FollowerServer>> RunLeader(
    const ReplicaOptions& options, Binding& binding, Binding& metrics_binding,
    ha::LeaderElection& election, const ha::LeaderElection::View& elected,
    std::unique_ptr<FollowerServer>& follower, std::shared_ptr<storage::EtcdMirror> mirror,
    const std::function<std::string()>& leader_address, CurrentGate& current_gate,
    const absl::Notification& stop) {
  const absl::Time started = absl::Now();
  TOLLGATE_ASSIGN_OR_RETURN(std::unique_ptr<storage::EtcdStore> store,
                            options.open_store(elected.leadership));
  // Load from the warm copy when it can be brought to the store's revision; else from etcd.
  storage::Store* load_from = store.get();
  std::unique_ptr<storage::WarmStartStore> warm_store;
  if (mirror != nullptr) {
    const int64_t warm_revision = mirror->revision();
    const absl::Time catch_up_start = absl::Now();
    absl::Status caught_up = CatchUp(options, *mirror, *store);
    if (caught_up.ok()) {
      Log("info", "promoted from warm state",
          {{"warm_revision", absl::StrCat(warm_revision)},
           {"revision", absl::StrCat(mirror->revision())},
           {"catch_up_ms", absl::StrCat(absl::ToInt64Milliseconds(absl::Now() - catch_up_start))}});
      warm_store = std::make_unique<storage::WarmStartStore>(*store, *mirror);
      load_from = warm_store.get();
    } else {
      Log("warning", "warm state not usable; loading the state from etcd",
          {{"error", caught_up.ToString()}});
    }
  }
  core::RealClock clock;
  engine::AdmissionExecutor::Options executor_options = options.executor_options;
  // Set on the executor thread when a failed commit cannot be followed by a reload (etcd lost
  // its quorum, or the store was shut down below): the memory state is then unusable.
  absl::Notification store_lost;
  absl::Mutex lost_mu;
  std::string lost_reason;
  executor_options.on_state_lost = [&](const absl::Status& why) {
    {
      absl::MutexLock lock(&lost_mu);
      lost_reason = std::string(why.message());
    }
    if (!store_lost.HasBeenNotified()) store_lost.Notify();
  };
  std::unique_ptr<Observability> observability;
  if (!options.metrics_listen.empty()) {
    observability = Observability::Create(options.version);
    executor_options.observer = observability->executor_observer();
  }
  const absl::Time load_start = absl::Now();
  TOLLGATE_ASSIGN_OR_RETURN(
      std::unique_ptr<engine::AdmissionExecutor> executor,
      engine::AdmissionExecutor::Open(*load_from, clock, options.config, executor_options));
  const absl::Duration load_time = absl::Now() - load_start;
  engine::TollgateApi api(*executor);
  if (options.on_lead) TOLLGATE_RETURN_IF_ERROR(options.on_lead(api));
  TOLLGATE_ASSIGN_OR_RETURN(rpc::Authenticators authenticators,
                            LoadAuthenticators(options.security));
  TOLLGATE_ASSIGN_OR_RETURN(std::shared_ptr<const auth::Authorizer> policy,
                            LoadPolicy(options.security));
  // No backup function: etcd is backed up with etcdctl (Backup answers UNIMPLEMENTED, saying so).
  std::unique_ptr<ServingServices> services =
      ServingServices::Create(api, {.store = store.get(),
                                    .clock = &clock,
                                    .audit_log = options.audit_log,
                                    .authenticators = std::move(authenticators),
                                    .policy = std::move(policy),
                                    .described_configuration = options.described_configuration,
                                    .backup = nullptr,
                                    .observability = observability.get(),
                                    .loaded_revision = executor->revision(),
                                    .watch = options.watch_options});
  rpc::AccessGate& gate = services->gate();
  grpc::ServerBuilder builder;
  services->AddTo(builder);
  // Both listen on the port for a moment (SO_REUSEPORT); the follower then stops taking calls.
  TOLLGATE_ASSIGN_OR_RETURN(std::unique_ptr<grpc::Server> server,
                            BuildServer(builder, options, binding));
  follower.reset();
  if (observability != nullptr) {
    // The HTTP handlers read the executor and the gate: stopped before they go (below).
    TOLLGATE_ASSIGN_OR_RETURN(const common::HostPort host_port,
                              common::ParseHostPort(metrics_binding.address(), "--metrics-listen"));
    absl::Status serving = observability->Serve(host_port.host, host_port.port, api, *executor,
                                                /*rocksdb=*/nullptr, gate, options.http_tls);
    if (serving.ok() && metrics_binding.port == 0) {
      metrics_binding.port = observability->port();
      if (!options.metrics_port_file.empty()) {
        serving = common::WriteFileAtomically(options.metrics_port_file,
                                              absl::StrCat(observability->port(), "\n"));
      }
    }
    if (!serving.ok()) {
      observability->Stop();
      server->Shutdown(absl::ToChronoTime(absl::Now()));
      server->Wait();
      return serving;
    }
  }
  {
    absl::MutexLock lock(&current_gate.mu);
    current_gate.gate = &gate;
  }
  Log("info", "serving as leader",
      {{"listen", binding.address()},
       {"metrics_listen", observability == nullptr ? "off" : metrics_binding.address()},
       {"election_key", elected.leadership.key},
       {"election_revision", absl::StrCat(elected.leadership.create_revision)},
       {"revision", absl::StrCat(executor->revision())},
       {"workloads", absl::StrCat(executor->load_stats().workloads)},
       {"warm", warm_store != nullptr ? "true" : "false"},
       {"load_ms", absl::StrCat(absl::ToInt64Milliseconds(load_time))},
       {"load_breakdown", LoadBreakdown(executor->load_stats())},
       {"promotion_ms", absl::StrCat(absl::ToInt64Milliseconds(absl::Now() - started))}});

  ha::LeaderElection::View view = election.view();
  while (view.leader && view.leadership == elected.leadership && !stop.HasBeenNotified() &&
         !store_lost.HasBeenNotified()) {
    view = election.WaitForChange(view.generation, absl::Now() + absl::Milliseconds(100));
  }
  const absl::Time stepping_down = absl::Now();
  if (!stop.HasBeenNotified()) {
    std::string reason;
    if (store_lost.HasBeenNotified()) {
      absl::MutexLock lock(&lost_mu);
      reason = absl::StrCat("the store cannot be read: ", lost_reason);
      // Still holding the lease, perhaps: let another replica (or this one, later) lead.
      election.StepDown("its store failed");
    } else {
      reason = view.last_loss.empty() ? "another replica leads" : view.last_loss;
    }
    Log("warning", "stepping down: leadership lost",
        {{"reason", reason},
         {"leader", view.leader_address.empty() ? "none" : view.leader_address}});
  }
  {
    absl::MutexLock lock(&current_gate.mu);
    current_gate.gate = nullptr;
  }
  // A deposed leader's writes already fail at etcd (the fence), but its store's calls in flight
  // (a commit retrying through an outage, for up to its commit timeout) would hold every step
  // below up: cancel them. Their callers hear UNAVAILABLE; nothing they did is acknowledged.
  if (!stop.HasBeenNotified()) store->client().Shutdown();
  // The follower takes the port before the leader's server lets it go, so clients that follow
  // redirects never find it closed (and back off).
  std::unique_ptr<FollowerServer> next;
  if (!stop.HasBeenNotified()) {
    absl::StatusOr<std::unique_ptr<FollowerServer>> started_follower =
        StartFollowerServer(options, binding, leader_address);
    if (started_follower.ok()) {
      next = *std::move(started_follower);
    } else {
      Log("error", "cannot serve as follower yet",
          {{"error", started_follower.status().ToString()}});
    }
  }
  // As in a plain stop: health first, then the watches (they never end by themselves), then the
  // unary calls.
  server->GetHealthCheckService()->Shutdown();
  services->StopWatches();
  server->Shutdown(absl::ToChronoTime(
      absl::Now() + (stop.HasBeenNotified() ? options.shutdown_grace : absl::Seconds(1))));
  server->Wait();
  if (observability != nullptr) observability->Stop();
  services.reset();
  executor.reset();
  warm_store.reset();
  store.reset();
  if (!stop.HasBeenNotified()) {
    Log("info", "stepped down",
        {{"ms", absl::StrCat(absl::ToInt64Milliseconds(absl::Now() - stepping_down))}});
  }
  return next;
}

// The phases ha::RunReplicaPhases runs, over this binary's servers and stores. Holds what passes
// from one phase to the next: the follower server (kept answering while a promotion loads, and
// started by a leader before it stops, so the port never goes quiet), the warm copy of the state
// a follower keeps and a promotion consumes, and the election view that ended the follower phase.
class ReplicaRunner final : public ha::ReplicaPhases {
 public:
  ReplicaRunner(const ReplicaOptions& options, Binding& binding, Binding& metrics_binding,
                std::function<std::string()> leader_address,
                std::function<absl::StatusOr<ha::LeaderElection*>()> ensure_election,
                const std::unique_ptr<ha::LeaderElection>& election, CurrentGate& current_gate,
                const absl::Notification& stop)
      : options_(options),
        binding_(binding),
        metrics_binding_(metrics_binding),
        leader_address_(std::move(leader_address)),
        ensure_election_(std::move(ensure_election)),
        election_(election),
        current_gate_(current_gate),
        stop_(stop) {}

  absl::Status Follow() override {
    TOLLGATE_ASSIGN_OR_RETURN(
        follower_, RunFollower(options_, binding_, leader_address_, ensure_election_, stop_,
                               mirror_, view_, std::move(follower_)));
    return absl::OkStatus();
  }

  absl::Status Lead() override {
    TOLLGATE_ASSIGN_OR_RETURN(
        follower_, RunLeader(options_, binding_, metrics_binding_, *election_, view_, follower_,
                             std::move(mirror_), leader_address_, current_gate_, stop_));
    return absl::OkStatus();
  }

  void StepDown(absl::string_view reason) override { election_->StepDown(reason); }
  void Resign() override { election_->Resign(); }

 private:
  const ReplicaOptions& options_;
  Binding& binding_;
  Binding& metrics_binding_;
  const std::function<std::string()> leader_address_;
  const std::function<absl::StatusOr<ha::LeaderElection*>()> ensure_election_;
  // Set by ensure_election_ during the first follower phase.
  const std::unique_ptr<ha::LeaderElection>& election_;
  CurrentGate& current_gate_;
  const absl::Notification& stop_;
  std::unique_ptr<FollowerServer> follower_;
  // Shared: the follower's read view answers from it while a promotion loads from it, and
  // either may end first.
  std::shared_ptr<storage::EtcdMirror> mirror_;
  ha::LeaderElection::View view_;
};

}  // namespace

absl::Status ServeReplica(const ReplicaOptions& options, const sigset_t& stop_signals) {
  grpc::EnableDefaultHealthCheckService(true);
  grpc::reflection::InitProtoReflectionServerBuilderPlugin();
  core::RealClock clock;
  Binding binding{options.listen, 0};
  absl::Notification stop;

  std::unique_ptr<ha::LeaderElection> election;
  // Read by the follower server's threads while the phases thread starts the election.
  std::atomic<ha::LeaderElection*> running_election{nullptr};
  auto leader_address = [&]() -> std::string {
    ha::LeaderElection* e = running_election.load();
    return e == nullptr ? "" : e->view().leader_address;
  };
  auto ensure_election = [&]() -> absl::StatusOr<ha::LeaderElection*> {
    if (election != nullptr) return election.get();
    if (!options.port_file.empty()) {
      TOLLGATE_RETURN_IF_ERROR(
          common::WriteFileAtomically(options.port_file, absl::StrCat(binding.port, "\n")));
    }
    ha::LeaderElection::Options election_options = options.election;
    election_options.advertise = options.advertise.empty() ? binding.address() : options.advertise;
    TOLLGATE_ASSIGN_OR_RETURN(election,
                              ha::LeaderElection::Start(*options.etcd, clock, election_options));
    running_election.store(election.get());
    Log("info", "campaigning",
        {{"advertise", election_options.advertise},
         {"lease_ttl", absl::FormatDuration(election_options.lease_ttl)}});
    return election.get();
  };

  // The replica's phases run on their own thread; this one waits for the stop signal.
  absl::Status result;
  absl::Notification finished;
  Binding metrics_binding{options.metrics_listen, 0};
  CurrentGate current_gate;
  std::thread phases([&] {
    ReplicaRunner runner(options, binding, metrics_binding, leader_address, ensure_election,
                         election, current_gate, stop);
    result = ha::RunReplicaPhases(runner, stop);
    finished.Notify();
  });

  // Wakes the signal wait once the phases end on their own (an error), by sending ourselves a
  // stop signal that sigwait then takes.
  std::thread watcher([&] {
    finished.WaitForNotification();
    if (!stop.HasBeenNotified()) kill(getpid(), SIGTERM);
  });
  int signal_number = 0;
  while (true) {
    if (int err = sigwait(&stop_signals, &signal_number); err != 0) {
      result = absl::InternalError(absl::StrCat("sigwait: ", std::strerror(err)));
      break;
    }
    if (signal_number != SIGHUP) break;
    // The leader's gate takes the new tokens, OIDC keys and policy now; a follower reads them
    // at its next promotion, so only a bad file is worth telling about there.
    absl::MutexLock lock(&current_gate.mu);
    absl::Status reloaded;
    if (current_gate.gate != nullptr) {
      reloaded = ReloadAccess(options.security, *current_gate.gate);
    } else {
      reloaded = LoadAuthenticators(options.security).status();
      if (reloaded.ok()) reloaded = LoadPolicy(options.security).status();
    }
    if (!reloaded.ok()) {
      Log("error", "reload failed; keeping the previous tokens and policy",
          {{"error", reloaded.ToString()}});
    } else {
      Log("info", current_gate.gate != nullptr
                      ? "reloaded tokens, OIDC keys and policy"
                      : "checked tokens, OIDC keys and policy (read at the next promotion)");
    }
  }
  if (!finished.HasBeenNotified()) {
    Log("info", "stopping", {{"signal", strsignal(signal_number)}});
  }
  stop.Notify();
  phases.join();
  watcher.join();
  // Resigning revokes the lease: the next leader need not wait out the TTL.
  if (election != nullptr) election->Resign();
  return result;
}

}  // namespace tollgate
