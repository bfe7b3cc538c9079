#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>

#include "absl/base/thread_annotations.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "core/clock.h"
#include "grpcpp/grpcpp.h"
#include "services/auth/audit_log.h"
#include "services/auth/authorizer.h"
#include "services/auth/delegation.h"
#include "services/auth/oidc_authenticator.h"
#include "services/auth/token_file.h"
#include "services/engine/tollgate_api.h"
#include "tollgate/v1/service.pb.h"

namespace tollgate::rpc {

// How callers prove who they are. With neither tokens nor client certificates configured, every
// caller is the anonymous admin (tollgated allows that only on loopback or with --insecure).
struct Authenticators {
  // Bearer tokens (`authorization: Bearer TOKEN`), from the static token file.
  std::shared_ptr<const auth::TokenTable> tokens;
  // Client certificates verified by the TLS layer against --client-ca: user from the CN, groups
  // from the O entries.
  bool client_certificates = false;
  // OIDC ID tokens (JWTs) as bearer tokens, verified against the issuer's key set. shared_ptr:
  // it keeps its own key-set cache, which a reload replaces while calls in flight use the old.
  std::shared_ptr<auth::OidcAuthenticator> oidc;

  bool any() const {
    return (tokens != nullptr && !tokens->empty()) || client_certificates || oidc != nullptr;
  }
};

// One authorized call: who, which request id, what was asked, and the policy that allowed it
// (kept so filtering decisions of a long Watch use one policy).
struct AuthorizedCall {
  auth::Identity identity;
  std::string request_id;
  auth::AccessRequest request;
  std::shared_ptr<const auth::Authorizer> authorizer;
};

// Kueue's PriorityBoost against a priority cap: the base priority with a positive boost added,
// saturated at int32's maximum (above any cap a grant can hold). A zero or negative boost never
// raises a workload, so it leaves the base priority.
int32_t PriorityForCap(int32_t base, int32_t boost);

// The one place every RPC is authenticated, authorized and audited. Handlers describe what they
// are asked to do (an AccessRequest); the gate answers UNAUTHENTICATED, PERMISSION_DENIED
// (naming identity, verb, object and namespace) or the AuthorizedCall, and writes the audit
// entry for denied calls; Finish() records how an allowed mutating call ended.
//
// The gate looks a workload's queue and priority class up through the API only when the policy
// needs them (queue grants, priority caps). Policy and tokens can be replaced while serving
// (SIGHUP); calls in flight keep the policy they started with. Thread-safe.
//
// The policy in force is the --authz-policy file's (Configure) combined with the Role,
// RoleBinding and QueueGrant objects applied through the API (auth::CombinePolicies), which the
// gate reads from the store on Configure and after every policy write it serves
// (RefreshAppliedPolicy): a change takes effect on the next call.
class AccessGate {
 public:
  // `audit` may be null (no audit log). Both must outlive the gate.
  AccessGate(engine::TollgateApi& api, const core::Clock& clock, auth::AuditLog* audit);

  // `policy` is the --authz-policy file's; the applied policy objects are read again too.
  void Configure(Authenticators authenticators, std::shared_ptr<const auth::Authorizer> policy);

  // Reads the applied policy objects from the store and puts the combined policy in force.
  // Refreshes are serialized, so the last one reads the latest writes. On failure the previous
  // policy stays.
  absl::Status RefreshAppliedPolicy();

  // The checks an Apply of policy objects needs beyond each object's own: an applied Role may
  // not take a built-in or --authz-policy role's name, and a RoleBinding must name a role that
  // exists (built-in, in the file, applied, or in `objects`). INVALID_ARGUMENT naming the
  // object, the field and the value. Objects of other kinds are ignored.
  absl::Status CheckPolicyObjects(const std::vector<v1::ConfigObject>& objects) const;

  // Objects of the applied policy left out of the one in force (named like a file role, or
  // binding a missing role), one line each; for `describe` and the log.
  std::vector<std::string> IgnoredPolicyObjects() const;

  // Authenticates the caller of `context` and decides `request`. For submits, pass the workload
  // so its priority and non-preemptible flag are checked against the caller's caps.
  absl::StatusOr<AuthorizedCall> Check(grpc::ServerContextBase& context,
                                       auth::AccessRequest request,
                                       const v1::Workload* submitted = nullptr);

  // Check of several objects of one call (Apply): one identity, one request id, all allowed or
  // the first refusal. `objects` (may be null) are the objects applied, one per request: an
  // apply of a policy object is decided by the delegation rule (auth::AuthorizePolicyWrite),
  // which needs its content.
  absl::StatusOr<std::vector<AuthorizedCall>> CheckAll(
      grpc::ServerContextBase& context, std::vector<auth::AccessRequest> requests,
      const std::vector<v1::ConfigObject>* objects = nullptr);

  // Check for List and Watch: a request for every namespace (request.ns empty) by an identity
  // allowed only in some namespaces, or only through queue grants, is allowed and the handler
  // filters the results with MayRead. `filtered` says whether it must.
  absl::StatusOr<AuthorizedCall> CheckList(grpc::ServerContextBase& context,
                                           auth::AccessRequest request, bool& filtered);

  // Authentication only (WhoAmI, CanI, GetBuildInfo).
  absl::StatusOr<auth::Identity> Authenticate(grpc::ServerContextBase& context);

  // The same authentication for callers outside gRPC (the HTTP port): `bearer` is the token of
  // an "Authorization: Bearer" header or cookie (empty: none), `certificate_pem` a client
  // certificate the TLS layer verified against --client-ca (empty: none).
  absl::StatusOr<auth::Identity> AuthenticateCredentials(absl::string_view bearer,
                                                         absl::string_view certificate_pem);

  // Check and CheckList for an identity authenticated outside gRPC; the request id is made here.
  absl::StatusOr<AuthorizedCall> CheckIdentity(const auth::Identity& identity,
                                               auth::AccessRequest request);
  absl::StatusOr<AuthorizedCall> CheckListIdentity(const auth::Identity& identity,
                                                   auth::AccessRequest request, bool& filtered);
  // Audits a call refused for lack of valid credentials outside gRPC.
  void AuditUnauthenticated(const auth::AccessRequest& request, const absl::Status& status);

  // Audits a request refused before authentication (the HTTP port's anti-forgery checks):
  // result "denied", no identity.
  void AuditRefused(const auth::AccessRequest& request, const absl::Status& status);

  // The clock the gate reads (audit times, token expiry); for the HTTP port's tokens too.
  const core::Clock& clock() const { return clock_; }

  // Writes the audit line of an allowed call that changes state (or tried to).
  void Finish(const AuthorizedCall& call, const absl::Status& outcome);
  // The same, recording `detail` as the reason of a call that succeeded (what it did).
  void Finish(const AuthorizedCall& call, const absl::Status& outcome, absl::string_view detail);

  // Whether `call`'s identity may `verb` this workload (List and Watch filtering). Cheap for
  // identities allowed everywhere.
  bool MayRead(const AuthorizedCall& call, absl::string_view verb, const v1::Workload& workload);

  // What CanI answers: the decision for `request` by `identity`, resolving queues as Check does.
  auth::Decision Decide(const auth::Identity& identity, auth::AccessRequest request);

  // Writes a scheduler decision (admission, preemption) to the audit log.
  void RecordSchedulerDecision(absl::string_view verb, const v1::Workload& workload,
                               absl::string_view reason);

  // Runs first in Check, CheckAll and CheckList (every gRPC call a handler authorizes) with the
  // call's verb; a refusal is the call's answer. A follower's read view sends writes to the
  // leader and holds reads until its copy is recent enough this way
  // (services/ha/follower_reads.h). Set before serving.
  using CallFilter =
      std::function<absl::Status(grpc::ServerContextBase& context, absl::string_view verb)>;
  void SetCallFilter(CallFilter filter) { call_filter_ = std::move(filter); }

 private:
  std::shared_ptr<const auth::Authorizer> authorizer() const;
  // Rebuilds authorizer_ from file_policy_ and applied_policy_.
  void RebuildLocked() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // The cohorts above `cluster_queue`, nearest first (for cohort queue grants).
  std::vector<std::string> CohortsAbove(const std::string& cluster_queue);
  // Fills request.local_queue / cluster_queue from the stored workload or LocalQueue.
  void ResolveQueues(auth::AccessRequest& request, const v1::Workload* workload);
  void Audit(const auth::Identity& identity, const std::string& request_id,
             const auth::AccessRequest& request, absl::string_view result, absl::string_view code,
             absl::string_view reason);
  std::string RequestId(grpc::ServerContextBase& context);
  std::string NewRequestId();
  absl::StatusOr<AuthorizedCall> DecideList(const auth::Identity& identity,
                                            const std::string& request_id,
                                            auth::AccessRequest request, bool& filtered);
  // Check's decision for an authenticated caller. An apply or delete of a policy object goes
  // to DecidePolicyWrite (`object` is the applied one; null for a delete).
  absl::StatusOr<AuthorizedCall> Decide(const auth::Identity& identity,
                                        const std::string& request_id, auth::AccessRequest request,
                                        const v1::Workload* submitted,
                                        const v1::ConfigObject* object = nullptr,
                                        const auth::Policy* incoming = nullptr);
  // The stored policy object `request` names (NOT_FOUND when there is none).
  absl::StatusOr<v1::ConfigObject> StoredPolicyObject(const auth::AccessRequest& request) const;
  // The delegation rule: reads the stored object, resolves a grant's queue, and decides with
  // auth::AuthorizePolicyWrite. `incoming` holds the policy objects of the same apply.
  absl::StatusOr<AuthorizedCall> DecidePolicyWrite(const auth::Identity& identity,
                                                   const std::string& request_id,
                                                   auth::AccessRequest request,
                                                   const v1::ConfigObject* object,
                                                   const auth::Policy* incoming);
  // Get of one policy object: auth::AuthorizePolicyRead over the stored object.
  absl::StatusOr<AuthorizedCall> DecidePolicyRead(const auth::Identity& identity,
                                                  const std::string& request_id,
                                                  auth::AccessRequest request);
  // Where a queue grant's queue sits in the stored queue tree.
  auth::GrantQueue ResolveGrantQueue(const auth::Policy& object);
  // `cohort` and the cohorts above it, nearest first.
  std::vector<std::string> CohortChain(std::string cohort);

  engine::TollgateApi& api_;
  CallFilter call_filter_;
  const core::Clock& clock_;
  auth::AuditLog* const audit_;
  std::atomic<uint64_t> next_request_id_{1};
  const std::string request_id_prefix_;

  mutable absl::Mutex mu_;
  Authenticators authenticators_ ABSL_GUARDED_BY(mu_);
  // shared_ptr: a reload swaps it while calls in flight still hold the previous one.
  std::shared_ptr<const auth::Authorizer> authorizer_ ABSL_GUARDED_BY(mu_);
  // The two sources authorizer_ is built from.
  auth::Policy file_policy_ ABSL_GUARDED_BY(mu_);
  auth::Policy applied_policy_ ABSL_GUARDED_BY(mu_);
  std::vector<std::string> ignored_ ABSL_GUARDED_BY(mu_);
  // Held across a refresh's read and swap.
  absl::Mutex refresh_mu_ ABSL_ACQUIRED_BEFORE(mu_);
};

// The status every handler returns for a denied call.
absl::Status PermissionDenied(absl::string_view reason);

}  // namespace tollgate::rpc
