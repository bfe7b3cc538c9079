#include "services/manifest/pytorchjob_translator.h"

#include <algorithm>
#include <set>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"

namespace tollgate::manifest {
namespace {

// Kubeflow's replica types in the order Kueue lists them; others follow by name.
int ReplicaTypeRank(const std::string& type) {
  if (type == "Master") return 0;
  if (type == "Worker") return 1;
  return 2;
}

std::vector<std::string> OrderedReplicaTypes(const Json& specs) {
  std::vector<std::string> types;
  for (auto it = specs.begin(); it != specs.end(); ++it) types.push_back(it.key());
  std::sort(types.begin(), types.end(), [](const std::string& a, const std::string& b) {
    const int ra = ReplicaTypeRank(a);
    const int rb = ReplicaTypeRank(b);
    return ra != rb ? ra < rb : a < b;
  });
  return types;
}

}  // namespace

absl::StatusOr<std::vector<PodSetSource>> PyTorchJobTranslator::PodSets(const Json& obj) const {
  const Json* specs = Find(obj, {"spec", "pytorchReplicaSpecs"});
  if (specs == nullptr || !specs->is_object() || specs->empty()) {
    return absl::InvalidArgumentError("spec.pytorchReplicaSpecs: required");
  }
  std::vector<PodSetSource> out;
  std::set<std::string> names;
  for (const std::string& type : OrderedReplicaTypes(*specs)) {
    const Json& replica = (*specs)[type];
    const std::string path = absl::StrCat("spec.pytorchReplicaSpecs.", type);
    const std::string name = PodSetNameFrom(type);
    if (name.empty() || !names.insert(name).second) {
      return absl::InvalidArgumentError(
          absl::StrCat(path, ": replica type \"", type, "\" gives no distinct pod set name"));
    }
    const Json* tmpl = Find(replica, {"template"});
    if (tmpl == nullptr || !tmpl->is_object()) {
      return absl::InvalidArgumentError(absl::StrCat(path, ".template: required"));
    }
    const int64_t replicas = GetInt(replica, {"replicas"}).value_or(1);
    if (replicas < 0 || replicas > INT32_MAX) {
      return absl::InvalidArgumentError(absl::StrCat(path, ".replicas: out of range: ", replicas));
    }
    out.push_back(PodSetSource{name, static_cast<int32_t>(replicas), std::nullopt,
                               absl::StrCat("/spec/pytorchReplicaSpecs/", type, "/template"), *tmpl,
                               true});
  }
  return out;
}

std::string PyTorchJobTranslator::PodPriorityClassName(const Json& obj) const {
  std::string name = GetString(obj, {"spec", "runPolicy", "schedulingPolicy", "priorityClass"});
  if (!name.empty()) return name;
  const Json* specs = Find(obj, {"spec", "pytorchReplicaSpecs"});
  if (specs == nullptr || !specs->is_object()) return "";
  for (const std::string& type : OrderedReplicaTypes(*specs)) {
    name = GetString((*specs)[type], {"template", "spec", "priorityClassName"});
    if (!name.empty()) return name;
  }
  return "";
}

std::optional<JobFinish> PyTorchJobTranslator::Finished(const Json& obj) const {
  if (HasTrueCondition(obj, "Succeeded")) return JobFinish{true, "PyTorchJob succeeded"};
  if (const Json* failed = FindCondition(obj, "Failed");
      failed != nullptr && GetString(*failed, {"status"}) == "True") {
    std::string message = "PyTorchJob failed";
    const std::string detail = GetString(*failed, {"message"});
    if (!detail.empty()) absl::StrAppend(&message, ": ", detail);
    return JobFinish{false, message};
  }
  return std::nullopt;
}

bool PyTorchJobTranslator::IsActive(const Json& obj) const {
  const Json* statuses = Find(obj, {"status", "replicaStatuses"});
  if (statuses == nullptr || !statuses->is_object()) return false;
  for (auto it = statuses->begin(); it != statuses->end(); ++it) {
    if (GetInt(it.value(), {"active"}).value_or(0) > 0) return true;
  }
  return false;
}

bool PyTorchJobTranslator::PodsReady(const Json& obj, const v1::Workload& workload) const {
  return HasTrueCondition(obj, "Running");
}

}  // namespace tollgate::manifest
