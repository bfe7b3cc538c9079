#include "services/api/workload_codec.h"

#include <algorithm>
#include <cstdint>
#include <optional>
#include <string>
#include <utility>

#include "absl/container/inlined_vector.h"
#include "absl/status/status.h"
#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "core/names.h"
#include "core/quantity.h"
#include "core/status_macros.h"
#include "core/topology_validation.h"
#include "services/api/api_limits.h"
#include "services/api/api_validation.h"
#include "services/api/check_codec.h"
#include "services/api/selector_codec.h"
#include "services/api/topology_codec.h"

namespace tollgate::api {
namespace {

using codec::CheckMaxItems;
using codec::CheckMinItems;
using codec::CheckObjectSize;
using codec::Child;
using codec::EnumValue;
using codec::Index;
using codec::Key;
using codec::LabelsFromProto;
using codec::LabelsToProto;
using codec::LazyPath;
using codec::NameRule;
using codec::ParseRequestAmount;
using codec::ParseResourceAmount;
using codec::Quote;
using codec::Reporter;
using codec::Sorted;
using codec::SupportedValues;
using codec::TimeFromProto;
using codec::TimeToProto;
using codec::TolerationsFromProto;
using codec::TolerationsToProto;
using codec::ValidateMetadata;
using codec::ValidateName;

constexpr absl::string_view kDefaultPodSetName = "main";
constexpr absl::string_view kReservedPodsResource = "pods";

Reporter WorkloadReporter(const v1::Workload& wl) {
  return Reporter("Workload", wl.metadata().namespace_(), wl.metadata().name());
}

// `path` is built only for an error: workloads are decoded on every Submit and by the million
// on restart.
absl::StatusOr<core::PodSetSpec> PodSetFromProto(const Reporter& r, LazyPath path,
                                                 const v1::PodSet& ps) {
  core::PodSetSpec out;
  out.name = ps.name().empty() ? std::string(kDefaultPodSetName) : ps.name();
  TOLLGATE_RETURN_IF_ERROR(ValidateName(
      r, [&] { return Child(path(), "name"); }, out.name, /*label=*/true));
  if (ps.count() < 0) {
    return r.Invalid(Child(path(), "count"),
                     absl::StrCat("must be greater than or equal to 0, got ", ps.count()));
  }
  out.count = ps.count();
  if (ps.has_min_count()) {
    if (ps.min_count() < 1) {
      return r.Invalid(Child(path(), "minCount"),
                       absl::StrCat("must be greater than or equal to 1, got ", ps.min_count()));
    }
    if (ps.min_count() > ps.count()) {
      return r.Invalid(Child(path(), "minCount"),
                       absl::StrCat("must be less than or equal to count (", ps.count(), "), got ",
                                    ps.min_count()));
    }
    out.min_count = ps.min_count();
  }
  // Tested before the path is built: a path costs more than the rest of a small pod set.
  if (ps.requests_size() > kMaxPodSetRequests) {
    return CheckMaxItems(r, Child(path(), "requests"), ps.requests_size(), kMaxPodSetRequests,
                         "entries");
  }
  if (ps.tolerations_size() > kMaxPodSetTolerations) {
    return CheckMaxItems(r, Child(path(), "tolerations"), ps.tolerations_size(),
                         kMaxPodSetTolerations);
  }
  // In resource order, as Sorted() would give, without copying the map.
  using Request = google::protobuf::Map<std::string, std::string>::value_type;
  absl::InlinedVector<const Request*, 4> requests;
  for (const Request& request : ps.requests()) requests.push_back(&request);
  std::sort(requests.begin(), requests.end(),
            [](const Request* a, const Request* b) { return a->first < b->first; });
  out.requests.reserve(requests.size());
  for (const Request* request : requests) {
    const std::string& resource = request->first;
    auto kpath = [&] { return Key(Child(path(), "requests"), resource); };
    if (absl::Status valid = core::ValidateQualifiedName(resource); !valid.ok()) {
      return r.At(kpath(), valid);
    }
    if (resource == kReservedPodsResource) {
      return r.Invalid(kpath(), absl::StrCat("the resource name ", Quote(resource),
                                             " is reserved for internal Kueue use"));
    }
    TOLLGATE_ASSIGN_OR_RETURN(int64_t amount,
                              ParseRequestAmount(r, kpath, resource, request->second));
    out.requests.emplace_back(resource, amount);
  }
  if (!ps.node_selector().empty()) {
    TOLLGATE_RETURN_IF_ERROR(
        LabelsFromProto(r, Child(path(), "nodeSelector"), ps.node_selector(), &out.node_selector));
  }
  if (!ps.tolerations().empty()) {
    TOLLGATE_ASSIGN_OR_RETURN(
        out.tolerations, TolerationsFromProto(r, Child(path(), "tolerations"), ps.tolerations()));
  }
  if (ps.has_topology_request()) {
    TOLLGATE_ASSIGN_OR_RETURN(out.topology_request, codec::TopologyRequestFromProto(
                                                        r, path, ps.topology_request(), out.count));
  }
  if (!ps.required_node_affinity().empty()) {
    TOLLGATE_ASSIGN_OR_RETURN(
        std::vector<core::NodeSelectorTerm> terms,
        codec::NodeAffinityFromProto(
            r, [&] { return Child(path(), "requiredNodeAffinity"); }, ps.required_node_affinity()));
    out.set_required_node_affinity(std::move(terms));
  }
  if (!ps.preferred_node_affinity().empty()) {
    TOLLGATE_ASSIGN_OR_RETURN(std::vector<core::PreferredSchedulingTerm> terms,
                              codec::PreferredNodeAffinityFromProto(
                                  r, [&] { return Child(path(), "preferredNodeAffinity"); },
                                  ps.preferred_node_affinity()));
    out.set_preferred_node_affinity(std::move(terms));
  }
  if (!ps.resource_errors().empty()) {
    TOLLGATE_RETURN_IF_ERROR(CheckMaxItems(r, Child(path(), "resourceErrors"),
                                           ps.resource_errors_size(), kMaxPodSetResourceErrors));
    std::vector<std::string> errors;
    errors.reserve(ps.resource_errors_size());
    for (int i = 0; i < ps.resource_errors_size(); ++i) {
      const std::string& error = ps.resource_errors(i);
      if (error.empty() || error.size() > kMaxResourceErrorBytes) {
        return r.Invalid(
            absl::StrCat(Child(path(), "resourceErrors"), "[", i, "]"),
            absl::StrCat("must be 1 to ", kMaxResourceErrorBytes, " bytes, got ", error.size()));
      }
      errors.push_back(error);
    }
    out.set_resource_errors(std::move(errors));
  }
  return out;
}

constexpr EnumValue<core::WorkloadState> kWorkloadStates[] = {
    {"WORKLOAD_STATE_PENDING", core::WorkloadState::kPending},
    {"WORKLOAD_STATE_ADMITTED", core::WorkloadState::kAdmitted},
    {"WORKLOAD_STATE_QUOTA_RESERVED", core::WorkloadState::kQuotaReserved},
    {"WORKLOAD_STATE_EVICTING", core::WorkloadState::kEvicting},
    {"WORKLOAD_STATE_FINISHED", core::WorkloadState::kFinished},
};

v1::WorkloadState StateToProto(core::WorkloadState state) {
  switch (state) {
    case core::WorkloadState::kPending:
      return v1::WORKLOAD_STATE_PENDING;
    case core::WorkloadState::kAdmitted:
      return v1::WORKLOAD_STATE_ADMITTED;
    case core::WorkloadState::kQuotaReserved:
      return v1::WORKLOAD_STATE_QUOTA_RESERVED;
    case core::WorkloadState::kEvicting:
      return v1::WORKLOAD_STATE_EVICTING;
    case core::WorkloadState::kFinished:
      return v1::WORKLOAD_STATE_FINISHED;
  }
  return v1::WORKLOAD_STATE_UNSPECIFIED;
}

absl::StatusOr<core::WorkloadState> StateFromProto(const Reporter& r, v1::WorkloadState state) {
  switch (state) {
    case v1::WORKLOAD_STATE_UNSPECIFIED:
    case v1::WORKLOAD_STATE_PENDING:
      return core::WorkloadState::kPending;
    case v1::WORKLOAD_STATE_ADMITTED:
      return core::WorkloadState::kAdmitted;
    case v1::WORKLOAD_STATE_QUOTA_RESERVED:
      return core::WorkloadState::kQuotaReserved;
    case v1::WORKLOAD_STATE_EVICTING:
      return core::WorkloadState::kEvicting;
    case v1::WORKLOAD_STATE_FINISHED:
      return core::WorkloadState::kFinished;
    default:
      break;
  }
  // Open enums can carry numbers from a newer writer.
  return r.Invalid("status.state",
                   absl::StrCat("unsupported value ", static_cast<int>(state),
                                ": supported values: ", SupportedValues(kWorkloadStates)));
}

absl::StatusOr<core::Admission> AdmissionFromProto(const Reporter& r, const v1::Admission& a) {
  const std::string path = "status.admission";
  core::Admission out;
  TOLLGATE_RETURN_IF_ERROR(
      ValidateName(r, Child(path, "clusterQueue"), a.cluster_queue(), /*label=*/false));
  out.cluster_queue = a.cluster_queue();
  const std::string apath = Child(path, "podSetAssignments");
  for (int i = 0; i < a.pod_set_assignments_size(); ++i) {
    const v1::PodSetAssignment& psa = a.pod_set_assignments(i);
    const std::string ppath = Index(apath, i);
    core::PodSetAssignment assignment;
    assignment.name = psa.name();
    if (psa.count() < 0) {
      return r.Invalid(Child(ppath, "count"),
                       absl::StrCat("must be greater than or equal to 0, got ", psa.count()));
    }
    assignment.count = psa.count();
    for (const auto& [resource, flavor] : Sorted(psa.flavors())) {
      assignment.flavors.emplace_back(resource, flavor);
    }
    for (const auto& [resource, text] : Sorted(psa.resource_usage())) {
      TOLLGATE_ASSIGN_OR_RETURN(
          int64_t amount,
          ParseResourceAmount(r, Key(Child(ppath, "resourceUsage"), resource), resource, text));
      assignment.resource_usage.emplace_back(resource, amount);
    }
    if (psa.has_topology_assignment()) {
      TOLLGATE_ASSIGN_OR_RETURN(
          assignment.topology_assignment,
          codec::TopologyAssignmentFromProto(r, Child(ppath, "topologyAssignment"),
                                             psa.topology_assignment()));
    }
    out.pod_sets.push_back(std::move(assignment));
  }
  out.pod_labels = Sorted(a.pod_labels());
  return out;
}

void AdmissionToProto(const core::Admission& a, v1::Admission* out) {
  out->set_cluster_queue(a.cluster_queue);
  LabelsToProto(a.pod_labels, out->mutable_pod_labels());
  for (const core::PodSetAssignment& psa : a.pod_sets) {
    v1::PodSetAssignment* p = out->add_pod_set_assignments();
    p->set_name(psa.name);
    p->set_count(psa.count);
    for (const auto& [resource, flavor] : psa.flavors) (*p->mutable_flavors())[resource] = flavor;
    for (const auto& [resource, amount] : psa.resource_usage) {
      (*p->mutable_resource_usage())[resource] = core::FormatResourceScalar(resource, amount);
    }
    if (psa.topology_assignment.has_value()) {
      TopologyAssignmentToProto(*psa.topology_assignment, p->mutable_topology_assignment());
    }
  }
}

absl::StatusOr<bool> ConditionStatusFromProto(const Reporter& r, LazyPath path,
                                              absl::string_view status) {
  if (status == "True") return true;
  // The core's conditions are two-valued; Unknown reads as not (yet) true.
  if (status == "False" || status == "Unknown") return false;
  return r.Invalid(path(), absl::StrCat("unsupported value ", Quote(status),
                                        ": supported values: \"True\", \"False\", \"Unknown\""));
}

}  // namespace

absl::StatusOr<core::WorkloadOwner> OwnerReferenceFromProto(absl::string_view path,
                                                            const v1::OwnerReference& ref) {
  const std::string at(path);
  auto required = [&](absl::string_view field, const std::string& value) -> absl::Status {
    if (!value.empty()) return absl::OkStatus();
    return absl::InvalidArgumentError(absl::StrCat(at, ".", field, ": Required value"));
  };
  for (const auto& [field, value] :
       {std::pair<absl::string_view, const std::string*>{"apiVersion", &ref.api_version()},
        {"kind", &ref.kind()},
        {"name", &ref.name()},
        {"uid", &ref.uid()}}) {
    TOLLGATE_RETURN_IF_ERROR(required(field, *value));
    if (value->size() > kMaxOwnerReferenceFieldBytes) {
      return absl::InvalidArgumentError(absl::StrCat(at, ".", field, ": must be no more than ",
                                                     kMaxOwnerReferenceFieldBytes, " bytes, got ",
                                                     Quote(*value)));
    }
  }
  return core::WorkloadOwner{ref.api_version(), ref.kind(), ref.name(), ref.uid()};
}

absl::StatusOr<core::WorkloadPayload> PayloadFromProto(absl::string_view path,
                                                       const v1::WorkloadPayload& payload) {
  if (payload.data().size() > kMaxPayloadBytes) {
    return absl::InvalidArgumentError(absl::StrCat(path, ".data: must be no more than ",
                                                   kMaxPayloadBytes, " bytes, got ",
                                                   payload.data().size(), " bytes"));
  }
  for (const auto& [field, value] :
       {std::pair<absl::string_view, const std::string*>{"contentType", &payload.content_type()},
        {"apiVersion", &payload.api_version()},
        {"kind", &payload.kind()}}) {
    if (value->size() > kMaxPayloadFieldBytes) {
      return absl::InvalidArgumentError(absl::StrCat(path, ".", field, ": must be no more than ",
                                                     kMaxPayloadFieldBytes, " bytes, got ",
                                                     Quote(*value)));
    }
  }
  if (!payload.data().empty() && payload.content_type().empty()) {
    return absl::InvalidArgumentError(absl::StrCat(
        path, ".contentType: Required value (what the data is, e.g. \"application/json\")"));
  }
  return core::WorkloadPayload{payload.content_type(), payload.api_version(), payload.kind(),
                               payload.data()};
}

absl::Status ValidateConditionReason(absl::string_view field, absl::string_view reason) {
  if (reason.empty()) return absl::OkStatus();
  constexpr size_t kMaxReasonBytes = 1024;
  auto allowed = [](char c) {
    return absl::ascii_isalnum(static_cast<unsigned char>(c)) || c == '_' || c == ',' || c == ':';
  };
  const bool valid = reason.size() <= kMaxReasonBytes &&
                     absl::ascii_isalpha(static_cast<unsigned char>(reason.front())) &&
                     std::all_of(reason.begin(), reason.end(), allowed) && reason.back() != ',' &&
                     reason.back() != ':';
  if (valid) return absl::OkStatus();
  return absl::InvalidArgumentError(absl::StrCat(
      field,
      ": must be a condition reason (a letter, then letters, digits, '_', ',' or ':', not "
      "ending in ',' or ':', at most 1024 bytes), got ",
      Quote(reason)));
}

void PayloadToProto(const core::WorkloadPayload& payload, v1::WorkloadPayload* out) {
  out->set_content_type(payload.content_type);
  out->set_api_version(payload.api_version);
  out->set_kind(payload.kind);
  out->set_data(payload.data);
}

void OwnerReferenceToProto(const core::WorkloadOwner& owner, v1::OwnerReference* out) {
  out->set_api_version(owner.api_version);
  out->set_kind(owner.kind);
  out->set_name(owner.name);
  out->set_uid(owner.uid);
  out->set_controller(true);
}

absl::StatusOr<std::optional<core::WorkloadOwner>> WorkloadOwnerFromProto(const v1::Workload& wl) {
  const auto& refs = wl.metadata().owner_references();
  if (refs.empty()) return std::optional<core::WorkloadOwner>();
  const Reporter r = WorkloadReporter(wl);
  if (refs.size() > 1) {
    return r.Invalid(
        "metadata.ownerReferences",
        absl::StrCat("a workload has at most one owner (its controller), got ", refs.size()));
  }
  if (!refs[0].controller()) {
    return r.Invalid("metadata.ownerReferences[0].controller",
                     "must be true: only the controlling owner is kept");
  }
  absl::StatusOr<core::WorkloadOwner> owner =
      OwnerReferenceFromProto("metadata.ownerReferences[0]", refs[0]);
  if (!owner.ok()) {
    return absl::InvalidArgumentError(absl::StrCat("Workload ", wl.metadata().namespace_(), "/",
                                                   wl.metadata().name(), ": ",
                                                   owner.status().message()));
  }
  return std::optional<core::WorkloadOwner>(*std::move(owner));
}

absl::StatusOr<core::WorkloadSpec> WorkloadSpecFromProto(const v1::Workload& wl) {
  const Reporter r = WorkloadReporter(wl);
  // Status is the service's (and bounded by it), so only what a client sends counts.
  TOLLGATE_RETURN_IF_ERROR(
      CheckObjectSize(r, wl.metadata().ByteSizeLong() + wl.spec().ByteSizeLong()));
  TOLLGATE_RETURN_IF_ERROR(
      ValidateMetadata(r, wl.metadata(), NameRule::kDns1123Subdomain, /*namespaced=*/true));
  if (wl.metadata().uid().size() > kMaxUidBytes) {
    return r.Invalid("metadata.uid", absl::StrCat("must be no more than ", kMaxUidBytes,
                                                  " bytes, got ", Quote(wl.metadata().uid())));
  }
  const v1::WorkloadSpec& s = wl.spec();
  core::WorkloadSpec out;
  out.namespace_name = wl.metadata().namespace_();
  out.name = wl.metadata().name();
  // Kept for the workload's users (validated above); boxed, so none costs nothing.
  if (!wl.metadata().labels().empty() || !wl.metadata().annotations().empty()) {
    core::WorkloadMetadata& meta = out.metadata.mutable_value();
    meta.labels = Sorted(wl.metadata().labels());
    meta.annotations = Sorted(wl.metadata().annotations());
  }

  // An empty queue name stays empty: the core resolves it to the namespace's "default"
  // LocalQueue, or refuses the workload when the namespace has none.
  if (!s.queue_name().empty()) {
    TOLLGATE_RETURN_IF_ERROR(ValidateName(r, "spec.queueName", s.queue_name(), /*label=*/false));
  }
  out.queue_name = s.queue_name();
  if (!s.priority_class_name().empty()) {
    TOLLGATE_RETURN_IF_ERROR(
        ValidateName(r, "spec.priorityClassName", s.priority_class_name(), /*label=*/false));
  }
  out.priority_class_name = s.priority_class_name();
  if (s.has_priority()) out.priority = s.priority();

  TOLLGATE_RETURN_IF_ERROR(CheckMinItems(r, "spec.podSets", s.pod_sets_size(), 1));
  TOLLGATE_RETURN_IF_ERROR(CheckMaxItems(r, "spec.podSets", s.pod_sets_size(), kMaxPodSets));
  int with_min_count = 0;
  out.pod_sets.reserve(s.pod_sets_size());
  for (int i = 0; i < s.pod_sets_size(); ++i) {
    auto path = [i] { return Index("spec.podSets", i); };
    TOLLGATE_ASSIGN_OR_RETURN(core::PodSetSpec ps, PodSetFromProto(r, path, s.pod_sets(i)));
    // At most kMaxPodSets, so a scan beats building a set.
    for (const core::PodSetSpec& earlier : out.pod_sets) {
      if (earlier.name == ps.name) {
        return r.Invalid(Child(path(), "name"), absl::StrCat("duplicate value ", Quote(ps.name)));
      }
    }
    if (ps.min_count.has_value()) ++with_min_count;
    out.pod_sets.push_back(std::move(ps));
  }
  // Kueue's webhook: partial admission shrinks a single pod set.
  if (with_min_count > 1) {
    return r.Invalid("spec.podSets",
                     absl::StrCat("at most one podSet can use minCount, got ", with_min_count));
  }
  TOLLGATE_RETURN_IF_ERROR(r.Wrap(core::ValidatePodSetGroups(out)));

  out.active = s.has_active() ? s.active() : true;
  out.non_preemptible = s.non_preemptible();
  if (s.checkpoint_grace_seconds() < 0) {
    return r.Invalid(
        "spec.checkpointGraceSeconds",
        absl::StrCat("must be greater than or equal to 0, got ", s.checkpoint_grace_seconds()));
  }
  out.checkpoint_grace_seconds = s.checkpoint_grace_seconds();
  if (s.has_maximum_execution_time_seconds()) {
    if (s.maximum_execution_time_seconds() <= 0) {
      return r.Invalid(
          "spec.maximumExecutionTimeSeconds",
          absl::StrCat("must be greater than 0, got ", s.maximum_execution_time_seconds()));
    }
    out.maximum_execution_time_seconds = s.maximum_execution_time_seconds();
  }
  if (s.has_payload()) {
    absl::StatusOr<core::WorkloadPayload> payload = PayloadFromProto("spec.payload", s.payload());
    if (!payload.ok()) return r.Wrap(payload.status());
    out.payload = *std::move(payload);
  }
  return out;
}

absl::StatusOr<core::Workload> WorkloadFromStoredProto(const v1::Workload& wl) {
  const Reporter r = WorkloadReporter(wl);
  core::Workload out;
  TOLLGATE_ASSIGN_OR_RETURN(out.spec, WorkloadSpecFromProto(wl));
  out.uid = wl.metadata().uid();
  TOLLGATE_ASSIGN_OR_RETURN(std::optional<core::WorkloadOwner> owner, WorkloadOwnerFromProto(wl));
  if (owner.has_value()) out.owner = *std::move(owner);
  TOLLGATE_ASSIGN_OR_RETURN(out.creation_time, TimeFromProto(r, "metadata.creationTimestamp",
                                                             wl.metadata().has_creation_timestamp(),
                                                             wl.metadata().creation_timestamp()));

  const v1::WorkloadStatus& s = wl.status();
  core::WorkloadStatus& st = out.status;
  out.priority = s.priority();
  TOLLGATE_ASSIGN_OR_RETURN(st.state, StateFromProto(r, s.state()));
  if (s.has_admission()) {
    TOLLGATE_ASSIGN_OR_RETURN(st.admission, AdmissionFromProto(r, s.admission()));
  }
  TOLLGATE_ASSIGN_OR_RETURN(
      st.admission_time,
      TimeFromProto(r, "status.admissionTime", s.has_admission_time(), s.admission_time()));
  st.pending_message = s.pending_message();
  st.pods_ready = s.pods_ready();
  st.deactivated = s.deactivated();
  st.on_hold = s.on_hold();
  st.waiting_for_replacement_pods = s.waiting_for_replacement_pods();
  // Most stored workloads have no history: allocate it only when something is set.
  core::WorkloadHistory history;
  history.preemption_count = s.preemption_count();
  history.last_preemption_reason = s.last_preemption_reason();
  history.requeue_count = s.requeue_state().count();
  TOLLGATE_ASSIGN_OR_RETURN(history.requeue_at, TimeFromProto(r, "status.requeueState.requeueAt",
                                                              s.requeue_state().has_requeue_at(),
                                                              s.requeue_state().requeue_at()));
  TOLLGATE_ASSIGN_OR_RETURN(
      history.pods_ready_eviction_time,
      TimeFromProto(r, "status.podsReadyEvictionTime", s.has_pods_ready_eviction_time(),
                    s.pods_ready_eviction_time()));
  TOLLGATE_ASSIGN_OR_RETURN(
      history.evicted_at, TimeFromProto(r, "status.evictedAt", s.has_evicted_at(), s.evicted_at()));
  TOLLGATE_ASSIGN_OR_RETURN(history.eviction_deadline,
                            TimeFromProto(r, "status.evictionDeadline", s.has_eviction_deadline(),
                                          s.eviction_deadline()));
  for (int i = 0; i < s.recent_preemptions_size(); ++i) {
    TOLLGATE_ASSIGN_OR_RETURN(absl::Time t,
                              TimeFromProto(
                                  r, [i] { return Index("status.recentPreemptions", i); }, true,
                                  s.recent_preemptions(i)));
    history.recent_preemptions.push_back(t);
  }
  TOLLGATE_ASSIGN_OR_RETURN(history.last_checkpoint_time,
                            TimeFromProto(r, "status.lastCheckpointTime",
                                          s.has_last_checkpoint_time(), s.last_checkpoint_time()));
  if (s.has_submitted_controls()) {
    const v1::SubmittedControls& c = s.submitted_controls();
    history.submitted_controls = core::SubmittedControls{
        c.active(), c.has_priority() ? std::optional<int32_t>(c.priority()) : std::nullopt};
  }
  if (s.has_accumulated_past_execution_time_seconds()) {
    if (s.accumulated_past_execution_time_seconds() < 0) {
      return r.Invalid(
          "status.accumulatedPastExexcutionTimeSeconds",
          absl::StrCat("must not be negative, got ", s.accumulated_past_execution_time_seconds()));
    }
    history.past_execution = absl::Seconds(s.accumulated_past_execution_time_seconds());
  }
  for (int i = 0; i < s.reclaimable_pods_size(); ++i) {
    const v1::ReclaimablePod& p = s.reclaimable_pods(i);
    if (p.count() < 0) {
      return r.Invalid(Child(Index("status.reclaimablePods", i), "count"),
                       absl::StrCat("must not be negative, got ", p.count()));
    }
    history.reclaimable_pods.emplace_back(p.name(), p.count());
  }
  std::sort(history.reclaimable_pods.begin(), history.reclaimable_pods.end());
  history.unhealthy_nodes.assign(s.unhealthy_nodes().begin(), s.unhealthy_nodes().end());
  history.cluster_name = s.cluster_name();
  history.nominated_cluster_names.assign(s.nominated_cluster_names().begin(),
                                         s.nominated_cluster_names().end());
  history.multi_kueue_winner = s.multi_kueue_winner();
  if (s.has_job_status()) {
    absl::StatusOr<core::WorkloadPayload> job_status =
        PayloadFromProto("status.jobStatus", s.job_status());
    if (!job_status.ok()) return r.Wrap(job_status.status());
    history.job_status = *std::move(job_status);
  }
  TOLLGATE_ASSIGN_OR_RETURN(
      history.multi_kueue_remotes,
      codec::MultiKueueRemotesFromProto(r, "status.multiKueueRemotes", s.multi_kueue_remotes()));
  if (!(history == core::WorkloadHistory{})) st.mutable_history() = std::move(history);

  st.conditions.reserve(s.conditions_size());
  for (int i = 0; i < s.conditions_size(); ++i) {
    const v1::Condition& c = s.conditions(i);
    auto cpath = [i] { return Index("status.conditions", i); };
    core::Condition cond;
    cond.type = c.type();
    TOLLGATE_ASSIGN_OR_RETURN(cond.status,
                              ConditionStatusFromProto(
                                  r, [&] { return Child(cpath(), "status"); }, c.status()));
    cond.reason = c.reason();
    cond.message = c.message();
    TOLLGATE_ASSIGN_OR_RETURN(cond.last_transition_time,
                              TimeFromProto(
                                  r, [&] { return Child(cpath(), "lastTransitionTime"); },
                                  c.has_last_transition_time(), c.last_transition_time()));
    st.conditions.push_back(std::move(cond));
  }
  if (s.admission_checks_size() > 0) {
    TOLLGATE_ASSIGN_OR_RETURN(std::vector<core::AdmissionCheckState> checks,
                              codec::AdmissionCheckStatesFromProto(r, s.admission_checks()));
    st.set_admission_checks(std::move(checks));
  }
  if (s.admitted_pod_sets_size() > 0) {
    TOLLGATE_ASSIGN_OR_RETURN(std::vector<core::PodSetInfo> infos,
                              codec::PodSetInfosFromProto(r, s.admitted_pod_sets()));
    st.set_admitted_pod_sets(std::move(infos));
  }
  // Keep the core's bound even if an older build stored more events.
  const int first_event = s.events_size() > static_cast<int>(core::kMaxWorkloadEvents)
                              ? s.events_size() - static_cast<int>(core::kMaxWorkloadEvents)
                              : 0;
  st.events.reserve(s.events_size() - first_event);
  for (int i = first_event; i < s.events_size(); ++i) {
    const v1::WorkloadEvent& e = s.events(i);
    core::WorkloadEvent event;
    TOLLGATE_ASSIGN_OR_RETURN(
        event.time,
        TimeFromProto(
            r, [i] { return Child(Index("status.events", i), "time"); }, e.has_time(), e.time()));
    event.reason = e.reason();
    event.message = e.message();
    st.events.push_back(std::move(event));
  }
  return out;
}

void WorkloadToProto(const core::Workload& wl, v1::Workload* out) {
  v1::ObjectMeta* meta = out->mutable_metadata();
  meta->set_name(wl.spec.name);
  meta->clear_labels();
  meta->clear_annotations();
  if (wl.spec.metadata.has_value()) {
    LabelsToProto(wl.spec.metadata->labels, meta->mutable_labels());
    LabelsToProto(wl.spec.metadata->annotations, meta->mutable_annotations());
  }
  meta->set_namespace_(wl.spec.namespace_name);
  meta->set_uid(wl.uid);
  meta->clear_owner_references();
  if (wl.owner.has_value()) OwnerReferenceToProto(*wl.owner, meta->add_owner_references());
  // InfinitePast means "never" in the core and "unset" in the API, here and below.
  if (wl.creation_time != absl::InfinitePast()) {
    TimeToProto(wl.creation_time, meta->mutable_creation_timestamp());
  } else {
    meta->clear_creation_timestamp();
  }

  v1::WorkloadSpec* s = out->mutable_spec();
  s->Clear();
  s->set_queue_name(wl.spec.queue_name);
  s->set_priority_class_name(wl.spec.priority_class_name);
  if (wl.spec.priority.has_value()) s->set_priority(*wl.spec.priority);
  for (const core::PodSetSpec& ps : wl.spec.pod_sets) {
    v1::PodSet* p = s->add_pod_sets();
    p->set_name(ps.name);
    p->set_count(ps.count);
    if (ps.min_count.has_value()) p->set_min_count(*ps.min_count);
    for (const auto& [resource, amount] : ps.requests) {
      (*p->mutable_requests())[resource] = core::FormatResourceScalar(resource, amount);
    }
    LabelsToProto(ps.node_selector, p->mutable_node_selector());
    TolerationsToProto(ps.tolerations, p->mutable_tolerations());
    if (ps.topology_request.has_value()) {
      codec::TopologyRequestToProto(*ps.topology_request, p->mutable_topology_request());
    }
    if (const std::vector<core::NodeSelectorTerm>* terms = ps.required_node_affinity()) {
      codec::NodeAffinityToProto(*terms, p->mutable_required_node_affinity());
    }
    if (const std::vector<core::PreferredSchedulingTerm>* terms = ps.preferred_node_affinity()) {
      codec::PreferredNodeAffinityToProto(*terms, p->mutable_preferred_node_affinity());
    }
    if (const std::vector<std::string>* errors = ps.resource_errors()) {
      for (const std::string& error : *errors) p->add_resource_errors(error);
    }
  }
  s->set_active(wl.spec.active);
  s->set_non_preemptible(wl.spec.non_preemptible);
  s->set_checkpoint_grace_seconds(wl.spec.checkpoint_grace_seconds);
  if (wl.spec.maximum_execution_time_seconds.has_value()) {
    s->set_maximum_execution_time_seconds(*wl.spec.maximum_execution_time_seconds);
  }
  if (wl.spec.payload.has_value()) PayloadToProto(*wl.spec.payload, s->mutable_payload());

  const core::WorkloadStatus& st = wl.status;
  v1::WorkloadStatus* ps = out->mutable_status();
  ps->Clear();
  ps->set_state(StateToProto(st.state));
  if (st.admission.has_value()) AdmissionToProto(*st.admission, ps->mutable_admission());
  for (const core::Condition& c : st.conditions) {
    v1::Condition* pc = ps->add_conditions();
    pc->set_type(c.type);
    pc->set_status(c.status ? "True" : "False");
    pc->set_reason(c.reason);
    pc->set_message(c.message);
    if (c.last_transition_time != absl::InfinitePast()) {
      TimeToProto(c.last_transition_time, pc->mutable_last_transition_time());
    }
  }
  ps->set_pending_message(st.pending_message);
  ps->set_priority(wl.priority);
  const core::WorkloadHistory& history = st.history();
  ps->set_preemption_count(history.preemption_count);
  ps->set_last_preemption_reason(history.last_preemption_reason);
  if (history.requeue_count != 0 || history.requeue_at != absl::InfinitePast()) {
    v1::RequeueState* rq = ps->mutable_requeue_state();
    rq->set_count(history.requeue_count);
    if (history.requeue_at != absl::InfinitePast())
      TimeToProto(history.requeue_at, rq->mutable_requeue_at());
  }
  if (st.admission_time != absl::InfinitePast()) {
    TimeToProto(st.admission_time, ps->mutable_admission_time());
  }
  for (const core::WorkloadEvent& e : st.events) {
    v1::WorkloadEvent* pe = ps->add_events();
    if (e.time != absl::InfinitePast()) TimeToProto(e.time, pe->mutable_time());
    pe->set_reason(e.reason);
    pe->set_message(e.message);
  }
  ps->set_pods_ready(st.pods_ready);
  ps->set_deactivated(st.deactivated);
  ps->set_on_hold(st.on_hold);
  ps->set_waiting_for_replacement_pods(st.waiting_for_replacement_pods);
  if (history.evicted_at != absl::InfinitePast())
    TimeToProto(history.evicted_at, ps->mutable_evicted_at());
  if (history.eviction_deadline != absl::InfinitePast()) {
    TimeToProto(history.eviction_deadline, ps->mutable_eviction_deadline());
  }
  if (history.pods_ready_eviction_time != absl::InfinitePast()) {
    TimeToProto(history.pods_ready_eviction_time, ps->mutable_pods_ready_eviction_time());
  }
  for (absl::Time t : history.recent_preemptions) TimeToProto(t, ps->add_recent_preemptions());
  if (history.last_checkpoint_time != absl::InfinitePast()) {
    TimeToProto(history.last_checkpoint_time, ps->mutable_last_checkpoint_time());
  }
  codec::AdmissionCheckStatesToProto(st.admission_checks(), ps->mutable_admission_checks());
  codec::PodSetInfosToProto(st.admitted_pod_sets(), ps->mutable_admitted_pod_sets());
  if (history.past_execution > absl::ZeroDuration()) {
    // Whole seconds by construction (core/workload_lifecycle.cc); int32 as Kueue's field, which
    // holds 68 years.
    ps->set_accumulated_past_execution_time_seconds(static_cast<int32_t>(
        std::min<int64_t>(absl::ToInt64Seconds(history.past_execution), INT32_MAX)));
  }
  for (const auto& [name, count] : history.reclaimable_pods) {
    v1::ReclaimablePod* p = ps->add_reclaimable_pods();
    p->set_name(name);
    p->set_count(count);
  }
  for (const std::string& node : history.unhealthy_nodes) ps->add_unhealthy_nodes(node);
  ps->set_cluster_name(history.cluster_name);
  for (const std::string& name : history.nominated_cluster_names) {
    ps->add_nominated_cluster_names(name);
  }
  ps->set_multi_kueue_winner(history.multi_kueue_winner);
  if (history.job_status.has_value()) {
    PayloadToProto(*history.job_status, ps->mutable_job_status());
  }
  codec::MultiKueueRemotesToProto(history.multi_kueue_remotes, ps->mutable_multi_kueue_remotes());
  if (history.submitted_controls.has_value()) {
    v1::SubmittedControls* c = ps->mutable_submitted_controls();
    c->set_active(history.submitted_controls->active);
    if (history.submitted_controls->priority.has_value()) {
      c->set_priority(*history.submitted_controls->priority);
    }
  }
}

void WorkloadOutcomeToProto(const core::Workload& wl, v1::Workload* out) {
  v1::ObjectMeta* meta = out->mutable_metadata();
  meta->set_name(wl.spec.name);
  meta->set_namespace_(wl.spec.namespace_name);
  const core::WorkloadStatus& st = wl.status;
  v1::WorkloadStatus* ps = out->mutable_status();
  ps->Clear();
  ps->set_state(StateToProto(st.state));
  if (st.admission.has_value()) AdmissionToProto(*st.admission, ps->mutable_admission());
  ps->set_preemption_count(st.history().preemption_count);
  codec::AdmissionCheckStatesToProto(st.admission_checks(), ps->mutable_admission_checks());
}

}  // namespace tollgate::api
