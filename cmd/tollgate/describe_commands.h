#pragma once

// The `describe` kinds beyond workload and clusterqueue (describe_config_command.cc), called by
// RunDescribe's dispatch.

#include "absl/strings/string_view.h"
#include "cmd/tollgate/cli_session.h"
#include "tollgate/v1/service.pb.h"

namespace tollgate::cli {

int DescribeCohort(Session& s, absl::string_view name);
int DescribeLocalQueue(Session& s, absl::string_view name);
int DescribeResourceFlavor(Session& s, absl::string_view name);
// Role, RoleBinding, QueueGrant: who and what, in the policy file's shape.
int DescribePolicyObject(Session& s, v1::ObjectKind kind, absl::string_view name);

}  // namespace tollgate::cli
