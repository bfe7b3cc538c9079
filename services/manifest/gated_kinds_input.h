#pragma once

// `tollgate submit -f` for the gated kinds (docs/pod-integrations.md): the workloads
// tollgate-kube would submit for a Pod, the pods of a group, a Deployment, a StatefulSet or a
// LeaderWorkerSet, built by services/manifest/pod_kinds.h. Objects read from files have no uid;
// one derived from kind, namespace and name stands in, so submitting the same file twice is
// idempotent.

#include <cstddef>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "services/manifest/json_util.h"
#include "services/manifest/manifest_parser.h"

namespace tollgate::manifest {

class GatedKindsInput {
 public:
  // Pod, Deployment, StatefulSet or LeaderWorkerSet.
  static bool Handles(absl::string_view kind);

  // Adds the workloads of one object (`where` names it in errors): a plain Pod's, a
  // Deployment's (one per replica, as its pods would have), a StatefulSet's, a
  // LeaderWorkerSet's (one per replica group). A pod of a group is kept until Finish.
  // INVALID_ARGUMENT for another apiVersion of the kind, a missing name, a malformed request.
  absl::Status Add(Json obj, absl::string_view where, std::vector<Manifest>& out);

  // The pod groups' workloads, one per group of the pods added. INVALID_ARGUMENT when members
  // disagree on the total or the queue; FAILED_PRECONDITION when fewer runnable pods than the
  // total were given (without fast admission, Kueue waits for them all).
  absl::Status Finish(std::vector<Manifest>& out);

  // Pods of groups added and not yet finished.
  size_t PendingPods() const;

 private:
  // (namespace, group) -> its pods, in the order read.
  std::map<std::pair<std::string, std::string>, std::vector<Json>> groups_;
};

}  // namespace tollgate::manifest
