// `get nodes`, `describe node` and `get topology -o usage`: the node inventory topology-aware
// scheduling places pods on (InventoryService, docs/topology.md).

#include <algorithm>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "cmd/tollgate/cli_format.h"
#include "cmd/tollgate/commands.h"
#include "cmd/tollgate/table_printer.h"
#include "tollgate/v1/inventory.pb.h"

namespace tollgate::cli {
namespace {

// kubectl's node STATUS: Ready or NotReady, with SchedulingDisabled for a cordoned node. A node
// that never reported readiness counts as ready, as the inventory does.
std::string NodeStatus(const v1::Node& node) {
  std::string status = !node.status().has_ready() || node.status().ready() ? "Ready" : "NotReady";
  if (node.spec().unschedulable()) absl::StrAppend(&status, ",SchedulingDisabled");
  return status;
}

std::string JoinOrNone(const google::protobuf::RepeatedPtrField<std::string>& values) {
  return values.empty() ? std::string(kNone) : absl::StrJoin(values, ",");
}

std::string WorkloadName(const v1::WorkloadRef& ref) {
  return ref.namespace_().empty() ? ref.name() : absl::StrCat(ref.namespace_(), "/", ref.name());
}

}  // namespace

int RunGetNodes(Session& s, const ParsedFlags& args, absl::string_view name) {
  const std::string output = args.Get("output");
  if (!output.empty() && output != "wide") {
    return s.UsageError(absl::StrCat("nodes print as a table or -o wide, not \"", output, "\""));
  }
  const bool wide = output == "wide";
  absl::StatusOr<v1::ListNodesResponse> listed = s.client().ListNodes(v1::ListNodesRequest());
  if (!listed.ok()) return s.Fail(listed.status());
  std::vector<std::string> headers = {"NAME",        "STATUS",     "FLAVORS",
                                      "PLACED-PODS", "OTHER-PODS", "FREE"};
  if (wide) {
    headers.push_back("LABELS");
    headers.push_back("TAINTS");
  }
  TablePrinter table(headers);
  bool found = name.empty();
  for (const v1::NodeSummary& n : listed->nodes()) {
    if (!name.empty() && n.node().metadata().name() != name) continue;
    found = true;
    std::vector<std::string> row = {n.node().metadata().name(),      NodeStatus(n.node()),
                                    JoinOrNone(n.flavors()),         absl::StrCat(n.placed_pods()),
                                    absl::StrCat(n.reported_pods()), JoinKeyValues(n.free())};
    if (wide) {
      row.push_back(JoinKeyValues(n.node().metadata().labels()));
      row.push_back(FormatTaints(n.node().spec().taints()));
    }
    table.AddRow(std::move(row));
  }
  if (!found) return s.Fail(absl::NotFoundError(absl::StrCat("node \"", name, "\" not found")));
  s.PrintTableOrNothing(table, s.NoResources(false), !args.Has("no-headers"));
  return kExitOk;
}

int DescribeNode(Session& s, absl::string_view name) {
  v1::GetNodeRequest request;
  request.set_name(std::string(name));
  absl::StatusOr<v1::NodeDetails> details = s.client().GetNode(request);
  if (!details.ok()) return s.Fail(details.status());
  const v1::NodeSummary& summary = details->summary();
  const v1::Node& node = summary.node();
  std::ostream& out = s.out();

  FieldPrinter top;
  top.Add("Name", node.metadata().name());
  top.Add("Labels", JoinKeyValues(node.metadata().labels()));
  top.Add("Taints", FormatTaints(node.spec().taints()));
  top.Add("Status", NodeStatus(node));
  // Kueue's fixed node-failure delay counts from here (docs/topology.md).
  if (node.status().has_not_ready_since()) {
    top.Add("Not Ready Since", TimeAndAge(node.status().not_ready_since(), s.now()));
  }
  top.Add("Flavors", JoinOrNone(summary.flavors()));
  top.Add("Allocatable", JoinKeyValues(node.status().allocatable()));
  top.Add("Free", JoinKeyValues(summary.free()));
  top.Print(out);

  // What Tollgate placed here, then what runs here without Tollgate (it takes capacity too).
  out << "Placed Pods:\n";
  if (details->placements().empty()) {
    out << "  " << kNone << "\n";
  } else {
    TablePrinter placed({"WORKLOAD", "POD SET", "FLAVOR", "PODS", "PER POD"});
    for (const v1::NodePlacement& p : details->placements()) {
      placed.AddRow({WorkloadName(p.workload()), p.pod_set(), p.flavor(), absl::StrCat(p.count()),
                     JoinKeyValues(p.requests())});
    }
    placed.Print(out, "  ");
  }
  out << "Other Pods:\n";
  if (details->reported_pods().empty()) {
    out << "  " << kNone << "\n";
  } else {
    TablePrinter other({"NAME", "REQUESTS"});
    for (const v1::NodePod& p : details->reported_pods()) {
      other.AddRow({p.name(), JoinKeyValues(p.requests())});
    }
    other.Print(out, "  ");
  }
  if (!details->unhealthy_for().empty()) {
    std::vector<std::string> workloads;
    for (const v1::WorkloadRef& ref : details->unhealthy_for()) {
      workloads.push_back(WorkloadName(ref));
    }
    out << "Unhealthy For: " << absl::StrJoin(workloads, ", ") << "\n";
  }
  return kExitOk;
}

int PrintTopologyUsage(Session& s, absl::string_view topology) {
  absl::StatusOr<v1::GetTopologyUsageResponse> usage =
      s.client().GetTopologyUsage(v1::GetTopologyUsageRequest());
  if (!usage.ok()) return s.Fail(usage.status());
  std::ostream& out = s.out();
  int shown = 0;
  for (const v1::FlavorTopology& f : usage->flavors()) {
    if (!topology.empty() && f.topology() != topology) continue;
    if (shown++ > 0) out << "\n";
    out << "Flavor " << f.flavor() << " (topology " << f.topology() << ": "
        << absl::StrJoin(f.levels(), " > ") << ")\n";
    if (f.topology_missing()) {
      out << "  the topology does not exist\n";
      continue;
    }
    // Depth first, each domain under its parent and indented by its level: ordering by the
    // values from the highest level down puts a parent right before its children.
    std::vector<const v1::TopologyDomainUsage*> domains;
    for (const v1::TopologyDomainUsage& d : f.domains()) domains.push_back(&d);
    std::sort(domains.begin(), domains.end(), [](const auto* a, const auto* b) {
      return std::lexicographical_compare(a->values().begin(), a->values().end(),
                                          b->values().begin(), b->values().end());
    });
    TablePrinter table({"DOMAIN", "NODES", "CAPACITY", "USED", "FREE"});
    for (const v1::TopologyDomainUsage* domain : domains) {
      const v1::TopologyDomainUsage& d = *domain;
      const std::string value = d.values().empty() ? "" : *d.values().rbegin();
      table.AddRow({absl::StrCat(std::string(2 * d.level(), ' '), value), absl::StrCat(d.nodes()),
                    JoinKeyValues(d.capacity()), JoinKeyValues(d.used()), JoinKeyValues(d.free())});
    }
    table.Print(out, "  ");
  }
  if (shown == 0) {
    return s.Fail(absl::NotFoundError(
        topology.empty() ? "no ResourceFlavor names a topology"
                         : absl::StrCat("no ResourceFlavor uses topology \"", topology, "\"")));
  }
  return kExitOk;
}

}  // namespace tollgate::cli
