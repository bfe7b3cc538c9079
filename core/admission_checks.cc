#include "core/admission_checks.h"

#include <algorithm>
#include <tuple>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "core/error_text.h"

namespace tollgate::core {

std::set<std::string> AllFlavors(const ClusterQueueSpec& cq) {
  std::set<std::string> flavors;
  for (const ResourceGroupSpec& group : cq.resource_groups) {
    for (const FlavorQuotasSpec& f : group.flavors) flavors.insert(f.flavor);
  }
  return flavors;
}

std::map<std::string, std::set<std::string>> ChecksByFlavors(const ClusterQueueSpec& cq) {
  std::map<std::string, std::set<std::string>> checks;
  if (cq.admission_checks.empty()) return checks;
  const std::set<std::string> all = AllFlavors(cq);
  for (const AdmissionCheckStrategyRule& rule : cq.admission_checks) {
    checks[rule.name] = rule.on_flavors.empty()
                            ? all
                            : std::set<std::string>(rule.on_flavors.begin(), rule.on_flavors.end());
  }
  return checks;
}

bool HasMultiKueueCheck(const ClusterQueueSpec& cq,
                        const std::map<std::string, AdmissionCheckRuntime>& checks) {
  for (const AdmissionCheckStrategyRule& rule : cq.admission_checks) {
    auto it = checks.find(rule.name);
    if (it != checks.end() && it->second.spec.controller_name == kMultiKueueControllerName) {
      return true;
    }
  }
  return false;
}

std::set<std::string> DelayedTopologyFlavors(
    const ClusterQueueSpec& cq, const std::map<std::string, AdmissionCheckRuntime>& checks) {
  if (HasMultiKueueCheck(cq, checks)) return AllFlavors(cq);
  std::set<std::string> delayed;
  for (const auto& [name, flavors] : ChecksByFlavors(cq)) {
    auto it = checks.find(name);
    if (it == checks.end()) continue;
    if (it->second.spec.controller_name == kProvisioningRequestControllerName) {
      delayed.insert(flavors.begin(), flavors.end());
    }
  }
  return delayed;
}

std::vector<std::string> ChecksForWorkload(const ClusterQueueSpec& cq, const Admission* admission) {
  std::vector<std::string> names;
  if (cq.admission_checks.empty()) return names;
  const std::map<std::string, std::set<std::string>> checks = ChecksByFlavors(cq);
  if (admission != nullptr) {
    std::set<std::string> assigned;
    for (const PodSetAssignment& ps : admission->pod_sets) {
      for (const auto& [resource, flavor] : ps.flavors) assigned.insert(flavor);
    }
    for (const auto& [name, flavors] : checks) {
      const bool meets = std::any_of(assigned.begin(), assigned.end(),
                                     [&](const std::string& f) { return flavors.count(f) > 0; });
      if (meets) names.push_back(name);
    }
    return names;
  }
  const std::set<std::string> all = AllFlavors(cq);
  for (const auto& [name, flavors] : checks) {
    if (std::includes(flavors.begin(), flavors.end(), all.begin(), all.end())) {
      names.push_back(name);
    }
  }
  return names;
}

bool SyncCheckStates(std::vector<AdmissionCheckState>& checks,
                     const std::vector<std::string>& names, absl::Time now) {
  // `names` comes sorted and `checks` is kept sorted, so one merge pass decides.
  std::vector<AdmissionCheckState> synced;
  synced.reserve(names.size());
  bool changed = false;
  auto it = checks.begin();
  for (const std::string& name : names) {
    while (it != checks.end() && it->name < name) {
      ++it;
      changed = true;  // dropped
    }
    if (it != checks.end() && it->name == name) {
      synced.push_back(std::move(*it));
      ++it;
    } else {
      AdmissionCheckState added;
      added.name = name;
      added.last_transition_time = now;
      synced.push_back(std::move(added));
      changed = true;
    }
  }
  if (it != checks.end()) changed = true;
  if (!changed) {
    // Nothing added or dropped: put the moved-from entries back.
    checks = std::move(synced);
    return false;
  }
  checks = std::move(synced);
  return true;
}

bool AllChecksReady(const std::vector<AdmissionCheckState>& checks) {
  return std::all_of(checks.begin(), checks.end(),
                     [](const AdmissionCheckState& c) { return c.state == CheckState::kReady; });
}

bool AnyCheckIn(const std::vector<AdmissionCheckState>& checks, CheckState state) {
  return std::any_of(checks.begin(), checks.end(),
                     [state](const AdmissionCheckState& c) { return c.state == state; });
}

AdmissionCheckState* FindCheck(std::vector<AdmissionCheckState>& checks, absl::string_view name) {
  for (AdmissionCheckState& c : checks) {
    if (c.name == name) return &c;
  }
  return nullptr;
}

const AdmissionCheckState* FindCheck(const std::vector<AdmissionCheckState>& checks,
                                     absl::string_view name) {
  for (const AdmissionCheckState& c : checks) {
    if (c.name == name) return &c;
  }
  return nullptr;
}

std::string ChecksInStateMessage(const std::vector<AdmissionCheckState>& checks, CheckState state) {
  std::vector<std::string> parts;
  for (const AdmissionCheckState& c : checks) {
    if (c.state != state) continue;
    parts.push_back(c.message.empty() ? absl::StrCat("\"", c.name, "\"")
                                      : absl::StrCat("\"", c.name, "\" (", c.message, ")"));
  }
  return absl::StrCat(parts.size() > 1 ? "AdmissionChecks" : "AdmissionCheck", " in ",
                      CheckStateName(state), " state: ", absl::StrJoin(parts, "; "));
}

bool ResetChecksAfterEviction(std::vector<AdmissionCheckState>& checks, absl::Time now) {
  bool changed = false;
  for (AdmissionCheckState& c : checks) {
    if (c.state == CheckState::kPending) continue;
    const int32_t retries = c.state == CheckState::kRetry ? c.retry_count + 1 : 0;
    c.message =
        absl::StrCat("Reset to Pending after eviction. Previously: ", CheckStateName(c.state));
    c.state = CheckState::kPending;
    c.last_transition_time = now;
    c.retry_count = retries;
    c.pod_set_updates.clear();
    changed = true;
  }
  return changed;
}

absl::Time LatestRetryTime(const std::vector<AdmissionCheckState>& checks) {
  absl::Time latest = absl::InfinitePast();
  for (const AdmissionCheckState& c : checks) {
    if (c.state != CheckState::kRetry || !c.requeue_after_seconds.has_value() ||
        c.last_transition_time == absl::InfinitePast()) {
      continue;
    }
    latest = std::max(latest, c.last_transition_time + absl::Seconds(*c.requeue_after_seconds));
  }
  return latest;
}

CheckInactivity ClusterQueueCheckInactivity(
    const ClusterQueueSpec& cq, const std::map<std::string, AdmissionCheckRuntime>& checks) {
  CheckInactivity out;
  if (cq.admission_checks.empty()) return out;
  const std::set<std::string> all = AllFlavors(cq);
  std::vector<std::string> missing;
  std::vector<std::string> inactive;
  std::vector<std::string> multikueue;
  std::vector<std::string> provisioning;
  std::vector<std::string> multikueue_per_flavor;
  // ChecksByFlavors is keyed (and so ordered) by name: every list below comes out sorted.
  for (const auto& [name, flavors] : ChecksByFlavors(cq)) {
    auto it = checks.find(name);
    if (it == checks.end()) {
      missing.push_back(name);
      continue;
    }
    if (!it->second.IsActive()) inactive.push_back(name);
    if (it->second.spec.controller_name == kProvisioningRequestControllerName) {
      provisioning.push_back(name);
    }
    if (it->second.spec.controller_name == kMultiKueueControllerName) {
      multikueue.push_back(name);
      if (flavors != all) multikueue_per_flavor.push_back(name);
    }
  }
  auto add = [&out](std::string reason, std::string message) {
    out.reasons.push_back(std::move(reason));
    out.messages.push_back(std::move(message));
  };
  if (!missing.empty()) {
    add("AdmissionCheckNotFound",
        absl::StrCat("references missing AdmissionCheck(s): ", absl::StrJoin(missing, ",")));
  }
  if (!inactive.empty()) {
    add("AdmissionCheckInactive",
        absl::StrCat("references inactive AdmissionCheck(s): ", absl::StrJoin(inactive, ",")));
  }
  if (multikueue.size() > 1) {
    add("MultipleMultiKueueAdmissionChecks",
        absl::StrCat("Cannot use multiple MultiKueue AdmissionChecks on the same ClusterQueue, "
                     "found: ",
                     absl::StrJoin(multikueue, ",")));
  }
  if (!multikueue_per_flavor.empty()) {
    add("MultiKueueAdmissionCheckAppliedPerFlavor",
        absl::StrCat("Cannot specify MultiKueue AdmissionCheck per flavor, found: ",
                     absl::StrJoin(multikueue_per_flavor, ",")));
  }
  if (!multikueue.empty() && !provisioning.empty()) {
    add("MultiKueueWithProvisioningRequest",
        absl::StrCat("Cannot use both MultiKueue and ProvisioningRequest AdmissionChecks "
                     "together, found: ",
                     absl::StrJoin(multikueue, ","), ", ", absl::StrJoin(provisioning, ",")));
  }
  return out;
}

namespace {

// Where a pod-level value came from ("pod set", "ResourceFlavor", "admission check" and its
// name), for a conflict's message. Views into the spec and status being merged: the text is
// built only for a conflict, which almost no admission has.
struct Source {
  absl::string_view kind;
  absl::string_view name;

  std::string ToString() const { return absl::StrCat(kind, " ", QuoteValue(name)); }
};

struct Sourced {
  std::string value;
  Source source;
};

absl::Status MergeMap(const Labels& add, absl::string_view field, const Source& source,
                      std::map<std::string, Sourced>& into, Labels& out) {
  for (const auto& [key, value] : add) {
    auto [it, inserted] = into.try_emplace(key, Sourced{value, source});
    if (!inserted && it->second.value != value) {
      return absl::InvalidArgumentError(
          absl::StrCat(source.ToString(), ": ", field, " ", QuoteValue(key), ": ",
                       QuoteValue(value), " conflicts with ", QuoteValue(it->second.value),
                       " from ", it->second.source.ToString()));
    }
    out[key] = value;
  }
  return absl::OkStatus();
}

void MergeTolerations(const std::vector<Toleration>& add, std::vector<Toleration>& out) {
  for (const Toleration& t : add) {
    if (std::find(out.begin(), out.end(), t) == out.end()) out.push_back(t);
  }
}

}  // namespace

absl::StatusOr<std::vector<PodSetInfo>> MergePodSetUpdates(
    const WorkloadSpec& spec, const WorkloadStatus& status,
    const std::map<std::string, ResourceFlavorSpec>& flavors, absl::string_view last_check) {
  std::vector<const AdmissionCheckState*> checks;
  for (const AdmissionCheckState& c : status.admission_checks()) {
    if (c.name != last_check) checks.push_back(&c);
  }
  for (const AdmissionCheckState& c : status.admission_checks()) {
    if (c.name == last_check) checks.push_back(&c);
  }
  std::vector<PodSetInfo> infos;
  infos.reserve(spec.pod_sets.size());
  for (const PodSetSpec& ps : spec.pod_sets) {
    PodSetInfo info;
    info.name = ps.name;
    std::map<std::string, Sourced> labels;
    std::map<std::string, Sourced> annotations;
    std::map<std::string, Sourced> node_selector;
    absl::Status merged = MergeMap(ps.node_selector, "nodeSelector", Source{"pod set", ps.name},
                                   node_selector, info.node_selector);
    if (!merged.ok()) return merged;
    MergeTolerations(ps.tolerations, info.tolerations);
    if (status.admission.has_value()) {
      // A pod set has a flavor per resource, mostly the same one: a few to compare.
      std::vector<absl::string_view> seen;
      for (const PodSetAssignment& assignment : status.admission->pod_sets) {
        if (assignment.name != ps.name) continue;
        for (const auto& [resource, flavor_name] : assignment.flavors) {
          if (std::find(seen.begin(), seen.end(), flavor_name) != seen.end()) continue;
          seen.push_back(flavor_name);
          auto flavor = flavors.find(flavor_name);
          if (flavor == flavors.end()) continue;
          merged =
              MergeMap(flavor->second.node_labels, "nodeSelector",
                       Source{"ResourceFlavor", flavor_name}, node_selector, info.node_selector);
          if (!merged.ok()) return merged;
          MergeTolerations(flavor->second.tolerations, info.tolerations);
        }
      }
    }
    for (const AdmissionCheckState* check : checks) {
      for (const PodSetUpdate& update : check->pod_set_updates) {
        if (update.name != ps.name) continue;
        const Source source{"admission check", check->name};
        for (auto [map, field, into, out] :
             {std::make_tuple(&update.labels, "labels", &labels, &info.labels),
              std::make_tuple(&update.annotations, "annotations", &annotations, &info.annotations),
              std::make_tuple(&update.node_selector, "nodeSelector", &node_selector,
                              &info.node_selector)}) {
          merged = MergeMap(*map, field, source, *into, *out);
          if (!merged.ok()) return merged;
        }
        MergeTolerations(update.tolerations, info.tolerations);
      }
    }
    infos.push_back(std::move(info));
  }
  return infos;
}

bool PodSetUpdatesMayConflict(const WorkloadStatus& status,
                              const std::map<std::string, ResourceFlavorSpec>& flavors) {
  for (const AdmissionCheckState& c : status.admission_checks()) {
    if (!c.pod_set_updates.empty()) return true;
  }
  if (!status.admission.has_value()) return false;
  for (const PodSetAssignment& assignment : status.admission->pod_sets) {
    for (const auto& [resource, flavor_name] : assignment.flavors) {
      auto flavor = flavors.find(flavor_name);
      if (flavor != flavors.end() && !flavor->second.node_labels.empty()) return true;
    }
  }
  return false;
}

}  // namespace tollgate::core
