#pragma once

// Who may write policy objects: Kubernetes RBAC's delegation rule in Tollgate's model, as a pure
// function of the policy in force, the caller and the write (no I/O; the access gate reads the
// stored object and resolves queues first). A write of a Role, RoleBinding or QueueGrant is
// allowed when both hold:
//
//  (a) the verb: the caller may `apply` (or `delete`) the kind in every scope the object touches
//      before and after the write: each namespace of a namespaced RoleBinding, the namespace of
//      a LocalQueue's grant, and the whole cluster for a cluster-wide RoleBinding, a ClusterQueue
//      or Cohort grant and any Role. So a lead bound in namespace a may rewrite a binding of a,
//      but not move one out of b. For a QueueGrant, administering its queue (apply on the
//      LocalQueue or ClusterQueue, or on every ClusterQueue under the Cohort, e.g. through an
//      `admin` queue grant or batch-admin) also counts: a queue's admins manage who may use it
//      (YuniKorn's queue ACLs, Armada's queues);
//  (b) no escalation (apply only): the caller already holds every permission the written
//      object grants, in the scope it grants it, priority caps included:
//      - RoleBinding: every verb on every kind its role allows, in each of its namespaces (or
//        everywhere), and a priority cap and non-preemptible right no wider than the caller's;
//        unless the caller may `bind` that Role in each of those scopes;
//      - Role: everything it grants, cluster-wide; unless the caller may `escalate` Role;
//      - QueueGrant: every workload verb it gives in its queue (and for `admin` the verbs on the
//        queue object), with its priority cap; no bypass verb.
//
// Deletes check (a) only: removing rights never escalates.

#include <optional>
#include <string>
#include <vector>

#include "services/auth/authorizer.h"

namespace tollgate::auth {

// Where a QueueGrant's queue sits, resolved from the stored objects by the caller: a LocalQueue
// grant's ClusterQueue, and the cohorts above the ClusterQueue (or above and including a Cohort
// grant's cohort), nearest first.
struct GrantQueue {
  std::string cluster_queue;
  std::vector<std::string> cohorts;
};

// One policy object written: its kind and name, the object as stored before (empty: a create)
// and as written (empty: a delete). Exactly one of each Policy's three lists holds the object.
struct PolicyWrite {
  std::string verb;  // "apply" or "delete"
  std::string kind;  // "Role", "RoleBinding" or "QueueGrant"
  std::string name;
  Policy before;
  Policy after;
  GrantQueue before_queue;  // QueueGrant only
  GrantQueue after_queue;
  // Roles applied in the same request, for a binding that names one of them.
  std::vector<Role> incoming_roles;
};

// The decision; the reason names the identity, the verb, the object, the scope and the first
// permission missing.
Decision AuthorizePolicyWrite(const Authorizer& authorizer, const Identity& identity,
                              const PolicyWrite& write);

// Reading one policy object by name (`request`: get of a policy kind, cluster-wide): allowed with
// a cluster-wide grant, or when the caller may `get` the kind in every scope of the stored
// object, so a namespace admin reads their namespace's bindings (and `tollgate apply` can tell
// created from configured). `stored` null: the object does not exist; allowed (the answer is
// then NOT_FOUND) when the caller may get the kind in some namespace.
Decision AuthorizePolicyRead(const Authorizer& authorizer, const Identity& identity,
                             const AccessRequest& request, const Policy* stored);

}  // namespace tollgate::auth
