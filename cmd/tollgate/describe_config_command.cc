// describe cohort|localqueue|resourceflavor: the configuration objects a workload's wait runs
// through, with their usage.
#include <set>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "cmd/tollgate/cli_format.h"
#include "cmd/tollgate/cli_queries.h"
#include "cmd/tollgate/cohort_sections.h"
#include "cmd/tollgate/describe_commands.h"
#include "cmd/tollgate/object_printer.h"
#include "services/engine/config_objects.h"

namespace tollgate::cli {
namespace {

// How many pending workloads `describe localqueue` lists before summarizing the rest.
constexpr int kPendingLimit = 20;

const v1::Condition* Condition(const google::protobuf::RepeatedPtrField<v1::Condition>& conditions,
                               absl::string_view type) {
  for (const v1::Condition& c : conditions) {
    if (c.type() == type) return &c;
  }
  return nullptr;
}

// The names of the ClusterQueues and Cohorts in `cohort`'s subtree (the holders come depth first,
// so a member's parent is seen before it).
std::set<std::string> Subtree(const v1::CohortBreakdown& b, const std::string& cohort) {
  std::set<std::string> members{cohort};
  for (const v1::QuotaHolder& h : b.holders()) {
    if (members.count(h.parent()) > 0) members.insert(h.name());
  }
  return members;
}

}  // namespace

int DescribeCohort(Session& s, absl::string_view name) {
  absl::StatusOr<std::vector<v1::ConfigObject>> objects = ListConfig(s, v1::COHORT, "", name);
  if (!objects.ok()) return s.Fail(objects.status());
  const v1::Cohort& cohort = objects->front().cohort();
  v1::GetCohortBreakdownRequest request;
  request.set_cohort(std::string(name));
  absl::StatusOr<v1::CohortBreakdown> b = s.client().GetCohortBreakdown(request);
  if (!b.ok()) return s.Fail(b.status());
  absl::StatusOr<std::vector<v1::ConfigObject>> queues = ListConfig(s, v1::CLUSTER_QUEUE, "", "");
  if (!queues.ok()) return s.Fail(queues.status());
  std::ostream& out = s.out();

  const std::string self(name);
  const std::set<std::string> subtree = Subtree(*b, self);
  std::vector<std::string> member_queues;
  std::vector<std::string> member_cohorts;
  std::set<std::string> seen;
  for (const v1::QuotaHolder& h : b->holders()) {
    // The holders repeat per flavor and resource: name each member once.
    if (h.parent() != self || !seen.insert(h.name()).second) continue;
    (h.kind() == v1::COHORT ? member_cohorts : member_queues).push_back(h.name());
  }
  int pending = 0;
  int admitted = 0;
  for (const v1::ConfigObject& o : *queues) {
    if (subtree.count(o.cluster_queue().metadata().name()) == 0) continue;
    pending += o.cluster_queue().status().pending_workloads();
    admitted += o.cluster_queue().status().admitted_workloads();
  }

  FieldPrinter top;
  top.Add("Name", self);
  const v1::Condition* implicit = Condition(cohort.status().conditions(), "Implicit");
  if (implicit != nullptr && implicit->status() == "True") {
    top.Add("Object", absl::StrCat("<none> (implicit: ", implicit->message(), ")"));
  } else {
    top.Add("Created", TimeAndAge(cohort.metadata().creation_timestamp(), s.now()));
    top.Add("Labels", JoinKeyValues(cohort.metadata().labels()));
  }
  top.Add("Parent", OrNone(b->parent()));
  if (!b->root().empty() && b->root() != self) top.Add("Root", b->root());
  top.Add("ClusterQueues",
          member_queues.empty() ? std::string(kNone) : absl::StrJoin(member_queues, ", "));
  top.Add("Cohorts",
          member_cohorts.empty() ? std::string(kNone) : absl::StrJoin(member_cohorts, ", "));
  top.Add(
      "Fair Sharing",
      absl::StrCat(
          "weight ",
          cohort.spec().fair_sharing().has_weight() ? cohort.spec().fair_sharing().weight() : "1",
          ", weighted share ", cohort.status().fair_sharing().weighted_share()));
  top.Add("Workloads", absl::StrCat(pending, " pending, ", admitted,
                                    " admitted (in its ClusterQueues, sub-cohorts included)"));
  top.Add("Borrowers", BorrowersLine(*b));
  top.Print(out);
  out << "Usage:\n";
  CohortUsageTable(*b).Print(out, "  ");
  out << "Quota Holders (tree of " << (b->root().empty() ? self : b->root()) << "):\n";
  QuotaHoldersTable(*b).Print(out, "  ");
  return kExitOk;
}

int DescribeLocalQueue(Session& s, absl::string_view name) {
  absl::StatusOr<std::vector<v1::ConfigObject>> objects =
      ListConfig(s, v1::LOCAL_QUEUE, s.Namespace(), name);
  if (!objects.ok()) return s.Fail(objects.status());
  const v1::LocalQueue& lq = objects->front().local_queue();
  std::ostream& out = s.out();
  FieldPrinter top;
  top.Add("Name", lq.metadata().name());
  top.Add("Namespace", lq.metadata().namespace_());
  top.Add("Labels", JoinKeyValues(lq.metadata().labels()));
  top.Add("Created", TimeAndAge(lq.metadata().creation_timestamp(), s.now()));
  top.Add("ClusterQueue", OrNone(lq.spec().cluster_queue()));
  top.Add("Stop Policy", lq.spec().stop_policy().empty() ? "None" : lq.spec().stop_policy());
  if (lq.spec().fair_sharing().has_weight()) {
    top.Add("Fair Sharing", absl::StrCat("weight ", lq.spec().fair_sharing().weight()));
  }
  top.Add("Workloads", absl::StrCat(lq.status().pending_workloads(), " pending, ",
                                    lq.status().admitted_workloads(), " admitted"));
  top.Print(out);

  out << "Usage:\n";
  TablePrinter usage({"FLAVOR", "RESOURCE", "USED"});
  for (const v1::FlavorUsage& flavor : lq.status().flavors_usage()) {
    for (const v1::ResourceUsage& r : flavor.resources()) {
      usage.AddRow({flavor.name(), r.name(), r.total()});
    }
  }
  if (lq.status().flavors_usage_size() == 0) {
    out << "  " << kNone << "\n";
  } else {
    usage.Print(out, "  ");
  }

  v1::ListPendingWorkloadsRequest request;
  request.set_namespace_(lq.metadata().namespace_());
  request.set_local_queue(lq.metadata().name());
  absl::StatusOr<v1::ListPendingWorkloadsResponse> pending =
      s.client().ListPendingWorkloads(request);
  // A LocalQueue whose ClusterQueue is missing has no positions: say so, not fail.
  if (!pending.ok() && !absl::IsNotFound(pending.status())) return s.Fail(pending.status());
  if (!pending.ok() || pending->items_size() == 0) {
    out << "Pending Workloads:  " << kNone << "\n";
    return kExitOk;
  }
  out << "Pending Workloads (" << pending->items_size() << "):\n";
  TablePrinter table({"POSITION", "IN CLUSTERQUEUE", "WORKLOAD", "PRIORITY", "MESSAGE"});
  for (int i = 0; i < pending->items_size() && i < kPendingLimit; ++i) {
    const v1::PendingWorkload& item = pending->items(i);
    table.AddRow({absl::StrCat(item.position_in_local_queue() + 1),
                  absl::StrCat(item.position_in_cluster_queue() + 1), item.workload().name(),
                  absl::StrCat(item.priority()), item.message()});
  }
  table.Print(out, "  ");
  if (pending->items_size() > kPendingLimit) {
    out << "  ... and " << pending->items_size() - kPendingLimit << " more\n";
  }
  return kExitOk;
}

int DescribeResourceFlavor(Session& s, absl::string_view name) {
  absl::StatusOr<std::vector<v1::ConfigObject>> objects =
      ListConfig(s, v1::RESOURCE_FLAVOR, "", name);
  if (!objects.ok()) return s.Fail(objects.status());
  const v1::ResourceFlavor& rf = objects->front().resource_flavor();
  absl::StatusOr<std::vector<v1::ConfigObject>> queues = ListConfig(s, v1::CLUSTER_QUEUE, "", "");
  if (!queues.ok()) return s.Fail(queues.status());
  absl::StatusOr<std::vector<v1::ConfigObject>> cohorts = ListConfig(s, v1::COHORT, "", "");
  if (!cohorts.ok()) return s.Fail(cohorts.status());
  std::ostream& out = s.out();

  FieldPrinter top;
  top.Add("Name", rf.metadata().name());
  top.Add("Labels", JoinKeyValues(rf.metadata().labels()));
  top.Add("Created", TimeAndAge(rf.metadata().creation_timestamp(), s.now()));
  top.Add("Node Labels", JoinKeyValues(rf.spec().node_labels()));
  top.Add("Node Taints", FormatTaints(rf.spec()));
  std::vector<std::string> tolerations;
  for (const v1::Toleration& t : rf.spec().tolerations()) {
    tolerations.push_back(absl::StrCat(t.key(), t.operator_() == "Exists" ? "" : "=", t.value(),
                                       t.effect().empty() ? "" : ":", t.effect()));
  }
  top.Add("Tolerations",
          tolerations.empty() ? std::string(kNone) : absl::StrJoin(tolerations, ","));
  top.Print(out);

  // Where its quota is: every ClusterQueue and Cohort that lists it, with the usage in it.
  TablePrinter table({"NAME", "KIND", "RESOURCE", "NOMINAL", "USED", "BORROWED"});
  int rows = 0;
  for (const v1::ConfigObject& o : *queues) {
    const v1::ClusterQueue& cq = o.cluster_queue();
    for (const v1::ResourceGroup& g : cq.spec().resource_groups()) {
      for (const v1::FlavorQuotas& f : g.flavors()) {
        if (f.name() != rf.metadata().name()) continue;
        for (const v1::ResourceQuota& q : f.resources()) {
          std::string used = "0";
          std::string borrowed = "0";
          for (const v1::FlavorUsage& u : cq.status().flavors_usage()) {
            if (u.name() != f.name()) continue;
            for (const v1::ResourceUsage& r : u.resources()) {
              if (r.name() == q.name()) {
                used = r.total();
                borrowed = r.borrowed();
              }
            }
          }
          table.AddRow({cq.metadata().name(), "ClusterQueue", q.name(),
                        CanonicalQuantity(q.name(), q.nominal_quota()), used, borrowed});
          ++rows;
        }
      }
    }
  }
  for (const v1::ConfigObject& o : *cohorts) {
    const v1::Cohort& c = o.cohort();
    for (const v1::ResourceGroup& g : c.spec().resource_groups()) {
      for (const v1::FlavorQuotas& f : g.flavors()) {
        if (f.name() != rf.metadata().name()) continue;
        for (const v1::ResourceQuota& q : f.resources()) {
          table.AddRow({c.metadata().name(), "Cohort", q.name(),
                        CanonicalQuantity(q.name(), q.nominal_quota()), "-", "-"});
          ++rows;
        }
      }
    }
  }
  if (rows == 0) {
    out << "Quota:  " << kNone << " (no ClusterQueue or Cohort lists this flavor)\n";
  } else {
    out << "Quota:\n";
    table.Print(out, "  ");
  }
  return kExitOk;
}

int DescribePolicyObject(Session& s, v1::ObjectKind kind, absl::string_view name) {
  absl::StatusOr<std::vector<v1::ConfigObject>> objects = ListConfig(s, kind, "", name);
  if (!objects.ok()) return s.Fail(objects.status());
  const v1::ConfigObject& object = objects->front();
  const v1::ObjectMeta& meta = engine::MetadataOf(object);
  std::ostream& out = s.out();
  FieldPrinter top;
  top.Add("Name", meta.name());
  top.Add("Kind", engine::KindName(kind));
  top.Add("Created", TimeAndAge(meta.creation_timestamp(), s.now()));
  top.Add("Generation", absl::StrCat(meta.generation()));
  top.Print(out);
  // The rest is the policy itself, in the shape it is applied in.
  Json manifest = ManifestOf(object);
  manifest.erase("apiVersion");
  manifest.erase("kind");
  manifest.erase("metadata");
  out << ToYaml(manifest);
  return kExitOk;
}

}  // namespace tollgate::cli
