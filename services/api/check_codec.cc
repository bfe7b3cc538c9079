#include "services/api/check_codec.h"

#include <algorithm>
#include <limits>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "core/error_text.h"
#include "core/status_macros.h"
#include "services/api/api_limits.h"
#include "services/api/selector_codec.h"
#include "services/api/workload_codec.h"

namespace tollgate::api {
namespace {

using codec::CheckMaxItems;
using codec::Child;
using codec::EnumValue;
using codec::Index;
using codec::LabelsFromProto;
using codec::LabelsToProto;
using codec::ParseEnum;
using codec::Quote;
using codec::Reporter;
using codec::TimeFromProto;
using codec::TimeToProto;
using codec::TolerationsFromProto;
using codec::TolerationsToProto;
using codec::ValidateAnnotations;
using codec::ValidateName;

constexpr EnumValue<core::CheckState> kCheckStates[] = {
    {"Pending", core::CheckState::kPending},
    {"Ready", core::CheckState::kReady},
    {"Retry", core::CheckState::kRetry},
    {"Rejected", core::CheckState::kRejected},
};

absl::StatusOr<core::CheckState> ParseCheckState(const Reporter& r, absl::string_view path,
                                                 absl::string_view text) {
  if (text.empty())
    return r.Invalid(path,
                     "is required: one of \"Pending\", \"Ready\", "
                     "\"Retry\", \"Rejected\"");
  return ParseEnum(r, path, text, core::CheckState::kPending, kCheckStates);
}

// `merged`: a stored merge (admitted_pod_sets), which also holds the pod set's and the flavors'
// entries, each validated where it came from: the limits on one check's update do not apply.
absl::StatusOr<std::vector<core::PodSetUpdate>> PodSetUpdatesFromProto(
    const Reporter& r, absl::string_view path,
    const google::protobuf::RepeatedPtrField<v1::PodSetUpdate>& updates, bool merged = false) {
  const int max_entries = merged ? std::numeric_limits<int>::max() : kMaxLabels;
  const int max_tolerations =
      merged ? std::numeric_limits<int>::max() : kMaxPodSetUpdateTolerations;
  TOLLGATE_RETURN_IF_ERROR(CheckMaxItems(r, path, updates.size(), kMaxPodSets));
  std::vector<core::PodSetUpdate> out;
  std::set<std::string> names;
  for (int i = 0; i < updates.size(); ++i) {
    const v1::PodSetUpdate& u = updates[i];
    const std::string at = Index(path, static_cast<size_t>(i));
    TOLLGATE_RETURN_IF_ERROR(ValidateName(r, Child(at, "name"), u.name(), /*label=*/true));
    if (!names.insert(u.name()).second) {
      return r.Invalid(Child(at, "name"), absl::StrCat(Quote(u.name()), " is named twice"));
    }
    core::PodSetUpdate update;
    update.name = u.name();
    TOLLGATE_RETURN_IF_ERROR(CheckMaxItems(r, Child(at, "labels"), u.labels_size(), max_entries));
    TOLLGATE_RETURN_IF_ERROR(LabelsFromProto(r, Child(at, "labels"), u.labels(), &update.labels));
    TOLLGATE_RETURN_IF_ERROR(CheckMaxItems(r, Child(at, "annotations"), u.annotations_size(),
                                           merged ? max_entries : kMaxAnnotations));
    TOLLGATE_RETURN_IF_ERROR(ValidateAnnotations(r, Child(at, "annotations"), u.annotations()));
    for (const auto& [key, value] : codec::Sorted(u.annotations())) update.annotations[key] = value;
    TOLLGATE_RETURN_IF_ERROR(
        CheckMaxItems(r, Child(at, "nodeSelector"), u.node_selector_size(), max_entries));
    TOLLGATE_RETURN_IF_ERROR(
        LabelsFromProto(r, Child(at, "nodeSelector"), u.node_selector(), &update.node_selector));
    TOLLGATE_RETURN_IF_ERROR(
        CheckMaxItems(r, Child(at, "tolerations"), u.tolerations_size(), max_tolerations));
    TOLLGATE_ASSIGN_OR_RETURN(update.tolerations,
                              TolerationsFromProto(r, Child(at, "tolerations"), u.tolerations()));
    out.push_back(std::move(update));
  }
  return out;
}

void PodSetUpdatesToProto(const std::vector<core::PodSetUpdate>& updates,
                          google::protobuf::RepeatedPtrField<v1::PodSetUpdate>* out) {
  for (const core::PodSetUpdate& u : updates) {
    v1::PodSetUpdate* p = out->Add();
    p->set_name(u.name);
    LabelsToProto(u.labels, p->mutable_labels());
    LabelsToProto(u.annotations, p->mutable_annotations());
    LabelsToProto(u.node_selector, p->mutable_node_selector());
    TolerationsToProto(u.tolerations, p->mutable_tolerations());
  }
}

}  // namespace

const char* CheckStateToProto(core::CheckState state) { return core::CheckStateName(state); }

absl::StatusOr<core::CheckStateUpdate> CheckStateUpdateFromProto(
    const v1::UpdateAdmissionCheckStateRequest& request) {
  const Reporter r("Workload", request.workload().namespace_(), request.workload().name());
  core::CheckStateUpdate out;
  TOLLGATE_RETURN_IF_ERROR(ValidateName(r, "check", request.check(), /*label=*/false));
  out.check = request.check();
  TOLLGATE_ASSIGN_OR_RETURN(out.state, ParseCheckState(r, "state", request.state()));
  if (request.message().size() > kMaxMessageBytes) {
    return r.Invalid("message", absl::StrCat("is ", request.message().size(),
                                             " bytes, more than the limit of ", kMaxMessageBytes));
  }
  out.message = request.message();
  if (request.has_requeue_after_seconds()) {
    if (request.requeue_after_seconds() < 0) {
      return r.Invalid("requeue_after_seconds",
                       absl::StrCat("must be greater than or equal to 0, got ",
                                    request.requeue_after_seconds()));
    }
    out.requeue_after_seconds = request.requeue_after_seconds();
  }
  TOLLGATE_ASSIGN_OR_RETURN(
      out.pod_set_updates, PodSetUpdatesFromProto(r, "pod_set_updates", request.pod_set_updates()));
  if (!request.cluster_name().empty()) {
    TOLLGATE_RETURN_IF_ERROR(
        ValidateName(r, "cluster_name", request.cluster_name(), /*label=*/false));
    out.cluster_name = request.cluster_name();
  }
  if (request.set_nominated_cluster_names()) {
    std::vector<std::string> nominated;
    for (int i = 0; i < request.nominated_cluster_names_size(); ++i) {
      const std::string& name = request.nominated_cluster_names(i);
      TOLLGATE_RETURN_IF_ERROR(
          ValidateName(r, Index("nominated_cluster_names", static_cast<size_t>(i)), name,
                       /*label=*/false));
      if (std::find(nominated.begin(), nominated.end(), name) != nominated.end()) {
        return r.Invalid(Index("nominated_cluster_names", static_cast<size_t>(i)),
                         absl::StrCat(core::QuoteValue(name), " is named twice"));
      }
      nominated.push_back(name);
    }
    out.nominated_cluster_names = std::move(nominated);
  } else if (request.nominated_cluster_names_size() > 0) {
    return r.Invalid("nominated_cluster_names",
                     "is given without set_nominated_cluster_names; set it to replace the "
                     "nominees");
  }
  if (request.has_job_status()) {
    absl::StatusOr<core::WorkloadPayload> job_status =
        PayloadFromProto("job_status", request.job_status());
    if (!job_status.ok()) return r.Wrap(job_status.status());
    out.job_status = *std::move(job_status);
  }
  if (request.set_multi_kueue_remotes()) {
    TOLLGATE_ASSIGN_OR_RETURN(
        out.multi_kueue_remotes,
        codec::MultiKueueRemotesFromProto(r, "multi_kueue_remotes", request.multi_kueue_remotes()));
  } else if (request.multi_kueue_remotes_size() > 0) {
    return r.Invalid("multi_kueue_remotes",
                     "is given without set_multi_kueue_remotes; set it to replace the list");
  }
  return out;
}

namespace codec {

absl::StatusOr<std::vector<core::MultiKueueRemoteState>> MultiKueueRemotesFromProto(
    const Reporter& r, absl::string_view path,
    const google::protobuf::RepeatedPtrField<v1::MultiKueueRemoteState>& remotes) {
  static constexpr absl::string_view kStates[] = {"Admitted", "Pending", "Evicted",
                                                  "Finished", "NoCopy",  "Unreachable"};
  constexpr int kMaxRemotes = 64;
  TOLLGATE_RETURN_IF_ERROR(CheckMaxItems(r, path, remotes.size(), kMaxRemotes));
  std::vector<core::MultiKueueRemoteState> out;
  std::set<std::string> clusters;
  for (int i = 0; i < remotes.size(); ++i) {
    const v1::MultiKueueRemoteState& remote = remotes[i];
    const std::string at = Index(path, static_cast<size_t>(i));
    TOLLGATE_RETURN_IF_ERROR(
        ValidateName(r, Child(at, "cluster"), remote.cluster(), /*label=*/false));
    if (!clusters.insert(remote.cluster()).second) {
      return r.Invalid(Child(at, "cluster"),
                       absl::StrCat(Quote(remote.cluster()), " is named twice"));
    }
    if (std::find(std::begin(kStates), std::end(kStates), remote.state()) == std::end(kStates)) {
      return r.Invalid(Child(at, "state"),
                       absl::StrCat("unsupported value ", Quote(remote.state()),
                                    ": supported values: \"Admitted\", \"Pending\", "
                                    "\"Evicted\", \"Finished\", \"NoCopy\", \"Unreachable\""));
    }
    out.push_back(core::MultiKueueRemoteState{remote.cluster(), remote.state()});
  }
  std::sort(out.begin(), out.end(),
            [](const core::MultiKueueRemoteState& a, const core::MultiKueueRemoteState& b) {
              return a.cluster < b.cluster;
            });
  return out;
}

void MultiKueueRemotesToProto(const std::vector<core::MultiKueueRemoteState>& remotes,
                              google::protobuf::RepeatedPtrField<v1::MultiKueueRemoteState>* out) {
  for (const core::MultiKueueRemoteState& remote : remotes) {
    v1::MultiKueueRemoteState* p = out->Add();
    p->set_cluster(remote.cluster);
    p->set_state(remote.state);
  }
}

absl::StatusOr<std::vector<core::AdmissionCheckState>> AdmissionCheckStatesFromProto(
    const Reporter& r, const google::protobuf::RepeatedPtrField<v1::AdmissionCheckState>& states) {
  std::vector<core::AdmissionCheckState> out;
  out.reserve(states.size());
  for (int i = 0; i < states.size(); ++i) {
    const v1::AdmissionCheckState& s = states[i];
    const std::string at = Index("status.admissionChecks", static_cast<size_t>(i));
    core::AdmissionCheckState state;
    state.name = s.name();
    TOLLGATE_ASSIGN_OR_RETURN(state.state, ParseCheckState(r, Child(at, "state"), s.state()));
    TOLLGATE_ASSIGN_OR_RETURN(
        state.last_transition_time,
        TimeFromProto(r, Child(at, "lastTransitionTime"), s.has_last_transition_time(),
                      s.last_transition_time()));
    state.message = s.message();
    if (s.has_requeue_after_seconds()) state.requeue_after_seconds = s.requeue_after_seconds();
    state.retry_count = s.retry_count();
    TOLLGATE_ASSIGN_OR_RETURN(
        state.pod_set_updates,
        PodSetUpdatesFromProto(r, Child(at, "podSetUpdates"), s.pod_set_updates()));
    out.push_back(std::move(state));
  }
  return out;
}

void AdmissionCheckStatesToProto(const std::vector<core::AdmissionCheckState>& states,
                                 google::protobuf::RepeatedPtrField<v1::AdmissionCheckState>* out) {
  for (const core::AdmissionCheckState& s : states) {
    v1::AdmissionCheckState* p = out->Add();
    p->set_name(s.name);
    p->set_state(CheckStateToProto(s.state));
    if (s.last_transition_time != absl::InfinitePast()) {
      TimeToProto(s.last_transition_time, p->mutable_last_transition_time());
    }
    p->set_message(s.message);
    if (s.requeue_after_seconds.has_value()) p->set_requeue_after_seconds(*s.requeue_after_seconds);
    // Kueue's retryCount is absent until the first retry.
    if (s.retry_count > 0) p->set_retry_count(s.retry_count);
    PodSetUpdatesToProto(s.pod_set_updates, p->mutable_pod_set_updates());
  }
}

absl::StatusOr<std::vector<core::PodSetInfo>> PodSetInfosFromProto(
    const Reporter& r, const google::protobuf::RepeatedPtrField<v1::PodSetUpdate>& infos) {
  TOLLGATE_ASSIGN_OR_RETURN(std::vector<core::PodSetUpdate> updates,
                            PodSetUpdatesFromProto(r, "status.admittedPodSets", infos,
                                                   /*merged=*/true));
  std::vector<core::PodSetInfo> out;
  for (core::PodSetUpdate& u : updates) {
    out.push_back(core::PodSetInfo{std::move(u.name), std::move(u.labels), std::move(u.annotations),
                                   std::move(u.node_selector), std::move(u.tolerations)});
  }
  return out;
}

void PodSetInfosToProto(const std::vector<core::PodSetInfo>& infos,
                        google::protobuf::RepeatedPtrField<v1::PodSetUpdate>* out) {
  std::vector<core::PodSetUpdate> updates;
  for (const core::PodSetInfo& i : infos) {
    updates.push_back(
        core::PodSetUpdate{i.name, i.labels, i.annotations, i.node_selector, i.tolerations});
  }
  PodSetUpdatesToProto(updates, out);
}

}  // namespace codec
}  // namespace tollgate::api
