#include "services/auth/authorizer.h"

#include <algorithm>
#include <utility>

#include "absl/container/flat_hash_set.h"
#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"

namespace tollgate::auth {
namespace {

template <size_t N>
bool OneOf(absl::string_view value, const absl::string_view (&list)[N]) {
  return std::find(std::begin(list), std::end(list), value) != std::end(list);
}

bool Lists(const std::vector<std::string>& list, absl::string_view value) {
  for (const std::string& item : list) {
    if (item == "*" || item == value) return true;
  }
  return false;
}

bool Matches(const std::vector<Subject>& subjects, const Identity& identity) {
  for (const Subject& subject : subjects) {
    if (subject.kind == Subject::Kind::kUser) {
      if (subject.name == identity.user) return true;
    } else if (std::find(identity.groups.begin(), identity.groups.end(), subject.name) !=
               identity.groups.end()) {
      return true;
    }
  }
  return false;
}

// "*" covers every kind but the policy kinds, which a rule must name (see kPolicyKinds).
bool ListsKind(const std::vector<std::string>& kinds, absl::string_view kind) {
  if (IsPolicyKind(kind)) return std::find(kinds.begin(), kinds.end(), kind) != kinds.end();
  return Lists(kinds, kind);
}

bool RoleAllows(const Role& role, absl::string_view verb, absl::string_view kind) {
  for (const Rule& rule : role.rules) {
    if (Lists(rule.verbs, verb) && ListsKind(rule.kinds, kind)) return true;
  }
  return false;
}

const std::vector<std::string> kAll = {"*"};
const std::vector<std::string> kReadVerbs = {"get", "list", "watch"};
// AdmissionChecks are queue configuration too: a batch admin creates them and may decide one by
// hand (`tollgate check set`); so are MultiKueue's workers and their lists, as in Kueue's
// batch-admin.
const std::vector<std::string> kQueueKinds = {
    "ResourceFlavor", "ClusterQueue",   "Cohort",   "LocalQueue",       "WorkloadPriorityClass",
    "PriorityClass",  "AdmissionCheck", "Topology", "MultiKueueConfig", "MultiKueueCluster"};
// What feeding the topology inventory takes (InventoryService).
const std::vector<std::string> kInventoryVerbs = {"apply", "delete", "report",
                                                  "get",   "list",   "watch"};

std::vector<Role> MakeBuiltInRoles() {
  const PriorityLimit unlimited{std::nullopt, /*allow_non_preemptible=*/true};
  std::vector<Role> roles;
  roles.push_back({"admin",
                   {{kAll, kAll}, {kAll, {std::begin(kPolicyKinds), std::end(kPolicyKinds)}}},
                   unlimited});
  roles.push_back({"batch-admin",
                   {{kAll, kQueueKinds}, {kAll, {"Workload"}}, {kReadVerbs, {"Namespace"}}},
                   unlimited});
  roles.push_back(
      {"batch-user",
       {{{"submit", "finish", "delete", "get", "list", "watch", "deactivate", "reprioritize"},
         {"Workload"}},
        {{"get", "list"}, {"LocalQueue"}}},
       PriorityLimit{0, false}});
  roles.push_back({"viewer", {{kReadVerbs, kAll}}, PriorityLimit{0, false}});
  roles.push_back(
      {"adapter",
       {{{"submit", "finish", "report", "delete", "get", "list", "watch"}, {"Workload"}},
        // AdmissionChecks: whether a queue or a workload goes through MultiKueue (its pods
        // then stay gated on the manager and travel with the workload).
        {kReadVerbs,
         {"LocalQueue", "ClusterQueue", "AdmissionCheck", "WorkloadPriorityClass",
          "PriorityClass"}},
        // tollgate-kube feeds the topology inventory from Nodes and Pods.
        {kInventoryVerbs, {"Node"}},
        {kReadVerbs, {"Topology", "ResourceFlavor"}}},
       unlimited});
  roles.push_back({"metrics-reader", {{{"get"}, {"Metrics"}}}, PriorityLimit{0, false}});
  roles.push_back(
      {"check-controller",
       {{{"check", "watch", "get", "list"}, {"AdmissionCheck"}}, {kReadVerbs, {"Workload"}}},
       PriorityLimit{0, false}});
  // A Slurm front-end, a fleet manager or tollgate-kube's node watch: the nodes and the pods
  // Tollgate does not place, and reading the topologies they make up.
  roles.push_back({"inventory-feeder",
                   {{kInventoryVerbs, {"Node"}}, {kReadVerbs, {"Topology", "ResourceFlavor"}}},
                   PriorityLimit{0, false}});
  return roles;
}

// What a queue grant verb lets its holder do to workloads in the queue.
bool QueueVerbAllowsWorkloadVerb(absl::string_view grant_verb, absl::string_view verb) {
  if (grant_verb == "admin") return true;
  if (grant_verb == "submit") {
    return verb == "submit" || verb == "get" || verb == "list" || verb == "watch" ||
           verb == "finish" || verb == "delete" || verb == "deactivate" || verb == "reprioritize";
  }
  if (grant_verb == "preempt") return verb == "preempt" || verb == "get";
  return false;
}

// A binding confined to some check controllers speaks for their checks only.
bool ControllerAllowed(const RoleBinding& binding, const AccessRequest& request) {
  if (binding.controller_names.empty() || request.kind != "AdmissionCheck") return true;
  if (request.verb != "check" && request.verb != "watch") return true;
  return std::find(binding.controller_names.begin(), binding.controller_names.end(),
                   request.controller_name) != binding.controller_names.end();
}

bool UnderCohort(const QueueGrant& grant, const AccessRequest& request) {
  return !request.cluster_queue.empty() && std::find(request.cohorts.begin(), request.cohorts.end(),
                                                     grant.cohort) != request.cohorts.end();
}

bool GrantCoversQueue(const QueueGrant& grant, const AccessRequest& request) {
  if (!grant.cohort.empty()) return UnderCohort(grant, request);
  if (!grant.cluster_queue.empty()) {
    return !request.cluster_queue.empty() && grant.cluster_queue == request.cluster_queue;
  }
  return !request.local_queue.empty() && grant.local_queue_namespace == request.ns &&
         grant.local_queue == request.local_queue;
}

bool GrantAllows(const QueueGrant& grant, const AccessRequest& request) {
  if (request.kind == "Workload") {
    if (!GrantCoversQueue(grant, request)) return false;
    for (const std::string& verb : grant.verbs) {
      if (QueueVerbAllowsWorkloadVerb(verb, request.verb)) return true;
    }
    return false;
  }
  // The queue objects themselves: only admin, and only get/apply/delete/stop.
  if (!Lists(grant.verbs, "admin")) return false;
  if (request.verb != "get" && request.verb != "apply" && request.verb != "delete" &&
      request.verb != "stop") {
    return false;
  }
  if (request.kind == "ClusterQueue") {
    // For a ClusterQueue request, cluster_queue is its name and cohorts its ancestors.
    if (!grant.cohort.empty())
      return request.cluster_queue == request.name && UnderCohort(grant, request);
    return !grant.cluster_queue.empty() && grant.cluster_queue == request.name;
  }
  if (request.kind == "LocalQueue") {
    if (!grant.cohort.empty()) return UnderCohort(grant, request);
    if (!grant.cluster_queue.empty()) {
      return !request.cluster_queue.empty() && grant.cluster_queue == request.cluster_queue;
    }
    return grant.local_queue_namespace == request.ns && grant.local_queue == request.name;
  }
  return false;
}

std::string Describe(const Identity& identity) {
  std::string text = absl::StrCat("user \"", identity.user, "\"");
  if (!identity.groups.empty()) {
    absl::StrAppend(&text, " (groups ", absl::StrJoin(identity.groups, ","), ")");
  }
  return text;
}

std::string DescribeObject(const AccessRequest& request) {
  std::string text = request.kind;
  if (!request.name.empty()) absl::StrAppend(&text, " \"", request.name, "\"");
  if (!request.controller_name.empty()) {
    absl::StrAppend(&text, " of controller \"", request.controller_name, "\"");
  }
  if (IsPolicyKind(request.kind)) {
    if (!request.ns.empty()) absl::StrAppend(&text, " in namespace \"", request.ns, "\"");
  } else if (IsNamespacedKind(request.kind)) {
    absl::StrAppend(&text, request.ns.empty() ? " in every namespace"
                                              : absl::StrCat(" in namespace \"", request.ns, "\""));
  }
  return text;
}

// The most permissive limit of two grants that both allow a submit.
PriorityLimit Widest(const PriorityLimit& a, const PriorityLimit& b) {
  PriorityLimit out;
  out.allow_non_preemptible = a.allow_non_preemptible || b.allow_non_preemptible;
  if (a.max_priority.has_value() && b.max_priority.has_value()) {
    out.max_priority = std::max(*a.max_priority, *b.max_priority);
  }
  return out;
}

absl::Status CheckSubjects(absl::string_view what, const std::vector<Subject>& subjects) {
  if (subjects.empty()) return absl::InvalidArgumentError(absl::StrCat(what, ": no subjects"));
  for (const Subject& s : subjects) {
    if (s.name.empty()) {
      return absl::InvalidArgumentError(absl::StrCat(what, ": subjects: empty name"));
    }
  }
  return absl::OkStatus();
}

}  // namespace

bool IsNamespacedKind(absl::string_view kind) { return kind == "Workload" || kind == "LocalQueue"; }

bool IsPolicyKind(absl::string_view kind) { return OneOf(kind, kPolicyKinds); }

absl::Status ValidateVerbAndKind(absl::string_view verb, absl::string_view kind) {
  if (!OneOf(verb, kVerbs)) {
    return absl::InvalidArgumentError(absl::StrCat("verb: unknown \"", verb, "\" (want one of ",
                                                   absl::StrJoin(kVerbs, ", "), ")"));
  }
  if (!OneOf(kind, kKinds)) {
    return absl::InvalidArgumentError(absl::StrCat("kind: unknown \"", kind, "\" (want one of ",
                                                   absl::StrJoin(kKinds, ", "), ")"));
  }
  return absl::OkStatus();
}

bool NamespaceScope::Contains(absl::string_view ns) const {
  return all || std::binary_search(namespaces.begin(), namespaces.end(), ns);
}

const std::vector<Role>& BuiltInRoles() {
  static const std::vector<Role>* roles = new std::vector<Role>(MakeBuiltInRoles());
  return *roles;
}

absl::Status ValidateRole(const Role& role) {
  const std::string what = absl::StrCat("Role \"", role.name, "\"");
  if (role.name.empty()) return absl::InvalidArgumentError("Role: metadata.name is empty");
  for (size_t i = 0; i < role.rules.size(); ++i) {
    if (role.rules[i].verbs.empty() || role.rules[i].kinds.empty()) {
      return absl::InvalidArgumentError(
          absl::StrCat(what, ": rules[", i, "]: needs both verbs and kinds"));
    }
    for (const std::string& verb : role.rules[i].verbs) {
      if (verb != "*" && !OneOf(verb, kVerbs)) {
        return absl::InvalidArgumentError(absl::StrCat(what, ": rules[", i, "].verbs: unknown \"",
                                                       verb, "\" (want one of ",
                                                       absl::StrJoin(kVerbs, ", "), " or *)"));
      }
    }
    for (const std::string& kind : role.rules[i].kinds) {
      if (kind != "*" && !OneOf(kind, kKinds)) {
        return absl::InvalidArgumentError(absl::StrCat(what, ": rules[", i, "].kinds: unknown \"",
                                                       kind, "\" (want one of ",
                                                       absl::StrJoin(kKinds, ", "), " or *)"));
      }
    }
  }
  return absl::OkStatus();
}

absl::Status ValidateRoleBinding(const RoleBinding& binding) {
  const std::string what = absl::StrCat("RoleBinding \"", binding.name, "\"");
  if (binding.name.empty())
    return absl::InvalidArgumentError("RoleBinding: metadata.name is empty");
  if (binding.role.empty()) return absl::InvalidArgumentError(absl::StrCat(what, ": role: empty"));
  for (const std::string& ns : binding.namespaces) {
    if (ns.empty()) {
      return absl::InvalidArgumentError(absl::StrCat(what, ": namespaces: empty namespace"));
    }
  }
  for (const std::string& controller : binding.controller_names) {
    if (controller.empty()) {
      return absl::InvalidArgumentError(
          absl::StrCat(what, ": controllerNames: empty controller name"));
    }
  }
  return CheckSubjects(what, binding.subjects);
}

absl::Status ValidateQueueGrant(const QueueGrant& grant) {
  const std::string what = absl::StrCat("QueueGrant \"", grant.name, "\"");
  if (grant.name.empty()) return absl::InvalidArgumentError("QueueGrant: metadata.name is empty");
  const bool cq = !grant.cluster_queue.empty();
  const bool lq = !grant.local_queue.empty() || !grant.local_queue_namespace.empty();
  const bool cohort = !grant.cohort.empty();
  if (int{cq} + int{lq} + int{cohort} != 1) {
    return absl::InvalidArgumentError(
        absl::StrCat(what, ": name exactly one of clusterQueue, localQueue or cohort"));
  }
  if (lq && (grant.local_queue.empty() || grant.local_queue_namespace.empty())) {
    return absl::InvalidArgumentError(
        absl::StrCat(what, ": localQueue needs both namespace and name"));
  }
  if (grant.verbs.empty()) return absl::InvalidArgumentError(absl::StrCat(what, ": verbs: none"));
  for (const std::string& verb : grant.verbs) {
    if (!OneOf(verb, kQueueVerbs)) {
      return absl::InvalidArgumentError(
          absl::StrCat(what, ": verbs: unknown \"", verb, "\" (want submit, preempt or admin)"));
    }
  }
  return CheckSubjects(what, grant.subjects);
}

Policy CombinePolicies(const Policy& file, const Policy& applied,
                       std::vector<std::string>* ignored) {
  Policy out = file;
  absl::flat_hash_set<std::string> role_names;
  for (const Role& role : BuiltInRoles()) role_names.insert(role.name);
  for (const Role& role : file.roles) role_names.insert(role.name);
  for (const Role& role : applied.roles) {
    if (!role_names.insert(role.name).second) {
      if (ignored != nullptr) {
        ignored->push_back(absl::StrCat("Role \"", role.name,
                                        "\": a built-in or --authz-policy role has that name"));
      }
      continue;
    }
    out.roles.push_back(role);
  }
  for (const RoleBinding& binding : applied.bindings) {
    if (!role_names.contains(binding.role)) {
      if (ignored != nullptr) {
        ignored->push_back(absl::StrCat("RoleBinding \"", binding.name, "\": no role named \"",
                                        binding.role, "\""));
      }
      continue;
    }
    out.bindings.push_back(binding);
  }
  out.queue_grants.insert(out.queue_grants.end(), applied.queue_grants.begin(),
                          applied.queue_grants.end());
  return out;
}

absl::StatusOr<Authorizer> Authorizer::Create(Policy policy) {
  absl::flat_hash_set<std::string> role_names;
  for (const Role& role : BuiltInRoles()) role_names.insert(role.name);
  for (const Role& role : policy.roles) {
    if (absl::Status s = ValidateRole(role); !s.ok()) return s;
    if (!role_names.insert(role.name).second) {
      return absl::InvalidArgumentError(
          absl::StrCat("Role \"", role.name,
                       "\": a role of that name exists (built-in roles cannot be redefined)"));
    }
  }
  for (const RoleBinding& binding : policy.bindings) {
    if (absl::Status s = ValidateRoleBinding(binding); !s.ok()) return s;
    if (!role_names.contains(binding.role)) {
      return absl::InvalidArgumentError(absl::StrCat(
          "RoleBinding \"", binding.name, "\": role: no role named \"", binding.role, "\""));
    }
  }
  for (const QueueGrant& grant : policy.queue_grants) {
    if (absl::Status s = ValidateQueueGrant(grant); !s.ok()) return s;
  }
  // The bootstrap binding: whoever the authenticators put in kAdminsGroup is an admin.
  policy.bindings.push_back({"tollgate:admins",
                             "admin",
                             {{Subject::Kind::kGroup, std::string(kAdminsGroup)}},
                             {},
                             std::nullopt,
                             std::nullopt,
                             {}});
  return Authorizer(std::move(policy));
}

const Role* Authorizer::FindRole(absl::string_view name) const {
  for (const Role& role : BuiltInRoles()) {
    if (role.name == name) return &role;
  }
  for (const Role& role : policy_.roles) {
    if (role.name == name) return &role;
  }
  return nullptr;
}

Decision Authorizer::Authorize(const Identity& identity, const AccessRequest& request) const {
  // Policy kinds are namespaced for a request scoped to one namespace (see kPolicyKinds).
  const bool namespaced =
      IsNamespacedKind(request.kind) || (IsPolicyKind(request.kind) && !request.ns.empty());
  bool allowed = false;
  PriorityLimit limit{0, false};
  bool have_limit = false;
  auto allow = [&](const PriorityLimit& granted) {
    limit = have_limit ? Widest(limit, granted) : granted;
    have_limit = true;
    allowed = true;
  };
  for (const RoleBinding& binding : policy_.bindings) {
    if (!Matches(binding.subjects, identity)) continue;
    // A namespaced binding covers only namespaced objects in its namespaces; "every namespace"
    // needs a cluster-wide binding.
    if (!binding.namespaces.empty()) {
      if (!namespaced || request.ns.empty()) continue;
      if (std::find(binding.namespaces.begin(), binding.namespaces.end(), request.ns) ==
          binding.namespaces.end()) {
        continue;
      }
    }
    const Role* role = FindRole(binding.role);
    if (role == nullptr || !RoleAllows(*role, request.verb, request.kind)) continue;
    if (!ControllerAllowed(binding, request)) continue;
    PriorityLimit granted = role->priority;
    if (binding.max_priority.has_value()) granted.max_priority = binding.max_priority;
    if (binding.allow_non_preemptible.has_value()) {
      granted.allow_non_preemptible = *binding.allow_non_preemptible;
    }
    allow(granted);
  }
  for (const QueueGrant& grant : policy_.queue_grants) {
    if (Matches(grant.subjects, identity) && GrantAllows(grant, request)) allow(grant.priority);
  }
  const std::string denied_prefix =
      absl::StrCat(Describe(identity), " may not ", request.verb, " ", DescribeObject(request));
  if (!allowed) return {false, denied_prefix};
  if (request.verb == "submit" || request.verb == "reprioritize") {
    if (request.priority.has_value() && limit.max_priority.has_value() &&
        *request.priority > *limit.max_priority) {
      return {false, absl::StrCat(denied_prefix, ": priority ", *request.priority,
                                  " is above the highest it may use (", *limit.max_priority, ")")};
    }
    if (request.non_preemptible && !limit.allow_non_preemptible) {
      return {false, absl::StrCat(denied_prefix, ": it may not mark workloads non-preemptible")};
    }
  }
  return {true, ""};
}

bool Authorizer::HasQueueGrant(const Identity& identity) const {
  for (const QueueGrant& grant : policy_.queue_grants) {
    if (Matches(grant.subjects, identity)) return true;
  }
  return false;
}

bool Authorizer::HasCohortGrants() const {
  for (const QueueGrant& grant : policy_.queue_grants) {
    if (!grant.cohort.empty()) return true;
  }
  return false;
}

NamespaceScope Authorizer::Scope(const Identity& identity, absl::string_view verb,
                                 absl::string_view kind) const {
  NamespaceScope scope;
  for (const RoleBinding& binding : policy_.bindings) {
    if (!Matches(binding.subjects, identity)) continue;
    const Role* role = FindRole(binding.role);
    if (role == nullptr || !RoleAllows(*role, verb, kind)) continue;
    if (binding.namespaces.empty()) {
      scope.all = true;
      scope.namespaces.clear();
      return scope;
    }
    scope.namespaces.insert(scope.namespaces.end(), binding.namespaces.begin(),
                            binding.namespaces.end());
  }
  std::sort(scope.namespaces.begin(), scope.namespaces.end());
  scope.namespaces.erase(std::unique(scope.namespaces.begin(), scope.namespaces.end()),
                         scope.namespaces.end());
  return scope;
}

}  // namespace tollgate::auth
