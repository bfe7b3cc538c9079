#include "services/auth/authorizer.h"

#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "services/auth/policy_parser.h"

namespace tollgate::auth {
namespace {

Identity User(std::string name, std::vector<std::string> groups = {}) {
  return Identity{std::move(name), "", std::move(groups), "token"};
}

AccessRequest Req(std::string verb, std::string kind, std::string ns = "", std::string name = "") {
  AccessRequest r;
  r.verb = std::move(verb);
  r.kind = std::move(kind);
  r.ns = std::move(ns);
  r.name = std::move(name);
  return r;
}

Authorizer FromYaml(const std::string& yaml) {
  absl::StatusOr<Policy> policy = ParsePolicy(yaml, "test.yaml");
  EXPECT_TRUE(policy.ok()) << policy.status();
  absl::StatusOr<Authorizer> authorizer = Authorizer::Create(policy.ok() ? *policy : Policy());
  EXPECT_TRUE(authorizer.ok()) << authorizer.status();
  return *std::move(authorizer);
}

constexpr char kPolicy[] = R"(
kind: RoleBinding
metadata: {name: users-a}
role: batch-user
subjects: [{kind: Group, name: team-a}]
namespaces: [team-a]
---
kind: RoleBinding
metadata: {name: lead-a}
role: batch-user
subjects: [{kind: User, name: lead}]
namespaces: [team-a]
maxPriority: 1000
allowNonPreemptible: true
---
kind: RoleBinding
metadata: {name: queue-admins}
role: batch-admin
subjects: [{kind: User, name: qadmin}]
---
kind: RoleBinding
metadata: {name: viewers}
role: viewer
subjects: [{kind: Group, name: auditors}]
---
kind: RoleBinding
metadata: {name: kube}
role: adapter
subjects: [{kind: User, name: tollgate-kube}]
namespaces: [team-a, team-b]
---
kind: QueueGrant
metadata: {name: oncall-preempts-cq-b}
clusterQueue: cq-b
verbs: [preempt]
subjects: [{kind: User, name: oncall}]
---
kind: QueueGrant
metadata: {name: guest-submits-lq}
localQueue: {namespace: team-b, name: shared}
verbs: [submit]
subjects: [{kind: User, name: guest}]
---
kind: Role
metadata: {name: flavor-editor}
rules: [{verbs: [get, apply], kinds: [ResourceFlavor]}]
---
kind: RoleBinding
metadata: {name: flavors}
role: flavor-editor
subjects: [{kind: User, name: hw}]
)";

struct Case {
  const char* name;
  Identity identity;
  AccessRequest request;
  bool allowed;
};

TEST(AuthorizerTest, RolesBindingsAndQueueGrants) {
  const Authorizer authz = FromYaml(kPolicy);
  AccessRequest submit_a = Req("submit", "Workload", "team-a", "w");
  AccessRequest high = submit_a;
  high.priority = 2147483647;
  AccessRequest np = submit_a;
  np.non_preemptible = true;
  AccessRequest lead_ok = submit_a;
  lead_ok.priority = 1000;
  AccessRequest lead_high = submit_a;
  lead_high.priority = 1001;
  AccessRequest preempt_b = Req("preempt", "Workload", "team-b", "w");
  preempt_b.cluster_queue = "cq-b";
  AccessRequest preempt_c = preempt_b;
  preempt_c.cluster_queue = "cq-c";
  AccessRequest guest_submit = Req("submit", "Workload", "team-b", "g");
  guest_submit.local_queue = "shared";
  AccessRequest guest_other = guest_submit;
  guest_other.local_queue = "private";
  const std::vector<Case> cases = {
      {"MemberSubmitsInOwnNamespace", User("alice", {"team-a"}), submit_a, true},
      {"MemberCannotSubmitElsewhere", User("alice", {"team-a"}),
       Req("submit", "Workload", "team-b", "w"), false},
      {"MemberCannotPreempt", User("alice", {"team-a"}), Req("preempt", "Workload", "team-a", "w"),
       false},
      {"MemberCannotDeleteOtherTeamsWorkload", User("alice", {"team-a"}),
       Req("delete", "Workload", "team-b", "w"), false},
      {"MemberCannotEditClusterQueue", User("alice", {"team-a"}),
       Req("apply", "ClusterQueue", "", "cq-b"), false},
      {"MemberCannotDeleteLocalQueue", User("alice", {"team-a"}),
       Req("delete", "LocalQueue", "team-a", "q"), false},
      {"MemberReadsLocalQueues", User("alice", {"team-a"}), Req("get", "LocalQueue", "team-a", "q"),
       true},
      {"MemberCannotListEveryNamespace", User("alice", {"team-a"}), Req("list", "Workload"), false},
      {"MemberPriorityCapIsZero", User("alice", {"team-a"}), high, false},
      {"MemberCannotMarkNonPreemptible", User("alice", {"team-a"}), np, false},
      {"BindingRaisesCap", User("lead"), lead_ok, true},
      {"BindingCapStillBinds", User("lead"), lead_high, false},
      {"BindingAllowsNonPreemptible", User("lead"), np, true},
      {"BatchAdminEditsClusterQueues", User("qadmin"), Req("apply", "ClusterQueue", "", "cq"),
       true},
      {"BatchAdminPreemptsAnywhere", User("qadmin"), Req("preempt", "Workload", "x", "w"), true},
      {"BatchAdminSubmitsUncapped", User("qadmin"), high, true},
      {"ViewerReadsEverything", User("v", {"auditors"}), Req("list", "Workload"), true},
      {"ViewerCannotSubmit", User("v", {"auditors"}), submit_a, false},
      {"AdapterReports", User("tollgate-kube"), Req("report", "Workload", "team-b", "w"), true},
      {"AdapterOnlyInServedNamespaces", User("tollgate-kube"),
       Req("submit", "Workload", "team-c", "w"), false},
      {"AdapterSubmitsAtAnyPriority", User("tollgate-kube"), high, true},
      {"AdapterCannotPreempt", User("tollgate-kube"), Req("preempt", "Workload", "team-a", "w"),
       false},
      {"ClusterQueueGrantAllowsPreemptInIt", User("oncall"), preempt_b, true},
      {"ClusterQueueGrantNotInOtherQueue", User("oncall"), preempt_c, false},
      {"LocalQueueGrantAllowsSubmit", User("guest"), guest_submit, true},
      {"LocalQueueGrantNotOtherQueue", User("guest"), guest_other, false},
      {"CustomRole", User("hw"), Req("apply", "ResourceFlavor", "", "gpu"), true},
      {"CustomRoleOnlyItsKinds", User("hw"), Req("delete", "ResourceFlavor", "", "gpu"), false},
      {"AdminsGroupIsAdmin", User("root", {"tollgate:admins"}), high, true},
      {"StrangerDenied", User("mallory"), Req("get", "Workload", "team-a", "w"), false},
  };
  for (const Case& c : cases) {
    const Decision d = authz.Authorize(c.identity, c.request);
    EXPECT_EQ(d.allowed, c.allowed) << c.name << ": " << d.reason;
    if (!d.allowed) {
      EXPECT_NE(d.reason.find(c.identity.user), std::string::npos) << c.name << ": " << d.reason;
      EXPECT_NE(d.reason.find(c.request.verb), std::string::npos) << c.name << ": " << d.reason;
      EXPECT_NE(d.reason.find(c.request.kind), std::string::npos) << c.name << ": " << d.reason;
    }
  }
}

// The operator verbs: workload owners deactivate and reprioritize (within their priority cap);
// stopping a queue is for queue admins.
TEST(AuthorizerTest, OperatorVerbs) {
  const Authorizer authz = FromYaml(kPolicy);
  AccessRequest raise = Req("reprioritize", "Workload", "team-a", "w");
  raise.priority = 5;
  AccessRequest zero = raise;
  zero.priority = 0;
  AccessRequest guest_deactivate = Req("deactivate", "Workload", "team-b", "g");
  guest_deactivate.local_queue = "shared";
  AccessRequest stop_cq = Req("stop", "ClusterQueue", "", "cq-b");
  stop_cq.cluster_queue = "cq-b";
  const std::vector<Case> cases = {
      {"OwnerDeactivates", User("alice", {"team-a"}), Req("deactivate", "Workload", "team-a", "w"),
       true},
      {"OwnerCannotDeactivateOtherTeams", User("alice", {"team-a"}),
       Req("deactivate", "Workload", "team-b", "w"), false},
      {"OwnerReprioritizesWithinCap", User("alice", {"team-a"}), zero, true},
      {"OwnerCannotRaiseAboveCap", User("alice", {"team-a"}), raise, false},
      {"LeadRaisesWithinBindingCap", User("lead"), raise, true},
      {"SubmitGrantDeactivatesInItsQueue", User("guest"), guest_deactivate, true},
      {"OwnerCannotStopQueues", User("alice", {"team-a"}), stop_cq, false},
      {"BatchAdminStopsQueues", User("qadmin"), stop_cq, true},
      {"PreemptGrantCannotStop", User("oncall"), stop_cq, false},
      {"ViewerCannotDeactivate", User("v", {"auditors"}),
       Req("deactivate", "Workload", "team-a", "w"), false},
  };
  for (const Case& c : cases) {
    const Decision d = authz.Authorize(c.identity, c.request);
    EXPECT_EQ(d.allowed, c.allowed) << c.name << ": " << d.reason;
  }
}

// tollgate-kube reads a queue's AdmissionChecks to tell whether its pods go through MultiKueue
// (docs/multicluster.md, "The pod-based kinds"), and may not change them.
TEST(AuthorizerTest, TheAdapterReadsAdmissionChecksButDoesNotChangeThem) {
  const Authorizer authz = FromYaml(R"(
kind: RoleBinding
metadata: {name: adapters}
role: adapter
subjects: [{kind: Group, name: "tollgate:adapters"}]
)");
  const Identity kube = User("tollgate-kube", {"tollgate:adapters"});
  EXPECT_TRUE(authz.Authorize(kube, Req("get", "ClusterQueue", "", "cq")).allowed);
  EXPECT_TRUE(authz.Authorize(kube, Req("get", "AdmissionCheck", "", "mk")).allowed);
  EXPECT_FALSE(authz.Authorize(kube, Req("apply", "AdmissionCheck", "", "mk")).allowed);
  EXPECT_FALSE(authz.Authorize(kube, Req("delete", "AdmissionCheck", "", "mk")).allowed);
}

TEST(AuthorizerTest, CheckControllersTouchOnlyTheirOwnChecks) {
  const Authorizer authz = FromYaml(R"(
kind: RoleBinding
metadata: {name: prov}
role: check-controller
subjects: [{kind: User, name: prov-ctl}]
controllerNames: [kueue.x-k8s.io/provisioning-request]
---
kind: RoleBinding
metadata: {name: any-check}
role: check-controller
subjects: [{kind: User, name: platform}]
---
kind: RoleBinding
metadata: {name: admins}
role: batch-admin
subjects: [{kind: User, name: qadmin}]
)");
  auto check = [](std::string verb, std::string controller) {
    AccessRequest r = Req(std::move(verb), "AdmissionCheck", "team-a", "prov");
    r.controller_name = std::move(controller);
    return r;
  };
  const std::string prov = "kueue.x-k8s.io/provisioning-request";
  const std::string multikueue = "kueue.x-k8s.io/multikueue";
  const std::vector<Case> cases = {
      {"BoundControllerUpdates", User("prov-ctl"), check("check", prov), true},
      {"BoundControllerWatches", User("prov-ctl"), check("watch", prov), true},
      {"OtherControllersCheckIsRefused", User("prov-ctl"), check("check", multikueue), false},
      {"OtherControllersWatchIsRefused", User("prov-ctl"), check("watch", multikueue), false},
      {"UnknownCheckIsRefusedToAConfinedBinding", User("prov-ctl"), check("check", ""), false},
      {"ReadsAreNotConfined", User("prov-ctl"), Req("get", "AdmissionCheck", "", "any"), true},
      {"ReadsWorkloads", User("prov-ctl"), Req("get", "Workload", "team-a", "w"), true},
      {"MayNotSubmit", User("prov-ctl"), Req("submit", "Workload", "team-a", "w"), false},
      {"UnconfinedBindingTouchesEveryCheck", User("platform"), check("check", multikueue), true},
      {"BatchAdminDecidesChecks", User("qadmin"), check("check", prov), true},
      {"UsersDoNot", User("alice", {"team-a"}), check("check", prov), false},
  };
  for (const Case& c : cases) {
    const Decision d = authz.Authorize(c.identity, c.request);
    EXPECT_EQ(d.allowed, c.allowed) << c.name << ": " << d.reason;
  }
  const Decision refused = authz.Authorize(User("prov-ctl"), check("check", multikueue));
  EXPECT_NE(refused.reason.find(multikueue), std::string::npos) << refused.reason;
}

TEST(AuthorizerTest, DenialNamesNamespaceAndPriority) {
  const Authorizer authz = FromYaml(kPolicy);
  AccessRequest high = Req("submit", "Workload", "team-a", "w");
  high.priority = 5000;
  const Decision d = authz.Authorize(User("alice", {"team-a"}), high);
  EXPECT_FALSE(d.allowed);
  EXPECT_NE(d.reason.find("namespace \"team-a\""), std::string::npos) << d.reason;
  EXPECT_NE(d.reason.find("priority 5000"), std::string::npos) << d.reason;
}

TEST(AuthorizerTest, ScopeListsBoundNamespaces) {
  const Authorizer authz = FromYaml(kPolicy);
  NamespaceScope scope = authz.Scope(User("tollgate-kube"), "watch", "Workload");
  EXPECT_FALSE(scope.all);
  EXPECT_EQ(scope.namespaces, (std::vector<std::string>{"team-a", "team-b"}));
  EXPECT_TRUE(authz.Scope(User("v", {"auditors"}), "watch", "Workload").all);
  EXPECT_TRUE(authz.Scope(User("mallory"), "watch", "Workload").namespaces.empty());
  EXPECT_TRUE(authz.HasQueueGrant(User("guest")));
  EXPECT_FALSE(authz.HasQueueGrant(User("alice", {"team-a"})));
}

// The live policy: the --authz-policy file plus applied objects, decided as one.
constexpr char kFilePolicy[] = R"(
kind: Role
metadata: {name: flavor-editor}
rules: [{verbs: [get, apply], kinds: [ResourceFlavor]}]
---
kind: RoleBinding
metadata: {name: queue-admins}
role: batch-admin
subjects: [{kind: User, name: qadmin}]
---
kind: RoleBinding
metadata: {name: viewers}
role: viewer
subjects: [{kind: Group, name: auditors}]
)";

constexpr char kAppliedPolicy[] = R"(
kind: Role
metadata: {name: flavor-editor}
rules: [{verbs: ["*"], kinds: ["*"]}]
---
kind: Role
metadata: {name: everything-but-policy}
rules: [{verbs: ["*"], kinds: ["*"]}]
---
kind: RoleBinding
metadata: {name: team-a-users}
role: batch-user
subjects: [{kind: User, name: alice}]
namespaces: [team-a]
---
kind: RoleBinding
metadata: {name: sneaky}
role: flavor-editor
subjects: [{kind: User, name: mallory}]
---
kind: RoleBinding
metadata: {name: dangling}
role: deleted-role
subjects: [{kind: User, name: bob}]
---
kind: RoleBinding
metadata: {name: almost-admin}
role: everything-but-policy
subjects: [{kind: User, name: carol}]
---
kind: QueueGrant
metadata: {name: research-cohort}
cohort: research
verbs: [submit]
subjects: [{kind: Group, name: researchers}]
---
kind: QueueGrant
metadata: {name: research-admin}
cohort: research
verbs: [admin]
subjects: [{kind: User, name: lead}]
)";

Policy ParseOrDie(const std::string& yaml) {
  absl::StatusOr<Policy> policy = ParsePolicy(yaml, "test.yaml");
  EXPECT_TRUE(policy.ok()) << policy.status();
  return policy.ok() ? *policy : Policy();
}

TEST(AuthorizerTest, AppliedPolicyCombinesWithTheFile) {
  // The applied set is not one valid file on its own (it redefines a file role and binds a
  // missing one), so it is parsed document by document as the API takes it.
  Policy applied;
  {
    const std::vector<YAML::Node> docs = YAML::LoadAll(kAppliedPolicy);
    for (size_t i = 0; i < docs.size(); ++i) {
      ASSERT_TRUE(ParsePolicyDocument(docs[i], "applied", applied).ok()) << i;
    }
  }
  std::vector<std::string> ignored;
  const Policy combined = CombinePolicies(ParseOrDie(kFilePolicy), applied, &ignored);
  ASSERT_EQ(ignored.size(), 2u);
  EXPECT_NE(ignored[0].find("Role \"flavor-editor\""), std::string::npos) << ignored[0];
  EXPECT_NE(ignored[1].find("no role named \"deleted-role\""), std::string::npos) << ignored[1];
  absl::StatusOr<Authorizer> authz = Authorizer::Create(combined);
  ASSERT_TRUE(authz.ok()) << authz.status();

  AccessRequest submit_a = Req("submit", "Workload", "team-a", "w");
  // ClusterQueue gpu-1 sits under cohort research (through sub-cohort research-gpu).
  AccessRequest in_research = Req("submit", "Workload", "team-x", "w");
  in_research.cluster_queue = "gpu-1";
  in_research.cohorts = {"research-gpu", "research", "root"};
  AccessRequest elsewhere = in_research;
  elsewhere.cluster_queue = "prod-1";
  elsewhere.cohorts = {"prod", "root"};
  AccessRequest cq_in_research = Req("apply", "ClusterQueue", "", "gpu-1");
  cq_in_research.cluster_queue = "gpu-1";
  cq_in_research.cohorts = in_research.cohorts;
  AccessRequest cq_elsewhere = Req("apply", "ClusterQueue", "", "prod-1");
  cq_elsewhere.cluster_queue = "prod-1";
  cq_elsewhere.cohorts = elsewhere.cohorts;
  AccessRequest lq_in_research = Req("apply", "LocalQueue", "team-x", "q");
  lq_in_research.cluster_queue = "gpu-1";
  lq_in_research.cohorts = in_research.cohorts;
  const std::vector<Case> cases = {
      {"AppliedBindingAllowsSubmit", User("alice"), submit_a, true},
      {"AppliedBindingOnlyInItsNamespace", User("alice"), Req("submit", "Workload", "team-b", "w"),
       false},
      {"FileBindingStillCounts", User("qadmin"), Req("apply", "ClusterQueue", "", "cq"), true},
      {"FileRoleWinsOverAppliedOfSameName", User("mallory"),
       Req("delete", "ClusterQueue", "", "cq"), false},
      {"FileRoleStillUsableByAppliedBinding", User("mallory"),
       Req("apply", "ResourceFlavor", "", "f"), true},
      {"BindingToMissingRoleGrantsNothing", User("bob"), Req("get", "Workload", "team-a", "w"),
       false},
      {"AdminsGroupIsAlwaysAdmin", User("root", {"tollgate:admins"}),
       Req("apply", "RoleBinding", "", "x"), true},
      {"AdminsGroupDeletesPolicy", User("root", {"tollgate:admins"}),
       Req("delete", "QueueGrant", "", "x"), true},
      {"StarKindsDoNotCoverPolicyKinds", User("carol"), Req("apply", "RoleBinding", "", "x"),
       false},
      {"StarKindsCoverTheRest", User("carol"), Req("delete", "ClusterQueue", "", "cq"), true},
      {"BatchAdminCannotApplyBindings", User("qadmin"), Req("apply", "RoleBinding", "", "x"),
       false},
      {"BatchAdminCannotApplyRoles", User("qadmin"), Req("apply", "Role", "", "x"), false},
      {"ViewerDoesNotReadPolicy", User("v", {"auditors"}), Req("list", "RoleBinding"), false},
      {"ViewerReadsQueues", User("v", {"auditors"}), Req("list", "ClusterQueue"), true},
      {"CohortGrantCoversSubtreeQueue", User("r", {"researchers"}), in_research, true},
      {"CohortGrantNotOtherCohorts", User("r", {"researchers"}), elsewhere, false},
      {"CohortGrantNeedsResolvedAncestors", User("r", {"researchers"}),
       Req("submit", "Workload", "team-x", "w"), false},
      {"CohortAdminEditsSubtreeClusterQueue", User("lead"), cq_in_research, true},
      {"CohortAdminNotOutsideSubtree", User("lead"), cq_elsewhere, false},
      {"CohortAdminEditsSubtreeLocalQueue", User("lead"), lq_in_research, true},
      {"CohortSubmitIsNotAdmin", User("r", {"researchers"}), cq_in_research, false},
  };
  for (const Case& c : cases) {
    EXPECT_EQ(authz->Authorize(c.identity, c.request).allowed, c.allowed) << c.name;
  }
}

TEST(AuthorizerTest, PolicyObjectsAreValidatedOnTheirOwn) {
  struct Bad {
    const char* yaml;
    const char* error;
  };
  const Bad cases[] = {
      {"kind: Role\nmetadata: {name: r}\nrules: [{verbs: [fly], kinds: [Workload]}]",
       "Role \"r\": rules[0].verbs: unknown \"fly\""},
      {"kind: Role\nmetadata: {name: r}\nrules: [{verbs: [get], kinds: [Pod]}]",
       "Role \"r\": rules[0].kinds: unknown \"Pod\""},
      {"kind: RoleBinding\nmetadata: {name: b}\nrole: viewer\nsubjects: []",
       "RoleBinding \"b\": no subjects"},
      {"kind: QueueGrant\nmetadata: {name: g}\ncohort: c\nclusterQueue: q\nverbs: [submit]\n"
       "subjects: [{kind: User, name: u}]",
       "QueueGrant \"g\": name exactly one of clusterQueue, localQueue or cohort"},
      {"kind: QueueGrant\nmetadata: {name: g}\ncohort: c\nverbs: [own]\n"
       "subjects: [{kind: User, name: u}]",
       "QueueGrant \"g\": verbs: unknown \"own\""},
  };
  for (const Bad& c : cases) {
    Policy policy;
    const absl::Status status = ParsePolicyDocument(YAML::Load(c.yaml), "in.yaml", policy);
    EXPECT_TRUE(absl::IsInvalidArgument(status)) << c.yaml;
    EXPECT_NE(status.message().find(c.error), std::string::npos) << status;
    EXPECT_TRUE(policy.roles.empty() && policy.bindings.empty() && policy.queue_grants.empty());
  }
}

TEST(PolicyParserTest, ErrorsNameDocumentFieldAndValue) {
  struct Bad {
    const char* yaml;
    const char* want;
  };
  const std::vector<Bad> bad = {
      {"kind: RoleBinding\nmetadata: {name: b}\nrole: nope\nsubjects: [{kind: User, name: a}]\n",
       "no role named \"nope\""},
      {"kind: RoleBinding\nmetadata: {name: b}\nrole: viewer\nsubjects: [{kind: Robot, name: a}]\n",
       "subjects[0].kind: want User or Group, got \"Robot\""},
      {"kind: Role\nmetadata: {name: r}\nrules: [{verbs: [fly], kinds: [Workload]}]\n",
       "rules[0].verbs: unknown \"fly\""},
      {"kind: Role\nmetadata: {name: admin}\nrules: []\n", "built-in roles cannot be redefined"},
      {"kind: QueueGrant\nmetadata: {name: g}\nverbs: [submit]\nsubjects: [{kind: User, name: "
       "a}]\n",
       "name exactly one of clusterQueue, localQueue or cohort"},
      {"kind: RoleBinding\nmetadata: {name: b}\nrole: viewer\nsubjects: [{kind: User, name: "
       "a}]\nmaxPriority: high\n",
       "maxPriority: want a 32-bit integer, got \"high\""},
      {"kind: RoleBinding\nmetadata: {name: b}\nrole: viewer\nsubject: []\n",
       "subject: unknown field"},
      {"kind: ClusterRole\nmetadata: {name: x}\n", "want Role, RoleBinding or QueueGrant"},
  };
  for (const Bad& b : bad) {
    absl::StatusOr<Policy> policy = ParsePolicy(b.yaml, "p.yaml");
    ASSERT_FALSE(policy.ok()) << b.yaml;
    EXPECT_EQ(policy.status().code(), absl::StatusCode::kInvalidArgument);
    EXPECT_NE(policy.status().message().find(b.want), std::string::npos) << policy.status();
    EXPECT_NE(policy.status().message().find("p.yaml"), std::string::npos) << policy.status();
  }
}

TEST(ValidateVerbAndKindTest, NamesTheBadField) {
  EXPECT_TRUE(ValidateVerbAndKind("submit", "Workload").ok());
  EXPECT_NE(ValidateVerbAndKind("fly", "Workload").message().find("verb: unknown \"fly\""),
            std::string::npos);
  EXPECT_NE(ValidateVerbAndKind("get", "Pod").message().find("kind: unknown \"Pod\""),
            std::string::npos);
}

}  // namespace
}  // namespace tollgate::auth
