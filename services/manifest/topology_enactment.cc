#include "services/manifest/topology_enactment.h"

#include <algorithm>
#include <optional>
#include <set>
#include <utility>

#include "absl/strings/numbers.h"
#include "absl/strings/str_join.h"
#include "services/manifest/pod_set_info.h"
#include "services/manifest/topology_annotations.h"

namespace tollgate::manifest {
namespace {

constexpr absl::string_view kHostnameLabel = "kubernetes.io/hostname";

// A domain as Kueue's TopologyDomainID: its values joined.
using DomainId = std::string;

DomainId IdOf(const std::vector<std::string>& values) { return absl::StrJoin(values, ","); }

std::vector<std::string> LevelValues(const google::protobuf::RepeatedPtrField<std::string>& levels,
                                     const std::map<std::string, std::string>& labels) {
  std::vector<std::string> values;
  for (const std::string& level : levels) {
    auto it = labels.find(level);
    values.push_back(it == labels.end() ? "" : it->second);
  }
  return values;
}

bool HasTopologyGate(const Json& pod) {
  const Json* gates = Find(pod, {"spec", "schedulingGates"});
  if (gates == nullptr || !gates->is_array()) return false;
  for (const Json& gate : *gates) {
    if (GetString(gate, {"name"}) == kTopologySchedulingGate) return true;
  }
  return false;
}

const v1::PodSetTopologyRequest* RequestOf(const v1::Workload& workload,
                                           absl::string_view pod_set) {
  for (const v1::PodSet& ps : workload.spec().pod_sets()) {
    if (ps.name() == pod_set) return ps.has_topology_request() ? &ps.topology_request() : nullptr;
  }
  return nullptr;
}

// Kueue's ReadUIntFromLabelBelowBound: the label holds a decimal in [0, bound).
std::optional<int> ReadIndex(const Json& pod, absl::string_view label, int bound) {
  const Json* value = Find(pod, {"metadata", "labels", label});
  int index = 0;
  if (value == nullptr || !value->is_string() ||
      !absl::SimpleAtoi(value->get<std::string>(), &index) || index < 0 || index >= bound) {
    return std::nullopt;
  }
  return index;
}

// The domain of each rank: the assignment's domains in order, each repeated by its count.
std::vector<DomainId> RankToDomain(const v1::TopologyAssignment& assignment) {
  std::vector<DomainId> out;
  for (const v1::TopologyDomainAssignment& domain : assignment.domains()) {
    const DomainId id = IdOf({domain.values().begin(), domain.values().end()});
    for (int i = 0; i < domain.count(); ++i) out.push_back(id);
  }
  return out;
}

struct PodWithDomain {
  const Json* pod;
  DomainId domain;
};

// Kueue's readRanksIfAvailable + readRanksForLabels: every pod's rank, or nullopt when ranks
// cannot be used (no index label, a missing or out-of-range label, a repeated rank, a rank past
// the assignment, or a released pod outside its rank's domain).
std::optional<std::map<int, const Json*>> ReadRanks(const v1::PodSetAssignment& assignment,
                                                    const std::vector<const Json*>& pods,
                                                    const v1::PodSetTopologyRequest* request,
                                                    int offset, int max_rank,
                                                    const std::vector<DomainId>& rank_to_domain) {
  if (request == nullptr || !request->has_pod_index_label()) return std::nullopt;
  const int pod_set_size = assignment.count();
  int single_job_size = pod_set_size;
  const bool sub_groups = request->has_sub_group_index_label();
  if (sub_groups) {
    if (!request->has_sub_group_count() || request->sub_group_count() <= 0) return std::nullopt;
    single_job_size = pod_set_size / request->sub_group_count();
  }
  std::map<int, const Json*> ranks;
  for (const Json* pod : pods) {
    std::optional<int> index = ReadIndex(*pod, request->pod_index_label(), max_rank);
    if (!index.has_value()) return std::nullopt;
    int rank = *index - offset;
    if (sub_groups) {
      std::optional<int> job =
          ReadIndex(*pod, request->sub_group_index_label(), request->sub_group_count());
      if (!job.has_value() || *index >= single_job_size) return std::nullopt;
      rank = *index + *job * single_job_size - offset;
    }
    if (rank < 0 || rank >= pod_set_size || !ranks.emplace(rank, pod).second) return std::nullopt;
  }
  for (const auto& [rank, pod] : ranks) {
    // The assignment may cover fewer pods than the count (a slice size that does not divide it).
    if (rank >= static_cast<int>(rank_to_domain.size())) return std::nullopt;
    if (HasTopologyGate(*pod)) continue;
    const DomainId actual = IdOf(LevelValues(assignment.topology_assignment().levels(),
                                             StringMap(Find(*pod, {"spec", "nodeSelector"}))));
    if (actual != rank_to_domain[rank]) return std::nullopt;
  }
  return ranks;
}

// Kueue's assignGatedPodsToDomainsGreedy.
std::vector<PodWithDomain> AssignGreedily(const v1::PodSetAssignment& assignment,
                                          const std::vector<const Json*>& pods) {
  const v1::TopologyAssignment& topology = assignment.topology_assignment();
  std::vector<const Json*> gated;
  std::map<DomainId, int> released_in;
  for (const Json* pod : pods) {
    if (HasTopologyGate(*pod)) {
      gated.push_back(pod);
    } else {
      ++released_in[IdOf(
          LevelValues(topology.levels(), StringMap(Find(*pod, {"spec", "nodeSelector"}))))];
    }
  }
  std::vector<PodWithDomain> out;
  for (const v1::TopologyDomainAssignment& domain : topology.domains()) {
    const DomainId id = IdOf({domain.values().begin(), domain.values().end()});
    const int room = std::max(domain.count() - released_in[id], 0);
    const int take = std::min<int>(room, static_cast<int>(gated.size() - out.size()));
    for (int i = 0; i < take; ++i) out.push_back({gated[out.size()], id});
  }
  return out;
}

}  // namespace

void AddTopologyPodSetInfo(const v1::Workload& workload, std::vector<PodSetInfo>& infos) {
  const v1::Admission& admission = workload.status().admission();
  for (PodSetInfo& info : infos) {
    info.annotations[std::string(kWorkloadAnnotation)] = workload.metadata().name();
    for (const v1::PodSetAssignment& assignment : admission.pod_set_assignments()) {
      if (assignment.name() != info.name || !assignment.has_topology_assignment()) continue;
      const v1::PodSetTopologyRequest* request = RequestOf(workload, assignment.name());
      if (request == nullptr || (!request->has_required() && !request->has_preferred() &&
                                 !request->has_unconstrained())) {
        info.annotations[std::string(kUnconstrainedTopologyAnnotation)] = "true";
      }
      const Json gate = {{"name", kTopologySchedulingGate}};
      if (std::find(info.scheduling_gates.begin(), info.scheduling_gates.end(), gate) ==
          info.scheduling_gates.end()) {
        info.scheduling_gates.push_back(gate);
      }
    }
  }
}

bool IsTopologyPod(const Json& pod) {
  const Json* annotations = Find(pod, {"metadata", "annotations"});
  if (annotations == nullptr || !annotations->is_object()) return false;
  for (absl::string_view key :
       {kRequiredTopologyAnnotation, kPreferredTopologyAnnotation, kSliceRequiredTopologyAnnotation,
        kSliceConstraintsAnnotation, kUnconstrainedTopologyAnnotation}) {
    if (annotations->contains(std::string(key))) return true;
  }
  return false;
}

bool IsTerminatedPod(const Json& pod) {
  const std::string phase = GetString(pod, {"status", "phase"});
  return phase == "Succeeded" || phase == "Failed";
}

std::vector<PodUngate> PodsToUngate(const v1::Workload& workload, const std::vector<Json>& pods) {
  std::vector<PodUngate> out;
  const v1::Admission& admission = workload.status().admission();
  const bool placed =
      std::any_of(admission.pod_set_assignments().begin(), admission.pod_set_assignments().end(),
                  [](const v1::PodSetAssignment& a) { return a.has_topology_assignment(); });
  if (workload.status().state() != v1::WORKLOAD_STATE_ADMITTED || !placed) return out;

  // Kueue ranks a pod-set group's leader (the smaller pod set) first, then its workers.
  std::map<std::string, std::vector<const v1::PodSetAssignment*>> groups;
  for (int i = 0; i < admission.pod_set_assignments_size(); ++i) {
    const v1::PodSetAssignment& a = admission.pod_set_assignments(i);
    const v1::PodSetTopologyRequest* request = RequestOf(workload, a.name());
    const std::string group = request != nullptr && request->has_pod_set_group_name()
                                  ? "group:" + request->pod_set_group_name()
                                  : "index:" + std::to_string(i);
    groups[group].push_back(&a);
  }
  std::map<std::string, int> rank_offset;
  std::map<std::string, int> max_rank;
  for (const auto& [group, members] : groups) {
    if (members.size() > 1) {
      const v1::PodSetAssignment* smaller = members[0];
      const v1::PodSetAssignment* larger = members[1];
      if (smaller->count() > larger->count()) std::swap(smaller, larger);
      rank_offset[smaller->name()] = 0;
      rank_offset[larger->name()] = smaller->count();
      max_rank[smaller->name()] = smaller->count();
      max_rank[larger->name()] = larger->count() + smaller->count();
    } else {
      rank_offset[members[0]->name()] = 0;
      max_rank[members[0]->name()] = members[0]->count();
    }
  }

  const std::set<std::string> unhealthy(workload.status().unhealthy_nodes().begin(),
                                        workload.status().unhealthy_nodes().end());
  for (const v1::PodSetAssignment& assignment : admission.pod_set_assignments()) {
    if (!assignment.has_topology_assignment()) continue;
    std::vector<const Json*> members;
    for (const Json& pod : pods) {
      if (GetString(pod, {"metadata", "labels", kPodSetLabel}) == assignment.name() &&
          !IsTerminatedPod(pod)) {
        members.push_back(&pod);
      }
    }
    std::sort(members.begin(), members.end(), [](const Json* a, const Json* b) {
      return GetString(*a, {"metadata", "name"}) < GetString(*b, {"metadata", "name"});
    });
    int offset = rank_offset[assignment.name()];
    int bound = max_rank[assignment.name()];
    if (!members.empty()) {
      // Every pod of a replica has the same offset.
      const Json* value =
          Find(*members.front(), {"metadata", "annotations", kPodIndexOffsetAnnotation});
      int extra = 0;
      if (value != nullptr) {
        // Kueue gives up on the workload for an unreadable offset; so does this pod set.
        if (!value->is_string() || !absl::SimpleAtoi(value->get<std::string>(), &extra)) continue;
        offset += extra;
        bound += extra;
      }
    }
    const v1::TopologyAssignment& topology = assignment.topology_assignment();
    const std::vector<DomainId> rank_to_domain = RankToDomain(topology);
    std::vector<PodWithDomain> assigned;
    if (std::optional<std::map<int, const Json*>> ranks =
            ReadRanks(assignment, members, RequestOf(workload, assignment.name()), offset, bound,
                      rank_to_domain)) {
      for (const auto& [rank, pod] : *ranks) {
        if (HasTopologyGate(*pod)) assigned.push_back({pod, rank_to_domain[rank]});
      }
    } else {
      assigned = AssignGreedily(assignment, members);
    }
    std::map<DomainId, std::vector<std::string>> values_of;
    for (const v1::TopologyDomainAssignment& domain : topology.domains()) {
      values_of[IdOf({domain.values().begin(), domain.values().end()})] = {domain.values().begin(),
                                                                           domain.values().end()};
    }
    const bool by_host =
        topology.levels_size() > 0 && topology.levels(topology.levels_size() - 1) == kHostnameLabel;
    for (const PodWithDomain& p : assigned) {
      const std::vector<std::string>& values = values_of[p.domain];
      // Not onto a node that failed: the pod waits for the replacement domain.
      if (by_host && !values.empty() && unhealthy.count(values.back()) > 0) continue;
      PodUngate ungate;
      ungate.pod = GetString(*p.pod, {"metadata", "name"});
      for (int i = 0; i < topology.levels_size() && i < static_cast<int>(values.size()); ++i) {
        ungate.node_labels[topology.levels(i)] = values[i];
      }
      out.push_back(std::move(ungate));
    }
  }
  std::sort(out.begin(), out.end(),
            [](const PodUngate& a, const PodUngate& b) { return a.pod < b.pod; });
  return out;
}

Json UngatePatch(const Json& pod, const std::map<std::string, std::string>& node_labels) {
  Json gates = Json::array();
  if (const Json* current = Find(pod, {"spec", "schedulingGates"});
      current != nullptr && current->is_array()) {
    for (const Json& gate : *current) {
      if (GetString(gate, {"name"}) != kTopologySchedulingGate) gates.push_back(gate);
    }
  }
  std::map<std::string, std::string> selector = StringMap(Find(pod, {"spec", "nodeSelector"}));
  for (const auto& [key, value] : node_labels) selector[key] = value;
  Json selector_json = Json::object();
  for (const auto& [key, value] : selector) selector_json[key] = value;
  Json patch = Json::array();
  patch.push_back({{"op", "test"},
                   {"path", "/metadata/resourceVersion"},
                   {"value", GetString(pod, {"metadata", "resourceVersion"})}});
  if (gates.empty()) {
    patch.push_back({{"op", "remove"}, {"path", "/spec/schedulingGates"}});
  } else {
    patch.push_back({{"op", "replace"}, {"path", "/spec/schedulingGates"}, {"value", gates}});
  }
  patch.push_back({{"op", "add"}, {"path", "/spec/nodeSelector"}, {"value", selector_json}});
  return patch;
}

}  // namespace tollgate::manifest
