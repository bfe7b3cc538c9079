// get (tables and -o formats, selectors, field filters, --sort-by, -w), usage and watch.
#include <algorithm>
#include <map>
#include <numeric>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "cmd/tollgate/cli_format.h"
#include "cmd/tollgate/cli_kinds.h"
#include "cmd/tollgate/cli_queries.h"
#include "cmd/tollgate/cohort_sections.h"
#include "cmd/tollgate/commands.h"
#include "cmd/tollgate/label_selector.h"
#include "cmd/tollgate/object_printer.h"
#include "cmd/tollgate/start_estimate_view.h"
#include "services/engine/config_objects.h"

namespace tollgate::cli {
namespace {

// What narrows a workload list: the server's filters (queue, ClusterQueue, state) and the
// label selector. Applied on the client too, so `get` and `get -w` agree.
struct WorkloadFilter {
  std::string queue;
  std::string cluster_queue;
  v1::WorkloadState state = v1::WORKLOAD_STATE_UNSPECIFIED;
  LabelSelector selector;
  // LocalQueue "namespace/name" -> ClusterQueue, to place pending workloads (--clusterqueue).
  std::map<std::string, std::string> routes;

  bool Matches(const v1::Workload& wl) const {
    if (!queue.empty() && QueueOf(wl) != queue) return false;
    if (state != v1::WORKLOAD_STATE_UNSPECIFIED && wl.status().state() != state) return false;
    if (!cluster_queue.empty()) {
      std::string cq = wl.status().admission().cluster_queue();
      if (cq.empty()) {
        auto it = routes.find(absl::StrCat(wl.metadata().namespace_(), "/", QueueOf(wl)));
        if (it != routes.end()) cq = it->second;
      }
      if (cq != cluster_queue) return false;
    }
    return selector.Matches(wl.metadata().labels());
  }
};

absl::StatusOr<v1::WorkloadState> ParseState(absl::string_view text) {
  const std::string lower = absl::AsciiStrToLower(text);
  if (lower == "pending") return v1::WORKLOAD_STATE_PENDING;
  if (lower == "quotareserved" || lower == "quota-reserved") {
    return v1::WORKLOAD_STATE_QUOTA_RESERVED;
  }
  if (lower == "admitted") return v1::WORKLOAD_STATE_ADMITTED;
  if (lower == "evicting") return v1::WORKLOAD_STATE_EVICTING;
  if (lower == "finished") return v1::WORKLOAD_STATE_FINISHED;
  return absl::InvalidArgumentError(absl::StrCat(
      "--status \"", text, "\": want pending, quotareserved, admitted, evicting or finished"));
}

// The parsed options of one `get`.
struct GetOptions {
  const KindInfo* kind = nullptr;
  std::string name;
  OutputFormat format;
  bool all_namespaces = false;
  bool no_headers = false;
  std::string sort_by;
  WorkloadFilter filter;
};

absl::StatusOr<WorkloadFilter> ParseFilter(Session& s, const ParsedFlags& args,
                                           bool for_workloads) {
  WorkloadFilter filter;
  absl::StatusOr<LabelSelector> selector = LabelSelector::Parse(args.Get("selector"));
  if (!selector.ok()) return selector.status();
  filter.selector = *std::move(selector);
  const bool field_filters = args.Has("queue") || args.Has("clusterqueue") || args.Has("status");
  if (field_filters && !for_workloads) {
    return absl::InvalidArgumentError("--queue, --clusterqueue and --status filter workloads");
  }
  filter.queue = args.Get("queue");
  filter.cluster_queue = args.Get("clusterqueue");
  if (args.Has("status")) {
    absl::StatusOr<v1::WorkloadState> state = ParseState(args.Get("status"));
    if (!state.ok()) return state.status();
    filter.state = *state;
  }
  if (!filter.cluster_queue.empty()) {
    absl::StatusOr<std::vector<v1::ConfigObject>> queues = ListConfig(s, v1::LOCAL_QUEUE, "", "");
    if (!queues.ok()) return queues.status();
    for (const v1::ConfigObject& o : *queues) {
      const v1::LocalQueue& lq = o.local_queue();
      filter.routes[absl::StrCat(lq.metadata().namespace_(), "/", lq.metadata().name())] =
          lq.spec().cluster_queue();
    }
  }
  return filter;
}

// The order to print `manifests` in: --sort-by, else as listed.
absl::StatusOr<std::vector<size_t>> Order(const GetOptions& o, const std::vector<Json>& manifests) {
  if (!o.sort_by.empty()) return SortOrder(manifests, o.sort_by);
  std::vector<size_t> order(manifests.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = i;
  return order;
}

int PrintStructured(Session& s, const GetOptions& o, const std::vector<Json>& manifests) {
  absl::StatusOr<std::vector<size_t>> order = Order(o, manifests);
  if (!order.ok()) return s.Fail(order.status());
  std::vector<Json> sorted;
  for (size_t i : *order) sorted.push_back(manifests[i]);
  std::vector<std::string> resources(sorted.size(), std::string(o.kind->resource));
  if (absl::Status st = PrintObjects(o.format, sorted, resources, !o.name.empty(), s.out());
      !st.ok()) {
    return s.Fail(st);
  }
  return kExitOk;
}

// --- workloads --------------------------------------------------------------------------------

std::vector<std::string> WorkloadHeaders(const GetOptions& o) {
  std::vector<std::string> h;
  if (o.all_namespaces) h.push_back("NAMESPACE");
  for (const char* c : {"NAME", "QUEUE", "STATE", "ADMITTED-BY", "PRIORITY", "POSITION", "AGE"}) {
    h.push_back(c);
  }
  if (o.format.kind == OutputFormat::Kind::kWide) {
    h.push_back("PRIORITY-CLASS");
    h.push_back("FLAVORS");
    h.push_back("ESTIMATED-START");
  }
  h.push_back("REASON");
  return h;
}

// POSITION is the place in the ClusterQueue (kueuectl's POSITION); REASON why it waits or was
// evicted (squeue's REASON).
std::vector<std::string> WorkloadRow(const GetOptions& o, const v1::Workload& wl,
                                     const std::map<std::string, PendingInfo>& pending,
                                     absl::Time now) {
  const std::string key = WorkloadKey(wl.metadata());
  auto it = pending.find(key);
  std::string position(kNone);
  std::string reason(kNone);
  switch (wl.status().state()) {
    case v1::WORKLOAD_STATE_PENDING:
      if (it != pending.end()) position = absl::StrCat(it->second.position);
      reason = OrNone(it != pending.end() && !it->second.message.empty()
                          ? it->second.message
                          : wl.status().pending_message());
      break;
    case v1::WORKLOAD_STATE_EVICTING:
      reason = OrNone(wl.status().last_preemption_reason());
      break;
    case v1::WORKLOAD_STATE_QUOTA_RESERVED: {
      // What it waits for: the checks that are not Ready yet.
      std::vector<std::string> waiting;
      for (const v1::AdmissionCheckState& check : wl.status().admission_checks()) {
        if (check.state() != "Ready") {
          waiting.push_back(absl::StrCat(check.name(), "=", check.state()));
        }
      }
      reason = waiting.empty() ? std::string(kNone)
                               : absl::StrCat("waiting for checks: ", absl::StrJoin(waiting, ", "));
      break;
    }
    default:
      break;
  }
  std::vector<std::string> row;
  if (o.all_namespaces) row.push_back(wl.metadata().namespace_());
  row.insert(row.end(),
             {wl.metadata().name(), QueueOf(wl), DisplayState(wl),
              OrNone(wl.status().admission().cluster_queue()), absl::StrCat(wl.status().priority()),
              position, FormatAge(wl.metadata().creation_timestamp(), now)});
  if (o.format.kind == OutputFormat::Kind::kWide) {
    row.push_back(OrNone(wl.spec().priority_class_name()));
    std::vector<std::string> flavors;
    for (const v1::PodSetAssignment& a : wl.status().admission().pod_set_assignments()) {
      flavors.push_back(FormatFlavors(a));
    }
    row.push_back(flavors.empty() ? std::string(kNone) : absl::StrJoin(flavors, "; "));
    row.push_back(it != pending.end() && it->second.start_estimate.has_value()
                      ? StartEstimateCell(*it->second.start_estimate, now)
                      : std::string(kNone));
  }
  row.push_back(reason);
  return row;
}

absl::StatusOr<std::vector<v1::Workload>> FetchWorkloads(Session& s, const GetOptions& o,
                                                         int64_t* revision) {
  std::vector<v1::Workload> workloads;
  if (!o.name.empty()) {
    v1::GetWorkloadRequest request;
    request.mutable_workload()->set_namespace_(s.Namespace());
    request.mutable_workload()->set_name(o.name);
    absl::StatusOr<v1::Workload> wl = s.client().GetWorkload(request);
    if (!wl.ok()) return wl.status();
    workloads.push_back(*std::move(wl));
    return workloads;
  }
  v1::ListWorkloadsRequest request;
  if (!o.all_namespaces) {
    request.set_namespace_(s.Namespace());
    // The server narrows by LocalQueue within a namespace; across namespaces the CLI does.
    request.set_queue_name(o.filter.queue);
  }
  request.set_state(o.filter.state);
  absl::StatusOr<v1::ListWorkloadsResponse> response = s.client().ListWorkloads(request);
  if (!response.ok()) return response.status();
  if (revision != nullptr) *revision = response->revision();
  for (v1::Workload& wl : *response->mutable_workloads()) {
    if (o.filter.Matches(wl)) workloads.push_back(std::move(wl));
  }
  std::sort(workloads.begin(), workloads.end(), [](const v1::Workload& a, const v1::Workload& b) {
    return std::make_pair(a.metadata().namespace_(), a.metadata().name()) <
           std::make_pair(b.metadata().namespace_(), b.metadata().name());
  });
  return workloads;
}

int GetWorkloads(Session& s, const GetOptions& o) {
  absl::StatusOr<std::vector<v1::Workload>> workloads = FetchWorkloads(s, o, nullptr);
  if (!workloads.ok()) return s.Fail(workloads.status());
  // The manifests are what structured output prints and --sort-by reads. A plain table needs
  // neither, and building them was most of the time a 100,000-workload listing took.
  const bool table_in_listed_order = o.format.is_table() && o.sort_by.empty();
  std::vector<Json> manifests;
  if (!table_in_listed_order) {
    for (const v1::Workload& wl : *workloads) manifests.push_back(ManifestOf(wl));
  }
  if (!o.format.is_table()) return PrintStructured(s, o, manifests);
  absl::StatusOr<std::map<std::string, PendingInfo>> pending =
      PendingInfoOf(s, *workloads, o.format.kind == OutputFormat::Kind::kWide);
  if (!pending.ok()) return s.Fail(pending.status());
  std::vector<size_t> order(workloads->size());
  std::iota(order.begin(), order.end(), size_t{0});
  if (!table_in_listed_order) {
    absl::StatusOr<std::vector<size_t>> sorted = Order(o, manifests);
    if (!sorted.ok()) return s.Fail(sorted.status());
    order = *std::move(sorted);
  }
  TablePrinter table(WorkloadHeaders(o));
  for (size_t i : order) table.AddRow(WorkloadRow(o, (*workloads)[i], *pending, s.now()));
  s.PrintTableOrNothing(table, s.NoResources(true), !o.no_headers);
  return kExitOk;
}

// `get workloads -w`: the list (unless resuming), then one row or object per change. The last
// revision seen goes to stderr when the stream ends, so the watch can resume from it.
int WatchWorkloads(Session& s, const GetOptions& o, const ParsedFlags& args) {
  int64_t revision = 0;
  if (args.Has("since-revision")) {
    if (!absl::SimpleAtoi(args.Get("since-revision"), &revision) || revision < 0) {
      return s.UsageError(absl::StrCat("--since-revision wants a revision number, got \"",
                                       args.Get("since-revision"), "\""));
    }
  }
  const bool table = o.format.is_table();
  // A row cannot be aligned with rows not yet seen; fixed minimum widths keep typical names in
  // columns, as kubectl's watch output does.
  auto print_row = [&](const std::vector<std::string>& cells) {
    std::string line;
    for (size_t i = 0; i < cells.size(); ++i) {
      const bool last = i + 1 == cells.size();
      absl::StrAppend(&line, last ? cells[i] : absl::StrFormat("%-*s", 12, cells[i]),
                      last ? "" : "   ");
    }
    s.out() << line << std::endl;  // flushed: someone is watching
  };
  auto print = [&](const v1::Workload& wl, bool deleted) {
    if (table) {
      std::vector<std::string> row = WorkloadRow(o, wl, {}, s.now());
      if (deleted) row.back() = "deleted";
      print_row(row);
      return;
    }
    std::vector<Json> one{ManifestOf(wl)};
    absl::Status st = PrintObjects(o.format, one, {std::string(o.kind->resource)}, true, s.out());
    if (o.format.kind == OutputFormat::Kind::kYaml) s.out() << "---\n";
    s.out().flush();
    // The format was checked before anything was printed; a template error is the user's.
    if (!st.ok()) s.err() << "tollgate: " << st.message() << "\n";
  };
  if (table && !o.no_headers) print_row(WorkloadHeaders(o));
  if (!args.Has("since-revision")) {
    absl::StatusOr<std::vector<v1::Workload>> initial = FetchWorkloads(s, o, &revision);
    if (!initial.ok()) return s.Fail(initial.status());
    absl::StatusOr<std::map<std::string, PendingInfo>> pending = PendingInfoOf(s, *initial);
    if (!pending.ok()) return s.Fail(pending.status());
    for (const v1::Workload& wl : *initial) {
      if (table) {
        print_row(WorkloadRow(o, wl, *pending, s.now()));
      } else {
        print(wl, false);
      }
    }
  }
  v1::WatchRequest request;
  request.set_since_revision(revision);
  if (!o.all_namespaces) request.set_namespace_(s.Namespace());
  int64_t last = revision;
  absl::Status status = s.client().Watch(
      request,
      [&](const v1::WatchEvent& event) {
        last = std::max(last, event.revision());
        if (event.type() == v1::WatchEvent::BOOKMARK) return true;
        const v1::Workload& wl = event.workload();
        if (!o.name.empty() && wl.metadata().name() != o.name) return true;
        if (!o.filter.Matches(wl)) return true;
        print(wl, event.type() == v1::WatchEvent::DELETED);
        return true;
      },
      s.watch_canceller());
  // Where to resume, once the watch has got somewhere.
  if (status.ok() || last > revision) {
    s.err() << "watched to revision " << last << "; resume with --since-revision=" << last << "\n";
  }
  if (!status.ok()) return s.Fail(status);
  return kExitOk;
}

// --- configuration objects --------------------------------------------------------------------

std::vector<std::string> WithNamespace(const GetOptions& o, std::vector<std::string> cells,
                                       const std::string& ns) {
  if (o.all_namespaces) cells.insert(cells.begin(), ns);
  return cells;
}

// Kueue creates a cohort implicitly when a ClusterQueue (or a Cohort's parent) names it; listing
// only Cohort objects would hide exactly the common case. The server answers Get for them.
absl::Status AddImplicitCohorts(Session& s, std::vector<v1::ConfigObject>& cohorts) {
  std::set<std::string> names;
  for (const v1::ConfigObject& c : cohorts) names.insert(c.cohort().metadata().name());
  std::set<std::string> implicit;
  absl::StatusOr<std::vector<v1::ConfigObject>> queues = ListConfig(s, v1::CLUSTER_QUEUE, "", "");
  if (!queues.ok()) return queues.status();
  for (const v1::ConfigObject& q : *queues) implicit.insert(q.cluster_queue().spec().cohort());
  for (const v1::ConfigObject& c : cohorts) implicit.insert(c.cohort().spec().parent());
  for (const std::string& name : implicit) {
    if (name.empty() || names.count(name) > 0) continue;
    absl::StatusOr<std::vector<v1::ConfigObject>> got = ListConfig(s, v1::COHORT, "", name);
    if (absl::IsNotFound(got.status())) continue;  // gone meanwhile
    if (!got.ok()) return got.status();
    cohorts.push_back(got->front());
  }
  std::sort(cohorts.begin(), cohorts.end(),
            [](const v1::ConfigObject& a, const v1::ConfigObject& b) {
              return a.cohort().metadata().name() < b.cohort().metadata().name();
            });
  return absl::OkStatus();
}

// "User:alice,Group:team-a", as the policy file names subjects.
std::string SubjectsText(const google::protobuf::RepeatedPtrField<v1::PolicySubject>& subjects) {
  std::vector<std::string> out;
  for (const v1::PolicySubject& subject : subjects) {
    out.push_back(absl::StrCat(subject.kind(), ":", subject.name()));
  }
  return out.empty() ? std::string(kNone) : absl::StrJoin(out, ",");
}

int GetConfig(Session& s, const GetOptions& o) {
  const KindInfo& kind = *o.kind;
  std::string ns;
  if (kind.namespaced && !o.all_namespaces) ns = s.Namespace();
  absl::StatusOr<std::vector<v1::ConfigObject>> listed =
      ListConfig(s, kind.object_kind, ns, o.name);
  if (!listed.ok()) return s.Fail(listed.status());
  if (kind.object_kind == v1::COHORT && o.name.empty()) {
    if (absl::Status st = AddImplicitCohorts(s, *listed); !st.ok()) return s.Fail(st);
  }
  std::vector<v1::ConfigObject> objects;
  for (v1::ConfigObject& object : *listed) {
    if (o.filter.selector.Matches(engine::MetadataOf(object).labels())) {
      objects.push_back(std::move(object));
    }
  }
  std::vector<Json> manifests;
  for (const v1::ConfigObject& object : objects) manifests.push_back(ManifestOf(object));
  if (!o.format.is_table()) return PrintStructured(s, o, manifests);
  absl::StatusOr<std::vector<size_t>> order = Order(o, manifests);
  if (!order.ok()) return s.Fail(order.status());

  const bool wide = o.format.kind == OutputFormat::Kind::kWide;
  const absl::Time now = s.now();
  std::optional<TablePrinter> table;
  switch (kind.object_kind) {
    case v1::CLUSTER_QUEUE: {
      std::vector<std::string> headers{"NAME",    "COHORT",   "STRATEGY",
                                       "PENDING", "ADMITTED", "ACTIVE"};
      if (wide) {
        headers.push_back("RESERVING");
        headers.push_back("FLAVORS");
      }
      table.emplace(headers);
      for (size_t i : *order) {
        const v1::ClusterQueue& cq = objects[i].cluster_queue();
        std::vector<std::string> row{cq.metadata().name(),
                                     OrNone(cq.spec().cohort()),
                                     cq.spec().queueing_strategy().empty()
                                         ? "BestEffortFIFO"
                                         : cq.spec().queueing_strategy(),
                                     absl::StrCat(cq.status().pending_workloads()),
                                     absl::StrCat(cq.status().admitted_workloads()),
                                     ActiveOf(cq)};
        if (wide) {
          // Holding quota: admitted, plus those still waiting for admission checks.
          row.push_back(absl::StrCat(cq.status().reserving_workloads()));
          std::vector<std::string> flavors;
          for (const v1::ResourceGroup& g : cq.spec().resource_groups()) {
            for (const v1::FlavorQuotas& f : g.flavors()) flavors.push_back(f.name());
          }
          row.push_back(flavors.empty() ? std::string(kNone) : absl::StrJoin(flavors, ","));
        }
        table->AddRow(row);
      }
      break;
    }
    case v1::LOCAL_QUEUE: {
      std::vector<std::string> headers{"NAME", "CLUSTERQUEUE", "PENDING", "ADMITTED", "STATUS"};
      if (wide) headers.push_back("STOP-POLICY");
      table.emplace(WithNamespace(o, headers, "NAMESPACE"));
      for (size_t i : *order) {
        const v1::LocalQueue& lq = objects[i].local_queue();
        std::vector<std::string> row{lq.metadata().name(), OrNone(lq.spec().cluster_queue()),
                                     absl::StrCat(lq.status().pending_workloads()),
                                     absl::StrCat(lq.status().admitted_workloads()),
                                     ObjectStatusOf(lq.metadata(), lq.spec().stop_policy())};
        if (wide) row.push_back(lq.spec().stop_policy().empty() ? "None" : lq.spec().stop_policy());
        table->AddRow(WithNamespace(o, row, lq.metadata().namespace_()));
      }
      break;
    }
    case v1::RESOURCE_FLAVOR:
      table.emplace(std::vector<std::string>{"NAME", "NODE-LABELS", "TAINTS"});
      for (size_t i : *order) {
        const v1::ResourceFlavor& rf = objects[i].resource_flavor();
        table->AddRow({rf.metadata().name(), JoinKeyValues(rf.spec().node_labels()),
                       FormatTaints(rf.spec())});
      }
      break;
    case v1::COHORT: {
      std::vector<std::string> headers{"NAME", "PARENT", "IMPLICIT"};
      if (wide) headers.push_back("WEIGHTED-SHARE");
      table.emplace(headers);
      for (size_t i : *order) {
        const v1::Cohort& c = objects[i].cohort();
        bool implicit = false;
        for (const v1::Condition& cond : c.status().conditions()) {
          implicit = implicit || (cond.type() == "Implicit" && cond.status() == "True");
        }
        std::vector<std::string> row{c.metadata().name(), OrNone(c.spec().parent()),
                                     implicit ? "true" : "false"};
        if (wide) row.push_back(absl::StrCat(c.status().fair_sharing().weighted_share()));
        table->AddRow(row);
      }
      break;
    }
    case v1::WORKLOAD_PRIORITY_CLASS:
    case v1::PRIORITY_CLASS:
      table.emplace(std::vector<std::string>{"NAME", "VALUE", "AGE"});
      for (size_t i : *order) {
        const v1::ConfigObject& c = objects[i];
        const bool wpc = c.has_workload_priority_class();
        const v1::ObjectMeta& meta = engine::MetadataOf(c);
        table->AddRow(
            {meta.name(),
             absl::StrCat(wpc ? c.workload_priority_class().value() : c.priority_class().value()),
             FormatAge(meta.creation_timestamp(), now)});
      }
      break;
    case v1::ROLE:
      table.emplace(std::vector<std::string>{"NAME", "RULES", "MAX-PRIORITY", "AGE"});
      for (size_t i : *order) {
        const v1::Role& role = objects[i].role();
        std::vector<std::string> rules;
        for (const v1::PolicyRule& rule : role.rules()) {
          rules.push_back(absl::StrCat(absl::StrJoin(rule.verbs(), ","), " ",
                                       absl::StrJoin(rule.kinds(), ",")));
        }
        table->AddRow({role.metadata().name(),
                       rules.empty() ? std::string(kNone) : absl::StrJoin(rules, "; "),
                       absl::StrCat(role.has_max_priority() ? role.max_priority() : 0),
                       FormatAge(role.metadata().creation_timestamp(), now)});
      }
      break;
    case v1::ROLE_BINDING:
      table.emplace(std::vector<std::string>{"NAME", "ROLE", "SUBJECTS", "NAMESPACES", "AGE"});
      for (size_t i : *order) {
        const v1::RoleBinding& b = objects[i].role_binding();
        table->AddRow({b.metadata().name(), b.role(), SubjectsText(b.subjects()),
                       b.namespaces().empty() ? "*" : absl::StrJoin(b.namespaces(), ","),
                       FormatAge(b.metadata().creation_timestamp(), now)});
      }
      break;
    case v1::QUEUE_GRANT:
      table.emplace(std::vector<std::string>{"NAME", "QUEUE", "VERBS", "SUBJECTS", "AGE"});
      for (size_t i : *order) {
        const v1::QueueGrant& g = objects[i].queue_grant();
        const std::string queue = !g.cohort().empty() ? absl::StrCat("Cohort/", g.cohort())
                                  : !g.cluster_queue().empty()
                                      ? absl::StrCat("ClusterQueue/", g.cluster_queue())
                                      : absl::StrCat("LocalQueue/", g.local_queue().namespace_(),
                                                     "/", g.local_queue().name());
        table->AddRow({g.metadata().name(), queue, absl::StrJoin(g.verbs(), ","),
                       SubjectsText(g.subjects()),
                       FormatAge(g.metadata().creation_timestamp(), now)});
      }
      break;
    case v1::ADMISSION_CHECK: {
      std::vector<std::string> headers{"NAME", "CONTROLLER", "ACTIVE", "AGE"};
      if (wide) headers.push_back("PARAMETERS");
      table.emplace(headers);
      for (size_t i : *order) {
        const v1::AdmissionCheck& ac = objects[i].admission_check();
        std::string active = "False (NoCondition)";
        for (const v1::Condition& c : ac.status().conditions()) {
          if (c.type() != "Active") continue;
          active = c.status() == "True" || c.reason().empty()
                       ? c.status()
                       : absl::StrCat(c.status(), " (", c.reason(), ")");
        }
        if (ac.metadata().has_deletion_timestamp()) active = "False (Terminating)";
        std::vector<std::string> row{ac.metadata().name(), ac.spec().controller_name(), active,
                                     FormatAge(ac.metadata().creation_timestamp(), now)};
        if (wide) {
          const v1::AdmissionCheckParametersReference& p = ac.spec().parameters();
          row.push_back(p.name().empty() ? std::string(kNone)
                                         : absl::StrCat(p.kind(), "/", p.name()));
        }
        table->AddRow(row);
      }
      break;
    }
    case v1::TOPOLOGY:
      table.emplace(std::vector<std::string>{"NAME", "LEVELS", "AGE"});
      for (size_t i : *order) {
        const v1::Topology& t = objects[i].topology();
        std::vector<std::string> levels;
        for (const v1::TopologyLevel& level : t.spec().levels())
          levels.push_back(level.node_label());
        table->AddRow({t.metadata().name(), absl::StrJoin(levels, ","),
                       FormatAge(t.metadata().creation_timestamp(), now)});
      }
      break;
    case v1::MULTI_KUEUE_CONFIG:
      table.emplace(std::vector<std::string>{"NAME", "CLUSTERS", "AGE"});
      for (size_t i : *order) {
        const v1::MultiKueueConfig& c = objects[i].multi_kueue_config();
        table->AddRow({c.metadata().name(), absl::StrJoin(c.spec().clusters(), ","),
                       FormatAge(c.metadata().creation_timestamp(), now)});
      }
      break;
    case v1::MULTI_KUEUE_CLUSTER: {
      // Kueue's printer columns: whether the worker is connected, and the age.
      std::vector<std::string> headers{"NAME", "CONNECTED", "AGE"};
      if (wide) headers.push_back("SOURCE");
      table.emplace(headers);
      for (size_t i : *order) {
        const v1::MultiKueueCluster& c = objects[i].multi_kueue_cluster();
        std::string connected = "False (NoCondition)";
        for (const v1::Condition& cond : c.status().conditions()) {
          if (cond.type() != "Active") continue;
          connected = cond.status() == "True" || cond.reason().empty()
                          ? cond.status()
                          : absl::StrCat(cond.status(), " (", cond.reason(), ")");
        }
        std::vector<std::string> row{c.metadata().name(), connected,
                                     FormatAge(c.metadata().creation_timestamp(), now)};
        if (wide) {
          row.push_back(c.spec().has_endpoint()
                            ? c.spec().endpoint().address()
                            : absl::StrCat(c.spec().kube_config().location_type(), "/",
                                           c.spec().kube_config().location()));
        }
        table->AddRow(row);
      }
      break;
    }
    case v1::NAMESPACE:
    default:
      table.emplace(std::vector<std::string>{"NAME", "STATUS", "AGE"});
      for (size_t i : *order) {
        const v1::ObjectMeta& meta = engine::MetadataOf(objects[i]);
        table->AddRow(
            {meta.name(), ObjectStatusOf(meta), FormatAge(meta.creation_timestamp(), now)});
      }
      break;
  }
  s.PrintTableOrNothing(*table, s.NoResources(kind.namespaced), !o.no_headers);
  return kExitOk;
}

int PrintUsage(Session& s, absl::string_view cluster_queue) {
  absl::StatusOr<std::vector<v1::ConfigObject>> objects =
      ListConfig(s, v1::CLUSTER_QUEUE, "", cluster_queue);
  if (!objects.ok()) return s.Fail(objects.status());
  const v1::ClusterQueue& cq = objects->front().cluster_queue();
  s.PrintTableOrNothing(UsageTable(cq),
                        absl::StrCat("ClusterQueue ", cluster_queue, " has no resource groups"));
  return kExitOk;
}

// A cohort's usage view (implicit cohorts too): its quota, what its members share, use and borrow.
int PrintCohortUsage(Session& s, absl::string_view cohort) {
  v1::GetCohortBreakdownRequest request;
  request.set_cohort(std::string(cohort));
  absl::StatusOr<v1::CohortBreakdown> b = s.client().GetCohortBreakdown(request);
  if (!b.ok()) return s.Fail(b.status());
  s.PrintTableOrNothing(CohortUsageTable(*b),
                        absl::StrCat("Cohort ", cohort, " has no quota in any flavor"));
  return kExitOk;
}

}  // namespace

int RunGet(Session& s, const ParsedFlags& args) {
  std::vector<std::string> words = args.positional;
  // kubectl's TYPE/NAME spelling.
  if (words.size() == 1 && words[0].find('/') != std::string::npos) {
    const size_t slash = words[0].find('/');
    words = {words[0].substr(0, slash), words[0].substr(slash + 1)};
  }
  if (words.empty() || words.size() > 2) {
    return s.UsageError(
        "name what to get: flavors, clusterqueues, cohorts, localqueues, "
        "workloads, nodes, ... (and optionally one NAME)");
  }
  if (words.size() == 1 && (words[0] == "config" || words[0] == "configuration")) {
    return RunGetConfig(s, args);
  }
  // Nodes are inventory, not configuration objects.
  if (words[0] == "nodes" || words[0] == "node" || words[0] == "no") {
    return RunGetNodes(s, args, words.size() == 2 ? words[1] : "");
  }
  GetOptions o;
  o.kind = FindKind(words[0]);
  if (o.kind == nullptr) {
    return s.UsageError(absl::StrCat("unknown resource type \"", words[0], "\""));
  }
  o.name = words.size() == 2 ? words[1] : "";
  o.all_namespaces = args.Has("all-namespaces");
  o.no_headers = args.Has("no-headers");
  o.sort_by = args.Get("sort-by");
  if (o.all_namespaces && !o.name.empty()) {
    return s.UsageError("a NAME cannot be combined with -A");
  }
  if (args.Get("output") == "usage" && o.kind->object_kind == v1::TOPOLOGY) {
    return PrintTopologyUsage(s, o.name);
  }
  if (args.Get("output") == "usage") {
    const bool cohort = o.kind->object_kind == v1::COHORT;
    if ((o.kind->object_kind != v1::CLUSTER_QUEUE && !cohort) || o.name.empty()) {
      return s.UsageError(
          "-o usage needs one ClusterQueue or Cohort (get clusterqueue|cohort NAME -o usage), or "
          "a topology (get topology [NAME] -o usage)");
    }
    return cohort ? PrintCohortUsage(s, o.name) : PrintUsage(s, o.name);
  }
  absl::StatusOr<OutputFormat> format = ParseOutputFormat(args.Get("output"));
  if (!format.ok()) {
    return s.UsageError(absl::StrCat(format.status().message(), "; or -o usage"));
  }
  o.format = *format;
  if (!o.sort_by.empty()) {
    absl::StatusOr<std::vector<Json>> probe = SelectJsonPath(Json::object(), o.sort_by);
    if (!probe.ok()) return s.UsageError(probe.status().message());
  }
  const bool workloads = IsWorkloadKind(o.kind);
  if (args.Has("watch") && !workloads) {
    return s.UsageError("only workloads can be watched: get workloads -w");
  }
  if (args.Has("since-revision") && !args.Has("watch")) {
    return s.UsageError("--since-revision resumes a watch: add -w");
  }
  absl::StatusOr<WorkloadFilter> filter = ParseFilter(s, args, workloads);
  if (!filter.ok()) {
    return absl::IsInvalidArgument(filter.status()) ? s.UsageError(filter.status().message())
                                                    : s.Fail(filter.status());
  }
  o.filter = *std::move(filter);
  if (args.Has("watch")) return WatchWorkloads(s, o, args);
  return workloads ? GetWorkloads(s, o) : GetConfig(s, o);
}

int RunUsage(Session& s, const ParsedFlags& args) {
  if (args.positional.size() != 1) return s.UsageError("name one ClusterQueue");
  return PrintUsage(s, args.positional[0]);
}

// --- watch ------------------------------------------------------------------------------------

namespace {

std::string WatchLine(const v1::WatchEvent& event) {
  const v1::Workload& wl = event.workload();
  std::string type;
  switch (event.type()) {
    case v1::WatchEvent::ADDED:
      type = "ADDED";
      break;
    case v1::WatchEvent::MODIFIED:
      type = "MODIFIED";
      break;
    case v1::WatchEvent::DELETED:
      type = "DELETED";
      break;
    default:
      type = "UNKNOWN";
      break;
  }
  std::string detail;
  if (event.type() == v1::WatchEvent::DELETED) {
    detail = "deleted";
  } else if (wl.status().events_size() > 0) {
    const v1::WorkloadEvent& last = *wl.status().events().rbegin();
    detail = absl::StrCat(last.reason(), ": ", last.message());
  } else {
    detail = wl.status().pending_message();
  }
  // A stream cannot be aligned after the fact; minimum widths keep typical names in columns.
  return absl::StrFormat("%-9s %-36s %-9s %-14s %s", type, WorkloadKey(wl.metadata()),
                         DisplayState(wl), OrNone(wl.status().admission().cluster_queue()), detail);
}

}  // namespace

int RunWatch(Session& s, const ParsedFlags& args) {
  if (args.positional.size() != 1 || !IsWorkloadKind(FindKind(args.positional[0]))) {
    return s.UsageError("only workloads can be watched: watch workloads [-n NAMESPACE | -A]");
  }
  v1::WatchRequest request;
  if (!args.Has("all-namespaces")) request.set_namespace_(s.Namespace());
  if (args.Has("since-revision")) {
    int64_t revision = 0;
    if (!absl::SimpleAtoi(args.Get("since-revision"), &revision) || revision < 0) {
      return s.UsageError(absl::StrCat("--since-revision wants a revision number, got \"",
                                       args.Get("since-revision"), "\""));
    }
    request.set_since_revision(revision);
  }
  int64_t last = request.since_revision();
  absl::Status status = s.client().Watch(
      request,
      [&s, &last](const v1::WatchEvent& event) {
        last = std::max(last, event.revision());
        if (event.type() == v1::WatchEvent::BOOKMARK) return true;
        s.out() << WatchLine(event) << std::endl;  // flushed: someone is watching
        return true;
      },
      s.watch_canceller());
  // Where to resume, once the watch has got somewhere.
  if (status.ok() || last > request.since_revision()) {
    s.err() << "watched to revision " << last << "; resume with --since-revision=" << last << "\n";
  }
  if (!status.ok()) return s.Fail(status);
  return kExitOk;
}

}  // namespace tollgate::cli
