// stop/resume (ClusterQueues, LocalQueues), deactivate/activate, reprioritize and annotate
// (workloads): the controls that change one field of an object without a full re-apply.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "cmd/tollgate/cli_format.h"
#include "cmd/tollgate/cli_kinds.h"
#include "cmd/tollgate/commands.h"
#include "core/admission_gates.h"
#include "core/priority_boost.h"

namespace tollgate::cli {
namespace {

// stop/resume KIND NAME: sets spec.stopPolicy.
int SetStopPolicy(Session& s, const ParsedFlags& args, const std::string& policy) {
  if (args.positional.size() != 2)
    return s.UsageError("name a KIND (clusterqueue or localqueue) and a NAME");
  const KindInfo* kind = FindKind(args.positional[0]);
  if (kind == nullptr ||
      (kind->object_kind != v1::CLUSTER_QUEUE && kind->object_kind != v1::LOCAL_QUEUE)) {
    return s.UsageError(
        absl::StrCat("KIND: want clusterqueue or localqueue, got \"", args.positional[0], "\""));
  }
  v1::SetStopPolicyRequest request;
  request.mutable_ref()->set_kind(kind->object_kind);
  if (kind->namespaced) request.mutable_ref()->set_namespace_(s.Namespace());
  request.mutable_ref()->set_name(args.positional[1]);
  request.set_stop_policy(policy);
  absl::StatusOr<v1::SetStopPolicyResponse> response = s.client().SetStopPolicy(request);
  if (!response.ok()) return s.Fail(response.status());
  s.out() << kind->resource << " \"" << args.positional[1] << "\" "
          << (policy == "None" ? "resumed" : absl::StrCat("stopped (stopPolicy ", policy, ")"))
          << "\n";
  return kExitOk;
}

// [workload] NAME: the workload the command names; "workload" (or wl, workloads) may come first,
// as in kueuectl's `stop workload NAME`.
absl::StatusOr<v1::WorkloadRef> NamedWorkload(const Session& s, const ParsedFlags& args) {
  std::vector<std::string> rest = args.positional;
  if (rest.size() == 2) {
    const KindInfo* kind = FindKind(rest[0]);
    if (kind == nullptr || kind->object_kind != v1::OBJECT_KIND_UNSPECIFIED) {
      return absl::InvalidArgumentError(
          absl::StrCat("only workloads can be named here, got \"", rest[0], "\""));
    }
    rest.erase(rest.begin());
  }
  if (rest.size() != 1) {
    return absl::InvalidArgumentError(rest.empty() ? "name the workload"
                                                   : absl::StrCat("unexpected argument ", rest[1]));
  }
  v1::WorkloadRef ref;
  ref.set_namespace_(s.Namespace());
  ref.set_name(rest[0]);
  return ref;
}

int SetActive(Session& s, const ParsedFlags& args, bool active) {
  absl::StatusOr<v1::WorkloadRef> ref = NamedWorkload(s, args);
  if (!ref.ok()) return s.UsageError(ref.status().message());
  v1::SetWorkloadActiveRequest request;
  *request.mutable_workload() = *ref;
  request.set_active(active);
  absl::StatusOr<v1::SetWorkloadActiveResponse> response = s.client().SetWorkloadActive(request);
  if (!response.ok()) return s.Fail(response.status());
  s.out() << "workload.kueue.x-k8s.io/" << ref->name() << (active ? " activated" : " deactivated")
          << " (" << DisplayState(response->workload()) << ")\n";
  return kExitOk;
}

// The annotations `annotate` can change: only the two whose update means something to the
// scheduler, Kueue's admission gates and its priority boost (set by an external controller).
constexpr absl::string_view kAdmissionGatedByKey = core::kAdmissionGatedByAnnotation;
constexpr absl::string_view kPriorityBoostKey = core::kPriorityBoostAnnotation;

// One of kubectl annotate's KEY=VALUE (set) or KEY- (remove).
struct AnnotationChange {
  std::string key;
  std::optional<std::string> value;
};

absl::StatusOr<AnnotationChange> ParseAnnotationChange(absl::string_view text) {
  AnnotationChange change;
  if (const size_t eq = text.find('='); eq != absl::string_view::npos) {
    change.key = std::string(text.substr(0, eq));
    change.value = std::string(text.substr(eq + 1));
  } else if (absl::EndsWith(text, "-")) {
    change.key = std::string(text.substr(0, text.size() - 1));
  } else {
    return absl::InvalidArgumentError(absl::StrCat("want KEY=VALUE or KEY-, got \"", text, "\""));
  }
  if (change.key != kAdmissionGatedByKey && change.key != kPriorityBoostKey) {
    return absl::InvalidArgumentError(absl::StrCat(
        "only the ", kAdmissionGatedByKey, " annotation (its admission gates) or the ",
        kPriorityBoostKey, " annotation (its priority boost) can be changed on a workload, got \"",
        change.key, "\""));
  }
  return change;
}

}  // namespace

int RunStop(Session& s, const ParsedFlags& args) {
  return SetStopPolicy(s, args, args.Has("drain") ? "HoldAndDrain" : "Hold");
}

int RunResume(Session& s, const ParsedFlags& args) { return SetStopPolicy(s, args, "None"); }

int RunDeactivate(Session& s, const ParsedFlags& args) { return SetActive(s, args, false); }

int RunActivate(Session& s, const ParsedFlags& args) { return SetActive(s, args, true); }

int RunReprioritize(Session& s, const ParsedFlags& args) {
  absl::StatusOr<v1::WorkloadRef> ref = NamedWorkload(s, args);
  if (!ref.ok()) return s.UsageError(ref.status().message());
  if (!args.Has("priority")) return s.UsageError("--priority N is required");
  int32_t priority = 0;
  const std::string text = args.Get("priority");
  if (!absl::SimpleAtoi(text, &priority)) {
    return s.UsageError(absl::StrCat("--priority: want a 32-bit integer, got \"", text, "\""));
  }
  v1::ReprioritizeRequest request;
  *request.mutable_workload() = *ref;
  request.set_priority(priority);
  absl::StatusOr<v1::ReprioritizeResponse> response = s.client().Reprioritize(request);
  if (!response.ok()) return s.Fail(response.status());
  s.out() << "workload.kueue.x-k8s.io/" << ref->name() << " priority set to " << priority << " ("
          << DisplayState(response->workload()) << ")\n";
  return kExitOk;
}

int RunAnnotate(Session& s, const ParsedFlags& args) {
  // annotate [workload] NAME KEY=VALUE|KEY-: the last argument is the change.
  if (args.positional.size() < 2) {
    return s.UsageError("name the workload and the change (KEY=VALUE or KEY-)");
  }
  absl::StatusOr<AnnotationChange> change = ParseAnnotationChange(args.positional.back());
  if (!change.ok()) return s.UsageError(change.status().message());
  ParsedFlags named = args;
  named.positional.pop_back();
  absl::StatusOr<v1::WorkloadRef> ref = NamedWorkload(s, named);
  if (!ref.ok()) return s.UsageError(ref.status().message());
  if (change->value.has_value() && !args.Has("overwrite")) {
    // kubectl's habit: a value already there is replaced only with --overwrite. For the boost
    // the same value again is no change (kubectl's own rule); the gates keep their stricter
    // habit of refusing any value already there.
    v1::GetWorkloadRequest get;
    *get.mutable_workload() = *ref;
    absl::StatusOr<v1::Workload> current = s.client().GetWorkload(get);
    if (!current.ok()) return s.Fail(current.status());
    auto it = current->metadata().annotations().find(change->key);
    if (it != current->metadata().annotations().end() &&
        (change->key == kAdmissionGatedByKey || it->second != *change->value)) {
      return s.UsageError(absl::StrCat("--overwrite is false but found the following declared ",
                                       "annotation(s): '", change->key, "' already has a value (",
                                       it->second, ")"));
    }
  }
  if (change->key == kPriorityBoostKey) {
    v1::SetPriorityBoostRequest request;
    *request.mutable_workload() = *ref;
    if (change->value.has_value()) request.set_priority_boost(*change->value);
    absl::StatusOr<v1::SetPriorityBoostResponse> response = s.client().SetPriorityBoost(request);
    if (!response.ok()) return s.Fail(response.status());
    s.out() << "workload.kueue.x-k8s.io/" << ref->name() << " annotated ("
            << DisplayState(response->workload()) << ")\n";
    return kExitOk;
  }
  v1::SetAdmissionGatesRequest request;
  *request.mutable_workload() = *ref;
  if (change->value.has_value()) request.set_admission_gated_by(*change->value);
  absl::StatusOr<v1::SetAdmissionGatesResponse> response = s.client().SetAdmissionGates(request);
  if (!response.ok()) return s.Fail(response.status());
  s.out() << "workload.kueue.x-k8s.io/" << ref->name() << " annotated ("
          << DisplayState(response->workload()) << ")\n";
  return kExitOk;
}

}  // namespace tollgate::cli
