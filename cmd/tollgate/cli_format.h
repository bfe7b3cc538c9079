#pragma once

// How the commands show Tollgate's objects in tables and descriptions: state names, quantities,
// flavors, usage tables. Pure functions of the objects.

#include <cstdint>
#include <ostream>
#include <string>

#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "cmd/tollgate/table_printer.h"
#include "google/protobuf/map.h"
#include "tollgate/v1/objects.pb.h"

namespace tollgate::cli {

std::string StateName(v1::WorkloadState state);
// StateName, but "Deactivated" for a pending workload with spec.active false (or deactivated by
// waitForPodsReady's backoffLimitCount).
std::string DisplayState(const v1::Workload& wl);
std::string OrNone(absl::string_view s);
// "namespace/name", with "default" for an empty namespace.
std::string WorkloadKey(const v1::ObjectMeta& meta);
// The LocalQueue a workload names; empty means the namespace's "default".
std::string QueueOf(const v1::Workload& wl);
// A quantity as the server formats usage, so NOMINAL and USED read alike ("128Gi", "32").
std::string CanonicalQuantity(absl::string_view resource, absl::string_view text);
std::string FormatRequests(const google::protobuf::Map<std::string, std::string>& requests);
// "default-flavor (cpu, memory)" per flavor, flavors in name order.
std::string FormatFlavors(const v1::PodSetAssignment& assignment);
std::string FormatTaints(const v1::ResourceFlavorSpec& spec);
// "key=value:Effect,..." or kNone.
std::string FormatTaints(const google::protobuf::RepeatedPtrField<v1::Taint>& taints);
// The status of the ClusterQueue's Active condition, "Unknown" without one.
std::string ActiveOf(const v1::ClusterQueue& cq);
// The STATUS column of queues and namespaces: Terminating (a ClusterQueue or Namespace deleted
// while workloads still hold quota through it), Stopped (a stopPolicy other than None) or
// Active.
std::string ObjectStatusOf(const v1::ObjectMeta& meta, absl::string_view stop_policy = "");
std::string Plural(int64_t n, absl::string_view word);
// "2026-01-01T00:00:00Z (5m ago)".
std::string TimeAndAge(const google::protobuf::Timestamp& t, absl::Time now);
// The usage table of a ClusterQueue: one row per flavor and resource it has quota for, then any
// usage left over in flavors or resources the spec no longer names.
TablePrinter UsageTable(const v1::ClusterQueue& cq);
// POD SET, COUNT, FLAVORS, USAGE of an admission.
void PrintAssignments(std::ostream& out, const v1::Admission& admission, absl::string_view indent);

}  // namespace tollgate::cli
