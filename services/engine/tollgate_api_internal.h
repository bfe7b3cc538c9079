#pragma once

#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "core/cluster_state.h"
#include "tollgate/v1/objects.pb.h"
#include "tollgate/v1/service.pb.h"

// Helpers TollgateApi's source files share (tollgate_api.cc defines them); not for other callers.
namespace tollgate::engine::api_internal {

// The core's key of the workload a request names ("default" when it names no namespace).
std::string WorkloadKeyOf(const v1::WorkloadRef& ref);
// INVALID_ARGUMENT when the ref names no workload.
absl::Status RequireWorkloadRef(const v1::WorkloadRef& ref);
// The workload as the API shows it; `pending_revision` is what a change of this batch commits as.
absl::StatusOr<v1::Workload> WorkloadByKey(const core::ClusterState& state, absl::string_view key,
                                           int64_t pending_revision);
// NOT_FOUND when there is no workload `key`; FAILED_PRECONDITION unless it is at revision
// `expected`, the message ending with `advice`. A change of this batch not yet committed makes
// it newer than any revision a client can have read.
absl::Status RequireWorkloadRevision(const core::ClusterState& state, absl::string_view key,
                                     int64_t expected, int64_t pending_revision,
                                     absl::string_view advice);
// Fills the server-side status of a configuration object from the state.
void FillObjectStatus(const core::ClusterState& state, v1::ConfigObject& object);
// Sets meta.deletion_timestamp when the object is terminating (deleted while in use).
void KeepDeletionTimestamp(const core::ClusterState& state, core::ObjectKind kind,
                           absl::string_view namespace_name, absl::string_view name,
                           v1::ObjectMeta& meta);

}  // namespace tollgate::engine::api_internal
