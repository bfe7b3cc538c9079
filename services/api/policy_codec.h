#pragma once

// Conversion between the authorization policy kinds of the API (tollgate.v1 Role, RoleBinding,
// QueueGrant; group tollgate.dev/v1alpha1) and the authorizer's model (services/auth). The
// field names and defaults are the --authz-policy file's, so a policy file applies unchanged and
// `tollgate get -o yaml` of a policy object reads back as one.

#include <vector>

#include "absl/status/statusor.h"
#include "services/auth/authorizer.h"
#include "tollgate/v1/objects.pb.h"

namespace tollgate::api {

// Each checks the object on its own (auth::Validate*): INVALID_ARGUMENT naming the object, the
// field and the value. Whether a binding's role exists is the caller's question.
absl::StatusOr<auth::Role> RoleFromProto(const v1::Role& role);
absl::StatusOr<auth::RoleBinding> RoleBindingFromProto(const v1::RoleBinding& binding);
absl::StatusOr<auth::QueueGrant> QueueGrantFromProto(const v1::QueueGrant& grant);

v1::Role RoleToProto(const auth::Role& role);
v1::RoleBinding RoleBindingToProto(const auth::RoleBinding& binding);
v1::QueueGrant QueueGrantToProto(const auth::QueueGrant& grant);

// The policy the given objects make; objects of other kinds are skipped. Fails on the first
// object that does not convert.
absl::StatusOr<auth::Policy> PolicyFromObjects(const std::vector<v1::ConfigObject>& objects);

}  // namespace tollgate::api
