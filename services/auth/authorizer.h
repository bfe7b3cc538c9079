#pragma once

// Who may do what: Tollgate's authorization decision as a pure function of a policy, an identity
// and a request. No gRPC, protobuf or I/O here (CMake links only Abseil), so every rule is
// unit-tested without a server; services/auth/access_gate is the one caller on the RPC path.

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace tollgate::auth {

// Who is calling, as an authenticator established it.
struct Identity {
  std::string user;
  std::string uid;
  std::vector<std::string> groups;
  // "x509", "token", "jwt" or "anonymous": how the identity was established (for the audit log).
  std::string method;
};

// The group every role binding named "admins" is bound to; a token file or client certificate
// that puts an identity in it makes that identity an admin without any policy file.
inline constexpr absl::string_view kAdminsGroup = "tollgate:admins";

// The verbs Tollgate knows. Workload verbs map one to one to the AdmissionService RPCs; config
// objects take get/list/watch/apply/delete.
// stop covers stop and resume of a queue; deactivate covers deactivate and activate of a
// workload; reprioritize is capped by the same priority limit as submit.
inline constexpr absl::string_view kVerbs[] = {
    "get",    "list",   "watch", "submit", "admit",      "preempt",     "finish",
    "report", "delete", "apply", "stop",   "deactivate", "reprioritize"};
// The kinds a rule may name. Workload and LocalQueue are namespaced; the rest cluster-scoped.
// Metrics is the HTTP port's /metrics (verb get), not a stored object.
inline constexpr absl::string_view kKinds[] = {
    "Workload",      "LocalQueue",     "ClusterQueue",
    "Cohort",        "ResourceFlavor", "WorkloadPriorityClass",
    "PriorityClass", "Namespace",      "Metrics"};
// Per-queue grant verbs (Armada's per-queue permissions, YuniKorn's submit/admin ACLs).
inline constexpr absl::string_view kQueueVerbs[] = {"submit", "preempt", "admin"};

bool IsNamespacedKind(absl::string_view kind);

// INVALID_ARGUMENT naming the field ("verb", "kind") and the value when either is unknown.
absl::Status ValidateVerbAndKind(absl::string_view verb, absl::string_view kind);

struct Subject {
  enum class Kind { kUser, kGroup };
  Kind kind = Kind::kUser;
  std::string name;
};

// Verbs on kinds; "*" in either list means all.
struct Rule {
  std::vector<std::string> verbs;
  std::vector<std::string> kinds;
};

// The priority part of a grant: the highest priority a workload submitted through it may have
// (nullopt: no limit) and whether it may be marked non-preemptible.
struct PriorityLimit {
  std::optional<int32_t> max_priority;
  bool allow_non_preemptible = false;
};

struct Role {
  std::string name;
  std::vector<Rule> rules;
  PriorityLimit priority;
};

// Binds a role to subjects in `namespaces`, or cluster-wide when that list is empty. A binding's
// own max_priority / allow_non_preemptible, when set, replace the role's.
struct RoleBinding {
  std::string name;
  std::string role;
  std::vector<Subject> subjects;
  std::vector<std::string> namespaces;
  std::optional<int32_t> max_priority;
  std::optional<bool> allow_non_preemptible;
};

// Grants queue verbs on one ClusterQueue (cluster_queue set) or one LocalQueue
// (local_queue_namespace + local_queue set):
//   submit  — submit, get, finish and delete workloads through the queue;
//   preempt — preempt workloads admitted in the queue;
//   admin   — every workload verb in the queue, and get/apply/delete of the queue object (for a
//             ClusterQueue grant also of the LocalQueues that point at it).
struct QueueGrant {
  std::string name;
  std::string cluster_queue;
  std::string local_queue_namespace;
  std::string local_queue;
  std::vector<std::string> verbs;
  std::vector<Subject> subjects;
  PriorityLimit priority;
};

struct Policy {
  std::vector<Role> roles;  // custom roles; built-in names may not be redefined
  std::vector<RoleBinding> bindings;
  std::vector<QueueGrant> queue_grants;
};

// One thing a caller wants to do.
struct AccessRequest {
  std::string verb;
  std::string kind;
  // Empty for cluster-scoped kinds, and for "every namespace" list/watch.
  std::string ns;
  std::string name;
  // For Workload requests (when known): the LocalQueue in `ns` and its ClusterQueue. For
  // LocalQueue requests: the ClusterQueue it points at. For ClusterQueue requests: its name.
  std::string local_queue;
  std::string cluster_queue;
  // For submit: the workload's effective priority and whether it asks not to be preempted.
  std::optional<int32_t> priority;
  bool non_preemptible = false;
};

struct Decision {
  bool allowed = false;
  // Why not, for the PERMISSION_DENIED message and the audit log; empty when allowed.
  std::string reason;
};

// The namespaces where a verb on a kind is allowed: everywhere, or a set.
struct NamespaceScope {
  bool all = false;
  std::vector<std::string> namespaces;  // sorted, unique

  bool Contains(absl::string_view ns) const;
};

// The built-in roles, matching Kueue's RBAC roles plus an adapter role:
//   admin       — everything;
//   batch-admin — every verb on queue objects (flavors, ClusterQueues, Cohorts, LocalQueues,
//                 priority classes) and on workloads;
//   batch-user  — submit/finish/delete/get/list/watch workloads and get/list LocalQueues in the
//                 bound namespaces; priority at most 0 and no non-preemptible unless a binding
//                 grants more;
//   viewer      — get/list/watch everything;
//   adapter     — submit, finish, report, delete, get/list/watch workloads and read queues and
//                 priority classes for the namespaces it serves;
//   metrics-reader — get Metrics (/metrics on the HTTP port), for Prometheus (Kueue's
//                 metrics-reader ClusterRole).
const std::vector<Role>& BuiltInRoles();

// Decides requests against a policy. Immutable after Create, so thread-safe.
class Authorizer {
 public:
  // INVALID_ARGUMENT naming the object and field when the policy is inconsistent: an unknown
  // verb, kind or role, a redefined built-in role, a grant naming no queue or both kinds.
  static absl::StatusOr<Authorizer> Create(Policy policy);

  Decision Authorize(const Identity& identity, const AccessRequest& request) const;

  // Where `identity` may `verb` a `kind` (role bindings and queue grants alike count only when
  // they allow it for every object of the kind in a namespace). Used to filter List and Watch.
  NamespaceScope Scope(const Identity& identity, absl::string_view verb,
                       absl::string_view kind) const;

  // Whether any queue grant names `identity` (its List and Watch are then served filtered).
  bool HasQueueGrant(const Identity& identity) const;

  const Policy& policy() const { return policy_; }

 private:
  explicit Authorizer(Policy policy) : policy_(std::move(policy)) {}
  const Role* FindRole(absl::string_view name) const;

  Policy policy_;
};

}  // namespace tollgate::auth
