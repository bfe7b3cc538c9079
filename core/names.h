#pragma once

// Kubernetes name validation (k8s.io/apimachinery/pkg/util/validation), so objects that Kueue
// would reject are rejected here with the same reasons.
//
// Each validator returns InvalidArgument whose message holds only the quoted value and the
// reasons, e.g. `"Bad_Name!" is not a valid name: a lowercase RFC 1123 subdomain must ...`;
// callers prefix the field path.

#include "absl/status/status.h"
#include "absl/strings/string_view.h"

namespace tollgate::core {

// Object names (queues, cohorts, flavors): at most 253 bytes of dot-separated RFC 1123 labels.
absl::Status ValidateDns1123Subdomain(absl::string_view value);

// A single RFC 1123 label: at most 63 bytes of [a-z0-9-], alphanumeric at both ends.
absl::Status ValidateDns1123Label(absl::string_view value);

// Resource names and label keys: `[prefix/]name`, where prefix is a DNS subdomain and name is at
// most 63 bytes of [A-Za-z0-9_.-], alphanumeric at both ends.
absl::Status ValidateQualifiedName(absl::string_view value);

// Label values: empty, or at most 63 bytes of [A-Za-z0-9_.-], alphanumeric at both ends.
absl::Status ValidateLabelValue(absl::string_view value);

// Kubernetes' IsDecimalInteger, the form a numeric toleration's and taint's value must take: "0",
// or an optional '-' and digits without a leading zero.
bool IsCanonicalDecimalInteger(absl::string_view value);

}  // namespace tollgate::core
