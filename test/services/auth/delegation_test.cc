#include "services/auth/delegation.h"

#include <algorithm>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "gtest/gtest.h"
#include "services/auth/policy_parser.h"

namespace tollgate::auth {
namespace {

Identity User(std::string name, std::vector<std::string> groups = {}) {
  return Identity{std::move(name), "", std::move(groups), "token"};
}

Policy Parse(const std::string& yaml) {
  if (yaml.empty()) return Policy();
  // The parser wants a binding's role to exist: a stand-in role (dropped after) for one that is
  // not built in; the decision finds the real one in the policy or the incoming roles.
  std::string text = yaml;
  const std::string marker = "\nrole: ";
  const size_t at = yaml.find(marker);
  bool stand_in = false;
  if (absl::StartsWith(yaml, "kind: RoleBinding") && at != std::string::npos) {
    const std::string role =
        yaml.substr(at + marker.size(), yaml.find('\n', at + 1) - at - marker.size());
    const auto& builtins = BuiltInRoles();
    stand_in = std::none_of(builtins.begin(), builtins.end(),
                            [&](const Role& r) { return r.name == role; });
    if (stand_in) {
      text += "\n---\nkind: Role\nmetadata: {name: " + role +
              "}\nrules: [{verbs: [get], kinds: [Workload]}]\n";
    }
  }
  absl::StatusOr<Policy> policy = ParsePolicy(text, "test.yaml");
  EXPECT_TRUE(policy.ok()) << policy.status() << "\n" << text;
  if (!policy.ok()) return Policy();
  if (stand_in) policy->roles.clear();
  return *policy;
}

// The policy in force: a namespace admin of team-a (who may manage RoleBindings and QueueGrants
// there), the same with `bind` on every Role in team-a, a cluster-wide Role writer, a holder of
// `escalate`, a queue admin (batch-admin) and the owner of ClusterQueue cq-a (an admin grant).
constexpr char kPolicy[] = R"(
kind: Role
metadata: {name: namespace-admin}
rules:
- verbs: ["*"]
  kinds: [Workload, LocalQueue]
- verbs: [get, list, apply, delete]
  kinds: [RoleBinding, QueueGrant]
maxPriority: 1000
---
kind: Role
metadata: {name: binder}
rules: [{verbs: [bind], kinds: [Role]}]
---
kind: Role
metadata: {name: role-writer}
rules:
- {verbs: [apply, delete], kinds: [Role]}
- {verbs: [get, list], kinds: ["*"]}
---
kind: Role
metadata: {name: escalator}
rules: [{verbs: [apply, escalate], kinds: [Role]}]
---
kind: RoleBinding
metadata: {name: lead-a}
role: namespace-admin
subjects: [{kind: User, name: lead}, {kind: User, name: binder-lead}]
namespaces: [team-a]
---
kind: RoleBinding
metadata: {name: binder-a}
role: binder
subjects: [{kind: User, name: binder-lead}]
namespaces: [team-a]
---
kind: RoleBinding
metadata: {name: roler}
role: role-writer
subjects: [{kind: User, name: roler}]
---
kind: RoleBinding
metadata: {name: escalator}
role: escalator
subjects: [{kind: User, name: escalator}]
---
kind: RoleBinding
metadata: {name: qadmin}
role: batch-admin
subjects: [{kind: User, name: qadmin}]
---
kind: QueueGrant
metadata: {name: cq-a-owner}
clusterQueue: cq-a
verbs: [admin]
subjects: [{kind: User, name: cq-owner}]
maxPriority: 100
)";

struct Case {
  const char* what;
  Identity who;
  const char* verb;
  const char* kind;
  const char* name;
  std::string before;  // YAML of the stored object ("" none)
  std::string after;   // YAML of the written object ("" for a delete)
  bool allowed;
  const char* want;           // a part of the refusal
  std::string incoming = "";  // roles applied in the same request
};

std::string Binding(const std::string& role, const std::string& namespaces,
                    const std::string& extra = "") {
  return "kind: RoleBinding\nmetadata: {name: b}\nrole: " + role +
         "\nsubjects: [{kind: User, name: carol}]\n" +
         (namespaces.empty() ? "" : "namespaces: " + namespaces + "\n") + extra;
}

std::string RoleOf(const std::string& rules) {
  return "kind: Role\nmetadata: {name: r}\nrules: " + rules + "\n";
}

std::string Grant(const std::string& queue, const std::string& verbs, const std::string& extra) {
  return "kind: QueueGrant\nmetadata: {name: g}\n" + queue + "\nverbs: " + verbs +
         "\nsubjects: [{kind: User, name: carol}]\n" + extra;
}

TEST(AuthorizePolicyWriteTest, DelegationFollowsKubernetesRbac) {
  absl::StatusOr<Authorizer> authorizer = Authorizer::Create(Parse(kPolicy));
  ASSERT_TRUE(authorizer.ok()) << authorizer.status();
  const Identity lead = User("lead", {"team-a"});
  const Identity binder = User("binder-lead");
  const std::vector<Case> cases = {
      // (a) the verb, in every namespace the binding touches.
      {"lead binds batch-user in their namespace", lead, "apply", "RoleBinding", "b", "",
       Binding("batch-user", "[team-a]"), true, ""},
      {"lead binds in another namespace", lead, "apply", "RoleBinding", "b", "",
       Binding("batch-user", "[team-b]"), false,
       R"(user "lead" (groups team-a) may not apply RoleBinding "b" in namespace "team-b")"},
      {"lead binds in theirs and another", lead, "apply", "RoleBinding", "b", "",
       Binding("batch-user", "[team-a, team-b]"), false, R"(in namespace "team-b")"},
      {"lead binds cluster-wide", lead, "apply", "RoleBinding", "b", "", Binding("batch-user", ""),
       false, R"(may not apply RoleBinding "b")"},
      {"lead moves another namespace's binding into theirs", lead, "apply", "RoleBinding", "b",
       Binding("batch-user", "[team-b]"), Binding("batch-user", "[team-a]"), false,
       R"(in namespace "team-b")"},
      {"lead deletes their namespace's binding", lead, "delete", "RoleBinding", "b",
       Binding("admin", "[team-a]"), "", true, ""},
      {"lead deletes another namespace's binding", lead, "delete", "RoleBinding", "b",
       Binding("batch-user", "[team-b]"), "", false,
       R"(may not delete RoleBinding "b" in namespace "team-b")"},
      {"lead deletes a binding that does not exist", lead, "delete", "RoleBinding", "b", "", "",
       false, R"(may not delete RoleBinding "b")"},
      // (b) no escalation.
      {"lead binds admin in their namespace", lead, "apply", "RoleBinding", "b", "",
       Binding("admin", "[team-a]"), false, R"(needs bind on Role "admin")"},
      {"lead binds batch-user above their priority cap", lead, "apply", "RoleBinding", "b", "",
       Binding("batch-user", "[team-a]", "maxPriority: 5000\n"), false,
       R"(submit Workload in namespace "team-a" at priority 5000)"},
      {"lead binds batch-user without a priority cap", lead, "apply", "RoleBinding", "b", "",
       Binding("adapter", "[team-a]"), false, "at priority without limit"},
      {"lead binds batch-user non-preemptible", lead, "apply", "RoleBinding", "b", "",
       Binding("batch-user", "[team-a]", "allowNonPreemptible: true\n"), false, "non-preemptible"},
      {"lead binds their own role in their namespace", lead, "apply", "RoleBinding", "b", "",
       Binding("namespace-admin", "[team-a]"), true, ""},
      {"lead binds a role of cluster-scoped rights: inert in a namespace", lead, "apply",
       "RoleBinding", "b", "", Binding("r", "[team-a]"), true, "",
       RoleOf("[{verbs: [apply], kinds: [ClusterQueue, ResourceFlavor]}]")},
      {"lead binds a new role that would give bind", lead, "apply", "RoleBinding", "b", "",
       Binding("r", "[team-a]"), false, R"(it grants bind Role in namespace "team-a")",
       RoleOf("[{verbs: [bind], kinds: [Role]}]")},
      {"bind lets a lead bind admin in their namespace", binder, "apply", "RoleBinding", "b", "",
       Binding("admin", "[team-a]"), true, ""},
      {"bind in team-a is not bind cluster-wide", binder, "apply", "RoleBinding", "b", "",
       Binding("admin", ""), false, R"(may not apply RoleBinding "b")"},
      // Roles: cluster-wide, escalate.
      {"a role writer writes a role within their rights", User("roler"), "apply", "Role", "r", "",
       RoleOf("[{verbs: [get, list], kinds: [Workload, ClusterQueue]}]"), true, ""},
      {"a role writer writes a role beyond their rights", User("roler"), "apply", "Role", "r", "",
       RoleOf("[{verbs: [submit], kinds: [Workload]}]"), false,
       "it grants submit Workload in every namespace, which user \"roler\" does not hold (a role "
       "granting more than one holds needs escalate on Role)"},
      {"a role writer may not write a policy-reading role", User("roler"), "apply", "Role", "r", "",
       RoleOf("[{verbs: [get], kinds: [RoleBinding]}]"), false, "it grants get RoleBinding"},
      {"escalate lets one write any role", User("escalator"), "apply", "Role", "r", "",
       RoleOf("[{verbs: ['*'], kinds: ['*', Role, RoleBinding, QueueGrant]}]"), true, ""},
      {"a lead writes no roles", lead, "apply", "Role", "r", "",
       RoleOf("[{verbs: [get], kinds: [Workload]}]"), false, R"(may not apply Role "r")"},
      // Queue grants: the queue's admins, within what they hold there.
      {"a ClusterQueue's owner grants submit under their cap", User("cq-owner"), "apply",
       "QueueGrant", "g", "", Grant("clusterQueue: cq-a", "[submit]", "maxPriority: 50\n"), true,
       ""},
      {"a ClusterQueue's owner grants admin of it", User("cq-owner"), "apply", "QueueGrant", "g",
       "", Grant("clusterQueue: cq-a", "[admin, preempt]", "maxPriority: 100\n"), true, ""},
      {"a ClusterQueue's owner grants above their cap", User("cq-owner"), "apply", "QueueGrant",
       "g", "", Grant("clusterQueue: cq-a", "[submit]", ""), false, R"(at priority without limit)"},
      {"a ClusterQueue's owner grants on another queue", User("cq-owner"), "apply", "QueueGrant",
       "g", "", Grant("clusterQueue: cq-b", "[submit]", "maxPriority: 0\n"), false,
       R"(may not apply QueueGrant "g")"},
      {"a lead grants submit through their namespace's LocalQueue", lead, "apply", "QueueGrant",
       "g", "", Grant("localQueue: {namespace: team-a, name: lq}", "[submit]", "maxPriority: 0\n"),
       true, ""},
      {"a lead grants preempt, which they hold in their namespace", lead, "apply", "QueueGrant",
       "g", "", Grant("localQueue: {namespace: team-a, name: lq}", "[preempt]", ""), true, ""},
      {"a lead grants on a ClusterQueue", lead, "apply", "QueueGrant", "g", "",
       Grant("clusterQueue: cq-a", "[submit]", "maxPriority: 0\n"), false,
       R"(may not apply QueueGrant "g")"},
      {"a queue admin grants a cohort", User("qadmin"), "apply", "QueueGrant", "g", "",
       Grant("cohort: research", "[admin]", ""), true, ""},
      {"nobody writes nothing", User("nobody"), "apply", "RoleBinding", "b", "",
       Binding("viewer", "[team-a]"), false, R"(user "nobody" may not apply RoleBinding "b")"},
      {"an admin binds admin cluster-wide", User("root", {"tollgate:admins"}), "apply",
       "RoleBinding", "b", "", Binding("admin", ""), true, ""},
  };
  for (const Case& c : cases) {
    PolicyWrite write;
    write.verb = c.verb;
    write.kind = c.kind;
    write.name = c.name;
    write.before = Parse(c.before);
    write.after = Parse(c.after);
    write.incoming_roles = Parse(c.incoming).roles;
    write.after_queue.cluster_queue = "cq-a";  // the LocalQueue team-a/lq points at cq-a
    write.before_queue.cluster_queue = "cq-a";
    const Decision decision = AuthorizePolicyWrite(*authorizer, c.who, write);
    EXPECT_EQ(decision.allowed, c.allowed) << c.what << ": " << decision.reason;
    if (!c.allowed) {
      EXPECT_TRUE(absl::StrContains(decision.reason, c.want))
          << c.what << ":\n  got:  " << decision.reason << "\n  want: " << c.want;
    }
  }
}

TEST(AuthorizePolicyReadTest, ANamespaceAdminReadsTheirNamespacesBindingsOnly) {
  absl::StatusOr<Authorizer> authorizer = Authorizer::Create(Parse(kPolicy));
  ASSERT_TRUE(authorizer.ok()) << authorizer.status();
  AccessRequest get;
  get.verb = "get";
  get.kind = "RoleBinding";
  get.name = "b";
  const Identity lead = User("lead", {"team-a"});
  const Policy in_a = Parse(Binding("batch-user", "[team-a]"));
  const Policy in_b = Parse(Binding("batch-user", "[team-b]"));
  const Policy in_both = Parse(Binding("batch-user", "[team-a, team-b]"));
  const Policy everywhere = Parse(Binding("batch-user", ""));
  EXPECT_TRUE(AuthorizePolicyRead(*authorizer, lead, get, &in_a).allowed);
  EXPECT_FALSE(AuthorizePolicyRead(*authorizer, lead, get, &in_b).allowed);
  const Decision both = AuthorizePolicyRead(*authorizer, lead, get, &in_both);
  EXPECT_FALSE(both.allowed);
  EXPECT_TRUE(
      absl::StrContains(both.reason, R"(may not get RoleBinding "b" in namespace "team-b")"))
      << both.reason;
  EXPECT_FALSE(AuthorizePolicyRead(*authorizer, lead, get, &everywhere).allowed);
  // Absent: NOT_FOUND for whoever reads bindings somewhere, refused for the others.
  EXPECT_TRUE(AuthorizePolicyRead(*authorizer, lead, get, nullptr).allowed);
  EXPECT_FALSE(AuthorizePolicyRead(*authorizer, User("nobody"), get, nullptr).allowed);
  // A cluster-wide reader reads them all.
  EXPECT_TRUE(
      AuthorizePolicyRead(*authorizer, User("root", {"tollgate:admins"}), get, &in_b).allowed);
}

TEST(AuthorizePolicyWriteTest, ACohortGrantReachesOnlyWhatTheAuthorHoldsUnderTheCohort) {
  absl::StatusOr<Authorizer> authorizer = Authorizer::Create(Parse(R"(
kind: QueueGrant
metadata: {name: research-admin}
cohort: research
verbs: [admin]
subjects: [{kind: User, name: dana}]
)"));
  ASSERT_TRUE(authorizer.ok()) << authorizer.status();
  PolicyWrite write;
  write.verb = "apply";
  write.kind = "QueueGrant";
  write.name = "g";
  // A cohort under research: dana administers it through the tree.
  write.after = Parse(Grant("cohort: vision", "[submit]", ""));
  write.after_queue.cohorts = {"vision", "research"};
  EXPECT_TRUE(AuthorizePolicyWrite(*authorizer, User("dana"), write).allowed);
  // A cohort elsewhere: she administers nothing there.
  write.after_queue.cohorts = {"finance"};
  const Decision elsewhere = AuthorizePolicyWrite(*authorizer, User("dana"), write);
  EXPECT_FALSE(elsewhere.allowed);
  EXPECT_TRUE(absl::StrContains(elsewhere.reason, R"(may not apply QueueGrant "g")"))
      << elsewhere.reason;
}

}  // namespace
}  // namespace tollgate::auth
