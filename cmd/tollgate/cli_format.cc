#include "cmd/tollgate/cli_format.h"

#include <map>
#include <set>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "core/quantity.h"

namespace tollgate::cli {

std::string StateName(v1::WorkloadState state) {
  switch (state) {
    case v1::WORKLOAD_STATE_PENDING:
      return "Pending";
    case v1::WORKLOAD_STATE_QUOTA_RESERVED:
      return "QuotaReserved";
    case v1::WORKLOAD_STATE_ADMITTED:
      return "Admitted";
    case v1::WORKLOAD_STATE_EVICTING:
      return "Evicting";
    case v1::WORKLOAD_STATE_FINISHED:
      return "Finished";
    default:
      return "Unknown";
  }
}

std::string DisplayState(const v1::Workload& wl) {
  // A deactivated workload waits for an operator, not for quota: say so.
  if (wl.status().state() == v1::WORKLOAD_STATE_PENDING &&
      ((wl.spec().has_active() && !wl.spec().active()) || wl.status().deactivated())) {
    return "Deactivated";
  }
  return StateName(wl.status().state());
}

std::string OrNone(absl::string_view s) { return s.empty() ? std::string(kNone) : std::string(s); }

std::string WorkloadKey(const v1::ObjectMeta& meta) {
  return absl::StrCat(meta.namespace_().empty() ? "default" : meta.namespace_(), "/", meta.name());
}

std::string QueueOf(const v1::Workload& wl) {
  // An empty queue name means the namespace's LocalQueue named "default".
  return wl.spec().queue_name().empty() ? "default" : wl.spec().queue_name();
}

std::string CanonicalQuantity(absl::string_view resource, absl::string_view text) {
  absl::StatusOr<core::Quantity> q = core::Quantity::Parse(text);
  if (!q.ok()) return std::string(text);
  return core::FormatResourceScalar(resource, core::ResourceScalar(resource, *q));
}

std::string FormatRequests(const google::protobuf::Map<std::string, std::string>& requests) {
  std::map<std::string, std::string> sorted(requests.begin(), requests.end());
  for (auto& [resource, amount] : sorted) amount = CanonicalQuantity(resource, amount);
  return JoinKeyValues(sorted, ", ");
}

std::string FormatFlavors(const v1::PodSetAssignment& assignment) {
  std::map<std::string, std::vector<std::string>> by_flavor;
  std::map<std::string, std::string> sorted(assignment.flavors().begin(),
                                            assignment.flavors().end());
  for (const auto& [resource, flavor] : sorted) by_flavor[flavor].push_back(resource);
  std::vector<std::string> parts;
  for (const auto& [flavor, resources] : by_flavor) {
    parts.push_back(absl::StrCat(flavor, " (", absl::StrJoin(resources, ", "), ")"));
  }
  return parts.empty() ? std::string(kNone) : absl::StrJoin(parts, "; ");
}

std::string FormatTaints(const v1::ResourceFlavorSpec& spec) {
  return FormatTaints(spec.node_taints());
}

std::string FormatTaints(const google::protobuf::RepeatedPtrField<v1::Taint>& node_taints) {
  std::vector<std::string> taints;
  for (const v1::Taint& t : node_taints) {
    taints.push_back(
        absl::StrCat(t.key(), t.value().empty() ? "" : "=", t.value(), ":", t.effect()));
  }
  return taints.empty() ? std::string(kNone) : absl::StrJoin(taints, ",");
}

std::string ActiveOf(const v1::ClusterQueue& cq) {
  if (cq.metadata().has_deletion_timestamp()) return "False (Terminating)";
  for (const v1::Condition& c : cq.status().conditions()) {
    if (c.type() != "Active") continue;
    // Why not, when not: Stopped, CohortCycle, FlavorNotFound...
    if (c.status() == "False" && !c.reason().empty()) {
      return absl::StrCat(c.status(), " (", c.reason(), ")");
    }
    return c.status();
  }
  return "Unknown";
}

std::string ObjectStatusOf(const v1::ObjectMeta& meta, absl::string_view stop_policy) {
  if (meta.has_deletion_timestamp()) return "Terminating";
  if (!stop_policy.empty() && stop_policy != "None") return "Stopped";
  return "Active";
}

std::string Plural(int64_t n, absl::string_view word) {
  return absl::StrCat(n, " ", word, n == 1 ? "" : "s");
}

TablePrinter UsageTable(const v1::ClusterQueue& cq) {
  std::map<std::pair<std::string, std::string>, const v1::ResourceUsage*> usage;
  for (const v1::FlavorUsage& flavor : cq.status().flavors_usage()) {
    for (const v1::ResourceUsage& r : flavor.resources()) usage[{flavor.name(), r.name()}] = &r;
  }
  TablePrinter table({"FLAVOR", "RESOURCE", "NOMINAL", "USED", "BORROWED"});
  std::set<std::pair<std::string, std::string>> shown;
  for (const v1::ResourceGroup& group : cq.spec().resource_groups()) {
    for (const v1::FlavorQuotas& flavor : group.flavors()) {
      for (const v1::ResourceQuota& quota : flavor.resources()) {
        const std::pair<std::string, std::string> key{flavor.name(), quota.name()};
        shown.insert(key);
        auto it = usage.find(key);
        table.AddRow({flavor.name(), quota.name(),
                      CanonicalQuantity(quota.name(), quota.nominal_quota()),
                      it == usage.end() ? "0" : it->second->total(),
                      it == usage.end() ? "0" : it->second->borrowed()});
      }
    }
  }
  for (const auto& [key, r] : usage) {
    if (shown.count(key) == 0)
      table.AddRow({key.first, key.second, "0", r->total(), r->borrowed()});
  }
  return table;
}

std::string TimeAndAge(const google::protobuf::Timestamp& t, absl::Time now) {
  if (ToAbslTime(t) == absl::InfinitePast()) return "<unknown>";
  return absl::StrCat(FormatTimestamp(t), " (", FormatAge(t, now), " ago)");
}

void PrintAssignments(std::ostream& out, const v1::Admission& admission, absl::string_view indent) {
  TablePrinter table({"POD SET", "COUNT", "FLAVORS", "USAGE"});
  for (const v1::PodSetAssignment& a : admission.pod_set_assignments()) {
    table.AddRow(
        {a.name(), absl::StrCat(a.count()), FormatFlavors(a), FormatRequests(a.resource_usage())});
  }
  table.Print(out, indent);
  // Where topology-aware scheduling put each pod set's pods: the domains and their pod counts.
  for (const v1::PodSetAssignment& a : admission.pod_set_assignments()) {
    const v1::TopologyAssignment& topology = a.topology_assignment();
    if (topology.domains().empty()) continue;
    out << indent << "Placement of " << a.name() << " (" << absl::StrJoin(topology.levels(), " > ")
        << "):\n";
    TablePrinter domains({"DOMAIN", "PODS"});
    for (const v1::TopologyDomainAssignment& d : topology.domains()) {
      domains.AddRow({absl::StrJoin(d.values(), "/"), absl::StrCat(d.count())});
    }
    domains.Print(out, absl::StrCat(indent, "  "));
  }
}

}  // namespace tollgate::cli
