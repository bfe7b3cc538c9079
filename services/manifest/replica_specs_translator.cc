#include "services/manifest/replica_specs_translator.h"

#include <algorithm>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"

namespace tollgate::manifest {

absl::StatusOr<std::vector<PodSetSource>> ReplicaSpecsTranslator::PodSets(
    const Json& obj, const ObjectLookup& lookup) const {
  const Json& specs = JsonAt(obj, {"spec", field_});
  const std::string path = absl::StrCat("spec.", field_);
  if (!specs.is_object() || specs.empty()) {
    return absl::InvalidArgumentError(absl::StrCat(path, ": required"));
  }
  for (auto it = specs.begin(); it != specs.end(); ++it) {
    if (std::find(types_.begin(), types_.end(), it.key()) == types_.end()) {
      return absl::InvalidArgumentError(absl::StrCat(path, ": replica type \"", it.key(),
                                                     "\" is not one of ", resource().kind, "'s (",
                                                     absl::StrJoin(types_, ", "), ")"));
    }
  }
  std::vector<PodSetSource> out;
  for (const std::string& type : types_) {
    const Json& replica = JsonAt(specs, {type});
    // A type mapped to null is absent, as Kueue skips a nil spec.
    if (replica.is_null()) continue;
    const std::string replica_path = absl::StrCat(path, ".", type);
    const Json* tmpl = Find(replica, {"template"});
    if (tmpl == nullptr || !tmpl->is_object()) {
      return absl::InvalidArgumentError(absl::StrCat(replica_path, ".template: required"));
    }
    const int64_t replicas = GetInt(replica, {"replicas"}).value_or(1);
    if (replicas < 0 || replicas > INT32_MAX) {
      return absl::InvalidArgumentError(
          absl::StrCat(replica_path, ".replicas: out of range: ", replicas));
    }
    out.push_back(PodSetSource{PodSetNameFrom(type), static_cast<int32_t>(replicas), std::nullopt,
                               absl::StrCat("/spec/", field_, "/", type, "/template"), *tmpl,
                               true});
    out.back().pod_index_label = "training.kubeflow.org/replica-index";
  }
  return out;
}

std::string ReplicaSpecsTranslator::PodPriorityClassName(
    const Json& obj, const std::vector<PodSetSource>& sources) const {
  std::string name = GetString(obj, {"spec", "runPolicy", "schedulingPolicy", "priorityClass"});
  if (!name.empty()) return name;
  return JobKindTranslator::PodPriorityClassName(obj, sources);
}

std::optional<JobFinish> ReplicaSpecsTranslator::Finished(const Json& obj) const {
  return FinishFromConditions(obj, "Succeeded", "Failed", resource().kind);
}

bool ReplicaSpecsTranslator::IsActive(const Json& obj) const {
  const Json& statuses = JsonAt(obj, {"status", "replicaStatuses"});
  if (!statuses.is_object()) return false;
  for (auto it = statuses.begin(); it != statuses.end(); ++it) {
    if (GetInt(it.value(), {"active"}).value_or(0) != 0) return true;
  }
  return false;
}

bool ReplicaSpecsTranslator::PodsReady(const Json& obj, const std::vector<PodSetSource>& sources,
                                       const v1::Workload& workload) const {
  return HasTrueCondition(obj, "Running");
}

}  // namespace tollgate::manifest
