#include "services/rpc/access_gate.h"

#include <openssl/bio.h>
#include <openssl/pem.h>
#include <openssl/x509.h>

#include <algorithm>
#include <cstdint>
#include <limits>
#include <random>
#include <set>
#include <utility>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "core/object_kind.h"
#include "core/priority_boost.h"
#include "core/status_macros.h"
#include "services/api/metadata_keys.h"
#include "services/api/policy_codec.h"
#include "services/engine/config_objects.h"

namespace tollgate::rpc {
namespace {

constexpr absl::string_view kBearerPrefix = "Bearer ";
constexpr size_t kMaxRequestIdLength = 128;

std::string RandomPrefix() {
  std::random_device random;
  return absl::StrFormat("%08x", random());
}

std::string EntryText(X509_NAME_ENTRY* entry) {
  unsigned char* utf8 = nullptr;
  const int n = ASN1_STRING_to_UTF8(&utf8, X509_NAME_ENTRY_get_data(entry));
  if (n < 0) return "";
  std::string out(reinterpret_cast<char*>(utf8), n);
  OPENSSL_free(utf8);
  return out;
}

// The identity of a client certificate the TLS layer has already verified: CN is the user, each
// O a group (Kubernetes' convention).
absl::StatusOr<auth::Identity> IdentityFromCertificate(const std::string& pem) {
  BIO* bio = BIO_new_mem_buf(pem.data(), static_cast<int>(pem.size()));
  if (bio == nullptr) return absl::InternalError("BIO_new_mem_buf failed");
  X509* cert = PEM_read_bio_X509(bio, nullptr, nullptr, nullptr);
  BIO_free(bio);
  if (cert == nullptr) return absl::UnauthenticatedError("client certificate cannot be parsed");
  auth::Identity identity;
  identity.method = "x509";
  X509_NAME* subject = X509_get_subject_name(cert);
  for (int i = -1; (i = X509_NAME_get_index_by_NID(subject, NID_commonName, i)) >= 0;) {
    identity.user = EntryText(X509_NAME_get_entry(subject, i));
  }
  for (int i = -1; (i = X509_NAME_get_index_by_NID(subject, NID_organizationName, i)) >= 0;) {
    identity.groups.push_back(EntryText(X509_NAME_get_entry(subject, i)));
  }
  X509_free(cert);
  if (identity.user.empty()) {
    return absl::UnauthenticatedError("client certificate has no subject CN (the user name)");
  }
  return identity;
}

auth::Identity Anonymous() {
  return auth::Identity{"system:anonymous",
                        "",
                        {"system:unauthenticated", std::string(auth::kAdminsGroup)},
                        "anonymous"};
}

std::string StatusCodeName(const absl::Status& status) {
  return absl::StatusCodeToString(status.code());
}

bool IsWorkloadVerb(const auth::AccessRequest& request) { return request.kind == "Workload"; }

bool HasQueueGrants(const auth::Authorizer& authorizer) {
  return !authorizer.policy().queue_grants.empty();
}

// Requests a queue grant may decide, once their queues are resolved.
bool QueueResolvable(const auth::Authorizer& authorizer, const auth::AccessRequest& request) {
  return IsWorkloadVerb(request) || request.kind == "LocalQueue" ||
         (request.kind == "ClusterQueue" && authorizer.HasCohortGrants());
}

// How deep a cohort tree is walked; Kueue refuses cycles, this bounds a corrupt one.
constexpr int kMaxCohortDepth = 64;

}  // namespace

absl::Status PermissionDenied(absl::string_view reason) {
  return absl::PermissionDeniedError(reason);
}

AccessGate::AccessGate(engine::TollgateApi& api, const core::Clock& clock, auth::AuditLog* audit)
    : api_(api), clock_(clock), audit_(audit), request_id_prefix_(RandomPrefix()) {
  absl::StatusOr<auth::Authorizer> empty = auth::Authorizer::Create(auth::Policy());
  authorizer_ = std::make_shared<const auth::Authorizer>(*std::move(empty));
}

void AccessGate::Configure(Authenticators authenticators,
                           std::shared_ptr<const auth::Authorizer> policy) {
  {
    absl::MutexLock lock(&mu_);
    authenticators_ = std::move(authenticators);
    file_policy_ = policy->policy();
    RebuildLocked();
  }
  // A store that cannot be read leaves the file's policy (and the previous applied one) in
  // force: fewer rights, never more. The next policy write or SIGHUP tries again.
  RefreshAppliedPolicy().IgnoreError();
}

void AccessGate::RebuildLocked() {
  std::vector<std::string> ignored;
  absl::StatusOr<auth::Authorizer> combined =
      auth::Authorizer::Create(auth::CombinePolicies(file_policy_, applied_policy_, &ignored));
  if (!combined.ok()) {
    // Every applied object was checked on its own and CombinePolicies drops what conflicts, so
    // this is not expected; keep the file's policy rather than none.
    ignored.push_back(absl::StrCat("applied policy: ", combined.status().message()));
    combined = auth::Authorizer::Create(file_policy_);
    if (!combined.ok()) return;  // the file's policy was valid when it was loaded
  }
  ignored_ = std::move(ignored);
  authorizer_ = std::make_shared<const auth::Authorizer>(*std::move(combined));
}

absl::Status AccessGate::RefreshAppliedPolicy() {
  absl::MutexLock refresh(&refresh_mu_);
  std::vector<v1::ConfigObject> objects;
  for (v1::ObjectKind kind : {v1::ROLE, v1::ROLE_BINDING, v1::QUEUE_GRANT}) {
    v1::ListObjectsRequest list;
    list.set_kind(kind);
    absl::StatusOr<v1::ListObjectsResponse> listed = api_.ListObjects(list);
    if (!listed.ok()) return listed.status();
    objects.insert(objects.end(), listed->objects().begin(), listed->objects().end());
  }
  absl::StatusOr<auth::Policy> applied = api::PolicyFromObjects(objects);
  if (!applied.ok()) return applied.status();
  absl::MutexLock lock(&mu_);
  applied_policy_ = *std::move(applied);
  RebuildLocked();
  return absl::OkStatus();
}

absl::Status AccessGate::CheckPolicyObjects(const std::vector<v1::ConfigObject>& objects) const {
  absl::StatusOr<auth::Policy> incoming = api::PolicyFromObjects(objects);
  if (!incoming.ok()) return incoming.status();
  std::set<std::string> file_roles;
  std::set<std::string> roles;
  for (const auth::Role& role : auth::BuiltInRoles()) file_roles.insert(role.name);
  {
    absl::ReaderMutexLock lock(&mu_);
    for (const auth::Role& role : file_policy_.roles) file_roles.insert(role.name);
    for (const auth::Role& role : applied_policy_.roles) roles.insert(role.name);
  }
  for (const auth::Role& role : incoming->roles) {
    if (file_roles.count(role.name) > 0) {
      return absl::InvalidArgumentError(
          absl::StrCat("Role \"", role.name,
                       "\": metadata.name: a built-in or --authz-policy role has that name"));
    }
    roles.insert(role.name);
  }
  for (const auth::RoleBinding& binding : incoming->bindings) {
    if (file_roles.count(binding.role) == 0 && roles.count(binding.role) == 0) {
      return absl::InvalidArgumentError(absl::StrCat(
          "RoleBinding \"", binding.name, "\": role: no role named \"", binding.role, "\""));
    }
  }
  return absl::OkStatus();
}

std::vector<std::string> AccessGate::IgnoredPolicyObjects() const {
  absl::ReaderMutexLock lock(&mu_);
  return ignored_;
}

std::vector<std::string> AccessGate::CohortsAbove(const std::string& cluster_queue) {
  v1::GetObjectRequest get;
  get.mutable_ref()->set_kind(v1::CLUSTER_QUEUE);
  get.mutable_ref()->set_name(cluster_queue);
  absl::StatusOr<v1::ConfigObject> cq = api_.GetObject(get);
  if (!cq.ok()) return {};
  return CohortChain(cq->cluster_queue().spec().cohort());
}

std::vector<std::string> AccessGate::CohortChain(std::string next) {
  std::vector<std::string> cohorts;
  v1::GetObjectRequest get;
  while (!next.empty() && cohorts.size() < kMaxCohortDepth &&
         std::find(cohorts.begin(), cohorts.end(), next) == cohorts.end()) {
    cohorts.push_back(next);
    get.mutable_ref()->set_kind(v1::COHORT);
    get.mutable_ref()->set_name(next);
    absl::StatusOr<v1::ConfigObject> cohort = api_.GetObject(get);
    next = cohort.ok() ? cohort->cohort().spec().parent() : "";
  }
  return cohorts;
}

auth::GrantQueue AccessGate::ResolveGrantQueue(const auth::Policy& object) {
  auth::GrantQueue queue;
  if (object.queue_grants.empty()) return queue;
  const auth::QueueGrant& grant = object.queue_grants.front();
  if (!grant.local_queue.empty()) {
    v1::GetObjectRequest get;
    get.mutable_ref()->set_kind(v1::LOCAL_QUEUE);
    get.mutable_ref()->set_namespace_(grant.local_queue_namespace);
    get.mutable_ref()->set_name(grant.local_queue);
    absl::StatusOr<v1::ConfigObject> lq = api_.GetObject(get);
    if (lq.ok()) queue.cluster_queue = lq->local_queue().spec().cluster_queue();
  } else if (!grant.cluster_queue.empty()) {
    queue.cluster_queue = grant.cluster_queue;
  }
  queue.cohorts =
      !queue.cluster_queue.empty() ? CohortsAbove(queue.cluster_queue) : CohortChain(grant.cohort);
  return queue;
}

std::shared_ptr<const auth::Authorizer> AccessGate::authorizer() const {
  // Read on every call, written only on reload: a reader lock keeps calls from serializing.
  absl::ReaderMutexLock lock(&mu_);
  return authorizer_;
}

std::string AccessGate::RequestId(grpc::ServerContextBase& context) {
  const auto& metadata = context.client_metadata();
  std::string id;
  if (auto it = metadata.find("x-request-id"); it != metadata.end()) {
    id = std::string(it->second.data(), std::min(it->second.size(), kMaxRequestIdLength));
  } else {
    id = NewRequestId();
  }
  return id;
}

std::string AccessGate::NewRequestId() {
  return absl::StrCat(request_id_prefix_, "-", next_request_id_.fetch_add(1));
}

absl::StatusOr<AuthorizedCall> AccessGate::CheckIdentity(const auth::Identity& identity,
                                                         auth::AccessRequest request) {
  return Decide(identity, NewRequestId(), std::move(request), nullptr);
}

absl::StatusOr<AuthorizedCall> AccessGate::CheckListIdentity(const auth::Identity& identity,
                                                             auth::AccessRequest request,
                                                             bool& filtered) {
  return DecideList(identity, NewRequestId(), std::move(request), filtered);
}

void AccessGate::AuditUnauthenticated(const auth::AccessRequest& request,
                                      const absl::Status& status) {
  Audit(auth::Identity{"", "", {}, "none"}, NewRequestId(), request, "unauthenticated",
        StatusCodeName(status), status.message());
}

void AccessGate::AuditRefused(const auth::AccessRequest& request, const absl::Status& status) {
  Audit(auth::Identity{"", "", {}, "none"}, NewRequestId(), request, "denied",
        StatusCodeName(status), status.message());
}

absl::StatusOr<auth::Identity> AccessGate::Authenticate(grpc::ServerContextBase& context) {
  const auto& metadata = context.client_metadata();
  std::string bearer;
  if (auto it = metadata.find(api::kAuthorizationMetadataKey); it != metadata.end()) {
    const absl::string_view value(it->second.data(), it->second.size());
    if (!absl::StartsWith(value, kBearerPrefix)) {
      return absl::UnauthenticatedError("authorization metadata is not \"Bearer TOKEN\"");
    }
    bearer = std::string(value.substr(kBearerPrefix.size()));
    if (bearer.empty()) return absl::UnauthenticatedError("empty bearer token");
  }
  std::string pem;
  if (bearer.empty()) {
    std::shared_ptr<const grpc::AuthContext> auth_context = context.auth_context();
    if (auth_context != nullptr) {
      std::vector<grpc::string_ref> found = auth_context->FindPropertyValues("x509_pem_cert");
      if (!found.empty()) pem = std::string(found[0].data(), found[0].size());
    }
  }
  return AuthenticateCredentials(bearer, pem);
}

absl::StatusOr<auth::Identity> AccessGate::AuthenticateCredentials(
    absl::string_view bearer, absl::string_view certificate_pem) {
  Authenticators authenticators;
  {
    absl::ReaderMutexLock lock(&mu_);
    authenticators = authenticators_;
  }
  if (!authenticators.any()) return Anonymous();
  if (!bearer.empty()) {
    if (authenticators.tokens != nullptr) {
      auto found = authenticators.tokens->find(bearer);
      if (found != authenticators.tokens->end()) return found->second;
    }
    // Not a static token: an OIDC ID token if it has a JWT's shape and OIDC is configured.
    if (authenticators.oidc != nullptr && auth::LooksLikeJwt(bearer)) {
      return authenticators.oidc->Verify(bearer, clock_.Now());
    }
    if (authenticators.tokens == nullptr && authenticators.oidc == nullptr) {
      return absl::UnauthenticatedError(
          "bearer tokens are not accepted (no --token-file or --oidc-issuer-url)");
    }
    return absl::UnauthenticatedError("invalid bearer token");
  }
  if (authenticators.client_certificates && !certificate_pem.empty()) {
    return IdentityFromCertificate(std::string(certificate_pem));
  }
  return absl::UnauthenticatedError(
      "no credentials: present a client certificate or an \"authorization: Bearer TOKEN\" "
      "header");
}

void AccessGate::ResolveQueues(auth::AccessRequest& request, const v1::Workload* workload) {
  v1::Workload stored;
  if (request.kind == "Workload" && workload == nullptr) {
    v1::GetWorkloadRequest get;
    get.mutable_workload()->set_namespace_(request.ns);
    get.mutable_workload()->set_name(request.name);
    absl::StatusOr<v1::Workload> found = api_.GetWorkload(get);
    if (!found.ok()) return;  // The call itself reports NOT_FOUND if it is allowed to run.
    stored = *std::move(found);
    workload = &stored;
  }
  if (request.kind == "Workload") {
    request.local_queue =
        workload->spec().queue_name().empty() ? "default" : workload->spec().queue_name();
    if (workload->status().has_admission()) {
      request.cluster_queue = workload->status().admission().cluster_queue();
    }
  }
  const std::string local_queue = request.kind == "LocalQueue" ? request.name : request.local_queue;
  if (request.cluster_queue.empty() && !local_queue.empty()) {
    v1::GetObjectRequest get;
    get.mutable_ref()->set_kind(v1::LOCAL_QUEUE);
    get.mutable_ref()->set_namespace_(request.ns);
    get.mutable_ref()->set_name(local_queue);
    absl::StatusOr<v1::ConfigObject> lq = api_.GetObject(get);
    if (lq.ok()) request.cluster_queue = lq->local_queue().spec().cluster_queue();
  }
  if (!request.cluster_queue.empty() && authorizer()->HasCohortGrants()) {
    request.cohorts = CohortsAbove(request.cluster_queue);
  }
}

auth::Decision AccessGate::Decide(const auth::Identity& identity, auth::AccessRequest request) {
  std::shared_ptr<const auth::Authorizer> authz = authorizer();
  auth::Decision decision = authz->Authorize(identity, request);
  if (!decision.allowed && HasQueueGrants(*authz) && QueueResolvable(*authz, request)) {
    ResolveQueues(request, nullptr);
    decision = authz->Authorize(identity, request);
  }
  return decision;
}

absl::StatusOr<AuthorizedCall> AccessGate::Check(grpc::ServerContextBase& context,
                                                 auth::AccessRequest request,
                                                 const v1::Workload* submitted) {
  if (call_filter_) TOLLGATE_RETURN_IF_ERROR(call_filter_(context, request.verb));
  const std::string request_id = RequestId(context);
  context.AddInitialMetadata("x-request-id", request_id);
  absl::StatusOr<auth::Identity> identity = Authenticate(context);
  if (!identity.ok()) {
    Audit(auth::Identity{"", "", {}, "none"}, request_id, request, "unauthenticated",
          StatusCodeName(identity.status()), identity.status().message());
    return identity.status();
  }
  return Decide(*identity, request_id, std::move(request), submitted);
}

absl::StatusOr<std::vector<AuthorizedCall>> AccessGate::CheckAll(
    grpc::ServerContextBase& context, std::vector<auth::AccessRequest> requests,
    const std::vector<v1::ConfigObject>* objects) {
  for (const auth::AccessRequest& request : requests) {
    if (call_filter_) TOLLGATE_RETURN_IF_ERROR(call_filter_(context, request.verb));
  }
  const std::string request_id = RequestId(context);
  context.AddInitialMetadata("x-request-id", request_id);
  absl::StatusOr<auth::Identity> identity = Authenticate(context);
  if (!identity.ok()) {
    for (const auth::AccessRequest& request : requests) {
      Audit(auth::Identity{"", "", {}, "none"}, request_id, request, "unauthenticated",
            StatusCodeName(identity.status()), identity.status().message());
    }
    return identity.status();
  }
  // Roles applied together with a binding of one of them count for its escalation check. A
  // request whose objects do not convert is refused by the apply's own checks.
  auth::Policy incoming;
  if (objects != nullptr) {
    absl::StatusOr<auth::Policy> converted = api::PolicyFromObjects(*objects);
    if (converted.ok()) incoming = *std::move(converted);
  }
  std::vector<AuthorizedCall> calls;
  for (size_t i = 0; i < requests.size(); ++i) {
    const v1::ConfigObject* object =
        objects != nullptr && i < objects->size() ? &(*objects)[i] : nullptr;
    absl::StatusOr<AuthorizedCall> call =
        Decide(*identity, request_id, std::move(requests[i]), nullptr, object, &incoming);
    if (!call.ok()) return call.status();
    calls.push_back(*std::move(call));
  }
  return calls;
}

absl::StatusOr<v1::ConfigObject> AccessGate::StoredPolicyObject(
    const auth::AccessRequest& request) const {
  std::optional<v1::ObjectKind> kind = engine::ConfigKindNamed(request.kind);
  if (!kind.has_value()) return absl::InternalError(absl::StrCat("no kind ", request.kind));
  v1::GetObjectRequest get;
  get.mutable_ref()->set_kind(*kind);
  get.mutable_ref()->set_name(request.name);
  return api_.GetObject(get);
}

absl::StatusOr<AuthorizedCall> AccessGate::DecidePolicyWrite(const auth::Identity& identity,
                                                             const std::string& request_id,
                                                             auth::AccessRequest request,
                                                             const v1::ConfigObject* object,
                                                             const auth::Policy* incoming) {
  std::shared_ptr<const auth::Authorizer> authz = authorizer();
  auth::PolicyWrite write;
  write.verb = request.verb;
  write.kind = request.kind;
  write.name = request.name;
  if (incoming != nullptr) write.incoming_roles = incoming->roles;
  absl::StatusOr<v1::ConfigObject> stored = StoredPolicyObject(request);
  if (stored.ok()) {
    // A stored object that no longer converts (it passed validation when written) is treated
    // as cluster-wide: only a cluster-wide holder of the verb may replace it.
    absl::StatusOr<auth::Policy> before = api::PolicyFromObjects({*stored});
    if (before.ok()) {
      write.before = *std::move(before);
    } else {
      write.before.roles.push_back(auth::Role{request.name, {}, {}});
    }
  } else if (!absl::IsNotFound(stored.status())) {
    return stored.status();
  }
  if (object != nullptr) {
    absl::StatusOr<auth::Policy> after = api::PolicyFromObjects({*object});
    if (!after.ok()) return after.status();
    write.after = *std::move(after);
  }
  write.before_queue = ResolveGrantQueue(write.before);
  write.after_queue = ResolveGrantQueue(write.after);
  const auth::Decision decision = auth::AuthorizePolicyWrite(*authz, identity, write);
  if (!decision.allowed) {
    Audit(identity, request_id, request, "denied", "PERMISSION_DENIED", decision.reason);
    return PermissionDenied(decision.reason);
  }
  return AuthorizedCall{identity, request_id, std::move(request), std::move(authz)};
}

absl::StatusOr<AuthorizedCall> AccessGate::DecidePolicyRead(const auth::Identity& identity,
                                                            const std::string& request_id,
                                                            auth::AccessRequest request) {
  std::shared_ptr<const auth::Authorizer> authz = authorizer();
  auth::Decision decision = authz->Authorize(identity, request);
  if (!decision.allowed) {
    absl::StatusOr<v1::ConfigObject> stored = StoredPolicyObject(request);
    if (!stored.ok() && !absl::IsNotFound(stored.status())) return stored.status();
    absl::StatusOr<auth::Policy> object = stored.ok()
                                              ? api::PolicyFromObjects({*stored})
                                              : absl::StatusOr<auth::Policy>(auth::Policy());
    // A stored object that does not convert is read only with a cluster-wide grant.
    if (object.ok()) {
      decision =
          auth::AuthorizePolicyRead(*authz, identity, request, stored.ok() ? &*object : nullptr);
    }
  }
  if (!decision.allowed) {
    Audit(identity, request_id, request, "denied", "PERMISSION_DENIED", decision.reason);
    return PermissionDenied(decision.reason);
  }
  return AuthorizedCall{identity, request_id, std::move(request), std::move(authz)};
}

absl::StatusOr<AuthorizedCall> AccessGate::Decide(
    const auth::Identity& identity_ref, const std::string& request_id, auth::AccessRequest request,
    const v1::Workload* submitted, const v1::ConfigObject* object, const auth::Policy* incoming) {
  if (auth::IsPolicyKind(request.kind) && (request.verb == "apply" || request.verb == "delete")) {
    return DecidePolicyWrite(identity_ref, request_id, std::move(request), object, incoming);
  }
  if (auth::IsPolicyKind(request.kind) && request.verb == "get" && !request.name.empty()) {
    return DecidePolicyRead(identity_ref, request_id, std::move(request));
  }
  const auth::Identity* identity = &identity_ref;
  std::shared_ptr<const auth::Authorizer> authz = authorizer();
  auth::Decision decision = authz->Authorize(*identity, request);
  if (!decision.allowed && HasQueueGrants(*authz) && QueueResolvable(*authz, request)) {
    ResolveQueues(request, submitted);
    decision = authz->Authorize(*identity, request);
  }
  if (decision.allowed && submitted != nullptr) {
    // Priority caps: the effective priority is resolved as the scheduler will (explicit value,
    // else the class's value, else 0). A class that does not exist is left to the submit itself
    // to refuse.
    const v1::WorkloadSpec& spec = submitted->spec();
    request.non_preemptible = spec.non_preemptible();
    if (spec.has_priority()) {
      request.priority = spec.priority();
    } else if (spec.priority_class_name().empty()) {
      request.priority = 0;
    } else {
      for (v1::ObjectKind kind : {v1::WORKLOAD_PRIORITY_CLASS, v1::PRIORITY_CLASS}) {
        v1::GetObjectRequest get;
        get.mutable_ref()->set_kind(kind);
        get.mutable_ref()->set_name(spec.priority_class_name());
        absl::StatusOr<v1::ConfigObject> pc = api_.GetObject(get);
        if (!pc.ok()) continue;
        request.priority = kind == v1::WORKLOAD_PRIORITY_CLASS
                               ? pc->workload_priority_class().value()
                               : pc->priority_class().value();
        break;
      }
    }
    // With Kueue's PriorityBoost gate on, the workload's kueue.x-k8s.io/priority-boost
    // annotation is added to that priority wherever the scheduler compares by priority, so a
    // positive boost must not carry it past the cap (with the gate off the annotation means
    // nothing). A value that does not parse is left to the submit to refuse.
    if (request.priority.has_value() && api_.executor().scheduler_config().priority_boost) {
      auto annotation =
          submitted->metadata().annotations().find(std::string(core::kPriorityBoostAnnotation));
      if (annotation != submitted->metadata().annotations().end()) {
        absl::StatusOr<int32_t> boost = core::ParsePriorityBoost(annotation->second);
        if (boost.ok()) request.priority = PriorityForCap(*request.priority, *boost);
      }
    }
    decision = authz->Authorize(*identity, request);
  }
  if (!decision.allowed) {
    Audit(*identity, request_id, request, "denied", "PERMISSION_DENIED", decision.reason);
    return PermissionDenied(decision.reason);
  }
  return AuthorizedCall{*identity, request_id, std::move(request), std::move(authz)};
}

absl::StatusOr<AuthorizedCall> AccessGate::CheckList(grpc::ServerContextBase& context,
                                                     auth::AccessRequest request, bool& filtered) {
  filtered = false;
  if (call_filter_) TOLLGATE_RETURN_IF_ERROR(call_filter_(context, request.verb));
  const std::string request_id = RequestId(context);
  context.AddInitialMetadata("x-request-id", request_id);
  absl::StatusOr<auth::Identity> identity = Authenticate(context);
  if (!identity.ok()) {
    Audit(auth::Identity{"", "", {}, "none"}, request_id, request, "unauthenticated",
          StatusCodeName(identity.status()), identity.status().message());
    return identity.status();
  }
  return DecideList(*identity, request_id, std::move(request), filtered);
}

absl::StatusOr<AuthorizedCall> AccessGate::DecideList(const auth::Identity& identity,
                                                      const std::string& request_id,
                                                      auth::AccessRequest request, bool& filtered) {
  filtered = false;
  std::shared_ptr<const auth::Authorizer> authz = authorizer();
  const auth::Decision decision = authz->Authorize(identity, request);
  if (!decision.allowed) {
    // Not allowed for the whole request, but maybe for part of it: some namespaces of "every
    // namespace", or the workloads of queues granted to the caller. Those are served filtered.
    const bool some_namespaces =
        request.ns.empty() &&
        !authz->Scope(identity, request.verb, request.kind).namespaces.empty();
    if (request.kind != "Workload" || !(some_namespaces || authz->HasQueueGrant(identity))) {
      Audit(identity, request_id, request, "denied", "PERMISSION_DENIED", decision.reason);
      return PermissionDenied(decision.reason);
    }
    filtered = true;
  }
  return AuthorizedCall{identity, request_id, std::move(request), std::move(authz)};
}

void AccessGate::Finish(const AuthorizedCall& call, const absl::Status& outcome) {
  Audit(call.identity, call.request_id, call.request, "allowed", StatusCodeName(outcome),
        outcome.message());
}

void AccessGate::Finish(const AuthorizedCall& call, const absl::Status& outcome,
                        absl::string_view detail) {
  Audit(call.identity, call.request_id, call.request, "allowed", StatusCodeName(outcome),
        outcome.ok() ? detail : outcome.message());
}

bool AccessGate::MayRead(const AuthorizedCall& call, absl::string_view verb,
                         const v1::Workload& workload) {
  auth::AccessRequest request;
  request.verb = std::string(verb);
  request.kind = "Workload";
  request.ns = workload.metadata().namespace_();
  request.name = workload.metadata().name();
  request.local_queue =
      workload.spec().queue_name().empty() ? "default" : workload.spec().queue_name();
  if (workload.status().has_admission()) {
    request.cluster_queue = workload.status().admission().cluster_queue();
  }
  if (call.authorizer->Authorize(call.identity, request).allowed) return true;
  // A cohort grant needs the admitted queue's place in the cohort tree: looked up only for the
  // items nothing else allows.
  if (request.cluster_queue.empty() || !call.authorizer->HasCohortGrants()) return false;
  request.cohorts = CohortsAbove(request.cluster_queue);
  return call.authorizer->Authorize(call.identity, request).allowed;
}

void AccessGate::RecordSchedulerDecision(absl::string_view verb, const v1::Workload& workload,
                                         absl::string_view reason) {
  if (audit_ == nullptr) return;
  auth::AuditEntry entry;
  entry.time = clock_.Now();
  entry.user = "system:scheduler";
  entry.method = "scheduler";
  entry.verb = std::string(verb);
  entry.kind = "Workload";
  entry.ns = workload.metadata().namespace_();
  entry.name = workload.metadata().name();
  entry.result = "decided";
  entry.reason = std::string(reason);
  audit_->Write(entry);
}

void AccessGate::Audit(const auth::Identity& identity, const std::string& request_id,
                       const auth::AccessRequest& request, absl::string_view result,
                       absl::string_view code, absl::string_view reason) {
  if (audit_ == nullptr) return;
  auth::AuditEntry entry;
  entry.time = clock_.Now();
  entry.request_id = request_id;
  entry.user = identity.user;
  entry.groups = identity.groups;
  entry.method = identity.method;
  entry.verb = request.verb;
  entry.kind = request.kind;
  entry.ns = request.ns;
  entry.name = request.name;
  entry.result = std::string(result);
  entry.code = std::string(code);
  entry.reason = std::string(reason);
  audit_->Write(entry);
}

int32_t PriorityForCap(int32_t base, int32_t boost) {
  if (boost <= 0) return base;
  return static_cast<int32_t>(
      std::min<int64_t>(int64_t{base} + boost, std::numeric_limits<int32_t>::max()));
}

}  // namespace tollgate::rpc
