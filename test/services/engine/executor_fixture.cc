#include "test/services/engine/executor_fixture.h"

#include <utility>

namespace tollgate::engine {

v1::ApplyRequest OneQueueApplyRequest(const OneQueueConfig& config) {
  v1::ApplyRequest request;
  request.add_objects()->mutable_resource_flavor()->mutable_metadata()->set_name("default");

  v1::ClusterQueue* cq = request.add_objects()->mutable_cluster_queue();
  cq->mutable_metadata()->set_name("cq");
  v1::ClusterQueueSpec* spec = cq->mutable_spec();
  if (!config.cohort.empty()) spec->set_cohort(config.cohort);
  if (!config.preempt_within_cluster_queue.empty()) {
    spec->mutable_preemption()->set_within_cluster_queue(config.preempt_within_cluster_queue);
  }
  v1::ResourceGroup* group = spec->add_resource_groups();
  group->add_covered_resources("cpu");
  v1::FlavorQuotas* flavor = group->add_flavors();
  flavor->set_name("default");
  v1::ResourceQuota* cpu = flavor->add_resources();
  cpu->set_name("cpu");
  cpu->set_nominal_quota(config.nominal_cpu);
  if (!config.lending_limit.empty()) cpu->set_lending_limit(config.lending_limit);

  for (const std::string& namespace_name : config.namespaces) {
    v1::LocalQueue* lq = request.add_objects()->mutable_local_queue();
    lq->mutable_metadata()->set_name("q");
    lq->mutable_metadata()->set_namespace_(namespace_name);
    lq->mutable_spec()->set_cluster_queue("cq");
  }
  return request;
}

v1::SubmitRequest OnePodSubmitRequest(const std::string& namespace_name, const std::string& name,
                                      const std::string& cpu, std::optional<int32_t> priority) {
  v1::SubmitRequest request;
  v1::Workload* wl = request.mutable_workload();
  wl->mutable_metadata()->set_namespace_(namespace_name);
  wl->mutable_metadata()->set_name(name);
  wl->mutable_spec()->set_queue_name("q");
  if (priority.has_value()) wl->mutable_spec()->set_priority(*priority);
  v1::PodSet* pod_set = wl->mutable_spec()->add_pod_sets();
  pod_set->set_name("main");
  pod_set->set_count(1);
  (*pod_set->mutable_requests())["cpu"] = cpu;
  return request;
}

absl::Status ExecutorFixture::Open(AdmissionExecutor::Options options,
                                   core::SchedulerConfig config) {
  Close();
  absl::StatusOr<std::unique_ptr<AdmissionExecutor>> opened =
      AdmissionExecutor::Open(store, clock, std::move(config), std::move(options));
  if (!opened.ok()) return opened.status();
  executor = *std::move(opened);
  api = std::make_unique<TollgateApi>(*executor);
  return absl::OkStatus();
}

void ExecutorFixture::Close() {
  executor.reset();
  api.reset();
}

absl::Status ExecutorFixture::ApplyOneQueue(const OneQueueConfig& config) {
  return api->Apply(OneQueueApplyRequest(config)).status();
}

AdmissionExecutor::Options SettleByHand() {
  AdmissionExecutor::Options options;
  options.schedule_continuously = false;
  return options;
}

}  // namespace tollgate::engine
