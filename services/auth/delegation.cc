#include "services/auth/delegation.h"

#include <algorithm>
#include <cstdint>
#include <limits>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"

namespace tollgate::auth {
namespace {

// The identity the written object is bound to when asking what it would grant: a name no
// authenticator gives (a control character), so no binding of the policy in force matches it.
constexpr absl::string_view kProbeUser = "\x01tollgate:delegation-probe";
constexpr absl::string_view kProbeRole = "\x01tollgate:delegation-probe-role";

Identity Probe() { return Identity{std::string(kProbeUser), "", {}, "probe"}; }
std::vector<Subject> ProbeSubjects() { return {{Subject::Kind::kUser, std::string(kProbeUser)}}; }

std::string Who(const Identity& identity) {
  std::string text = absl::StrCat("user \"", identity.user, "\"");
  if (!identity.groups.empty()) {
    absl::StrAppend(&text, " (groups ", absl::StrJoin(identity.groups, ","), ")");
  }
  return text;
}

std::string InScope(absl::string_view ns) {
  return ns.empty() ? "cluster-wide" : absl::StrCat("in namespace \"", ns, "\"");
}

// "submit Workload in namespace "a" through LocalQueue "q"", for refusal messages.
std::string Permission(const AccessRequest& request) {
  std::string text = absl::StrCat(request.verb, " ", request.kind);
  if (!request.name.empty()) absl::StrAppend(&text, " \"", request.name, "\"");
  if (IsNamespacedKind(request.kind) || IsPolicyKind(request.kind)) {
    absl::StrAppend(&text, " ",
                    request.ns.empty() && IsNamespacedKind(request.kind) ? "in every namespace"
                                                                         : InScope(request.ns));
  }
  if (request.kind == "Workload" && !request.local_queue.empty()) {
    absl::StrAppend(&text, " through LocalQueue \"", request.local_queue, "\"");
  } else if (request.kind != "ClusterQueue" && !request.cluster_queue.empty()) {
    absl::StrAppend(&text, " of ClusterQueue \"", request.cluster_queue, "\"");
  }
  return text;
}

// The namespaces ("" for the whole cluster) an object is about.
std::vector<std::string> Scopes(const Policy& object) {
  std::vector<std::string> scopes;
  for (const RoleBinding& binding : object.bindings) {
    if (binding.namespaces.empty()) {
      scopes.push_back("");
    } else {
      scopes.insert(scopes.end(), binding.namespaces.begin(), binding.namespaces.end());
    }
  }
  for (const QueueGrant& grant : object.queue_grants) scopes.push_back(grant.local_queue_namespace);
  if (!object.roles.empty()) scopes.push_back("");
  std::sort(scopes.begin(), scopes.end());
  scopes.erase(std::unique(scopes.begin(), scopes.end()), scopes.end());
  return scopes;
}

bool Empty(const Policy& object) {
  return object.roles.empty() && object.bindings.empty() && object.queue_grants.empty();
}

// A Cohort grant reaches every ClusterQueue under the cohort: one name stands for all of them
// (no ClusterQueue can have it: names are DNS labels).
std::string EveryClusterQueueUnder(absl::string_view cohort) {
  return absl::StrCat("(every ClusterQueue under Cohort \"", cohort, "\")");
}

// The request "administer this grant's queue" (apply of the queue object).
AccessRequest QueueAdministration(const QueueGrant& grant, const GrantQueue& queue) {
  AccessRequest request;
  request.verb = "apply";
  if (!grant.local_queue.empty()) {
    request.kind = "LocalQueue";
    request.ns = grant.local_queue_namespace;
    request.name = grant.local_queue;
    request.cluster_queue = queue.cluster_queue;
  } else if (!grant.cluster_queue.empty()) {
    request.kind = "ClusterQueue";
    request.name = grant.cluster_queue;
    request.cluster_queue = grant.cluster_queue;
  } else {
    // Administering every ClusterQueue under the cohort (a cohort grant's admin, batch-admin).
    request.kind = "ClusterQueue";
    request.name = EveryClusterQueueUnder(grant.cohort);
    request.cluster_queue = request.name;
  }
  request.cohorts = queue.cohorts;
  return request;
}

// (a): the verb in every scope of one version of the object. Empty when allowed, else why not.
std::string CheckVerb(const Authorizer& authorizer, const Identity& identity,
                      const PolicyWrite& write, const Policy& object, const GrantQueue& queue) {
  for (const std::string& scope : Scopes(object)) {
    AccessRequest request;
    request.verb = write.verb;
    request.kind = write.kind;
    request.ns = scope;
    request.name = write.name;
    Decision decision = authorizer.Authorize(identity, request);
    if (decision.allowed) continue;
    // A queue's administrators manage its grants.
    if (!object.queue_grants.empty() &&
        authorizer.Authorize(identity, QueueAdministration(object.queue_grants.front(), queue))
            .allowed) {
      continue;
    }
    return decision.reason;
  }
  return "";
}

// The requests whose verbs an object could grant, in one scope: every kind, placed in the scope
// (namespaced and policy kinds) or cluster-wide.
std::vector<AccessRequest> ScopeTemplates(absl::string_view scope) {
  std::vector<AccessRequest> templates;
  for (absl::string_view kind : kKinds) {
    AccessRequest request;
    request.kind = std::string(kind);
    if (IsNamespacedKind(kind) || IsPolicyKind(kind)) request.ns = std::string(scope);
    templates.push_back(std::move(request));
  }
  return templates;
}

// The requests a queue grant could allow: workloads of its queue, and the queue objects.
std::vector<AccessRequest> GrantTemplates(const QueueGrant& grant, const GrantQueue& queue) {
  const std::string cluster_queue =
      !grant.cohort.empty()
          ? EveryClusterQueueUnder(grant.cohort)
          : (!grant.cluster_queue.empty() ? grant.cluster_queue : queue.cluster_queue);
  std::vector<AccessRequest> templates(3);
  templates[0].kind = "Workload";
  templates[0].ns = grant.local_queue_namespace;
  templates[0].local_queue = grant.local_queue;
  templates[1].kind = "LocalQueue";
  templates[1].ns = grant.local_queue_namespace;
  templates[1].name = grant.local_queue;
  templates[2].kind = "ClusterQueue";
  templates[2].name = cluster_queue;
  for (AccessRequest& request : templates) {
    request.cluster_queue = cluster_queue;
    request.cohorts = queue.cohorts;
  }
  if (!grant.local_queue.empty()) templates.pop_back();  // reaches no ClusterQueue object
  return templates;
}

// Verbs that mean nothing for a request: `bind` and `escalate` are about Roles only, and
// `escalate` only cluster-wide (a Role is cluster-scoped); a Role is applied cluster-wide only.
bool Meaningful(absl::string_view verb, const AccessRequest& request) {
  if (verb == "bind" || verb == "escalate") {
    return request.kind == "Role" && (verb == "bind" || request.ns.empty());
  }
  return !(request.kind == "Role" && !request.ns.empty());
}

// (b): the first permission `probe` (the written object, bound to the probe identity) grants
// that `identity` does not hold, or "". `granted` is the object's priority cap.
std::string FirstMissing(const Authorizer& probe, const Authorizer& authorizer,
                         const Identity& identity, const std::vector<AccessRequest>& templates,
                         const PriorityLimit& granted) {
  for (const AccessRequest& base : templates) {
    for (absl::string_view verb : kVerbs) {
      AccessRequest request = base;
      request.verb = std::string(verb);
      if (!Meaningful(verb, request) || !probe.Authorize(Probe(), request).allowed) continue;
      if (!authorizer.Authorize(identity, request).allowed) return Permission(request);
      if (request.kind != "Workload" || (verb != "submit" && verb != "reprioritize")) continue;
      // The caps: the caller may itself submit at the object's highest priority (no cap: any)
      // and non-preemptible when the object allows that.
      request.priority = granted.max_priority.value_or(std::numeric_limits<int32_t>::max());
      if (!authorizer.Authorize(identity, request).allowed) {
        request.priority.reset();
        return absl::StrCat(Permission(request), " at priority ",
                            granted.max_priority.has_value() ? absl::StrCat(*granted.max_priority)
                                                             : std::string("without limit"));
      }
      request.priority.reset();
      request.non_preemptible = granted.allow_non_preemptible;
      if (!authorizer.Authorize(identity, request).allowed) {
        return absl::StrCat(Permission(request), " non-preemptible");
      }
    }
  }
  return "";
}

const Role* FindRole(const Authorizer& authorizer, const PolicyWrite& write,
                     absl::string_view name) {
  for (const Role& role : write.incoming_roles) {
    if (role.name == name) return &role;
  }
  return authorizer.FindRole(name);
}

// The escalation check of an apply: "" when the caller holds everything the written object
// grants (or holds the bypass verb), else why not.
std::string CheckEscalation(const Authorizer& authorizer, const Identity& identity,
                            const PolicyWrite& write) {
  Policy probe_policy;
  std::vector<AccessRequest> templates;
  PriorityLimit granted;
  std::string bypass;
  if (!write.after.bindings.empty()) {
    const RoleBinding& binding = write.after.bindings.front();
    const Role* role = FindRole(authorizer, write, binding.role);
    if (role == nullptr) return "";  // grants nothing; the apply refuses a missing role anyway
    bool may_bind = true;
    for (const std::string& scope : Scopes(write.after)) {
      AccessRequest bind;
      bind.verb = "bind";
      bind.kind = "Role";
      bind.ns = scope;
      bind.name = binding.role;
      may_bind = may_bind && authorizer.Authorize(identity, bind).allowed;
      std::vector<AccessRequest> more = ScopeTemplates(scope);
      templates.insert(templates.end(), more.begin(), more.end());
    }
    if (may_bind) return "";
    Role copy = *role;
    copy.name = std::string(kProbeRole);
    probe_policy.roles.push_back(copy);
    RoleBinding probe_binding = binding;
    probe_binding.role = copy.name;
    probe_binding.subjects = ProbeSubjects();
    probe_policy.bindings.push_back(probe_binding);
    granted = role->priority;
    if (binding.max_priority.has_value()) granted.max_priority = binding.max_priority;
    if (binding.allow_non_preemptible.has_value()) {
      granted.allow_non_preemptible = *binding.allow_non_preemptible;
    }
    bypass = absl::StrCat("binding a role one does not fully hold needs bind on Role \"",
                          binding.role, "\"");
  } else if (!write.after.roles.empty()) {
    const Role& role = write.after.roles.front();
    AccessRequest escalate;
    escalate.verb = "escalate";
    escalate.kind = "Role";
    escalate.name = role.name;
    if (authorizer.Authorize(identity, escalate).allowed) return "";
    Role copy = role;
    copy.name = std::string(kProbeRole);
    probe_policy.roles.push_back(copy);
    probe_policy.bindings.push_back(
        {"probe", copy.name, ProbeSubjects(), {}, std::nullopt, std::nullopt, {}});
    templates = ScopeTemplates("");
    granted = role.priority;
    bypass = "a role granting more than one holds needs escalate on Role";
  } else if (!write.after.queue_grants.empty()) {
    QueueGrant grant = write.after.queue_grants.front();
    templates = GrantTemplates(grant, write.after_queue);
    granted = grant.priority;
    grant.subjects = ProbeSubjects();
    probe_policy.queue_grants.push_back(std::move(grant));
    bypass = "a queue grant may give only what its author holds in that queue";
  } else {
    return "";
  }
  absl::StatusOr<Authorizer> probe = Authorizer::Create(std::move(probe_policy));
  if (!probe.ok()) return std::string(probe.status().message());
  const std::string missing = FirstMissing(*probe, authorizer, identity, templates, granted);
  if (missing.empty()) return "";
  return absl::StrCat("it grants ", missing, ", which ", Who(identity), " does not hold (", bypass,
                      ")");
}

}  // namespace

Decision AuthorizePolicyWrite(const Authorizer& authorizer, const Identity& identity,
                              const PolicyWrite& write) {
  // A delete of nothing, or a create: the scope of what exists. Neither version: cluster-wide,
  // so a name that exists nowhere tells a namespaced caller nothing.
  Policy before = write.before;
  if (Empty(before) && Empty(write.after)) before.roles.push_back(Role{write.name, {}, {}});
  for (const auto& [object, queue] :
       {std::pair<const Policy*, const GrantQueue*>{&before, &write.before_queue},
        {&write.after, &write.after_queue}}) {
    if (Empty(*object)) continue;
    const std::string refused = CheckVerb(authorizer, identity, write, *object, *queue);
    if (!refused.empty()) return {false, refused};
  }
  if (write.verb != "apply") return {true, ""};
  const std::string escalation = CheckEscalation(authorizer, identity, write);
  if (escalation.empty()) return {true, ""};
  AccessRequest request;
  request.verb = write.verb;
  request.kind = write.kind;
  request.name = write.name;
  const std::vector<std::string> scopes = Scopes(write.after);
  if (scopes.size() == 1) request.ns = scopes.front();
  return {false, absl::StrCat(Who(identity), " may not ", Permission(request), ": ", escalation)};
}

Decision AuthorizePolicyRead(const Authorizer& authorizer, const Identity& identity,
                             const AccessRequest& request, const Policy* stored) {
  Decision cluster_wide = authorizer.Authorize(identity, request);
  if (cluster_wide.allowed) return cluster_wide;
  if (stored == nullptr) {
    if (!authorizer.Scope(identity, request.verb, request.kind).namespaces.empty()) {
      return {true, ""};
    }
    return cluster_wide;
  }
  if (Empty(*stored)) return cluster_wide;
  for (const std::string& scope : Scopes(*stored)) {
    AccessRequest scoped = request;
    scoped.ns = scope;
    Decision decision = authorizer.Authorize(identity, scoped);
    if (!decision.allowed) return decision;
  }
  return {true, ""};
}

}  // namespace tollgate::auth
