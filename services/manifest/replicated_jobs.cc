#include "services/manifest/replicated_jobs.h"

#include <algorithm>
#include <map>
#include <set>
#include <string>
#include <utility>

#include "absl/strings/str_cat.h"

namespace tollgate::manifest {
namespace {

int64_t Replicas(const Json& job) { return GetInt(job, {"replicas"}).value_or(1); }

}  // namespace

absl::StatusOr<std::vector<PodSetSource>> ReplicatedJobPodSets(const Json& jobs,
                                                               absl::string_view pointer,
                                                               absl::string_view path) {
  if (!jobs.is_array() || jobs.empty()) {
    return absl::InvalidArgumentError(absl::StrCat(path, ": at least one replicated job required"));
  }
  std::vector<PodSetSource> out;
  std::set<std::string> names;
  for (size_t i = 0; i < jobs.size(); ++i) {
    const Json& job = jobs[i];
    const std::string job_path = absl::StrCat(path, "[", i, "]");
    const std::string raw = GetString(job, {"name"});
    const std::string name = PodSetNameFrom(raw);
    if (name.empty() || !names.insert(name).second) {
      return absl::InvalidArgumentError(
          absl::StrCat(job_path, ".name: \"", raw, "\" is empty or repeats another job's name"));
    }
    const Json* tmpl = Find(job, {"template", "spec", "template"});
    if (tmpl == nullptr || !tmpl->is_object()) {
      return absl::InvalidArgumentError(
          absl::StrCat(job_path, ".template.spec.template: required"));
    }
    const int64_t replicas = Replicas(job);
    const int64_t parallelism = GetInt(job, {"template", "spec", "parallelism"}).value_or(1);
    const int64_t completions =
        GetInt(job, {"template", "spec", "completions"}).value_or(parallelism);
    const int64_t per_replica = std::min(parallelism, completions);
    if (replicas < 0 || per_replica < 0 || replicas > INT32_MAX || per_replica > INT32_MAX ||
        replicas * per_replica > INT32_MAX) {
      return absl::InvalidArgumentError(absl::StrCat(job_path, ": replicas (", replicas,
                                                     ") x min(parallelism, completions) (",
                                                     per_replica, ") is out of range"));
    }
    PodSetSource source{name, static_cast<int32_t>(replicas * per_replica), std::nullopt};
    source.replicas = static_cast<int32_t>(replicas);
    source.template_path = absl::StrCat(pointer, "/", i, "/template/spec/template");
    source.pod_template = *tmpl;
    out.push_back(std::move(source));
  }
  return out;
}

std::vector<ReclaimablePod> SucceededReplicaPods(const std::vector<PodSetSource>& sources,
                                                 const Json& statuses) {
  std::vector<ReclaimablePod> out;
  if (!statuses.is_array()) return out;
  std::map<std::string, int64_t> succeeded;
  for (const Json& s : statuses) {
    succeeded[PodSetNameFrom(GetString(s, {"name"}))] = GetInt(s, {"succeeded"}).value_or(0);
  }
  for (const PodSetSource& source : sources) {
    auto it = succeeded.find(source.name);
    if (it == succeeded.end() || it->second <= 0 || it->second > source.replicas ||
        source.replicas <= 0) {
      continue;
    }
    out.push_back(ReclaimablePod{
        source.name, static_cast<int32_t>(it->second * (source.count / source.replicas))});
  }
  return out;
}

bool AnyReplicaActive(const Json& statuses) {
  if (!statuses.is_array()) return false;
  for (const Json& s : statuses) {
    if (GetInt(s, {"active"}).value_or(0) > 0) return true;
  }
  return false;
}

bool AllReplicasReady(const std::vector<PodSetSource>& sources, const Json& statuses) {
  int64_t replicas = 0;
  for (const PodSetSource& source : sources) replicas += source.replicas;
  int64_t ready = 0;
  if (statuses.is_array()) {
    for (const Json& s : statuses) {
      ready += GetInt(s, {"ready"}).value_or(0) + GetInt(s, {"succeeded"}).value_or(0);
    }
  }
  return replicas == ready;
}

}  // namespace tollgate::manifest
