#pragma once

// Kueue's integrations.labelKeysToCopy (jobframework's NewWorkload, the pod group's getByKey):
// which of a job's labels its workload carries. The labels are copied when the workload is
// made; a later change of the job's labels does not reach it.

#include <initializer_list>
#include <map>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "services/manifest/json_util.h"
#include "tollgate/v1/objects.pb.h"

namespace tollgate::manifest {

// The labels of `obj` (metadata.labels, or the labels at `labels_path`, e.g. a StatefulSet's
// pod template) under `keys`; a key the object does not carry is left out.
std::map<std::string, std::string> LabelsToCopy(const Json& obj,
                                                const std::vector<std::string>& keys);
std::map<std::string, std::string> LabelsToCopyAt(const Json& obj,
                                                  std::initializer_list<absl::string_view> path,
                                                  const std::vector<std::string>& keys);

// A pod group's labels under `keys`: each key a pod carries, with its value; pods that do not
// carry it do not count. Two pods with different values for one key are INVALID_ARGUMENT
// naming the key, both pods and both values (Kueue refuses to make the workload).
absl::StatusOr<std::map<std::string, std::string>> GroupLabelsToCopy(
    const std::vector<Json>& pods, const std::vector<std::string>& keys);

// Puts `labels` on the workload, except where the workload already carries the key: the labels
// Tollgate sets itself (kueue.x-k8s.io/job-uid, ...) win, as in Kueue, where the job-uid label
// is set after the copy.
void AddCopiedLabels(const std::map<std::string, std::string>& labels, v1::Workload& wl);

}  // namespace tollgate::manifest
