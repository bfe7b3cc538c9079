#pragma once

#include <string>

#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"

// The store's key layout. Keys are plain text so `ldb scan` output is readable:
//   o/<Kind>/<name>              cluster-scoped configuration objects (serialized ConfigObject)
//   o/LocalQueue/<ns>/<name>     LocalQueues
//   w/<ns>/<name>                workloads (serialized Workload, spec and status)
//   n/<name>                     nodes of the topology inventory (serialized Node)
//   p/<name>                     pods Tollgate does not place (serialized NodePod)
//   u/<ns>/<name>                a LocalQueue's admission-fair-sharing usage (resource=value lines)
// The change log holds serialized WatchEvents of workloads, one batch per revision.
namespace tollgate::engine {

inline constexpr absl::string_view kObjectPrefix = "o/";
inline constexpr absl::string_view kWorkloadPrefix = "w/";
inline constexpr absl::string_view kNodePrefix = "n/";
inline constexpr absl::string_view kNodePodPrefix = "p/";
inline constexpr absl::string_view kFairUsagePrefix = "u/";

inline std::string ObjectKey(absl::string_view kind, absl::string_view namespace_name,
                             absl::string_view name) {
  if (namespace_name.empty()) return absl::StrCat(kObjectPrefix, kind, "/", name);
  return absl::StrCat(kObjectPrefix, kind, "/", namespace_name, "/", name);
}

inline std::string WorkloadStoreKey(absl::string_view namespace_name, absl::string_view name) {
  return absl::StrCat(kWorkloadPrefix, namespace_name, "/", name);
}

inline std::string NodeStoreKey(absl::string_view name) { return absl::StrCat(kNodePrefix, name); }

inline std::string NodePodStoreKey(absl::string_view name) {
  return absl::StrCat(kNodePodPrefix, name);
}

// `local_queue_key` is core::LocalQueueKey's "namespace/name".
inline std::string FairUsageStoreKey(absl::string_view local_queue_key) {
  return absl::StrCat(kFairUsagePrefix, local_queue_key);
}

}  // namespace tollgate::engine
