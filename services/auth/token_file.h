#pragma once

// The static token file, in kube-apiserver's format: one `token,user,uid,"group1,group2"` per
// line (the groups column optional, quoted when it holds commas); blank lines and lines starting
// with # are skipped. Pure: the caller reads the file.

#include <string>

#include "absl/container/flat_hash_map.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "services/auth/authorizer.h"

namespace tollgate::auth {

using TokenTable = absl::flat_hash_map<std::string, Identity>;

// INVALID_ARGUMENT naming `source`, the line and the problem (too few columns, an empty token or
// user, a duplicate token, an unterminated quote). Identities get method "token".
absl::StatusOr<TokenTable> ParseTokenFile(absl::string_view text, absl::string_view source);

}  // namespace tollgate::auth
