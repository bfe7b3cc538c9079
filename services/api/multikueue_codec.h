#pragma once

// MultiKueue's configuration kinds (MultiKueueConfig, MultiKueueCluster) between the API and the
// core (docs/multicluster.md). The contract (errors name the kind, object, field path and
// value) is services/api/api_codec.h's.

#include <optional>

#include "absl/status/statusor.h"
#include "core/types.h"
#include "core/workload.h"
#include "tollgate/v1/objects.pb.h"

namespace tollgate::api {

// 1 to 20 cluster names, each a valid object name and named once (Kueue's listType=set).
absl::StatusOr<core::MultiKueueConfigSpec> MultiKueueConfigFromProto(
    const v1::MultiKueueConfig& config);
// Exactly one of spec.kubeConfig (location required; locationType "Secret", the default, with a
// Secret's name, or "Path" with an absolute path) and spec.endpoint (host:port with a port;
// caFile required unless insecure, which only a loopback address may be; certFile and keyFile
// together; files as absolute paths). The status is the connection's
// (MultiKueueClusterActiveFromProto).
absl::StatusOr<core::MultiKueueClusterSpec> MultiKueueClusterFromProto(
    const v1::MultiKueueCluster& cluster);
// The stored Active condition of a MultiKueueCluster, if its connection reported one.
absl::StatusOr<std::optional<core::Condition>> MultiKueueClusterActiveFromProto(
    const v1::MultiKueueCluster& cluster);

v1::MultiKueueConfig MultiKueueConfigToProto(const core::MultiKueueConfigSpec& config);
// With the Active condition in status when `active` is set; locationType spelled out.
v1::MultiKueueCluster MultiKueueClusterToProto(const core::MultiKueueClusterSpec& cluster,
                                               const std::optional<core::Condition>& active);

}  // namespace tollgate::api
