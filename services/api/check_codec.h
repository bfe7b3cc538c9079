#pragma once

// Admission checks on the wire (docs/admission-checks.md): a workload's check states as stored
// and served, and a check controller's update request, validated into the core's model. The
// contract (errors name the field and the value) is services/api/api_codec.h's.

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "core/cluster_state.h"
#include "core/workload.h"
#include "google/protobuf/repeated_ptr_field.h"
#include "services/api/api_validation.h"
#include "tollgate/v1/objects.pb.h"
#include "tollgate/v1/service.pb.h"

namespace tollgate::api {

// Kueue's state names: "Pending", "Ready", "Retry", "Rejected".
const char* CheckStateToProto(core::CheckState state);

// A controller's update, validated: the check's name, a known state, a delay that is not
// negative, podSetUpdates with valid pod set names, label and annotation keys and values,
// node selectors and tolerations (at most one entry per pod set). The workload's own rules
// (which checks it carries, which pod sets it has, conflicts) are the core's.
// expected_revision is the caller's to check. INVALID_ARGUMENT naming the request field.
absl::StatusOr<core::CheckStateUpdate> CheckStateUpdateFromProto(
    const v1::UpdateAdmissionCheckStateRequest& request);

namespace codec {

// MultiKueue's remote copies' states (status.multi_kueue_remotes, or a check controller's
// UpdateAdmissionCheckState.multi_kueue_remotes) at `path`: each cluster a valid name, once;
// each state one of Admitted, Pending, Evicted, Finished, NoCopy, Unreachable; at most 64.
// Sorted by cluster. INVALID_ARGUMENT naming the field and the value otherwise.
absl::StatusOr<std::vector<core::MultiKueueRemoteState>> MultiKueueRemotesFromProto(
    const Reporter& r, absl::string_view path,
    const google::protobuf::RepeatedPtrField<v1::MultiKueueRemoteState>& remotes);
void MultiKueueRemotesToProto(const std::vector<core::MultiKueueRemoteState>& remotes,
                              google::protobuf::RepeatedPtrField<v1::MultiKueueRemoteState>* out);

absl::StatusOr<std::vector<core::AdmissionCheckState>> AdmissionCheckStatesFromProto(
    const Reporter& r, const google::protobuf::RepeatedPtrField<v1::AdmissionCheckState>& states);
void AdmissionCheckStatesToProto(const std::vector<core::AdmissionCheckState>& states,
                                 google::protobuf::RepeatedPtrField<v1::AdmissionCheckState>* out);
absl::StatusOr<std::vector<core::PodSetInfo>> PodSetInfosFromProto(
    const Reporter& r, const google::protobuf::RepeatedPtrField<v1::PodSetUpdate>& infos);
void PodSetInfosToProto(const std::vector<core::PodSetInfo>& infos,
                        google::protobuf::RepeatedPtrField<v1::PodSetUpdate>* out);

}  // namespace codec
}  // namespace tollgate::api
