#include "core/cluster_queue_inactivity.h"

#include <string>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"

namespace tollgate::core {
namespace {

constexpr absl::string_view kPrefix = "Can't admit new workloads: ";

}  // namespace

void AddInactiveCause(ClusterQueueRuntime& cq, absl::string_view reason, absl::string_view clause) {
  if (cq.inactive_reason.empty()) {
    cq.inactive_reason = std::string(reason);
    cq.inactive_message = absl::StrCat(kPrefix, clause, ".");
    return;
  }
  // Only a message of clauses takes another one; Terminating's and a cohort cycle's stand alone.
  if (!absl::StartsWith(cq.inactive_message, kPrefix) ||
      !absl::EndsWith(cq.inactive_message, ".")) {
    return;
  }
  cq.inactive_message.pop_back();
  absl::StrAppend(&cq.inactive_message, ", ", clause, ".");
}

}  // namespace tollgate::core
