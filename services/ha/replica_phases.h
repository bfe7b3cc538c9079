#pragma once

// The replica's state machine: follower and leader phases in turn, and what a failed phase
// means. The phases themselves (servers, stores, the warm copy, the election) belong to the
// binary that supplies them; this loop only decides what comes next, so it is unit-tested on
// its own (test/services/ha/replica_phases_test.cc) and not only end to end.
//
//   follow ──elected──▶ lead ──leadership lost / store lost──▶ follow
//     │                  │
//     │                  ├─ failed, etcd unreachable (UNAVAILABLE, CANCELLED): step down,
//     │                  │  follow (and campaign) again; the next promotion starts over
//     │                  └─ failed otherwise (a bad manifest, corrupt state): resign so
//     │                     another replica leads, and exit with the error
//     └─ failed: exit with the error (nothing to give up: this replica does not lead)
//
// A stop ends the loop after the phase in progress returns.

#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "absl/synchronization/notification.h"

namespace tollgate::ha {

class ReplicaPhases {
 public:
  virtual ~ReplicaPhases() = default;
  // Serves as a follower until this replica is elected or stop is notified. OK either way.
  virtual absl::Status Follow() = 0;
  // Serves as the leader until the leadership or the store is lost, or stop is notified; OK
  // after stepping down in order. An error means the promotion or the serving failed.
  virtual absl::Status Lead() = 0;
  // Gives the leadership up, keeping the replica in the race.
  virtual void StepDown(absl::string_view reason) = 0;
  // Gives the leadership up and leaves the race (revokes the lease).
  virtual void Resign() = 0;
};

// How a failed Lead() is answered.
enum class LeadFailure {
  // etcd was unreachable: the next promotion may well succeed.
  kStepDownAndFollow,
  // It would fail again: let another replica lead, and exit.
  kResignAndExit,
};
LeadFailure ClassifyLeadFailure(const absl::Status& status);

// Runs the phases until `stop` or an error it cannot recover from, which it returns.
absl::Status RunReplicaPhases(ReplicaPhases& phases, const absl::Notification& stop);

}  // namespace tollgate::ha
