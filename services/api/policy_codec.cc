#include "services/api/policy_codec.h"

#include <string>
#include <utility>

#include "absl/strings/str_cat.h"
#include "core/status_macros.h"
#include "services/api/api_validation.h"

namespace tollgate::api {
namespace {

using codec::Reporter;

absl::StatusOr<std::vector<auth::Subject>> SubjectsFromProto(
    const Reporter& r, const google::protobuf::RepeatedPtrField<v1::PolicySubject>& subjects) {
  std::vector<auth::Subject> out;
  for (int i = 0; i < subjects.size(); ++i) {
    auth::Subject subject;
    if (subjects[i].kind() == "User") {
      subject.kind = auth::Subject::Kind::kUser;
    } else if (subjects[i].kind() == "Group") {
      subject.kind = auth::Subject::Kind::kGroup;
    } else {
      return r.Invalid(codec::Child(codec::Index("subjects", i), "kind"),
                       absl::StrCat("want User or Group, got ", codec::Quote(subjects[i].kind())));
    }
    subject.name = subjects[i].name();
    out.push_back(std::move(subject));
  }
  return out;
}

void SubjectsToProto(const std::vector<auth::Subject>& subjects,
                     google::protobuf::RepeatedPtrField<v1::PolicySubject>* out) {
  for (const auth::Subject& subject : subjects) {
    v1::PolicySubject* s = out->Add();
    s->set_kind(subject.kind == auth::Subject::Kind::kUser ? "User" : "Group");
    s->set_name(subject.name);
  }
}

std::vector<std::string> Strings(const google::protobuf::RepeatedPtrField<std::string>& in) {
  return std::vector<std::string>(in.begin(), in.end());
}

// Metadata checks every kind makes; the authorizer's own checks follow.
absl::Status CheckMeta(const Reporter& r, const google::protobuf::Message& object,
                       const v1::ObjectMeta& meta) {
  TOLLGATE_RETURN_IF_ERROR(codec::CheckObjectSize(r, object.ByteSizeLong()));
  return codec::ValidateName(r, "metadata.name", meta.name(), /*label=*/false);
}

}  // namespace

absl::StatusOr<auth::Role> RoleFromProto(const v1::Role& role) {
  const Reporter r("Role", "", role.metadata().name());
  TOLLGATE_RETURN_IF_ERROR(CheckMeta(r, role, role.metadata()));
  auth::Role out;
  out.name = role.metadata().name();
  for (const v1::PolicyRule& rule : role.rules()) {
    out.rules.push_back({Strings(rule.verbs()), Strings(rule.kinds())});
  }
  // Unset is the file's default: at most 0.
  out.priority.max_priority = role.has_max_priority() ? role.max_priority() : 0;
  out.priority.allow_non_preemptible = role.allow_non_preemptible();
  TOLLGATE_RETURN_IF_ERROR(auth::ValidateRole(out));
  return out;
}

absl::StatusOr<auth::RoleBinding> RoleBindingFromProto(const v1::RoleBinding& binding) {
  const Reporter r("RoleBinding", "", binding.metadata().name());
  TOLLGATE_RETURN_IF_ERROR(CheckMeta(r, binding, binding.metadata()));
  auth::RoleBinding out;
  out.name = binding.metadata().name();
  out.role = binding.role();
  TOLLGATE_ASSIGN_OR_RETURN(out.subjects, SubjectsFromProto(r, binding.subjects()));
  out.namespaces = Strings(binding.namespaces());
  out.controller_names = Strings(binding.controller_names());
  if (binding.has_max_priority()) out.max_priority = binding.max_priority();
  if (binding.has_allow_non_preemptible()) {
    out.allow_non_preemptible = binding.allow_non_preemptible();
  }
  TOLLGATE_RETURN_IF_ERROR(auth::ValidateRoleBinding(out));
  return out;
}

absl::StatusOr<auth::QueueGrant> QueueGrantFromProto(const v1::QueueGrant& grant) {
  const Reporter r("QueueGrant", "", grant.metadata().name());
  TOLLGATE_RETURN_IF_ERROR(CheckMeta(r, grant, grant.metadata()));
  auth::QueueGrant out;
  out.name = grant.metadata().name();
  out.cluster_queue = grant.cluster_queue();
  out.local_queue_namespace = grant.local_queue().namespace_();
  out.local_queue = grant.local_queue().name();
  out.cohort = grant.cohort();
  out.verbs = Strings(grant.verbs());
  TOLLGATE_ASSIGN_OR_RETURN(out.subjects, SubjectsFromProto(r, grant.subjects()));
  if (grant.has_max_priority()) out.priority.max_priority = grant.max_priority();
  out.priority.allow_non_preemptible = grant.allow_non_preemptible();
  TOLLGATE_RETURN_IF_ERROR(auth::ValidateQueueGrant(out));
  return out;
}

v1::Role RoleToProto(const auth::Role& role) {
  v1::Role out;
  out.mutable_metadata()->set_name(role.name);
  for (const auth::Rule& rule : role.rules) {
    v1::PolicyRule* r = out.add_rules();
    for (const std::string& verb : rule.verbs) r->add_verbs(verb);
    for (const std::string& kind : rule.kinds) r->add_kinds(kind);
  }
  if (role.priority.max_priority.has_value()) out.set_max_priority(*role.priority.max_priority);
  out.set_allow_non_preemptible(role.priority.allow_non_preemptible);
  return out;
}

v1::RoleBinding RoleBindingToProto(const auth::RoleBinding& binding) {
  v1::RoleBinding out;
  out.mutable_metadata()->set_name(binding.name);
  out.set_role(binding.role);
  SubjectsToProto(binding.subjects, out.mutable_subjects());
  for (const std::string& ns : binding.namespaces) out.add_namespaces(ns);
  for (const std::string& c : binding.controller_names) out.add_controller_names(c);
  if (binding.max_priority.has_value()) out.set_max_priority(*binding.max_priority);
  if (binding.allow_non_preemptible.has_value()) {
    out.set_allow_non_preemptible(*binding.allow_non_preemptible);
  }
  return out;
}

v1::QueueGrant QueueGrantToProto(const auth::QueueGrant& grant) {
  v1::QueueGrant out;
  out.mutable_metadata()->set_name(grant.name);
  out.set_cluster_queue(grant.cluster_queue);
  if (!grant.local_queue.empty() || !grant.local_queue_namespace.empty()) {
    out.mutable_local_queue()->set_namespace_(grant.local_queue_namespace);
    out.mutable_local_queue()->set_name(grant.local_queue);
  }
  out.set_cohort(grant.cohort);
  for (const std::string& verb : grant.verbs) out.add_verbs(verb);
  SubjectsToProto(grant.subjects, out.mutable_subjects());
  if (grant.priority.max_priority.has_value()) {
    out.set_max_priority(*grant.priority.max_priority);
  }
  out.set_allow_non_preemptible(grant.priority.allow_non_preemptible);
  return out;
}

absl::StatusOr<auth::Policy> PolicyFromObjects(const std::vector<v1::ConfigObject>& objects) {
  auth::Policy policy;
  for (const v1::ConfigObject& object : objects) {
    if (object.has_role()) {
      TOLLGATE_ASSIGN_OR_RETURN(auth::Role role, RoleFromProto(object.role()));
      policy.roles.push_back(std::move(role));
    } else if (object.has_role_binding()) {
      TOLLGATE_ASSIGN_OR_RETURN(auth::RoleBinding binding,
                                RoleBindingFromProto(object.role_binding()));
      policy.bindings.push_back(std::move(binding));
    } else if (object.has_queue_grant()) {
      TOLLGATE_ASSIGN_OR_RETURN(auth::QueueGrant grant, QueueGrantFromProto(object.queue_grant()));
      policy.queue_grants.push_back(std::move(grant));
    }
  }
  return policy;
}

}  // namespace tollgate::api
