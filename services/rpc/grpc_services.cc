#include "services/rpc/grpc_services.h"

#include <cstdint>
#include <iterator>
#include <optional>
#include <set>
#include <string>
#include <utility>

#include "absl/strings/str_cat.h"
#include "core/admission_checks.h"
#include "core/priority_boost.h"
#include "core/real_clock.h"
#include "services/engine/config_objects.h"
#include "services/rpc/grpc_status.h"

namespace tollgate::rpc {
namespace {

template <typename T>
grpc::Status Reply(absl::StatusOr<T> result, T* response) {
  if (!result.ok()) return ToGrpcStatus(result.status());
  *response = *std::move(result);
  return grpc::Status::OK;
}

// An open gate for services built without one (in-process tests): no authenticators, so every
// caller is the anonymous admin, and no audit log.
std::unique_ptr<AccessGate> OpenGate(engine::TollgateApi& api, AccessGate* gate) {
  if (gate != nullptr) return nullptr;
  static const core::RealClock* const clock = new core::RealClock();
  return std::make_unique<AccessGate>(api, *clock, nullptr);
}

auth::AccessRequest WorkloadRequest(absl::string_view verb, const v1::WorkloadRef& ref) {
  auth::AccessRequest request;
  request.verb = std::string(verb);
  request.kind = "Workload";
  request.ns = ref.namespace_();
  request.name = ref.name();
  return request;
}

auth::AccessRequest ObjectRequest(absl::string_view verb, v1::ObjectKind kind, absl::string_view ns,
                                  absl::string_view name) {
  auth::AccessRequest request;
  request.verb = std::string(verb);
  request.kind = engine::KindName(kind);
  if (kind == v1::LOCAL_QUEUE) request.ns = std::string(ns);
  request.name = std::string(name);
  if (kind == v1::CLUSTER_QUEUE) request.cluster_queue = request.name;
  return request;
}

// Runs an allowed mutating call and writes its audit line.
template <typename T>
grpc::Status Audited(AccessGate& gate, const AuthorizedCall& call, absl::StatusOr<T> result,
                     T* response) {
  gate.Finish(call, result.status());
  return Reply(std::move(result), response);
}

}  // namespace

std::string WatchShareKey(const auth::Identity& identity, const grpc::ServerContextBase& context) {
  if (identity.method == "anonymous") return absl::StrCat("peer:", context.peer());
  return absl::StrCat("user:", identity.user);
}

// Authorizes `request` for `context`, or returns the refusal from the handler.
#define TOLLGATE_AUTHORIZE(call, ...)                                            \
  absl::StatusOr<AuthorizedCall> call##_or = gate_.Check(*context, __VA_ARGS__); \
  if (!call##_or.ok()) return ToGrpcStatus(call##_or.status());                  \
  [[maybe_unused]] const AuthorizedCall& call = *call##_or

AdmissionGrpcService::AdmissionGrpcService(engine::TollgateApi& api, AccessGate* gate,
                                           WatchHub::Options watch_options)
    : api_(api),
      owned_gate_(OpenGate(api, gate)),
      gate_(gate ? *gate : *owned_gate_),
      watch_hub_(api.executor(), watch_options) {}

ConfigGrpcService::ConfigGrpcService(engine::TollgateApi& api, AccessGate* gate)
    : api_(api), owned_gate_(OpenGate(api, gate)), gate_(gate ? *gate : *owned_gate_) {}

VisibilityGrpcService::VisibilityGrpcService(engine::TollgateApi& api, AccessGate* gate)
    : api_(api), owned_gate_(OpenGate(api, gate)), gate_(gate ? *gate : *owned_gate_) {}

grpc::ServerUnaryReactor* AdmissionGrpcService::Submit(grpc::CallbackServerContext* context,
                                                       const v1::SubmitRequest* request,
                                                       v1::SubmitResponse* response) {
  grpc::ServerUnaryReactor* reactor = context->DefaultReactor();
  v1::WorkloadRef ref;
  ref.set_namespace_(request->workload().metadata().namespace_());
  ref.set_name(request->workload().metadata().name());
  absl::StatusOr<AuthorizedCall> call =
      gate_.Check(*context, WorkloadRequest("submit", ref), &request->workload());
  if (!call.ok()) {
    reactor->Finish(ToGrpcStatus(call.status()));
    return reactor;
  }
  api_.SubmitAsync(*request, [this, reactor, response, dry_run = request->dry_run(),
                              call = *std::move(call)](absl::StatusOr<v1::SubmitResponse> result) {
    // A dry run changes nothing, so it leaves no audit line (as Apply's).
    reactor->Finish(dry_run ? Reply(std::move(result), response)
                            : Audited(gate_, call, std::move(result), response));
  });
  return reactor;
}

grpc::Status AdmissionGrpcService::Admit(grpc::ServerContext* context,
                                         const v1::AdmitRequest* request,
                                         v1::AdmitResponse* response) {
  // A dry run changes nothing: reading the workload is enough.
  TOLLGATE_AUTHORIZE(call,
                     WorkloadRequest(request->dry_run() ? "get" : "admit", request->workload()));
  if (request->dry_run()) return Reply(api_.Admit(*request), response);
  return Audited(gate_, call, api_.Admit(*request), response);
}

grpc::Status AdmissionGrpcService::Preempt(grpc::ServerContext* context,
                                           const v1::PreemptRequest* request,
                                           v1::PreemptResponse* response) {
  TOLLGATE_AUTHORIZE(call, WorkloadRequest("preempt", request->workload()));
  return Audited(gate_, call, api_.Preempt(*request), response);
}

grpc::ServerUnaryReactor* AdmissionGrpcService::Finish(grpc::CallbackServerContext* context,
                                                       const v1::FinishRequest* request,
                                                       v1::FinishResponse* response) {
  grpc::ServerUnaryReactor* reactor = context->DefaultReactor();
  absl::StatusOr<AuthorizedCall> call =
      gate_.Check(*context, WorkloadRequest("finish", request->workload()));
  if (!call.ok()) {
    reactor->Finish(ToGrpcStatus(call.status()));
    return reactor;
  }
  api_.FinishAsync(*request, [this, reactor, response,
                              call = *std::move(call)](absl::StatusOr<v1::FinishResponse> result) {
    reactor->Finish(Audited(gate_, call, std::move(result), response));
  });
  return reactor;
}

grpc::Status AdmissionGrpcService::ReportStopped(grpc::ServerContext* context,
                                                 const v1::ReportStoppedRequest* request,
                                                 v1::ReportStoppedResponse* response) {
  TOLLGATE_AUTHORIZE(call, WorkloadRequest("report", request->workload()));
  return Audited(gate_, call, api_.ReportStopped(*request), response);
}

grpc::Status AdmissionGrpcService::ReportPodsReady(grpc::ServerContext* context,
                                                   const v1::ReportPodsReadyRequest* request,
                                                   v1::ReportPodsReadyResponse* response) {
  TOLLGATE_AUTHORIZE(call, WorkloadRequest("report", request->workload()));
  return Audited(gate_, call, api_.ReportPodsReady(*request), response);
}

grpc::Status AdmissionGrpcService::ReportCheckpoint(grpc::ServerContext* context,
                                                    const v1::ReportCheckpointRequest* request,
                                                    v1::ReportCheckpointResponse* response) {
  TOLLGATE_AUTHORIZE(call, WorkloadRequest("report", request->workload()));
  return Audited(gate_, call, api_.ReportCheckpoint(*request), response);
}

grpc::Status AdmissionGrpcService::ReportReclaimablePods(
    grpc::ServerContext* context, const v1::ReportReclaimablePodsRequest* request,
    v1::ReportReclaimablePodsResponse* response) {
  TOLLGATE_AUTHORIZE(call, WorkloadRequest("report", request->workload()));
  return Audited(gate_, call, api_.ReportReclaimablePods(*request), response);
}

grpc::Status AdmissionGrpcService::DeleteWorkload(grpc::ServerContext* context,
                                                  const v1::DeleteWorkloadRequest* request,
                                                  v1::DeleteWorkloadResponse* response) {
  TOLLGATE_AUTHORIZE(call, WorkloadRequest("delete", request->workload()));
  return Audited(gate_, call, api_.DeleteWorkload(*request), response);
}

grpc::Status AdmissionGrpcService::GetWorkload(grpc::ServerContext* context,
                                               const v1::GetWorkloadRequest* request,
                                               v1::Workload* response) {
  TOLLGATE_AUTHORIZE(call, WorkloadRequest("get", request->workload()));
  return Reply(api_.GetWorkload(*request), response);
}

grpc::Status AdmissionGrpcService::ListWorkloads(grpc::ServerContext* context,
                                                 const v1::ListWorkloadsRequest* request,
                                                 v1::ListWorkloadsResponse* response) {
  auth::AccessRequest access;
  access.verb = "list";
  access.kind = "Workload";
  access.ns = request->namespace_();
  bool filtered = false;
  absl::StatusOr<AuthorizedCall> call = gate_.CheckList(*context, access, filtered);
  if (!call.ok()) return ToGrpcStatus(call.status());
  absl::StatusOr<v1::ListWorkloadsResponse> result = api_.ListWorkloads(*request);
  if (result.ok() && filtered) {
    auto* workloads = result->mutable_workloads();
    int kept = 0;
    for (int i = 0; i < workloads->size(); ++i) {
      if (gate_.MayRead(*call, "list", workloads->Get(i))) workloads->SwapElements(kept++, i);
    }
    workloads->DeleteSubrange(kept, workloads->size() - kept);
    // Start estimates only of the workloads left: their keys name workloads too.
    if (!result->start_estimates().empty()) {
      std::set<std::string> visible;
      for (const v1::Workload& wl : *workloads) {
        visible.insert(absl::StrCat(wl.metadata().namespace_(), "/", wl.metadata().name()));
      }
      auto* estimates = result->mutable_start_estimates();
      for (auto it = estimates->begin(); it != estimates->end();) {
        it = visible.count(it->first) > 0 ? std::next(it) : estimates->erase(it);
      }
    }
  }
  return Reply(std::move(result), response);
}

grpc::ServerWriteReactor<v1::WatchEvent>* AdmissionGrpcService::Watch(
    grpc::CallbackServerContext* context, const v1::WatchRequest* request) {
  auth::AccessRequest access;
  access.verb = "watch";
  access.kind = "Workload";
  access.ns = request->namespace_();
  bool filtered = false;
  absl::StatusOr<AuthorizedCall> call = gate_.CheckList(*context, access, filtered);
  if (!call.ok()) return watch_hub_.Start(context, *request, call.status());
  WatchHub::Visible visible;
  if (filtered) {
    // Events the caller may not see are skipped; bookmarks carry no workload and pass.
    visible = [this, call = *std::move(call)](const v1::Workload& workload) {
      return gate_.MayRead(call, "watch", workload);
    };
  }
  const std::string share_key = WatchShareKey(call->identity, *context);
  return watch_hub_.Start(context, *request, api_.CheckWatchStart(*request), std::move(visible), "",
                          share_key);
}

AdmissionCheckGrpcService::AdmissionCheckGrpcService(engine::TollgateApi& api, WatchHub& hub,
                                                     AccessGate* gate)
    : api_(api), hub_(hub), owned_gate_(OpenGate(api, gate)), gate_(gate ? *gate : *owned_gate_) {}

auth::AccessRequest AdmissionCheckGrpcService::CheckRequest(absl::string_view verb,
                                                            const std::string& name) {
  auth::AccessRequest request;
  request.verb = std::string(verb);
  request.kind = "AdmissionCheck";
  request.name = name;
  // An unknown check has no controller: only a binding not confined to controllers allows the
  // request, and its caller then hears NOT_FOUND from the API.
  absl::StatusOr<std::string> controller = api_.AdmissionCheckController(name);
  if (controller.ok()) request.controller_name = *std::move(controller);
  return request;
}

grpc::ServerWriteReactor<v1::WatchEvent>* AdmissionCheckGrpcService::WatchAdmissionChecks(
    grpc::CallbackServerContext* context, const v1::WatchAdmissionChecksRequest* request) {
  absl::StatusOr<v1::WatchRequest> watch = api_.CheckWatchChecksStart(*request);
  if (!watch.ok()) return hub_.Start(context, v1::WatchRequest(), watch.status());
  auth::AccessRequest access;
  access.verb = "watch";
  access.kind = "AdmissionCheck";
  access.controller_name = request->controller_name();
  absl::StatusOr<AuthorizedCall> call = gate_.Check(*context, std::move(access));
  if (!call.ok()) return hub_.Start(context, *watch, call.status());
  return hub_.Start(context, *watch, absl::OkStatus(), {}, request->controller_name(),
                    WatchShareKey(call->identity, *context));
}

grpc::Status AdmissionCheckGrpcService::UpdateAdmissionCheckState(
    grpc::ServerContext* context, const v1::UpdateAdmissionCheckStateRequest* request,
    v1::UpdateAdmissionCheckStateResponse* response) {
  auth::AccessRequest access = CheckRequest("check", request->check());
  // The audit line names the workload the check was posted on.
  access.ns = request->workload().namespace_();
  TOLLGATE_AUTHORIZE(call, std::move(access));
  absl::StatusOr<v1::UpdateAdmissionCheckStateResponse> result =
      api_.UpdateAdmissionCheckState(*request);
  gate_.Finish(
      call, result.status(),
      absl::StrCat("workload ", request->workload().namespace_(), "/", request->workload().name(),
                   ": check ", request->check(), " ", request->state(),
                   request->message().empty() ? "" : absl::StrCat(": ", request->message()),
                   " (at revision ", request->expected_revision(), ")"));
  return Reply(std::move(result), response);
}

grpc::Status AdmissionCheckGrpcService::SetAdmissionCheckActive(
    grpc::ServerContext* context, const v1::SetAdmissionCheckActiveRequest* request,
    v1::SetAdmissionCheckActiveResponse* response) {
  TOLLGATE_AUTHORIZE(call, CheckRequest("check", request->name()));
  absl::StatusOr<v1::SetAdmissionCheckActiveResponse> result =
      api_.SetAdmissionCheckActive(*request);
  gate_.Finish(
      call, result.status(),
      absl::StrCat("Active ", request->active() ? "True" : "False",
                   request->reason().empty() ? "" : absl::StrCat(" (", request->reason(), ")")));
  return Reply(std::move(result), response);
}

grpc::Status AdmissionCheckGrpcService::SetMultiKueueClusterActive(
    grpc::ServerContext* context, const v1::SetMultiKueueClusterActiveRequest* request,
    v1::SetMultiKueueClusterActiveResponse* response) {
  // The MultiKueue check controller's report: allowed to whom may act for that controller.
  auth::AccessRequest access;
  access.verb = "check";
  access.kind = "AdmissionCheck";
  access.name = request->name();
  access.controller_name = std::string(core::kMultiKueueControllerName);
  TOLLGATE_AUTHORIZE(call, std::move(access));
  absl::StatusOr<v1::SetMultiKueueClusterActiveResponse> result =
      api_.SetMultiKueueClusterActive(*request);
  gate_.Finish(
      call, result.status(),
      absl::StrCat("MultiKueueCluster ", request->name(), " Active ",
                   request->active() ? "True" : "False",
                   request->reason().empty() ? "" : absl::StrCat(" (", request->reason(), ")")));
  return Reply(std::move(result), response);
}

grpc::Status AdmissionCheckGrpcService::MarkMultiKueueWinner(
    grpc::ServerContext* context, const v1::MarkMultiKueueWinnerRequest* request,
    v1::MarkMultiKueueWinnerResponse* response) {
  // The manager's MultiKueue controller acting on this worker: allowed to whom may act for that
  // controller, as its other reports.
  auth::AccessRequest access;
  access.verb = "check";
  access.kind = "AdmissionCheck";
  access.ns = request->workload().namespace_();
  access.controller_name = std::string(core::kMultiKueueControllerName);
  TOLLGATE_AUTHORIZE(call, std::move(access));
  absl::StatusOr<v1::MarkMultiKueueWinnerResponse> result = api_.MarkMultiKueueWinner(*request);
  gate_.Finish(call, result.status(),
               absl::StrCat("workload ", request->workload().namespace_(), "/",
                            request->workload().name(), ": MultiKueue winner"));
  return Reply(std::move(result), response);
}

grpc::Status ConfigGrpcService::Apply(grpc::ServerContext* context, const v1::ApplyRequest* request,
                                      v1::ApplyResponse* response) {
  // Every object must be allowed; the first refusal refuses the whole (all-or-none) request.
  std::vector<auth::AccessRequest> access;
  for (const v1::ConfigObject& object : request->objects()) {
    const v1::ObjectMeta& meta = engine::MetadataOf(object);
    access.push_back(
        ObjectRequest("apply", engine::KindOf(object), meta.namespace_(), meta.name()));
    if (object.has_local_queue()) {
      access.back().cluster_queue = object.local_queue().spec().cluster_queue();
    }
  }
  const std::vector<v1::ConfigObject> objects(request->objects().begin(), request->objects().end());
  absl::StatusOr<std::vector<AuthorizedCall>> calls =
      gate_.CheckAll(*context, std::move(access), &objects);
  if (!calls.ok()) return ToGrpcStatus(calls.status());
  const bool policy = std::any_of(
      request->objects().begin(), request->objects().end(),
      [](const v1::ConfigObject& object) { return engine::IsPolicyKind(engine::KindOf(object)); });
  const absl::Status checked = policy ? gate_.CheckPolicyObjects(objects) : absl::OkStatus();
  absl::StatusOr<v1::ApplyResponse> result =
      checked.ok() ? api_.Apply(*request) : absl::StatusOr<v1::ApplyResponse>(checked);
  if (!request->dry_run()) {
    for (const AuthorizedCall& call : *calls) gate_.Finish(call, result.status());
  }
  // In force before the answer, so the caller's next call sees it.
  if (policy && result.ok() && !request->dry_run()) RefreshPolicy();
  return Reply(std::move(result), response);
}

grpc::Status ConfigGrpcService::Get(grpc::ServerContext* context,
                                    const v1::GetObjectRequest* request,
                                    v1::ConfigObject* response) {
  TOLLGATE_AUTHORIZE(call, ObjectRequest("get", request->ref().kind(), request->ref().namespace_(),
                                         request->ref().name()));
  return Reply(api_.GetObject(*request), response);
}

grpc::Status ConfigGrpcService::List(grpc::ServerContext* context,
                                     const v1::ListObjectsRequest* request,
                                     v1::ListObjectsResponse* response) {
  TOLLGATE_AUTHORIZE(call, ObjectRequest("list", request->kind(), request->namespace_(), ""));
  return Reply(api_.ListObjects(*request), response);
}

grpc::Status ConfigGrpcService::Delete(grpc::ServerContext* context,
                                       const v1::DeleteObjectRequest* request,
                                       v1::DeleteObjectResponse* response) {
  TOLLGATE_AUTHORIZE(call, ObjectRequest("delete", request->ref().kind(),
                                         request->ref().namespace_(), request->ref().name()));
  grpc::Status status = Audited(gate_, call, api_.DeleteObject(*request), response);
  if (status.ok() && engine::IsPolicyKind(request->ref().kind())) RefreshPolicy();
  return status;
}

void ConfigGrpcService::RefreshPolicy() {
  // The write is durable and answered OK either way; a failed read keeps the previous policy
  // until the next write or SIGHUP (the store failing reads fails the next calls too).
  gate_.RefreshAppliedPolicy().IgnoreError();
}

grpc::Status ConfigGrpcService::SetStopPolicy(grpc::ServerContext* context,
                                              const v1::SetStopPolicyRequest* request,
                                              v1::SetStopPolicyResponse* response) {
  TOLLGATE_AUTHORIZE(call, ObjectRequest("stop", request->ref().kind(), request->ref().namespace_(),
                                         request->ref().name()));
  return Audited(gate_, call, api_.SetStopPolicy(*request), response);
}

grpc::Status AdmissionGrpcService::SetWorkloadActive(grpc::ServerContext* context,
                                                     const v1::SetWorkloadActiveRequest* request,
                                                     v1::SetWorkloadActiveResponse* response) {
  TOLLGATE_AUTHORIZE(call, WorkloadRequest("deactivate", request->workload()));
  return Audited(gate_, call, api_.SetWorkloadActive(*request), response);
}

grpc::Status AdmissionGrpcService::Reprioritize(grpc::ServerContext* context,
                                                const v1::ReprioritizeRequest* request,
                                                v1::ReprioritizeResponse* response) {
  // Capped like a submit: nobody raises a workload above the priority they may submit at.
  auth::AccessRequest access = WorkloadRequest("reprioritize", request->workload());
  access.priority = request->priority();
  TOLLGATE_AUTHORIZE(call, std::move(access));
  return Audited(gate_, call, api_.Reprioritize(*request), response);
}

grpc::Status AdmissionGrpcService::ReportJobState(grpc::ServerContext* context,
                                                  const v1::ReportJobStateRequest* request,
                                                  v1::ReportJobStateResponse* response) {
  TOLLGATE_AUTHORIZE(call, WorkloadRequest("report", request->workload()));
  return Audited(gate_, call, api_.ReportJobState(*request), response);
}

grpc::Status AdmissionGrpcService::UpdateWorkloadPayload(
    grpc::ServerContext* context, const v1::UpdateWorkloadPayloadRequest* request,
    v1::UpdateWorkloadPayloadResponse* response) {
  // The payload is what a submitter gives its workload: whoever may submit it may change it.
  TOLLGATE_AUTHORIZE(call, WorkloadRequest("submit", request->workload()));
  return Audited(gate_, call, api_.UpdateWorkloadPayload(*request), response);
}

grpc::Status AdmissionGrpcService::SetAdmissionGates(grpc::ServerContext* context,
                                                     const v1::SetAdmissionGatesRequest* request,
                                                     v1::SetAdmissionGatesResponse* response) {
  // The gates are annotations a submitter gives its workload (Kueue: whoever may update the
  // workload); removing them is the same permission as changing its payload.
  TOLLGATE_AUTHORIZE(call, WorkloadRequest("submit", request->workload()));
  return Audited(gate_, call, api_.SetAdmissionGates(*request), response);
}

grpc::Status AdmissionGrpcService::SetPriorityBoost(grpc::ServerContext* context,
                                                    const v1::SetPriorityBoostRequest* request,
                                                    v1::SetPriorityBoostResponse* response) {
  // A boost changes the workload's effective priority (Kueue adds it wherever it compares by
  // priority), so it is the same permission as Reprioritize, under the same cap: a positive
  // boost may not take base priority + boost above the priority the caller may submit at. A
  // zero or negative boost, or removing it, never raises the workload, so it is not capped.
  // The value's syntax is the engine's to check (core's ValidatePriorityBoostValue, as Kueue's
  // webhook); one that does not parse is not capped here and is refused there.
  auth::AccessRequest access = WorkloadRequest("reprioritize", request->workload());
  if (request->has_priority_boost()) {
    absl::StatusOr<int32_t> boost = core::ParsePriorityBoost(request->priority_boost());
    if (boost.ok() && *boost > 0) {
      v1::GetWorkloadRequest get;
      *get.mutable_workload() = request->workload();
      // A workload that cannot be read is left to the engine's NOT_FOUND.
      if (absl::StatusOr<v1::Workload> wl = api_.GetWorkload(get); wl.ok()) {
        access.priority = PriorityForCap(wl->status().priority(), *boost);
      }
    }
  }
  TOLLGATE_AUTHORIZE(call, std::move(access));
  const std::optional<std::string> value =
      request->has_priority_boost() ? std::optional<std::string>(request->priority_boost())
                                    : std::nullopt;
  absl::StatusOr<v1::Workload> updated =
      api_.SetPriorityBoost(request->workload(), value, request->expected_revision());
  if (!updated.ok()) {
    return Audited(gate_, call, absl::StatusOr<v1::SetPriorityBoostResponse>(updated.status()),
                   response);
  }
  v1::SetPriorityBoostResponse out;
  *out.mutable_workload() = *std::move(updated);
  return Audited(gate_, call, absl::StatusOr<v1::SetPriorityBoostResponse>(std::move(out)),
                 response);
}

grpc::Status VisibilityGrpcService::ListPendingWorkloads(
    grpc::ServerContext* context, const v1::ListPendingWorkloadsRequest* request,
    v1::ListPendingWorkloadsResponse* response) {
  // A LocalQueue's pending list is its namespace's workloads; a ClusterQueue's belongs to
  // whoever may read the ClusterQueue. Either way positions count every pending workload, but
  // the names of workloads the caller may not list are blanked.
  auth::AccessRequest access;
  if (request->cluster_queue().empty()) {
    access = WorkloadRequest("list", v1::WorkloadRef());
    access.ns = request->namespace_();
    access.local_queue = request->local_queue();
  } else {
    access = ObjectRequest("get", v1::CLUSTER_QUEUE, "", request->cluster_queue());
  }
  TOLLGATE_AUTHORIZE(call, std::move(access));
  absl::StatusOr<v1::ListPendingWorkloadsResponse> result = api_.ListPendingWorkloads(*request);
  if (result.ok()) {
    for (v1::PendingWorkload& item : *result->mutable_items()) {
      v1::Workload workload;
      workload.mutable_metadata()->set_namespace_(item.workload().namespace_());
      workload.mutable_metadata()->set_name(item.workload().name());
      workload.mutable_spec()->set_queue_name(item.local_queue());
      workload.mutable_status()->mutable_admission()->set_cluster_queue(item.cluster_queue());
      if (!gate_.MayRead(call, "list", workload)) {
        item.clear_workload();
        item.clear_local_queue();
        item.clear_message();
      }
    }
  }
  return Reply(std::move(result), response);
}

grpc::Status VisibilityGrpcService::GetCohortBreakdown(grpc::ServerContext* context,
                                                       const v1::GetCohortBreakdownRequest* request,
                                                       v1::CohortBreakdown* response) {
  // Asked for a workload: whoever may read it may learn which queues hold the quota it waits
  // for (that is the question); else the cohort or ClusterQueue must be readable.
  TOLLGATE_AUTHORIZE(
      call, !request->workload().name().empty() ? WorkloadRequest("get", request->workload())
            : !request->cluster_queue().empty()
                ? ObjectRequest("get", v1::CLUSTER_QUEUE, "", request->cluster_queue())
                : ObjectRequest("get", v1::COHORT, "", request->cohort()));
  return Reply(api_.GetCohortBreakdown(*request), response);
}

grpc::Status AuthGrpcService::WhoAmI(grpc::ServerContext* context, const v1::WhoAmIRequest* request,
                                     v1::WhoAmIResponse* response) {
  absl::StatusOr<auth::Identity> identity = gate_.Authenticate(*context);
  if (!identity.ok()) return ToGrpcStatus(identity.status());
  response->set_user(identity->user);
  response->set_uid(identity->uid);
  for (const std::string& group : identity->groups) response->add_groups(group);
  response->set_method(identity->method);
  return grpc::Status::OK;
}

grpc::Status AuthGrpcService::CanI(grpc::ServerContext* context, const v1::CanIRequest* request,
                                   v1::CanIResponse* response) {
  absl::StatusOr<auth::Identity> identity = gate_.Authenticate(*context);
  if (!identity.ok()) return ToGrpcStatus(identity.status());
  if (absl::Status valid = auth::ValidateVerbAndKind(request->verb(), request->kind());
      !valid.ok()) {
    return ToGrpcStatus(valid);
  }
  auth::AccessRequest access;
  access.verb = request->verb();
  access.kind = request->kind();
  // A policy kind may be asked about in a namespace: "may I apply RoleBindings in team-a?"
  access.ns = auth::IsNamespacedKind(request->kind()) || auth::IsPolicyKind(request->kind())
                  ? request->namespace_()
                  : "";
  access.name = request->name();
  if (access.kind == "ClusterQueue") access.cluster_queue = access.name;
  const auth::Decision decision = gate_.Decide(*identity, std::move(access));
  response->set_allowed(decision.allowed);
  response->set_reason(decision.reason);
  return grpc::Status::OK;
}

}  // namespace tollgate::rpc
