#include "bench/bench_setup.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <thread>

#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "absl/synchronization/notification.h"
#include "core/status_macros.h"
#include "tollgate/v1/service.grpc.pb.h"

namespace tollgate::bench {

v1::Workload OneCpuWorkload(const std::string& ns, const std::string& name,
                            const std::string& queue, std::optional<int32_t> priority) {
  v1::Workload wl;
  wl.mutable_metadata()->set_name(name);
  wl.mutable_metadata()->set_namespace_(ns);
  wl.mutable_spec()->set_queue_name(queue);
  if (priority.has_value()) wl.mutable_spec()->set_priority(*priority);
  v1::PodSet* ps = wl.mutable_spec()->add_pod_sets();
  ps->set_name("main");
  ps->set_count(1);
  (*ps->mutable_requests())["cpu"] = "1";
  return wl;
}

v1::ApplyRequest CpuQueuesConfig(const std::string& ns, const std::string& flavor,
                                 const std::vector<CpuQueue>& queues) {
  v1::ApplyRequest request;
  request.add_objects()->mutable_namespace_()->mutable_metadata()->set_name(ns);
  request.add_objects()->mutable_resource_flavor()->mutable_metadata()->set_name(flavor);
  for (const CpuQueue& queue : queues) {
    v1::ClusterQueue* cq = request.add_objects()->mutable_cluster_queue();
    cq->mutable_metadata()->set_name(queue.cluster_queue);
    v1::ResourceGroup* group = cq->mutable_spec()->add_resource_groups();
    group->add_covered_resources("cpu");
    v1::FlavorQuotas* flavor_quotas = group->add_flavors();
    flavor_quotas->set_name(flavor);
    v1::ResourceQuota* quota = flavor_quotas->add_resources();
    quota->set_name("cpu");
    quota->set_nominal_quota(queue.nominal_cpu);
    v1::LocalQueue* lq = request.add_objects()->mutable_local_queue();
    lq->mutable_metadata()->set_name(queue.local_queue);
    lq->mutable_metadata()->set_namespace_(ns);
    lq->mutable_spec()->set_cluster_queue(queue.cluster_queue);
  }
  return request;
}

absl::Status ApplyOverGrpc(const std::shared_ptr<grpc::Channel>& channel,
                           const v1::ApplyRequest& request) {
  std::unique_ptr<v1::ConfigService::Stub> stub = v1::ConfigService::NewStub(channel);
  grpc::ClientContext context;
  v1::ApplyResponse response;
  grpc::Status status = stub->Apply(&context, request, &response);
  if (!status.ok()) return absl::UnavailableError(absl::StrCat("Apply: ", status.error_message()));
  return absl::OkStatus();
}

absl::StatusOr<size_t> SubmitRecordBytes(const std::shared_ptr<grpc::Channel>& channel,
                                         const v1::Workload& workload) {
  std::unique_ptr<v1::AdmissionService::Stub> stub = v1::AdmissionService::NewStub(channel);
  grpc::ClientContext context;
  v1::SubmitRequest request;
  *request.mutable_workload() = workload;
  v1::SubmitResponse response;
  grpc::Status status = stub->Submit(&context, request, &response);
  if (!status.ok()) {
    return absl::UnavailableError(absl::StrCat("Submit: ", status.error_message()));
  }
  return response.workload().ByteSizeLong();
}

std::string SubmitOnce(v1::AdmissionService::Stub& stub, const v1::Workload& workload) {
  grpc::ClientContext context;
  context.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(30));
  v1::SubmitRequest request;
  *request.mutable_workload() = workload;
  v1::SubmitResponse response;
  grpc::Status s = stub.Submit(&context, request, &response);
  return s.ok() ? "" : absl::StrCat(s.error_code(), " ", s.error_message());
}

absl::Status ForEachInParallel(int64_t begin, int64_t end, int threads,
                               const std::function<absl::Status(int64_t)>& call,
                               const std::function<void(int64_t next)>& progress,
                               absl::Duration progress_every) {
  std::atomic<int64_t> next{begin};
  std::atomic<int64_t> failures{0};
  absl::Mutex mu;
  absl::Status first_failure;
  std::vector<std::thread> pool;
  for (int t = 0; t < threads; ++t) {
    pool.emplace_back([&] {
      for (int64_t i = next.fetch_add(1); i < end; i = next.fetch_add(1)) {
        absl::Status status = call(i);
        if (status.ok()) continue;
        if (failures.fetch_add(1) == 0) {
          absl::MutexLock lock(&mu);
          first_failure = std::move(status);
        }
      }
    });
  }
  absl::Notification done;
  std::thread reporter;
  if (progress != nullptr) {
    reporter = std::thread([&] {
      while (!done.WaitForNotificationWithTimeout(progress_every)) {
        progress(std::min(next.load(), end));
      }
    });
  }
  for (std::thread& t : pool) t.join();
  done.Notify();
  if (reporter.joinable()) reporter.join();
  if (failures.load() > 0) {
    absl::MutexLock lock(&mu);
    return absl::InternalError(
        absl::StrCat(failures.load(), " calls failed; the first: ", first_failure.ToString()));
  }
  return absl::OkStatus();
}

absl::StatusOr<std::unique_ptr<FillingService>> FillingService::Open(storage::Store& store) {
  std::unique_ptr<FillingService> service(new FillingService());
  engine::AdmissionExecutor::Options options;
  options.schedule_continuously = false;
  TOLLGATE_ASSIGN_OR_RETURN(
      service->executor_,
      engine::AdmissionExecutor::Open(store, service->clock_, core::SchedulerConfig{}, options));
  service->api_ = std::make_unique<engine::TollgateApi>(*service->executor_);
  return service;
}

}  // namespace tollgate::bench
