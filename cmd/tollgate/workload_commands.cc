// admit, finish, preempt, checkpoint and delete: the verbs that act on one named object.
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "cmd/tollgate/cli_format.h"
#include "cmd/tollgate/cli_kinds.h"
#include "cmd/tollgate/commands.h"
#include "cmd/tollgate/start_estimate_view.h"

namespace tollgate::cli {
namespace {

// The single NAME argument of a workload command.
absl::StatusOr<v1::WorkloadRef> WorkloadArg(const Session& s, const ParsedFlags& args) {
  if (args.positional.size() != 1) {
    return absl::InvalidArgumentError(
        args.positional.empty() ? "name the workload"
                                : absl::StrCat("unexpected argument ", args.positional[1]));
  }
  v1::WorkloadRef ref;
  ref.set_namespace_(s.Namespace());
  ref.set_name(args.positional[0]);
  return ref;
}

}  // namespace

int RunFinish(Session& s, const ParsedFlags& args) {
  absl::StatusOr<v1::WorkloadRef> ref = WorkloadArg(s, args);
  if (!ref.ok()) return s.UsageError(ref.status().message());
  v1::FinishRequest request;
  *request.mutable_workload() = *ref;
  request.set_message(args.Get("message", "Finished by tollgate finish"));
  absl::StatusOr<v1::FinishResponse> response = s.client().Finish(request);
  if (!response.ok()) return s.Fail(response.status());
  s.out() << "workload.kueue.x-k8s.io/" << ref->name() << " finished\n";
  return kExitOk;
}

int RunPreempt(Session& s, const ParsedFlags& args) {
  absl::StatusOr<v1::WorkloadRef> ref = WorkloadArg(s, args);
  if (!ref.ok()) return s.UsageError(ref.status().message());
  v1::PreemptRequest request;
  *request.mutable_workload() = *ref;
  request.set_reason(args.Get("reason"));
  request.set_hold(args.Has("hold"));
  absl::StatusOr<v1::PreemptResponse> response = s.client().Preempt(request);
  if (!response.ok()) return s.Fail(response.status());
  // The server's account of the eviction and of the scheduling right after it.
  s.out() << "workload.kueue.x-k8s.io/" << ref->name() << " preempted: " << response->message()
          << " (" << DisplayState(response->workload()) << ")\n";
  return kExitOk;
}

int RunCheckpoint(Session& s, const ParsedFlags& args) {
  absl::StatusOr<v1::WorkloadRef> ref = WorkloadArg(s, args);
  if (!ref.ok()) return s.UsageError(ref.status().message());
  v1::ReportCheckpointRequest request;
  *request.mutable_workload() = *ref;
  absl::StatusOr<v1::ReportCheckpointResponse> response = s.client().ReportCheckpoint(request);
  if (!response.ok()) return s.Fail(response.status());
  s.out() << "workload.kueue.x-k8s.io/" << ref->name() << " checkpoint recorded\n";
  return kExitOk;
}

int RunDelete(Session& s, const ParsedFlags& args) {
  if (args.positional.size() != 2) return s.UsageError("name a KIND and a NAME");
  const KindInfo* kind = FindKind(args.positional[0]);
  if (kind == nullptr) {
    std::vector<absl::string_view> names;
    for (const KindInfo& k : Kinds()) names.push_back(k.name);
    return s.UsageError(absl::StrCat("unknown kind \"", args.positional[0],
                                     "\" (one of: ", absl::StrJoin(names, ", "), ")"));
  }
  const std::string& name = args.positional[1];
  absl::Status status;
  if (kind->object_kind == v1::OBJECT_KIND_UNSPECIFIED) {
    v1::DeleteWorkloadRequest request;
    request.mutable_workload()->set_namespace_(s.Namespace());
    request.mutable_workload()->set_name(name);
    status = s.client().DeleteWorkload(request).status();
  } else {
    v1::DeleteObjectRequest request;
    request.mutable_ref()->set_kind(kind->object_kind);
    if (kind->namespaced) request.mutable_ref()->set_namespace_(s.Namespace());
    request.mutable_ref()->set_name(name);
    absl::StatusOr<v1::DeleteObjectResponse> response = s.client().DeleteObject(request);
    status = response.status();
    if (response.ok() && response->terminating()) {
      // In use: kept until the workloads holding quota through it end (Kueue's finalizers).
      s.out() << kind->resource << " \"" << name << "\" terminating: "
              << "admits nothing new; removed when the workloads holding quota through it end ("
              << absl::StrJoin(response->held_by(), ", ") << ")\n";
      return kExitOk;
    }
  }
  if (!status.ok()) return s.Fail(status);
  s.out() << kind->resource << " \"" << name << "\" deleted\n";
  return kExitOk;
}

int RunAdmit(Session& s, const ParsedFlags& args) {
  absl::StatusOr<v1::WorkloadRef> ref = WorkloadArg(s, args);
  if (!ref.ok()) return s.UsageError(ref.status().message());
  const bool dry_run = args.Has("dry-run");
  // The service answers ADMITTED for a workload that already holds quota; say which case it is.
  v1::GetWorkloadRequest get;
  *get.mutable_workload() = *ref;
  absl::StatusOr<v1::Workload> before = s.client().GetWorkload(get);
  if (!before.ok()) return s.Fail(before.status());
  const bool was_admitted = before->status().state() == v1::WORKLOAD_STATE_ADMITTED;
  v1::AdmitRequest request;
  *request.mutable_workload() = *ref;
  request.set_dry_run(dry_run);
  absl::StatusOr<v1::AdmitResponse> response = s.client().Admit(request);
  if (!response.ok()) return s.Fail(response.status());
  const std::string who = absl::StrCat("workload ", ref->namespace_(), "/", ref->name());
  const std::string& cq = response->admission().cluster_queue();
  switch (response->outcome()) {
    case v1::AdmitResponse::ADMITTED:
      s.out() << who
              << (was_admitted ? " is already admitted"
                  : dry_run    ? " would be admitted"
                               : " admitted")
              << " to ClusterQueue " << cq << "\n";
      PrintAssignments(s.out(), response->admission(), "  ");
      break;
    case v1::AdmitResponse::PREEMPTING:
      s.out() << who << (dry_run ? " would be admitted" : " will be admitted")
              << " to ClusterQueue " << cq << " after preempting "
              << Plural(response->victims_size(), "workload") << ":\n";
      for (const v1::WorkloadRef& victim : response->victims()) {
        s.out() << "  " << victim.namespace_() << "/" << victim.name() << "\n";
      }
      if (!response->admission().pod_set_assignments().empty()) {
        PrintAssignments(s.out(), response->admission(), "  ");
      }
      break;
    case v1::AdmitResponse::PENDING:
    default:
      s.out() << who << (dry_run ? " would wait" : " waits") << ": "
              << (response->message().empty() ? response->workload().status().pending_message()
                                              : response->message())
              << "\n";
      if (response->has_start_estimate()) {
        s.out() << "  estimated start: " << StartEstimateText(response->start_estimate(), s.now())
                << "\n";
      }
      break;
  }
  if (response->outcome() != v1::AdmitResponse::PENDING && !response->message().empty()) {
    s.out() << "  " << response->message() << "\n";
  }
  return kExitOk;
}

}  // namespace tollgate::cli
