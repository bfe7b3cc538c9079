#include "services/stored_workloads.h"

#include <algorithm>
#include <thread>

#include "absl/strings/str_cat.h"
#include "core/status_macros.h"
#include "services/api_codec.h"
#include "tollgate/v1/objects.pb.h"

namespace tollgate::services {

absl::StatusOr<std::vector<core::Workload>> ParseStoredWorkloads(
    const std::vector<std::pair<std::string, std::string>>& stored) {
  std::vector<core::Workload> workloads(stored.size());
  std::vector<absl::Status> errors(stored.size());
  auto parse_range = [&](size_t begin, size_t end) {
    v1::Workload proto;
    for (size_t i = begin; i < end; ++i) {
      const auto& [key, value] = stored[i];
      proto.Clear();
      if (!proto.ParseFromArray(value.data(), static_cast<int>(value.size()))) {
        errors[i] = absl::DataLossError(absl::StrCat("store key ", key, " is not a Workload"));
        continue;
      }
      absl::StatusOr<core::Workload> wl = WorkloadFromStoredProto(proto);
      if (!wl.ok()) {
        errors[i] =
            absl::DataLossError(absl::StrCat("store key ", key, ": ", wl.status().message()));
        continue;
      }
      wl->resource_version = proto.metadata().resource_version();
      workloads[i] = *std::move(wl);
    }
  };
  // Small stores are not worth a thread; large ones split evenly over the cores.
  constexpr size_t kMinPerThread = 16384;
  const size_t threads = std::clamp<size_t>(stored.size() / kMinPerThread, 1,
                                            std::max(1u, std::thread::hardware_concurrency()));
  std::vector<std::thread> helpers;
  const size_t chunk = (stored.size() + threads - 1) / threads;
  for (size_t t = 1; t < threads; ++t) {
    helpers.emplace_back(parse_range, t * chunk, std::min(stored.size(), (t + 1) * chunk));
  }
  parse_range(0, std::min(stored.size(), chunk));
  for (std::thread& helper : helpers) helper.join();
  for (const absl::Status& error : errors) TOLLGATE_RETURN_IF_ERROR(error);
  return workloads;
}

}  // namespace tollgate::services
