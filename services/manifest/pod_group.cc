#include "services/manifest/pod_group.h"

#include <algorithm>
#include <charconv>
#include <map>
#include <tuple>
#include <utility>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "services/manifest/pod_role_hash.h"

namespace tollgate::manifest {
namespace {

using Json = nlohmann::json;

const Json* Member(const Json& obj, absl::string_view key) {
  if (!obj.is_object()) return nullptr;
  auto it = obj.find(std::string(key));
  return it == obj.end() ? nullptr : &*it;
}

const Json* Path(const Json& obj, std::initializer_list<absl::string_view> keys) {
  const Json* at = &obj;
  for (absl::string_view key : keys) {
    at = Member(*at, key);
    if (at == nullptr) return nullptr;
  }
  return at;
}

std::string StringAt(const Json& obj, std::initializer_list<absl::string_view> keys) {
  const Json* v = Path(obj, keys);
  return v != nullptr && v->is_string() ? v->get<std::string>() : std::string();
}

absl::Time TimeAt(const Json& obj, std::initializer_list<absl::string_view> keys) {
  absl::Time t = absl::InfinitePast();
  std::string error;
  const std::string text = StringAt(obj, keys);
  if (text.empty() || !absl::ParseTime(absl::RFC3339_full, text, &t, &error)) {
    return absl::InfinitePast();
  }
  return t;
}

// Kueue's sortActivePods: the pods to keep first. Ungated pods before gated ones (they may
// already run), then the oldest; the name settles ties so the choice is deterministic.
void SortKeepFirst(std::vector<const Json*>& pods) {
  std::stable_sort(pods.begin(), pods.end(), [](const Json* a, const Json* b) {
    return std::make_tuple(IsGated(*a), TimeAt(*a, {"metadata", "creationTimestamp"}),
                           PodName(*a)) <
           std::make_tuple(IsGated(*b), TimeAt(*b, {"metadata", "creationTimestamp"}), PodName(*b));
  });
}

std::optional<int32_t> ParseCount(const std::string& text) {
  int32_t value = 0;
  const char* end = text.data() + text.size();
  auto [ptr, ec] = std::from_chars(text.data(), end, value);
  if (ec != std::errc() || ptr != end || text.empty()) return std::nullopt;
  return value;
}

// The pods' roles by hash, counted, in hash order.
absl::StatusOr<std::vector<PodRole>> RolesOf(const std::vector<const Json*>& pods) {
  std::map<std::string, PodRole> roles;
  for (const Json* pod : pods) {
    absl::StatusOr<std::string> hash = PodRoleHash(*pod);
    if (!hash.ok()) {
      return absl::InvalidArgumentError(absl::StrCat(
          "pod ", PodName(*pod), ": failed to calculate its role hash: ", hash.status().message()));
    }
    auto [it, inserted] = roles.try_emplace(*hash, PodRole{*hash, 0, *pod});
    it->second.count++;
  }
  std::vector<PodRole> out;
  for (auto& [hash, role] : roles) out.push_back(std::move(role));
  return out;
}

// Kueue's equivalentToWorkload: each role (sorted by hash) is one of the workload's pod sets, in
// their order, counting no more pods than it does (any number once the workload finished).
bool EquivalentRoles(const std::vector<PodRole>& roles, const std::vector<WorkloadPodSet>& workload,
                     bool workload_finished) {
  if (!workload_finished && workload.size() < roles.size()) return false;
  size_t j = 0;
  for (const PodRole& role : roles) {
    while (j < workload.size() && workload[j].name != role.hash) ++j;
    if (j == workload.size()) return false;
    if (!workload_finished && workload[j].count < role.count) return false;
    ++j;
  }
  return true;
}

}  // namespace

std::string PodName(const Json& pod) { return StringAt(pod, {"metadata", "name"}); }
std::string PodPhase(const Json& pod) { return StringAt(pod, {"status", "phase"}); }
std::string PodLabel(const Json& pod, absl::string_view key) {
  return StringAt(pod, {"metadata", "labels", key});
}
std::string PodAnnotation(const Json& pod, absl::string_view key) {
  return StringAt(pod, {"metadata", "annotations", key});
}

bool IsGated(const Json& pod) {
  const Json* gates = Path(pod, {"spec", "schedulingGates"});
  if (gates == nullptr || !gates->is_array()) return false;
  for (const Json& gate : *gates) {
    if (StringAt(gate, {"name"}) == kAdmissionGate) return true;
  }
  return false;
}

bool IsTerminated(const Json& pod) {
  const std::string phase = PodPhase(pod);
  return phase == "Succeeded" || phase == "Failed";
}

bool IsReady(const Json& pod) {
  const Json* conditions = Path(pod, {"status", "conditions"});
  if (conditions == nullptr || !conditions->is_array()) return false;
  for (const Json& c : *conditions) {
    if (StringAt(c, {"type"}) == "Ready") return StringAt(c, {"status"}) == "True";
  }
  return false;
}

bool IsRunnableOrSucceeded(const Json& pod) {
  if (Path(pod, {"metadata", "deletionTimestamp"}) != nullptr &&
      StringAt(pod, {"spec", "nodeName"}).empty()) {
    return false;
  }
  return PodPhase(pod) != "Failed";
}

bool IsActivePod(const Json& pod, absl::Time now) {
  if (PodPhase(pod) != "Running") return false;
  // A pod stuck terminating (its node lost) must not hold the quota forever.
  const Json* grace = Path(pod, {"metadata", "deletionGracePeriodSeconds"});
  const absl::Time deleted = TimeAt(pod, {"metadata", "deletionTimestamp"});
  if (deleted != absl::InfinitePast() && grace != nullptr && grace->is_number_integer() &&
      now > deleted + absl::Seconds(grace->get<int64_t>())) {
    return false;
  }
  return true;
}

std::string PodGroupName(const Json& pod) {
  const std::string annotated = PodAnnotation(pod, kPodGroupNameKey);
  return annotated.empty() ? PodLabel(pod, kPodGroupNameKey) : annotated;
}

absl::StatusOr<PodGroupInfo> ReadPodGroup(const std::vector<Json>& pods,
                                          absl::string_view queue_label_key) {
  if (pods.empty()) return absl::NotFoundError("the pod group has no pods");
  const Json& first = pods.front();
  PodGroupInfo info;
  info.name = PodGroupName(first);
  const std::string total_text = PodAnnotation(first, kPodGroupTotalCountAnnotation);
  const std::optional<int32_t> total = ParseCount(total_text);
  if (!total.has_value() || *total < 1) {
    return absl::InvalidArgumentError(absl::StrCat(
        "pod ", PodName(first), ": metadata.annotations[", kPodGroupTotalCountAnnotation,
        "]: must be an integer greater than zero, got \"", total_text, "\""));
  }
  info.total_count = *total;
  info.fast_admission = PodAnnotation(first, kPodGroupFastAdmissionAnnotation) == "true";
  info.serving = PodAnnotation(first, kPodGroupServingAnnotation) == "true";
  info.queue_name = PodLabel(first, queue_label_key);
  info.prebuilt_workload = PrebuiltWorkloadName(first);
  for (const Json& pod : pods) {
    if (PodAnnotation(pod, kRetriableInGroupAnnotation) == "false") info.unretriable = true;
    // A failed pod keeps what it was created with; its replacement must agree.
    if (PodPhase(pod) == "Failed") continue;
    const std::string queue = PodLabel(pod, queue_label_key);
    if (queue != info.queue_name) {
      return absl::InvalidArgumentError(
          absl::StrCat("pods '", PodName(first), "' and '", PodName(pod),
                       "' have different queue names: ", info.queue_name, "!=", queue));
    }
    const std::string text = PodAnnotation(pod, kPodGroupTotalCountAnnotation);
    const std::optional<int32_t> count = ParseCount(text);
    if (!count.has_value() || *count != info.total_count) {
      return absl::InvalidArgumentError(absl::StrCat(
          "pods '", PodName(first), "' and '", PodName(pod), "' have different '",
          kPodGroupTotalCountAnnotation, "' values: ", info.total_count, "!=\"", text, "\""));
    }
  }
  return info;
}

absl::StatusOr<NewGroupWorkload> ComposeGroup(const std::vector<Json>& pods,
                                              const PodGroupInfo& group) {
  std::vector<const Json*> active;
  for (const Json& pod : pods) {
    if (IsRunnableOrSucceeded(pod)) active.push_back(&pod);
  }
  if (!group.fast_admission && static_cast<int32_t>(active.size()) < group.total_count) {
    return absl::FailedPreconditionError(
        absl::StrCat("'", group.name, "' group has fewer runnable pods than expected"));
  }
  if (active.empty()) {
    return absl::FailedPreconditionError("failed to find a runnable pod in the group");
  }
  NewGroupWorkload out;
  const int32_t excess = static_cast<int32_t>(active.size()) - group.total_count;
  if (excess > 0) {
    SortKeepFirst(active);
    for (size_t i = active.size() - excess; i < active.size(); ++i) {
      out.excess_pods.push_back(PodName(*active[i]));
    }
    active.resize(active.size() - excess);
  }
  if (group.fast_admission) {
    // The first runnable pod stands for all of them, counted at the total.
    absl::StatusOr<std::string> hash = PodRoleHash(*active.front());
    if (!hash.ok()) return hash.status();
    out.roles.push_back(PodRole{*hash, group.total_count, *active.front()});
    return out;
  }
  absl::StatusOr<std::vector<PodRole>> roles = RolesOf(active);
  if (!roles.ok()) return roles.status();
  if (roles->size() > static_cast<size_t>(kMaxPodSets)) {
    return absl::InvalidArgumentError(
        absl::StrCat("pod group can't include more than ", kMaxPodSets, " roles"));
  }
  out.roles = *std::move(roles);
  return out;
}

absl::StatusOr<bool> GroupEquivalent(const std::vector<Json>& pods, const PodGroupInfo& group,
                                     const std::vector<WorkloadPodSet>& workload,
                                     bool workload_finished) {
  std::vector<const Json*> runnable;
  for (const Json& pod : pods) {
    if (IsRunnableOrSucceeded(pod)) runnable.push_back(&pod);
  }
  std::vector<PodRole> roles;
  if (group.fast_admission) {
    if (runnable.empty()) return false;
    absl::StatusOr<std::string> hash = PodRoleHash(*runnable.front());
    if (!hash.ok()) return hash.status();
    roles.push_back(PodRole{*hash, group.total_count, Json()});
  } else {
    absl::StatusOr<std::vector<PodRole>> counted = RolesOf(runnable);
    if (!counted.ok()) return counted.status();
    roles = *std::move(counted);
  }
  return EquivalentRoles(roles, workload, workload_finished);
}

absl::StatusOr<GroupMatch> MatchGroup(const std::vector<Json>& pods, const PodGroupInfo& group,
                                      const std::vector<WorkloadPodSet>& workload,
                                      bool workload_finished) {
  // Each pod's role once.
  std::vector<std::pair<std::string, const Json*>> by_role;
  for (const Json& pod : pods) {
    absl::StatusOr<std::string> hash = PodRoleHash(pod);
    if (!hash.ok()) {
      return absl::InvalidArgumentError(absl::StrCat(
          "pod ", PodName(pod), ": failed to calculate its role hash: ", hash.status().message()));
    }
    by_role.emplace_back(*std::move(hash), &pod);
  }
  GroupMatch out;
  // Kueue's equivalentToWorkload reads the roles of the kept runnable pods, in name order.
  std::vector<PodRole> job_roles;
  for (const WorkloadPodSet& ps : workload) {
    std::vector<const Json*> active;
    for (const auto& [hash, pod] : by_role) {
      if (hash != ps.name) continue;
      if (IsRunnableOrSucceeded(*pod)) {
        active.push_back(pod);
      } else {
        out.kept.push_back(*pod);
      }
    }
    const int32_t n = static_cast<int32_t>(active.size());
    if (group.fast_admission) {
      if (ps.count > 0 && n == 0) out.absent += 1;
    } else {
      out.absent += std::max(0, ps.count - n);
    }
    if (n > ps.count) {
      SortKeepFirst(active);
      for (int32_t i = ps.count; i < n; ++i) out.excess_pods.push_back(PodName(*active[i]));
      active.resize(ps.count);
    }
    if (!active.empty()) {
      job_roles.push_back(PodRole{ps.name, static_cast<int32_t>(active.size()), Json()});
    }
    for (const Json* pod : active) out.kept.push_back(*pod);
  }
  std::sort(job_roles.begin(), job_roles.end(),
            [](const PodRole& a, const PodRole& b) { return a.hash < b.hash; });
  out.equivalent = !out.kept.empty() && EquivalentRoles(job_roles, workload, workload_finished);
  return out;
}

std::optional<GroupFinish> GroupFinished(const std::vector<Json>& pods, const PodGroupInfo& group) {
  if (group.serving) return std::nullopt;
  int32_t succeeded = 0;
  bool running = false;
  for (const Json& pod : pods) {
    if (PodPhase(pod) == "Succeeded") ++succeeded;
    if (!IsTerminated(pod)) running = true;
  }
  if (succeeded == group.total_count || (!running && group.unretriable)) {
    // Kueue reports an unretriable group that stopped as finished too, with the same message.
    return GroupFinish{true,
                       absl::StrCat("Pods succeeded: ", succeeded, "/", group.total_count, ".")};
  }
  return std::nullopt;
}

bool GroupPodsReady(const std::vector<Json>& pods, const PodGroupInfo& group) {
  if (static_cast<int32_t>(pods.size()) < group.total_count) return false;
  return std::all_of(pods.begin(), pods.end(), [](const Json& pod) { return IsReady(pod); });
}

absl::StatusOr<std::map<std::string, int32_t>> GroupReclaimablePods(
    const std::vector<nlohmann::json>& pods, const PodGroupInfo& group) {
  std::map<std::string, int32_t> out;
  if (group.serving) return out;
  for (const nlohmann::json& pod : pods) {
    if (PodPhase(pod) != "Succeeded") continue;
    absl::StatusOr<std::string> role = PodRoleHash(pod);
    if (!role.ok()) return role.status();
    ++out[*role];
  }
  return out;
}

}  // namespace tollgate::manifest
