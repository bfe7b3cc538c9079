#include "services/auth/policy_parser.h"

#include <limits>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "common/yaml_documents.h"
#include "yaml-cpp/yaml.h"

namespace tollgate::auth {
namespace {

// Errors name where they are: "policy.yaml: document 2 (RoleBinding \"x\"): subjects[0].kind".
class Where {
 public:
  Where(absl::string_view source, int document)
      : prefix_(absl::StrCat(source, ": document ", document)) {}
  explicit Where(std::string prefix) : prefix_(std::move(prefix)) {}
  void SetObject(std::string object) { object_ = std::move(object); }
  absl::Status Error(absl::string_view field, absl::string_view problem) const {
    std::string where = prefix_;
    if (!object_.empty()) absl::StrAppend(&where, where.empty() ? "" : " ", "(", object_, ")");
    return absl::InvalidArgumentError(
        absl::StrCat(where, where.empty() ? "" : ": ", field, ": ", problem));
  }

 private:
  std::string prefix_;
  std::string object_;
};

absl::Status CheckFields(const Where& where, const YAML::Node& node, absl::string_view path,
                         const std::set<std::string>& known) {
  if (!node.IsMap()) return where.Error(path, "want a mapping");
  for (const auto& item : node) {
    const std::string key = item.first.as<std::string>();
    if (!known.count(key)) {
      return where.Error(absl::StrCat(path, path.empty() ? "" : ".", key),
                         absl::StrCat("unknown field (known: ", absl::StrJoin(known, ", "), ")"));
    }
  }
  return absl::OkStatus();
}

absl::StatusOr<std::string> String(const Where& where, const YAML::Node& node,
                                   absl::string_view path) {
  if (!node.IsScalar()) return where.Error(path, "want a string");
  return node.as<std::string>();
}

absl::StatusOr<std::vector<std::string>> Strings(const Where& where, const YAML::Node& node,
                                                 absl::string_view path) {
  std::vector<std::string> out;
  if (!node.IsDefined() || node.IsNull()) return out;
  if (!node.IsSequence()) return where.Error(path, "want a list of strings");
  for (size_t i = 0; i < node.size(); ++i) {
    absl::StatusOr<std::string> s = String(where, node[i], absl::StrCat(path, "[", i, "]"));
    if (!s.ok()) return s.status();
    out.push_back(*std::move(s));
  }
  return out;
}

absl::StatusOr<std::optional<int32_t>> OptionalInt32(const Where& where, const YAML::Node& node,
                                                     absl::string_view path) {
  if (!node.IsDefined() || node.IsNull()) return std::optional<int32_t>();
  int64_t value = 0;
  if (!node.IsScalar() || !absl::SimpleAtoi(node.Scalar(), &value) ||
      value < std::numeric_limits<int32_t>::min() || value > std::numeric_limits<int32_t>::max()) {
    return where.Error(path, absl::StrCat("want a 32-bit integer, got \"",
                                          node.IsScalar() ? node.Scalar() : "", "\""));
  }
  return std::optional<int32_t>(static_cast<int32_t>(value));
}

absl::StatusOr<std::optional<bool>> OptionalBool(const Where& where, const YAML::Node& node,
                                                 absl::string_view path) {
  if (!node.IsDefined() || node.IsNull()) return std::optional<bool>();
  if (node.IsScalar() && node.Scalar() == "true") return std::optional<bool>(true);
  if (node.IsScalar() && node.Scalar() == "false") return std::optional<bool>(false);
  return where.Error(
      path, absl::StrCat("want true or false, got \"", node.IsScalar() ? node.Scalar() : "", "\""));
}

absl::StatusOr<std::vector<Subject>> Subjects(const Where& where, const YAML::Node& node) {
  std::vector<Subject> out;
  if (!node.IsDefined() || !node.IsSequence()) return where.Error("subjects", "want a list");
  for (size_t i = 0; i < node.size(); ++i) {
    const std::string path = absl::StrCat("subjects[", i, "]");
    if (absl::Status s = CheckFields(where, node[i], path, {"kind", "name"}); !s.ok()) return s;
    absl::StatusOr<std::string> kind = String(where, node[i]["kind"], path + ".kind");
    if (!kind.ok()) return kind.status();
    absl::StatusOr<std::string> name = String(where, node[i]["name"], path + ".name");
    if (!name.ok()) return name.status();
    Subject subject;
    if (*kind == "User") {
      subject.kind = Subject::Kind::kUser;
    } else if (*kind == "Group") {
      subject.kind = Subject::Kind::kGroup;
    } else {
      return where.Error(path + ".kind", absl::StrCat("want User or Group, got \"", *kind, "\""));
    }
    subject.name = *std::move(name);
    out.push_back(std::move(subject));
  }
  return out;
}

#define ASSIGN_OR_RETURN_POLICY(lhs, expr) \
  {                                        \
    auto _v = (expr);                      \
    if (!_v.ok()) return _v.status();      \
    lhs = *std::move(_v);                  \
  }

absl::Status ParseDocumentOrThrow(const Where& in_where, const YAML::Node& doc, Policy& policy) {
  Where where = in_where;
  if (!doc.IsMap()) return where.Error("", "want a mapping");
  std::string kind;
  ASSIGN_OR_RETURN_POLICY(kind, String(where, doc["kind"], "kind"));
  std::string name;
  if (const YAML::Node meta = doc["metadata"]; meta.IsDefined()) {
    // What `tollgate get -o yaml` prints besides the name is the server's; taken and dropped so
    // its output applies back.
    if (absl::Status s =
            CheckFields(where, meta, "metadata",
                        {"name", "uid", "resourceVersion", "generation", "creationTimestamp"});
        !s.ok()) {
      return s;
    }
    ASSIGN_OR_RETURN_POLICY(name, String(where, meta["name"], "metadata.name"));
  } else {
    return where.Error("metadata.name", "missing");
  }
  where.SetObject(absl::StrCat(kind, " \"", name, "\""));
  if (kind == "Role") {
    if (absl::Status s = CheckFields(
            where, doc, "",
            {"apiVersion", "kind", "metadata", "rules", "maxPriority", "allowNonPreemptible"});
        !s.ok()) {
      return s;
    }
    Role role;
    role.name = name;
    const YAML::Node rules = doc["rules"];
    if (!rules.IsSequence()) return where.Error("rules", "want a list");
    for (size_t i = 0; i < rules.size(); ++i) {
      const std::string path = absl::StrCat("rules[", i, "]");
      if (absl::Status s = CheckFields(where, rules[i], path, {"verbs", "kinds"}); !s.ok()) {
        return s;
      }
      Rule rule;
      ASSIGN_OR_RETURN_POLICY(rule.verbs, Strings(where, rules[i]["verbs"], path + ".verbs"));
      ASSIGN_OR_RETURN_POLICY(rule.kinds, Strings(where, rules[i]["kinds"], path + ".kinds"));
      role.rules.push_back(std::move(rule));
    }
    ASSIGN_OR_RETURN_POLICY(role.priority.max_priority,
                            OptionalInt32(where, doc["maxPriority"], "maxPriority"));
    // Unset is the documented default: at most 0, as batch-user.
    if (!role.priority.max_priority.has_value()) role.priority.max_priority = 0;
    std::optional<bool> allow_np;
    ASSIGN_OR_RETURN_POLICY(allow_np,
                            OptionalBool(where, doc["allowNonPreemptible"], "allowNonPreemptible"));
    role.priority.allow_non_preemptible = allow_np.value_or(false);
    policy.roles.push_back(std::move(role));
  } else if (kind == "RoleBinding") {
    if (absl::Status s =
            CheckFields(where, doc, "",
                        {"apiVersion", "kind", "metadata", "role", "subjects", "namespaces",
                         "maxPriority", "allowNonPreemptible", "controllerNames"});
        !s.ok()) {
      return s;
    }
    RoleBinding binding;
    binding.name = name;
    ASSIGN_OR_RETURN_POLICY(binding.role, String(where, doc["role"], "role"));
    ASSIGN_OR_RETURN_POLICY(binding.subjects, Subjects(where, doc["subjects"]));
    ASSIGN_OR_RETURN_POLICY(binding.namespaces, Strings(where, doc["namespaces"], "namespaces"));
    ASSIGN_OR_RETURN_POLICY(binding.controller_names,
                            Strings(where, doc["controllerNames"], "controllerNames"));
    ASSIGN_OR_RETURN_POLICY(binding.max_priority,
                            OptionalInt32(where, doc["maxPriority"], "maxPriority"));
    ASSIGN_OR_RETURN_POLICY(binding.allow_non_preemptible,
                            OptionalBool(where, doc["allowNonPreemptible"], "allowNonPreemptible"));
    policy.bindings.push_back(std::move(binding));
  } else if (kind == "QueueGrant") {
    if (absl::Status s =
            CheckFields(where, doc, "",
                        {"apiVersion", "kind", "metadata", "clusterQueue", "localQueue", "cohort",
                         "verbs", "subjects", "maxPriority", "allowNonPreemptible"});
        !s.ok()) {
      return s;
    }
    QueueGrant grant;
    grant.name = name;
    if (doc["clusterQueue"].IsDefined()) {
      ASSIGN_OR_RETURN_POLICY(grant.cluster_queue,
                              String(where, doc["clusterQueue"], "clusterQueue"));
    }
    if (doc["cohort"].IsDefined()) {
      ASSIGN_OR_RETURN_POLICY(grant.cohort, String(where, doc["cohort"], "cohort"));
    }
    if (const YAML::Node lq = doc["localQueue"]; lq.IsDefined()) {
      if (absl::Status s = CheckFields(where, lq, "localQueue", {"namespace", "name"}); !s.ok()) {
        return s;
      }
      ASSIGN_OR_RETURN_POLICY(grant.local_queue_namespace,
                              String(where, lq["namespace"], "localQueue.namespace"));
      ASSIGN_OR_RETURN_POLICY(grant.local_queue, String(where, lq["name"], "localQueue.name"));
    }
    ASSIGN_OR_RETURN_POLICY(grant.verbs, Strings(where, doc["verbs"], "verbs"));
    ASSIGN_OR_RETURN_POLICY(grant.subjects, Subjects(where, doc["subjects"]));
    ASSIGN_OR_RETURN_POLICY(grant.priority.max_priority,
                            OptionalInt32(where, doc["maxPriority"], "maxPriority"));
    std::optional<bool> allow_np;
    ASSIGN_OR_RETURN_POLICY(allow_np,
                            OptionalBool(where, doc["allowNonPreemptible"], "allowNonPreemptible"));
    grant.priority.allow_non_preemptible = allow_np.value_or(false);
    policy.queue_grants.push_back(std::move(grant));
  } else {
    return where.Error("kind",
                       absl::StrCat("want Role, RoleBinding or QueueGrant, got \"", kind, "\""));
  }
  return absl::OkStatus();
}

}  // namespace

absl::Status ParsePolicyDocument(const YAML::Node& doc, absl::string_view where, Policy& policy) {
  const std::string prefix = where.empty() ? "" : absl::StrCat(where, ": ");
  Policy one;
  try {
    if (absl::Status s = ParseDocumentOrThrow(Where(std::string(where)), doc, one); !s.ok()) {
      return s;
    }
  } catch (const YAML::Exception& e) {
    return absl::InvalidArgumentError(absl::StrCat(prefix, e.what()));
  }
  absl::Status valid = absl::OkStatus();
  for (const Role& role : one.roles) valid.Update(ValidateRole(role));
  for (const RoleBinding& binding : one.bindings) valid.Update(ValidateRoleBinding(binding));
  for (const QueueGrant& grant : one.queue_grants) valid.Update(ValidateQueueGrant(grant));
  if (!valid.ok()) {
    return absl::InvalidArgumentError(absl::StrCat(prefix, valid.message()));
  }
  policy.roles.insert(policy.roles.end(), one.roles.begin(), one.roles.end());
  policy.bindings.insert(policy.bindings.end(), one.bindings.begin(), one.bindings.end());
  policy.queue_grants.insert(policy.queue_grants.end(), one.queue_grants.begin(),
                             one.queue_grants.end());
  return absl::OkStatus();
}

absl::StatusOr<Policy> ParsePolicy(absl::string_view text, absl::string_view source) {
  Policy policy;
  absl::StatusOr<std::vector<YAML::Node>> docs = common::LoadYamlDocuments(text, source);
  if (!docs.ok()) return docs.status();
  try {
    int n = 0;
    for (const YAML::Node& doc : *docs) {
      ++n;
      if (doc.IsNull()) continue;
      if (absl::Status s = ParseDocumentOrThrow(Where(source, n), doc, policy); !s.ok()) return s;
    }
  } catch (const YAML::Exception& e) {
    return absl::InvalidArgumentError(absl::StrCat(source, ": ", e.what()));
  }
  // Cross-object checks (unknown role, bad verb) belong to Authorizer::Create; run them here
  // too so a bad file is refused with its name.
  absl::StatusOr<Authorizer> check = Authorizer::Create(policy);
  if (!check.ok()) {
    return absl::InvalidArgumentError(absl::StrCat(source, ": ", check.status().message()));
  }
  return policy;
}

}  // namespace tollgate::auth
