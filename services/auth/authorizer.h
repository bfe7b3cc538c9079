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
// workload; reprioritize is capped by the same priority limit as submit. bind and escalate are
// Kubernetes RBAC's, on the Role kind only: `bind` a Role lets its holder apply RoleBindings of
// that role (in the binding's scope) without holding every permission it grants, `escalate`
// lets its holder apply Roles granting more than they hold (services/auth/delegation.h).
// check is an admission check controller's word (a check's state on a workload, a check's Active
// condition), on the AdmissionCheck kind.
inline constexpr absl::string_view kVerbs[] = {
    "get",    "list",  "watch", "submit",     "admit",        "preempt", "finish",   "report",
    "delete", "apply", "stop",  "deactivate", "reprioritize", "bind",    "escalate", "check"};
// The kinds a rule may name. Workload and LocalQueue are namespaced; the rest cluster-scoped.
// Metrics is the HTTP port's /metrics (verb get), not a stored object.
// Topology is Kueue's kind; Node is the topology inventory's nodes and the pods Tollgate does
// not place (InventoryService: apply, delete, report, get, list).
inline constexpr absl::string_view kKinds[] = {
    "Workload",       "LocalQueue",     "ClusterQueue",
    "Cohort",         "ResourceFlavor", "WorkloadPriorityClass",
    "PriorityClass",  "Namespace",      "Metrics",
    "Role",           "RoleBinding",    "QueueGrant",
    "AdmissionCheck", "Topology",       "Node"};
// The policy kinds themselves. "*" in a rule's kinds does not cover them: whoever may apply a
// RoleBinding may make themselves admin, so a role grants that only by naming them (the
// built-in admin role does; viewer does not read them).
//
// The policy kinds are cluster-scoped objects, but a request about them may be scoped to one
// namespace (AccessRequest::ns set): applying or deleting a RoleBinding of namespaces [a, b] is
// a request in a and one in b; a QueueGrant of a LocalQueue is a request in its namespace;
// binding a Role in a binding of namespace a is `bind Role` in a. A namespaced role binding
// covers such requests in its namespaces (delegation: a team lead manages their namespace's
// bindings); a request with no namespace (a cluster-wide binding, a ClusterQueue grant, any
// Role) needs a cluster-wide one.
inline constexpr absl::string_view kPolicyKinds[] = {"Role", "RoleBinding", "QueueGrant"};
bool IsPolicyKind(absl::string_view kind);
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
  // When set, the binding's `check` and `watch` on AdmissionChecks hold only for checks whose
  // controllerName is one of these: a check controller confined to its own checks.
  std::vector<std::string> controller_names;
};

// Grants queue verbs on one ClusterQueue (cluster_queue set), one LocalQueue
// (local_queue_namespace + local_queue set) or a Cohort (cohort set: every ClusterQueue in the
// cohort's subtree, at any depth, and the LocalQueues pointing at them; YuniKorn's queue ACLs
// inherited down the tree):
//   submit  — submit, get, finish and delete workloads through the queue;
//   preempt — preempt workloads admitted in the queue;
//   admin   — every workload verb in the queue, and get/apply/delete of the queue object (for a
//             ClusterQueue grant also of the LocalQueues that point at it).
struct QueueGrant {
  std::string name;
  std::string cluster_queue;
  std::string local_queue_namespace;
  std::string local_queue;
  std::string cohort;
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
  // The cohorts above cluster_queue, nearest first (for cohort queue grants); filled by the
  // caller only when the policy has such grants.
  std::vector<std::string> cohorts;
  // For submit: the workload's effective priority and whether it asks not to be preempted.
  std::optional<int32_t> priority;
  bool non_preemptible = false;
  // For AdmissionCheck requests: the controllerName of the check (or watched controller).
  std::string controller_name;
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
//                 priority classes, Topologies) and on workloads;
//   batch-user  — submit/finish/delete/get/list/watch workloads and get/list LocalQueues in the
//                 bound namespaces; priority at most 0 and no non-preemptible unless a binding
//                 grants more;
//   viewer      — get/list/watch everything;
//   adapter     — submit, finish, report, delete, get/list/watch workloads and read queues and
//                 priority classes for the namespaces it serves; feed the node inventory;
//   metrics-reader — get Metrics (/metrics on the HTTP port), for Prometheus (Kueue's
//                 metrics-reader ClusterRole);
//   check-controller — check, watch, get and list AdmissionChecks, get/list/watch workloads:
//                 an admission check controller (bound with controller_names to its checks).
//   inventory-feeder — apply, delete, report, get, list Node (the topology inventory) and read
//                 Topologies and ResourceFlavors.
const std::vector<Role>& BuiltInRoles();

// Checks of one object on its own (names, verbs, kinds, subjects, which queue); INVALID_ARGUMENT
// naming the object, the field and the value. Create runs them on every object, and the API
// on each applied policy object.
absl::Status ValidateRole(const Role& role);
absl::Status ValidateRoleBinding(const RoleBinding& binding);
absl::Status ValidateQueueGrant(const QueueGrant& grant);

// The live policy: the --authz-policy file's objects and the applied ones (each list valid on
// its own). Both count; where they disagree the file wins, because it is the operator's
// bootstrap and cannot be changed through the API:
//  * an applied Role named like a built-in or a file role is ignored;
//  * a RoleBinding naming a role that exists in neither is ignored (it grants nothing, as a
//    Kubernetes RoleBinding to a missing role), so deleting a Role never fails.
// `ignored` (may be null) receives one line per object left out, for the log.
Policy CombinePolicies(const Policy& file, const Policy& applied,
                       std::vector<std::string>* ignored);

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
  // Whether any queue grant is on a Cohort (requests then need AccessRequest::cohorts).
  bool HasCohortGrants() const;

  const Policy& policy() const { return policy_; }
  // A built-in or policy role by name, or null.
  const Role* FindRole(absl::string_view name) const;

 private:
  explicit Authorizer(Policy policy) : policy_(std::move(policy)) {}

  Policy policy_;
};

}  // namespace tollgate::auth
