#include "core/deletion_rule.h"

namespace tollgate::core {

DeletionRule DeletionRuleOf(ObjectKind kind) {
  // No default: a new kind must choose its rule here.
  switch (kind) {
    case ObjectKind::kClusterQueue:
    case ObjectKind::kNamespace:
      return DeletionRule::kTerminatesWhileInUse;
    case ObjectKind::kResourceFlavor:
      return DeletionRule::kRefusedWhileNamed;
    case ObjectKind::kAdmissionCheck:
    case ObjectKind::kTopology:
      return DeletionRule::kTerminatesWhileNamed;
    case ObjectKind::kCohort:
    case ObjectKind::kLocalQueue:
    case ObjectKind::kWorkloadPriorityClass:
    case ObjectKind::kPriorityClass:
    case ObjectKind::kRole:
    case ObjectKind::kRoleBinding:
    case ObjectKind::kQueueGrant:
    // Kueue keeps no finalizer on either: a check naming a config or cluster that is gone turns
    // inactive with a reason (core/multikueue_checks.h).
    case ObjectKind::kMultiKueueConfig:
    case ObjectKind::kMultiKueueCluster:
      return DeletionRule::kAtOnce;
  }
  return DeletionRule::kAtOnce;
}

bool CanTerminate(ObjectKind kind) {
  const DeletionRule rule = DeletionRuleOf(kind);
  return rule == DeletionRule::kTerminatesWhileInUse || rule == DeletionRule::kTerminatesWhileNamed;
}

}  // namespace tollgate::core
