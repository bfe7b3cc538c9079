#pragma once

#include <signal.h>

#include <functional>
#include <memory>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "cmd/tollgated/server_security.h"
#include "core/scheduler_config.h"
#include "grpcpp/grpcpp.h"
#include "services/engine/admission_executor.h"
#include "services/engine/tollgate_api.h"
#include "services/ha/leader_election.h"
#include "services/rpc/watch_hub.h"
#include "storage/etcd_client.h"
#include "storage/etcd_store.h"
#include "storage/store.h"
#include "tollgate/v1/service.pb.h"
#include "web/tls_files.h"

namespace tollgate {

// How one replica of a replicated tollgated (--store=etcd) runs.
struct ReplicaOptions {
  // Where to serve (port 0 picks one once; later phases rebind the same port).
  std::string listen;
  // What other replicas tell clients to use for this one; empty: the bound listen address.
  std::string advertise;
  std::string port_file;
  absl::Duration shutdown_grace = absl::Seconds(10);
  SecurityFlags security;
  std::shared_ptr<grpc::ServerCredentials> credentials;
  auth::AuditLog* audit_log = nullptr;
  core::SchedulerConfig config;
  // What InfoService.GetConfiguration answers on the leader (`tollgate get config`).
  v1::SchedulerConfiguration described_configuration;
  engine::AdmissionExecutor::Options executor_options;
  // The Watch streams', on the leader and on followers alike.
  rpc::WatchHub::Options watch_options;
  ha::LeaderElection::Options election;
  // Reaches the etcd cluster (election); must outlive ServeReplica.
  storage::EtcdClient* etcd = nullptr;
  // Opens the store the leader writes through, with every write fenced on `leadership`.
  std::function<absl::StatusOr<std::unique_ptr<storage::EtcdStore>>(
      const ha::Leadership& leadership)>
      open_store;
  // Opens the store a follower keeps its warm copy of the state from (unfenced, only read;
  // storage/etcd_mirror.h). Null: no warm copy, a promotion loads the state from etcd.
  std::function<absl::StatusOr<std::unique_ptr<storage::EtcdStore>>()> open_follower_store;
  // How long a promotion waits for the warm copy to reach the store's current revision before
  // it gives up on it and loads from etcd instead.
  absl::Duration warm_catch_up = absl::Seconds(5);
  // --metrics-listen (empty: off): /metrics and the dashboard, served by the leader, on the same
  // port after every promotion (port 0 picks one once). `http_tls` (null: plain HTTP) must
  // outlive ServeReplica.
  std::string metrics_listen;
  std::string metrics_port_file;
  web::TlsFiles* http_tls = nullptr;
  std::string version;
  // Runs once each time this replica becomes leader, before it serves (applies --manifests).
  std::function<absl::Status(engine::TollgateApi& api)> on_lead;
};

// Runs a replica until a stop signal arrives: campaigns for leadership; while a follower, keeps a
// warm copy of the state that follows etcd (loaded once before it campaigns), serves the health
// and info services and answers every tollgate.v1 call with UNAVAILABLE naming the leader
// (services/ha/leader_redirect_service.h); once elected, opens the fenced store, brings the warm
// copy to the store's current revision and loads the state from it (from etcd only when the
// copy cannot get there), runs the executor and serves the full API on the same port; steps
// back to follower (with a fresh copy) when the lease is lost, or when its store can no longer
// be read (etcd lost its quorum), at once: the store's etcd calls in flight are cancelled rather
// than waited for. SIGHUP re-reads the tokens, OIDC keys and policy into the leader's gate (each
// promotion reads them too).
absl::Status ServeReplica(const ReplicaOptions& options, const sigset_t& stop_signals);

}  // namespace tollgate
