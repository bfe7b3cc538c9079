// describe workload|clusterqueue (and the dispatch to describe_config_command.cc's kinds): what a
// user asks first when a job waits.
#include <algorithm>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "cmd/tollgate/cli_format.h"
#include "cmd/tollgate/cli_kinds.h"
#include "cmd/tollgate/cli_queries.h"
#include "cmd/tollgate/cohort_sections.h"
#include "cmd/tollgate/commands.h"
#include "cmd/tollgate/describe_commands.h"
#include "cmd/tollgate/start_estimate_view.h"

namespace tollgate::cli {
namespace {

// "2 of 3 in LocalQueue team-a/eval-queue, 4 of 7 in ClusterQueue team-a-cq", or why unknown.
absl::StatusOr<std::string> QueuePosition(Session& s, const v1::Workload& wl) {
  const std::string& ns = wl.metadata().namespace_();
  v1::ListPendingWorkloadsRequest by_local_queue;
  by_local_queue.set_namespace_(ns);
  by_local_queue.set_local_queue(QueueOf(wl));
  absl::StatusOr<v1::ListPendingWorkloadsResponse> local =
      s.client().ListPendingWorkloads(by_local_queue);
  // Its LocalQueue was deleted (or never made): nothing queues it; the pending reason says so.
  if (absl::IsNotFound(local.status())) return std::string("not queued");
  if (!local.ok()) return local.status();
  const v1::PendingWorkload* item = nullptr;
  for (const v1::PendingWorkload& p : local->items()) {
    if (p.workload().namespace_() == ns && p.workload().name() == wl.metadata().name()) item = &p;
  }
  if (item == nullptr) return std::string("not queued");
  std::string text = absl::StrCat(item->position_in_local_queue() + 1, " of ", local->items_size(),
                                  " in LocalQueue ", ns, "/", QueueOf(wl));
  if (!item->cluster_queue().empty()) {
    v1::ListPendingWorkloadsRequest by_cluster_queue;
    by_cluster_queue.set_cluster_queue(item->cluster_queue());
    absl::StatusOr<v1::ListPendingWorkloadsResponse> cluster =
        s.client().ListPendingWorkloads(by_cluster_queue);
    if (!cluster.ok()) return cluster.status();
    absl::StrAppend(&text, ", ", item->position_in_cluster_queue() + 1, " of ",
                    cluster->items_size(), " in ClusterQueue ", item->cluster_queue());
  }
  return text;
}

// --- describe workload: one function per section, so a new line lands in one place.

// Name, queue, priority, state: the lines every workload has.
void AddIdentity(FieldPrinter& top, const v1::Workload& wl, absl::Time now) {
  const v1::WorkloadSpec& spec = wl.spec();
  const v1::WorkloadStatus& status = wl.status();
  top.Add("Name", wl.metadata().name());
  top.Add("Namespace", wl.metadata().namespace_());
  top.Add("Labels", JoinKeyValues(wl.metadata().labels()));
  top.Add("Created", TimeAndAge(wl.metadata().creation_timestamp(), now));
  top.Add("Queue", QueueOf(wl));
  std::string priority = absl::StrCat(status.priority());
  if (!spec.priority_class_name().empty()) {
    absl::StrAppend(&priority, " (", spec.priority_class_name(), ")");
  }
  top.Add("Priority", priority);
  if (spec.has_active() && !spec.active()) top.Add("Active", "false (deactivated)");
  if (spec.non_preemptible()) top.Add("Non-Preemptible", "true");
  // Kueue's AdmissionGatedBy: the gates that keep it out of its queue until removed.
  const auto& annotations = wl.metadata().annotations();
  if (auto gates = annotations.find("kueue.x-k8s.io/admission-gated-by");
      gates != annotations.end() && !gates->second.empty()) {
    top.Add("Admission Gated By", gates->second);
  }
}

const v1::Condition* FindCondition(const v1::WorkloadStatus& status, absl::string_view type) {
  for (const v1::Condition& c : status.conditions()) {
    if (c.type() == type) return &c;
  }
  return nullptr;
}

// State, and for a workload that waits again after an eviction, that eviction: the admission
// time it keeps is history then, not a current admission.
void AddState(FieldPrinter& top, const v1::Workload& wl, absl::Time now) {
  const v1::WorkloadStatus& status = wl.status();
  const bool holds_quota = status.state() == v1::WORKLOAD_STATE_QUOTA_RESERVED ||
                           status.state() == v1::WORKLOAD_STATE_ADMITTED ||
                           status.state() == v1::WORKLOAD_STATE_EVICTING;
  const bool was_admitted = ToAbslTime(status.admission_time()) != absl::InfinitePast();
  const bool evicted = ToAbslTime(status.evicted_at()) != absl::InfinitePast();
  const bool requeued = status.state() == v1::WORKLOAD_STATE_PENDING && was_admitted;
  top.Add("State", requeued && evicted
                       ? absl::StrCat(DisplayState(wl), " (evicted, waiting to be admitted again)")
                       : DisplayState(wl));
  if (was_admitted) {
    top.Add(
        holds_quota || status.state() == v1::WORKLOAD_STATE_FINISHED ? "Admitted" : "Last Admitted",
        TimeAndAge(status.admission_time(), now));
  }
  if (requeued && evicted) {
    std::string eviction = TimeAndAge(status.evicted_at(), now);
    const v1::Condition* c = FindCondition(status, "Evicted");
    if (c != nullptr && c->status() == "True") {
      absl::StrAppend(&eviction, ", ", c->reason(), c->message().empty() ? "" : ": ", c->message());
    }
    top.Add("Last Evicted", eviction);
  }
}

void AddPending(Session& s, FieldPrinter& top, const v1::Workload& wl, absl::Status& failed) {
  if (wl.status().state() != v1::WORKLOAD_STATE_PENDING) return;
  top.Add("Pending Reason", OrNone(wl.status().pending_message()));
  absl::StatusOr<std::string> position = QueuePosition(s, wl);
  if (!position.ok() && absl::IsUnavailable(position.status())) {
    failed = position.status();
    return;
  }
  top.Add("Position",
          position.ok() ? *position : absl::StrCat("<unknown: ", position.status().message(), ">"));
  absl::StatusOr<std::string> estimate = DescribeStartEstimate(s, wl);
  if (!estimate.ok()) {
    failed = estimate.status();
    return;
  }
  if (!estimate->empty()) top.Add("Estimated Start", *estimate);
}

void AddHistory(FieldPrinter& top, const v1::Workload& wl, absl::Time now) {
  const v1::WorkloadStatus& status = wl.status();
  if (status.has_last_checkpoint_time()) {
    top.Add("Last Checkpoint", TimeAndAge(status.last_checkpoint_time(), now));
  }
  if (status.state() == v1::WORKLOAD_STATE_EVICTING) {
    std::string eviction = absl::StrCat("since ", TimeAndAge(status.evicted_at(), now));
    if (ToAbslTime(status.eviction_deadline()) != absl::InfinitePast()) {
      absl::StrAppend(&eviction, "; quota released by ",
                      FormatTimestamp(status.eviction_deadline()));
    }
    top.Add("Evicting", eviction);
  }
  if (status.preemption_count() > 0) {
    top.Add("Preemptions", absl::StrCat(status.preemption_count(),
                                        " (last: ", OrNone(status.last_preemption_reason()), ")"));
  }
  if (status.requeue_state().count() > 0) {
    top.Add("Requeues", absl::StrCat(status.requeue_state().count()));
  }
  if (status.has_accumulated_past_execution_time_seconds()) {
    // Kueue's accumulatedPastExexcutionTimeSeconds, with the limit it counts against.
    std::string past = absl::StrCat(status.accumulated_past_execution_time_seconds(), "s");
    if (wl.spec().has_maximum_execution_time_seconds()) {
      absl::StrAppend(&past, " of ", wl.spec().maximum_execution_time_seconds(), "s");
    }
    top.Add("Past Execution Time", past);
  }
}

void PrintPodSets(std::ostream& out, const v1::Workload& wl) {
  out << "Pod Sets:\n";
  TablePrinter pod_sets({"NAME", "COUNT", "MIN", "REQUESTS (PER POD)"});
  for (const v1::PodSet& ps : wl.spec().pod_sets()) {
    pod_sets.AddRow({ps.name(), absl::StrCat(ps.count()),
                     ps.has_min_count() ? absl::StrCat(ps.min_count()) : "-",
                     FormatRequests(ps.requests())});
  }
  pod_sets.Print(out, "  ");
}

void PrintAdmission(std::ostream& out, const v1::Workload& wl) {
  const v1::WorkloadStatus& status = wl.status();
  if (status.has_admission() && !status.admission().cluster_queue().empty()) {
    out << "Admission:\n";
    FieldPrinter admission;
    admission.Add("ClusterQueue", status.admission().cluster_queue());
    admission.Print(out, "  ");
    PrintAssignments(out, status.admission(), "  ");
  } else {
    out << "Admission:  " << kNone << "\n";
  }
}

// For a pending workload: who holds the quota it waits for, and which policy keeps it from
// taking that quota back (the visibility API's cohort breakdown).
absl::Status PrintWhyPending(Session& s, const v1::Workload& wl) {
  if (wl.status().state() != v1::WORKLOAD_STATE_PENDING) return absl::OkStatus();
  v1::GetCohortBreakdownRequest request;
  request.mutable_workload()->set_namespace_(wl.metadata().namespace_());
  request.mutable_workload()->set_name(wl.metadata().name());
  absl::StatusOr<v1::CohortBreakdown> b = s.client().GetCohortBreakdown(request);
  // Not queued (its LocalQueue or ClusterQueue is missing): the pending reason says why.
  if (absl::IsFailedPrecondition(b.status()) || absl::IsNotFound(b.status())) {
    return absl::OkStatus();
  }
  if (!b.ok()) return b.status();
  std::ostream& out = s.out();
  out << "Quota:\n";
  FieldPrinter fields;
  fields.Add("ClusterQueue", b->cluster_queue());
  fields.Add("Cohort", CohortTitle(*b));
  if (!b->cohort().empty()) fields.Add("Borrowers", BorrowersLine(*b));
  fields.Print(out, "  ");
  QuotaHoldersTable(*b).Print(out, "  ");
  if (b->blockers_size() > 0) {
    out << "Blocked By:\n";
    PrintBlockers(out, *b, "  ");
  }
  return absl::OkStatus();
}

// Each worker's copy as the MultiKueue controller last saw it (status.multi_kueue_remotes): its
// role (the winner, a nominee, or neither: a copy left from a change of plan) and state.
void PrintMultiKueueWorkers(std::ostream& out, const v1::WorkloadStatus& status) {
  if (status.multi_kueue_remotes_size() == 0) return;
  out << "MultiKueue Workers:\n";
  TablePrinter workers({"CLUSTER", "ROLE", "COPY"});
  for (const v1::MultiKueueRemoteState& remote : status.multi_kueue_remotes()) {
    const bool nominated =
        std::find(status.nominated_cluster_names().begin(), status.nominated_cluster_names().end(),
                  remote.cluster()) != status.nominated_cluster_names().end();
    workers.AddRow({remote.cluster(),
                    remote.cluster() == status.cluster_name() ? "winner"
                    : nominated                               ? "nominated"
                                                              : std::string(kNone),
                    remote.state()});
  }
  workers.Print(out, "  ");
}

// Each admission check's state, why, and what it adds to the pods (docs/admission-checks.md).
void PrintAdmissionChecks(std::ostream& out, const v1::Workload& wl, absl::Time now) {
  const v1::WorkloadStatus& status = wl.status();
  if (status.admission_checks_size() == 0) return;
  out << "Admission Checks:\n";
  TablePrinter checks({"NAME", "STATE", "SINCE", "RETRIES", "REQUEUE-AFTER", "MESSAGE"});
  for (const v1::AdmissionCheckState& c : status.admission_checks()) {
    checks.AddRow({c.name(), c.state(),
                   c.has_last_transition_time() ? FormatAge(c.last_transition_time(), now)
                                                : std::string(kNone),
                   absl::StrCat(c.retry_count()),
                   c.has_requeue_after_seconds() ? absl::StrCat(c.requeue_after_seconds(), "s")
                                                 : std::string(kNone),
                   OrNone(c.message())});
  }
  checks.Print(out, "  ");
  // MultiKueue (docs/multicluster.md): where the workload was dispatched.
  if (!status.cluster_name().empty()) out << "Cluster Name:  " << status.cluster_name() << "\n";
  if (status.nominated_cluster_names_size() > 0) {
    out << "Nominated Clusters:  " << absl::StrJoin(status.nominated_cluster_names(), ", ") << "\n";
  }
  PrintMultiKueueWorkers(out, status);
  bool any_updates = false;
  for (const v1::AdmissionCheckState& c : status.admission_checks()) {
    any_updates = any_updates || c.pod_set_updates_size() > 0;
  }
  if (!any_updates) return;
  out << "Pod Set Updates:\n";
  TablePrinter updates(
      {"CHECK", "POD SET", "LABELS", "ANNOTATIONS", "NODE SELECTOR", "TOLERATIONS"});
  for (const v1::AdmissionCheckState& c : status.admission_checks()) {
    for (const v1::PodSetUpdate& u : c.pod_set_updates()) {
      std::vector<std::string> tolerations;
      for (const v1::Toleration& t : u.tolerations()) {
        tolerations.push_back(absl::StrCat(t.key(), t.value().empty() ? "" : "=", t.value(),
                                           t.effect().empty() ? "" : ":", t.effect()));
      }
      updates.AddRow({c.name(), u.name(), OrNone(JoinKeyValues(u.labels())),
                      OrNone(JoinKeyValues(u.annotations())),
                      OrNone(JoinKeyValues(u.node_selector())),
                      tolerations.empty() ? std::string(kNone) : absl::StrJoin(tolerations, ",")});
    }
  }
  updates.Print(out, "  ");
}

void PrintConditions(std::ostream& out, const v1::Workload& wl) {
  const v1::WorkloadStatus& status = wl.status();
  if (status.conditions_size() == 0) {
    out << "Conditions:  " << kNone << "\n";
    return;
  }
  out << "Conditions:\n";
  TablePrinter conditions({"TYPE", "STATUS", "REASON", "LAST TRANSITION", "MESSAGE"});
  for (const v1::Condition& c : status.conditions()) {
    conditions.AddRow(
        {c.type(), c.status(), c.reason(), FormatTimestamp(c.last_transition_time()), c.message()});
  }
  conditions.Print(out, "  ");
}

void PrintEvents(std::ostream& out, const v1::Workload& wl, absl::Time now) {
  const v1::WorkloadStatus& status = wl.status();
  if (status.events_size() == 0) {
    out << "Events:  " << kNone << "\n";
    return;
  }
  out << "Events:\n";
  TablePrinter events({"TIME", "AGE", "REASON", "MESSAGE"});
  for (const v1::WorkloadEvent& e : status.events()) {
    events.AddRow({FormatTimestamp(e.time()), FormatAge(e.time(), now), e.reason(), e.message()});
  }
  events.Print(out, "  ");
}

int DescribeWorkload(Session& s, absl::string_view name) {
  v1::GetWorkloadRequest request;
  request.mutable_workload()->set_namespace_(s.Namespace());
  request.mutable_workload()->set_name(std::string(name));
  absl::StatusOr<v1::Workload> got = s.client().GetWorkload(request);
  if (!got.ok()) return s.Fail(got.status());
  const v1::Workload& wl = *got;
  const absl::Time now = s.now();
  std::ostream& out = s.out();

  FieldPrinter top;
  AddIdentity(top, wl, now);
  AddState(top, wl, now);
  absl::Status failed;
  AddPending(s, top, wl, failed);
  if (!failed.ok()) return s.Fail(failed);
  AddHistory(top, wl, now);
  top.Print(out);
  PrintPodSets(out, wl);
  PrintAdmission(out, wl);
  if (absl::Status st = PrintWhyPending(s, wl); !st.ok()) return s.Fail(st);
  PrintAdmissionChecks(out, wl, now);
  PrintConditions(out, wl);
  PrintEvents(out, wl, now);
  return kExitOk;
}

// The ClusterQueue's cohort tree, who borrows in it, and what keeps its head workload waiting.
absl::Status PrintCohortOfClusterQueue(Session& s, absl::string_view name) {
  v1::GetCohortBreakdownRequest request;
  request.set_cluster_queue(std::string(name));
  absl::StatusOr<v1::CohortBreakdown> b = s.client().GetCohortBreakdown(request);
  if (!b.ok()) return b.status();
  std::ostream& out = s.out();
  if (b->cohort().empty()) {
    out << "Cohort:  " << kNone << "\n";
    return absl::OkStatus();
  }
  out << "Cohort:\n";
  FieldPrinter fields;
  fields.Add("Name", CohortTitle(*b));
  fields.Add("Borrowers", BorrowersLine(*b));
  fields.Print(out, "  ");
  QuotaHoldersTable(*b).Print(out, "  ");
  if (b->has_workload()) {
    out << "Head Workload " << b->workload().namespace_() << "/" << b->workload().name() << ":";
    if (b->blockers_size() == 0) {
      out << "  not blocked by the cohort (" << OrNone(b->pending_message()) << ")\n";
    } else {
      out << "\n";
      PrintBlockers(out, *b, "  ");
    }
  }
  return absl::OkStatus();
}

// How many pending workloads `describe clusterqueue` lists before summarizing the rest.
constexpr int kDescribePendingLimit = 20;

int DescribeClusterQueue(Session& s, absl::string_view name) {
  absl::StatusOr<std::vector<v1::ConfigObject>> objects =
      ListConfig(s, v1::CLUSTER_QUEUE, "", name);
  if (!objects.ok()) return s.Fail(objects.status());
  const v1::ClusterQueue& cq = objects->front().cluster_queue();
  const v1::ClusterQueueSpec& spec = cq.spec();
  const absl::Time now = s.now();
  std::ostream& out = s.out();

  auto or_default = [](absl::string_view value, absl::string_view fallback) {
    return std::string(value.empty() ? fallback : value);
  };
  FieldPrinter top;
  top.Add("Name", cq.metadata().name());
  top.Add("Created", TimeAndAge(cq.metadata().creation_timestamp(), now));
  top.Add("Cohort", OrNone(spec.cohort()));
  top.Add("Queueing Strategy", or_default(spec.queueing_strategy(), "BestEffortFIFO"));
  std::string selector = "<all namespaces>";
  if (spec.has_namespace_selector() && (!spec.namespace_selector().match_labels().empty() ||
                                        !spec.namespace_selector().match_expressions().empty())) {
    selector = JoinKeyValues(spec.namespace_selector().match_labels());
    for (const v1::LabelSelectorRequirement& r : spec.namespace_selector().match_expressions()) {
      absl::StrAppend(&selector, selector.empty() || selector == kNone ? "" : ",", r.key(), " ",
                      r.operator_(), " (", absl::StrJoin(r.values(), ","), ")");
    }
  }
  top.Add("Namespace Selector", selector);
  const v1::ClusterQueuePreemption& p = spec.preemption();
  top.Add("Preemption",
          absl::StrCat(
              "withinClusterQueue=", or_default(p.within_cluster_queue(), "Never"),
              ", reclaimWithinCohort=", or_default(p.reclaim_within_cohort(), "Never"),
              ", borrowWithinCohort=", or_default(p.borrow_within_cohort().policy(), "Never")));
  const v1::FlavorFungibility& fungibility = spec.flavor_fungibility();
  // Unset and BorrowingOverPreemption rank alike, but only one of them is what was written.
  top.Add(
      "Flavor Fungibility",
      absl::StrCat("whenCanBorrow=", or_default(fungibility.when_can_borrow(), "Borrow"),
                   ", whenCanPreempt=", or_default(fungibility.when_can_preempt(), "TryNextFlavor"),
                   fungibility.preference().empty()
                       ? ""
                       : absl::StrCat(", preference=", fungibility.preference())));
  top.Add("Stop Policy", or_default(spec.stop_policy(), "None"));
  std::string active = ActiveOf(cq);
  for (const v1::Condition& c : cq.status().conditions()) {
    if (c.type() == "Active") absl::StrAppend(&active, " (", c.reason(), ": ", c.message(), ")");
  }
  top.Add("Active", active);
  top.Add("Workloads", absl::StrCat(cq.status().pending_workloads(), " pending, ",
                                    cq.status().admitted_workloads(), " admitted"));
  top.Print(out);

  out << "Usage:\n";
  UsageTable(cq).Print(out, "  ");
  if (absl::Status st = PrintCohortOfClusterQueue(s, name); !st.ok()) return s.Fail(st);

  v1::ListPendingWorkloadsRequest request;
  request.set_cluster_queue(std::string(name));
  absl::StatusOr<v1::ListPendingWorkloadsResponse> pending =
      s.client().ListPendingWorkloads(request);
  if (!pending.ok()) return s.Fail(pending.status());
  if (pending->items_size() == 0) {
    out << "Pending Workloads:  " << kNone << "\n";
  } else {
    out << "Pending Workloads (" << pending->items_size() << "):\n";
    TablePrinter table({"POSITION", "WORKLOAD", "LOCALQUEUE", "PRIORITY", "MESSAGE"});
    for (int i = 0; i < pending->items_size() && i < kDescribePendingLimit; ++i) {
      const v1::PendingWorkload& item = pending->items(i);
      table.AddRow({absl::StrCat(item.position_in_cluster_queue() + 1),
                    absl::StrCat(item.workload().namespace_(), "/", item.workload().name()),
                    item.local_queue(), absl::StrCat(item.priority()), item.message()});
    }
    table.Print(out, "  ");
    if (pending->items_size() > kDescribePendingLimit) {
      out << "  ... and " << pending->items_size() - kDescribePendingLimit << " more\n";
    }
  }
  return kExitOk;
}

}  // namespace

int RunDescribe(Session& s, const ParsedFlags& args) {
  constexpr absl::string_view kSupported =
      "workload, clusterqueue, cohort, localqueue, resourceflavor, node, role, rolebinding, "
      "queuegrant";
  if (args.positional.size() != 2) {
    return s.UsageError(absl::StrCat("name a KIND (", kSupported, ") and a NAME"));
  }
  const KindInfo* kind = FindKind(args.positional[0]);
  const std::string& name = args.positional[1];
  if (args.positional[0] == "node" || args.positional[0] == "nodes" || args.positional[0] == "no") {
    return DescribeNode(s, name);
  }
  switch (kind == nullptr ? v1::NAMESPACE : kind->object_kind) {
    case v1::OBJECT_KIND_UNSPECIFIED:
      return DescribeWorkload(s, name);
    case v1::CLUSTER_QUEUE:
      return DescribeClusterQueue(s, name);
    case v1::COHORT:
      return DescribeCohort(s, name);
    case v1::LOCAL_QUEUE:
      return DescribeLocalQueue(s, name);
    case v1::RESOURCE_FLAVOR:
      return DescribeResourceFlavor(s, name);
    case v1::ROLE:
    case v1::ROLE_BINDING:
    case v1::QUEUE_GRANT:
      return DescribePolicyObject(s, kind->object_kind, name);
    default:
      break;
  }
  return s.UsageError(
      absl::StrCat("cannot describe \"", args.positional[0], "\" (supported: ", kSupported, ")"));
}

}  // namespace tollgate::cli
