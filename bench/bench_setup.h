#pragma once

// What several benchmarks set up the same way: the one-cpu workloads they submit, the queues
// they apply, the size of one Submit's durable record, filling a store from many threads, and
// Tollgate's executor and API in process over a store being filled.

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "core/real_clock.h"
#include "grpcpp/grpcpp.h"
#include "services/engine/admission_executor.h"
#include "services/engine/tollgate_api.h"
#include "storage/store.h"
#include "tollgate/v1/service.grpc.pb.h"
#include "tollgate/v1/service.pb.h"

namespace tollgate::bench {

// A workload of one pod asking for 1 cpu, in LocalQueue `queue` of namespace `ns`; `priority`
// is set only when given (unset, the workload takes its priority class's, or 0).
v1::Workload OneCpuWorkload(const std::string& ns, const std::string& name,
                            const std::string& queue,
                            std::optional<int32_t> priority = std::nullopt);

// One ClusterQueue covering cpu with `nominal_cpu` of the config's flavor, and its LocalQueue.
struct CpuQueue {
  std::string cluster_queue;
  std::string local_queue;
  std::string nominal_cpu;
};

// Namespace `ns`, ResourceFlavor `flavor`, then each queue's ClusterQueue and LocalQueue (in
// `ns`), in that order.
v1::ApplyRequest CpuQueuesConfig(const std::string& ns, const std::string& flavor,
                                 const std::vector<CpuQueue>& queues);

// Applies `request` through a ConfigService on `channel`.
absl::Status ApplyOverGrpc(const std::shared_ptr<grpc::Channel>& channel,
                           const v1::ApplyRequest& request);

// Submits `workload` through `channel` and returns the size of the workload the server stored:
// one Submit's durable write, which the benchmarks' raw-store floors write as well.
absl::StatusOr<size_t> SubmitRecordBytes(const std::shared_ptr<grpc::Channel>& channel,
                                         const v1::Workload& workload);

// One Submit of `workload` on `stub` with a 30 s deadline, as the load phases send it: an error
// text naming the gRPC code, empty on success.
std::string SubmitOnce(v1::AdmissionService::Stub& stub, const v1::Workload& workload);

// Runs `call(i)` for every i in [begin, end) from `threads` threads, each taking the next index.
// If `progress` is set it is called about every `progress_every` with how far the indices have
// been handed out. INTERNAL naming how many calls failed, and the first failure, if any did.
absl::Status ForEachInParallel(int64_t begin, int64_t end, int threads,
                               const std::function<absl::Status(int64_t)>& call,
                               const std::function<void(int64_t next)>& progress = nullptr,
                               absl::Duration progress_every = absl::Seconds(5));

// Tollgate's executor and API in this process over `store`, with no admission cycles of their
// own (Settle runs them): what a benchmark fills a store through before it measures, so the
// stored workloads stay as submitted. Destroy it before closing the store.
class FillingService {
 public:
  static absl::StatusOr<std::unique_ptr<FillingService>> Open(storage::Store& store);

  engine::TollgateApi& api() { return *api_; }

 private:
  FillingService() = default;

  core::RealClock clock_;
  std::unique_ptr<engine::AdmissionExecutor> executor_;
  std::unique_ptr<engine::TollgateApi> api_;
};

}  // namespace tollgate::bench
