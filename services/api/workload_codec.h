#pragma once

// Conversion of workloads between the API and the core: a submitted spec, a stored workload
// with its full status, and back. The contract (validation, errors, defaults) is in
// services/api/api_codec.h.

#include <optional>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "core/workload.h"
#include "google/protobuf/timestamp.pb.h"
#include "tollgate/v1/objects.pb.h"

namespace tollgate::api {

// The spec of a submitted workload. An empty queueName resolves to the namespace's "default"
// LocalQueue and an empty podSet name to Kueue's "main". Status is ignored: a submission cannot
// set it.
absl::StatusOr<core::WorkloadSpec> WorkloadSpecFromProto(const v1::Workload& wl);

// The controlling owner a workload's metadata names (owner_references: at most one entry, with
// controller: true and api_version, kind, name and uid set), or nullopt when none.
// INVALID_ARGUMENT naming the field otherwise.
absl::StatusOr<std::optional<core::WorkloadOwner>> WorkloadOwnerFromProto(const v1::Workload& wl);
absl::StatusOr<core::WorkloadOwner> OwnerReferenceFromProto(absl::string_view path,
                                                            const v1::OwnerReference& ref);
void OwnerReferenceToProto(const core::WorkloadOwner& owner, v1::OwnerReference* out);

// A workload's payload or a job status (v1::WorkloadPayload) at `path` ("spec.payload",
// "job_status"): data at most kMaxPayloadBytes, content_type required with data, each
// descriptive field at most kMaxPayloadFieldBytes. INVALID_ARGUMENT naming the field and what
// was sent otherwise.
absl::StatusOr<core::WorkloadPayload> PayloadFromProto(absl::string_view path,
                                                       const v1::WorkloadPayload& payload);
void PayloadToProto(const core::WorkloadPayload& payload, v1::WorkloadPayload* out);

// A Finished condition's reason given by a client (FinishRequest.reason): empty, or Kubernetes'
// condition reason (a letter, then letters, digits, '_', ',' or ':', not ending in ',' or ':';
// at most 1024 bytes). INVALID_ARGUMENT naming `field` and the value otherwise.
absl::Status ValidateConditionReason(absl::string_view field, absl::string_view reason);

// Inverse of WorkloadToProto, for reloading persisted workloads: spec (validated as on submit),
// uid, creation time, effective priority (status.priority) and the full status. An unset
// timestamp reads as absl::InfinitePast(); WORKLOAD_STATE_UNSPECIFIED reads as pending. The
// core assigns `id` and derives `quota_usage`, so both are left at their defaults.
absl::StatusOr<core::Workload> WorkloadFromStoredProto(const v1::Workload& wl);

// A request's timestamp field; INVALID_ARGUMENT naming `field` when out of range.
absl::StatusOr<absl::Time> RequestTimeFromProto(absl::string_view field,
                                                const google::protobuf::Timestamp& ts);

// Writes metadata name/namespace/uid/creationTimestamp/labels/annotations, the spec and the
// whole status. Other metadata already in `out` (resourceVersion, generation) is kept, so the
// service can fill those before or after. Times equal to absl::InfinitePast() leave their Timestamp
// unset.
void WorkloadToProto(const core::Workload& wl, v1::Workload* out);

// Of WorkloadToProto's fields, only metadata name and namespace, status state, admission,
// preemptionCount and admissionChecks, with the same values: what a trace replay reads of each
// committed change, without converting (and destroying) the whole workload.
void WorkloadOutcomeToProto(const core::Workload& wl, v1::Workload* out);

}  // namespace tollgate::api
