#pragma once

// Reads an authorization policy (Role, RoleBinding and QueueGrant documents) from YAML. The
// format is in docs/security.md. yaml-cpp stays behind this file: it throws, callers get an
// absl::Status naming the document, the field and the value.

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "services/auth/authorizer.h"
#include "yaml-cpp/yaml.h"

namespace tollgate::auth {

// `source` names the text in errors (usually the file path). Documents of other kinds are an
// error; an empty text is an empty policy.
absl::StatusOr<Policy> ParsePolicy(absl::string_view text, absl::string_view source);

// One Role, RoleBinding or QueueGrant document (the manifest parser's way in, for `tollgate
// apply`), appended to `policy`. Checks the object on its own, not against the others (an
// unknown role is left to the caller). Errors read "WHERE (Kind "name"): field: problem".
absl::Status ParsePolicyDocument(const YAML::Node& doc, absl::string_view where, Policy& policy);

}  // namespace tollgate::auth
