#pragma once

// Codec of the scheduling constraints shared by several kinds: taints, tolerations, label
// selectors and plain label maps (ResourceFlavor, ClusterQueue, a workload's pod sets).
// Internal to services/.

#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "core/types.h"
#include "google/protobuf/repeated_ptr_field.h"
#include "services/api/api_validation.h"
#include "tollgate/v1/objects.pb.h"

namespace tollgate::api::codec {

// Taints must be unique by (key, effect).
absl::StatusOr<std::vector<core::Taint>> TaintsFromProto(
    const Reporter& r, absl::string_view path,
    const google::protobuf::RepeatedPtrField<v1::Taint>& taints);

// Kueue's CRD rules for tolerations plus Kubernetes' pod validation of keys and values.
absl::StatusOr<std::vector<core::Toleration>> TolerationsFromProto(
    const Reporter& r, absl::string_view path,
    const google::protobuf::RepeatedPtrField<v1::Toleration>& tols);

// Kubernetes' ValidateLabelSelector.
absl::StatusOr<core::LabelSelector> LabelSelectorFromProto(const Reporter& r,
                                                           absl::string_view path,
                                                           const v1::LabelSelector& sel);

void TolerationsToProto(const std::vector<core::Toleration>& tols,
                        google::protobuf::RepeatedPtrField<v1::Toleration>* out);
void LabelsToProto(const core::Labels& labels, StringMap* out);

}  // namespace tollgate::api::codec
