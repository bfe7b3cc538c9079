#pragma once

// Codec of quota: resource groups (with Kueue's limits on their shape) and fair-sharing
// weights, shared by ClusterQueue, Cohort and LocalQueue. Internal to services/.

#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "core/types.h"
#include "google/protobuf/repeated_ptr_field.h"
#include "services/api/api_validation.h"
#include "tollgate/v1/objects.pb.h"

namespace tollgate::api::codec {

struct QuotaRules {
  // Borrowing and lending limits need somewhere to borrow from or lend to.
  bool has_parent = false;
  // The field that would provide it, for the message.
  absl::string_view parent_field;
  // Kueue checks lendingLimit <= nominalQuota for ClusterQueues only: a Cohort's nominal quota
  // is an addition to its members', so it may lend more than it holds itself.
  bool lending_within_nominal = false;
};

// `spec.resourceGroups`: each resource and each flavor in one group, every flavor listing its
// group's covered resources in order, within Kueue's CRD limits.
absl::StatusOr<std::vector<core::ResourceGroupSpec>> ResourceGroupsFromProto(
    const Reporter& r, const google::protobuf::RepeatedPtrField<v1::ResourceGroup>& groups,
    const QuotaRules& rules);
void ResourceGroupsToProto(const std::vector<core::ResourceGroupSpec>& groups,
                           google::protobuf::RepeatedPtrField<v1::ResourceGroup>* out);

// A fair-sharing weight: Kueue's default 1 when unset, a non-negative quantity read as a float.
absl::StatusOr<double> FairWeightFromProto(const Reporter& r, absl::string_view path,
                                           const v1::FairSharing& fs);
void FairSharingToProto(double weight, v1::FairSharing* out);

}  // namespace tollgate::api::codec
