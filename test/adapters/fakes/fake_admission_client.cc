#include "test/adapters/fakes/fake_admission_client.h"

#include <google/protobuf/util/message_differencer.h>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"

namespace tollgate::client {

std::string FakeAdmissionClient::Key(absl::string_view ns, absl::string_view name) {
  return absl::StrCat(ns, "/", name);
}

void FakeAdmissionClient::LogLocked(absl::string_view method, absl::string_view ns,
                                    absl::string_view name) {
  calls_.push_back(absl::StrCat(method, " ", ns, "/", name));
}

void FakeAdmissionClient::AddFlavor(const std::string& name,
                                    const std::map<std::string, std::string>& node_labels,
                                    const std::vector<v1::Toleration>& tolerations) {
  absl::MutexLock lock(&mu_);
  v1::ResourceFlavor flavor;
  flavor.mutable_metadata()->set_name(name);
  for (const auto& [k, v] : node_labels) (*flavor.mutable_spec()->mutable_node_labels())[k] = v;
  for (const v1::Toleration& t : tolerations) *flavor.mutable_spec()->add_tolerations() = t;
  flavors_[name] = flavor;
}

void FakeAdmissionClient::AddLocalQueue(const std::string& ns, const std::string& name) {
  absl::MutexLock lock(&mu_);
  v1::LocalQueue queue;
  queue.mutable_metadata()->set_namespace_(ns);
  queue.mutable_metadata()->set_name(name);
  local_queues_.push_back(queue);
}

void FakeAdmissionClient::AddWorkloadPriorityClass(const std::string& name, int32_t value) {
  absl::MutexLock lock(&mu_);
  v1::WorkloadPriorityClass wpc;
  wpc.mutable_metadata()->set_name(name);
  wpc.set_value(value);
  workload_priority_classes_[name] = wpc;
}

void FakeAdmissionClient::Admit(const std::string& ns, const std::string& name,
                                const v1::Admission& admission) {
  absl::MutexLock lock(&mu_);
  v1::Workload& wl = workloads_[Key(ns, name)];
  wl.mutable_status()->set_state(v1::WORKLOAD_STATE_ADMITTED);
  *wl.mutable_status()->mutable_admission() = admission;
  wl.mutable_status()->clear_pending_message();
}

void FakeAdmissionClient::Evict(const std::string& ns, const std::string& name,
                                const std::string& message) {
  absl::MutexLock lock(&mu_);
  v1::Workload& wl = workloads_[Key(ns, name)];
  wl.mutable_status()->set_state(v1::WORKLOAD_STATE_EVICTING);
  v1::WorkloadEvent* event = wl.mutable_status()->add_events();
  event->set_reason("Preempted");
  event->set_message(message);
}

namespace {

void SetEvicted(v1::Workload& wl, const std::string& reason, absl::Time at) {
  wl.mutable_status()->set_state(v1::WORKLOAD_STATE_PENDING);
  wl.mutable_status()->clear_admission();
  v1::Condition* evicted = nullptr;
  for (v1::Condition& c : *wl.mutable_status()->mutable_conditions()) {
    if (c.type() == "Evicted") evicted = &c;
  }
  if (evicted == nullptr) evicted = wl.mutable_status()->add_conditions();
  evicted->set_type("Evicted");
  evicted->set_status("True");
  evicted->set_reason(reason);
  evicted->mutable_last_transition_time()->set_seconds(absl::ToUnixSeconds(at));
}

}  // namespace

void FakeAdmissionClient::DeactivateAndEvict(const std::string& ns, const std::string& name,
                                             const std::string& reason, absl::Time at) {
  absl::MutexLock lock(&mu_);
  v1::Workload& wl = workloads_[Key(ns, name)];
  wl.mutable_status()->set_deactivated(true);
  SetEvicted(wl, reason, at);
}

void FakeAdmissionClient::DeactivateByUser(const std::string& ns, const std::string& name,
                                           absl::Time at) {
  absl::MutexLock lock(&mu_);
  v1::Workload& wl = workloads_[Key(ns, name)];
  wl.mutable_spec()->set_active(false);
  SetEvicted(wl, "Deactivated", at);
}

void FakeAdmissionClient::FailSubmits(absl::Status status) {
  absl::MutexLock lock(&mu_);
  submit_error_ = std::move(status);
}

std::optional<v1::Workload> FakeAdmissionClient::Find(const std::string& ns,
                                                      const std::string& name) const {
  absl::MutexLock lock(&mu_);
  auto it = workloads_.find(Key(ns, name));
  if (it == workloads_.end()) return std::nullopt;
  return it->second;
}

std::vector<std::string> FakeAdmissionClient::calls() const {
  absl::MutexLock lock(&mu_);
  return calls_;
}

int FakeAdmissionClient::Count(absl::string_view method) const {
  absl::MutexLock lock(&mu_);
  int n = 0;
  for (const std::string& call : calls_) {
    if (absl::StartsWith(call, absl::StrCat(method, " "))) ++n;
  }
  return n;
}

std::vector<v1::Namespace> FakeAdmissionClient::applied_namespaces() const {
  absl::MutexLock lock(&mu_);
  return namespaces_;
}

absl::StatusOr<v1::SubmitResponse> FakeAdmissionClient::Submit(const v1::SubmitRequest& request) {
  absl::MutexLock lock(&mu_);
  const v1::ObjectMeta& meta = request.workload().metadata();
  LogLocked("Submit", meta.namespace_(), meta.name());
  if (!submit_error_.ok()) return submit_error_;
  v1::SubmitResponse response;
  auto it = workloads_.find(Key(meta.namespace_(), meta.name()));
  if (it != workloads_.end()) {
    // The service compares the labels too (they are part of a workload's identity there).
    const auto& have = it->second.metadata().labels();
    const auto& want = request.workload().metadata().labels();
    const bool same_labels = std::map<std::string, std::string>(have.begin(), have.end()) ==
                             std::map<std::string, std::string>(want.begin(), want.end());
    // And it answers a resubmit of the submitter's spec.active, after an operator changed it,
    // with the workload (status.submitted_controls).
    v1::WorkloadSpec have_spec = it->second.spec();
    v1::WorkloadSpec want_spec = request.workload().spec();
    have_spec.clear_active();
    want_spec.clear_active();
    if (!same_labels || !google::protobuf::util::MessageDifferencer::Equals(have_spec, want_spec)) {
      return absl::AlreadyExistsError("workload already exists with a different spec");
    }
    *response.mutable_workload() = it->second;
    return response;
  }
  v1::Workload wl = request.workload();
  wl.mutable_metadata()->set_resource_version(++revision_);
  wl.mutable_status()->set_state(v1::WORKLOAD_STATE_PENDING);
  wl.mutable_status()->set_pending_message("Waiting in the fake queue");
  workloads_[Key(meta.namespace_(), meta.name())] = wl;
  *response.mutable_workload() = wl;
  response.set_created(true);
  return response;
}

absl::StatusOr<v1::Workload> FakeAdmissionClient::GetWorkload(const v1::WorkloadRef& ref) {
  absl::MutexLock lock(&mu_);
  auto it = workloads_.find(Key(ref.namespace_(), ref.name()));
  if (it == workloads_.end()) return absl::NotFoundError("workload not found");
  return it->second;
}

absl::StatusOr<v1::ListWorkloadsResponse> FakeAdmissionClient::ListWorkloads(
    const v1::ListWorkloadsRequest& request) {
  absl::MutexLock lock(&mu_);
  v1::ListWorkloadsResponse response;
  for (const auto& [key, wl] : workloads_) {
    if (!request.namespace_().empty() && wl.metadata().namespace_() != request.namespace_()) {
      continue;
    }
    if (!request.owner_uid().empty() &&
        (wl.metadata().owner_references_size() == 0 ||
         wl.metadata().owner_references(0).uid() != request.owner_uid())) {
      continue;
    }
    *response.add_workloads() = wl;
  }
  response.set_revision(revision_);
  return response;
}

absl::StatusOr<v1::FinishResponse> FakeAdmissionClient::Finish(const v1::FinishRequest& request) {
  absl::MutexLock lock(&mu_);
  LogLocked("Finish", request.workload().namespace_(), request.workload().name());
  auto it = workloads_.find(Key(request.workload().namespace_(), request.workload().name()));
  if (it == workloads_.end()) return absl::NotFoundError("workload not found");
  const v1::WorkloadState state = it->second.status().state();
  if (state == v1::WORKLOAD_STATE_PENDING) {
    return absl::FailedPreconditionError("only an admitted workload can finish");
  }
  it->second.mutable_status()->set_state(v1::WORKLOAD_STATE_FINISHED);
  v1::FinishResponse response;
  *response.mutable_workload() = it->second;
  return response;
}

absl::StatusOr<v1::ReportStoppedResponse> FakeAdmissionClient::ReportStopped(
    const v1::ReportStoppedRequest& request) {
  absl::MutexLock lock(&mu_);
  LogLocked("ReportStopped", request.workload().namespace_(), request.workload().name());
  auto it = workloads_.find(Key(request.workload().namespace_(), request.workload().name()));
  if (it == workloads_.end()) return absl::NotFoundError("workload not found");
  if (it->second.status().state() != v1::WORKLOAD_STATE_EVICTING) {
    return absl::FailedPreconditionError("workload is not evicting");
  }
  it->second.mutable_status()->set_state(v1::WORKLOAD_STATE_PENDING);
  it->second.mutable_status()->clear_admission();
  it->second.mutable_status()->set_pods_ready(false);
  v1::ReportStoppedResponse response;
  *response.mutable_workload() = it->second;
  return response;
}

absl::StatusOr<v1::ReportPodsReadyResponse> FakeAdmissionClient::ReportPodsReady(
    const v1::ReportPodsReadyRequest& request) {
  absl::MutexLock lock(&mu_);
  LogLocked("ReportPodsReady", request.workload().namespace_(), request.workload().name());
  auto it = workloads_.find(Key(request.workload().namespace_(), request.workload().name()));
  if (it == workloads_.end()) return absl::NotFoundError("workload not found");
  if (it->second.status().state() != v1::WORKLOAD_STATE_ADMITTED) {
    return absl::FailedPreconditionError("workload is not admitted");
  }
  it->second.mutable_status()->set_pods_ready(!request.has_ready() || request.ready());
  v1::ReportPodsReadyResponse response;
  *response.mutable_workload() = it->second;
  return response;
}

absl::StatusOr<v1::ReportCheckpointResponse> FakeAdmissionClient::ReportCheckpoint(
    const v1::ReportCheckpointRequest& request) {
  absl::MutexLock lock(&mu_);
  LogLocked("ReportCheckpoint", request.workload().namespace_(), request.workload().name());
  auto it = workloads_.find(Key(request.workload().namespace_(), request.workload().name()));
  if (it == workloads_.end()) return absl::NotFoundError("workload not found");
  *it->second.mutable_status()->mutable_last_checkpoint_time() = request.checkpoint_time();
  v1::ReportCheckpointResponse response;
  *response.mutable_workload() = it->second;
  return response;
}

absl::StatusOr<v1::ReportReclaimablePodsResponse> FakeAdmissionClient::ReportReclaimablePods(
    const v1::ReportReclaimablePodsRequest& request) {
  absl::MutexLock lock(&mu_);
  LogLocked("ReportReclaimablePods", request.workload().namespace_(), request.workload().name());
  auto it = workloads_.find(Key(request.workload().namespace_(), request.workload().name()));
  if (it == workloads_.end()) return absl::NotFoundError("workload not found");
  *it->second.mutable_status()->mutable_reclaimable_pods() = request.reclaimable_pods();
  v1::ReportReclaimablePodsResponse response;
  *response.mutable_workload() = it->second;
  return response;
}

absl::StatusOr<v1::ReportJobStateResponse> FakeAdmissionClient::ReportJobState(
    const v1::ReportJobStateRequest& request) {
  absl::MutexLock lock(&mu_);
  LogLocked("ReportJobState", request.workload().namespace_(), request.workload().name());
  auto it = workloads_.find(Key(request.workload().namespace_(), request.workload().name()));
  if (it == workloads_.end()) return absl::NotFoundError("workload not found");
  v1::WorkloadStatus* status = it->second.mutable_status();
  switch (request.report_case()) {
    case v1::ReportJobStateRequest::kBindOwner:
      *it->second.mutable_metadata()->add_owner_references() = request.bind_owner();
      break;
    case v1::ReportJobStateRequest::kOutOfSync:
      status->set_state(v1::WORKLOAD_STATE_FINISHED);
      break;
    case v1::ReportJobStateRequest::kOnHold:
      status->set_on_hold(request.on_hold());
      if (request.on_hold()) {
        status->set_state(v1::WORKLOAD_STATE_PENDING);
        status->clear_admission();
      }
      break;
    case v1::ReportJobStateRequest::kWaitingForReplacementPods:
      status->set_waiting_for_replacement_pods(request.waiting_for_replacement_pods());
      break;
    case v1::ReportJobStateRequest::kJobStatus:
      *status->mutable_job_status() = request.job_status();
      break;
    default:
      return absl::InvalidArgumentError("no report");
  }
  v1::ReportJobStateResponse response;
  *response.mutable_workload() = it->second;
  return response;
}

absl::StatusOr<v1::SetAdmissionGatesResponse> FakeAdmissionClient::SetAdmissionGates(
    const v1::SetAdmissionGatesRequest& request) {
  absl::MutexLock lock(&mu_);
  LogLocked("SetAdmissionGates", request.workload().namespace_(), request.workload().name());
  auto it = workloads_.find(Key(request.workload().namespace_(), request.workload().name()));
  if (it == workloads_.end()) return absl::NotFoundError("workload not found");
  auto& annotations = *it->second.mutable_metadata()->mutable_annotations();
  const std::string key = "kueue.x-k8s.io/admission-gated-by";
  const std::string stored = annotations.count(key) > 0 ? annotations.at(key) : "";
  if (request.has_admission_gated_by()) {
    for (absl::string_view gate : absl::StrSplit(request.admission_gated_by(), ',')) {
      if (!gate.empty() &&
          !absl::StrContains(absl::StrCat(",", stored, ","), absl::StrCat(",", gate, ","))) {
        return absl::InvalidArgumentError("can only remove gates, not add new ones");
      }
    }
    annotations[key] = request.admission_gated_by();
  } else {
    annotations.erase(key);
  }
  it->second.mutable_metadata()->set_resource_version(++revision_);
  v1::SetAdmissionGatesResponse response;
  *response.mutable_workload() = it->second;
  return response;
}

// Stores the annotation as asked; the value's syntax is the real engine's to check.
absl::StatusOr<v1::SetPriorityBoostResponse> FakeAdmissionClient::SetPriorityBoost(
    const v1::SetPriorityBoostRequest& request) {
  absl::MutexLock lock(&mu_);
  LogLocked("SetPriorityBoost", request.workload().namespace_(), request.workload().name());
  auto it = workloads_.find(Key(request.workload().namespace_(), request.workload().name()));
  if (it == workloads_.end()) return absl::NotFoundError("workload not found");
  auto& annotations = *it->second.mutable_metadata()->mutable_annotations();
  const std::string key = "kueue.x-k8s.io/priority-boost";
  if (request.has_priority_boost()) {
    annotations[key] = request.priority_boost();
  } else {
    annotations.erase(key);
  }
  it->second.mutable_metadata()->set_resource_version(++revision_);
  v1::SetPriorityBoostResponse response;
  *response.mutable_workload() = it->second;
  return response;
}

absl::StatusOr<v1::UpdateWorkloadPayloadResponse> FakeAdmissionClient::UpdateWorkloadPayload(
    const v1::UpdateWorkloadPayloadRequest& request) {
  absl::MutexLock lock(&mu_);
  LogLocked("UpdateWorkloadPayload", request.workload().namespace_(), request.workload().name());
  auto it = workloads_.find(Key(request.workload().namespace_(), request.workload().name()));
  if (it == workloads_.end()) return absl::NotFoundError("workload not found");
  *it->second.mutable_spec()->mutable_payload() = request.payload();
  v1::UpdateWorkloadPayloadResponse response;
  *response.mutable_workload() = it->second;
  return response;
}

absl::Status FakeAdmissionClient::DeleteWorkload(const v1::DeleteWorkloadRequest& request) {
  absl::MutexLock lock(&mu_);
  LogLocked("DeleteWorkload", request.workload().namespace_(), request.workload().name());
  if (workloads_.erase(Key(request.workload().namespace_(), request.workload().name())) == 0) {
    return absl::NotFoundError("workload not found");
  }
  return absl::OkStatus();
}

absl::Status FakeAdmissionClient::Watch(const v1::WatchRequest& request,
                                        const std::function<bool(const v1::WatchEvent&)>& on_event,
                                        const common::StopSignal& stop) {
  // Bounded by the stop signal, which the tests that run loops fire.
  while (!stop.WaitFor(absl::Seconds(1))) {
  }
  return absl::OkStatus();
}

absl::StatusOr<v1::ConfigObject> FakeAdmissionClient::GetObject(const v1::ObjectRef& ref) {
  absl::MutexLock lock(&mu_);
  if (ref.kind() == v1::RESOURCE_FLAVOR) {
    auto it = flavors_.find(ref.name());
    if (it != flavors_.end()) {
      v1::ConfigObject object;
      *object.mutable_resource_flavor() = it->second;
      return object;
    }
  }
  if (ref.kind() == v1::WORKLOAD_PRIORITY_CLASS) {
    auto it = workload_priority_classes_.find(ref.name());
    if (it != workload_priority_classes_.end()) {
      v1::ConfigObject object;
      *object.mutable_workload_priority_class() = it->second;
      return object;
    }
  }
  return absl::NotFoundError(absl::StrCat("object ", ref.name(), " not found"));
}

absl::StatusOr<v1::ListObjectsResponse> FakeAdmissionClient::ListObjects(
    const v1::ListObjectsRequest& request) {
  absl::MutexLock lock(&mu_);
  v1::ListObjectsResponse response;
  if (request.kind() == v1::LOCAL_QUEUE) {
    for (const v1::LocalQueue& queue : local_queues_) {
      if (request.namespace_().empty() || queue.metadata().namespace_() == request.namespace_()) {
        *response.add_objects()->mutable_local_queue() = queue;
      }
    }
  }
  return response;
}

absl::StatusOr<v1::ApplyResponse> FakeAdmissionClient::Apply(const v1::ApplyRequest& request) {
  absl::MutexLock lock(&mu_);
  for (const v1::ConfigObject& object : request.objects()) {
    if (object.has_namespace_()) {
      LogLocked("Apply", "", object.namespace_().metadata().name());
      namespaces_.push_back(object.namespace_());
    }
  }
  v1::ApplyResponse response;
  *response.mutable_objects() = request.objects();
  return response;
}

absl::Status FakeAdmissionClient::DeleteObject(const v1::ObjectRef& ref) {
  absl::MutexLock lock(&mu_);
  LogLocked("DeleteObject", ref.namespace_(), ref.name());
  return absl::OkStatus();
}

}  // namespace tollgate::client
