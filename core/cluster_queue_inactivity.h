#pragma once

// A ClusterQueue's Active condition as Kueue's clusterQueue.inactiveReason builds it
// (pkg/cache/scheduler/clusterqueue.go): while the queue is merely pending (not terminating),
// every cause adds a clause to one message, "Can't admit new workloads: is stopped, references
// missing ResourceFlavor(s): a,b.", and the condition's reason is the first cause's.

#include "absl/strings/string_view.h"
#include "core/queue_router.h"

namespace tollgate::core {

// Adds one cause to `cq`'s inactive_reason and inactive_message. A queue already inactive for a
// reason that ends the list (Terminating, CohortCycle) keeps its condition as it is.
void AddInactiveCause(ClusterQueueRuntime& cq, absl::string_view reason, absl::string_view clause);

}  // namespace tollgate::core
