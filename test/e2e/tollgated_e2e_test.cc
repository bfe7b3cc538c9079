// End-to-end tests: the real tollgated binary on loopback, driven over gRPC the way adapters and
// operators drive it. Every wait is on a condition with a deadline.

#include <stdlib.h>

#include <atomic>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iostream>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/substitute.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "common/file_util.h"
#include "google/protobuf/text_format.h"
#include "grpcpp/grpcpp.h"
#include "gtest/gtest.h"
#include "test/e2e/e2e_support.h"
#include "test/e2e/tollgated_process.h"
#include "test/status_matchers.h"
#include "test/support/scratch_dir.h"
#include "tollgate/v1/service.grpc.pb.h"

namespace tollgate::e2e {
namespace {

constexpr absl::Duration kEventTimeout = absl::Seconds(30);

template <typename T>
T ParseText(const std::string& text) {
  T message;
  EXPECT_TRUE(google::protobuf::TextFormat::ParseFromString(text, &message)) << text;
  return message;
}

// A ResourceFlavor, ClusterQueue "cq" with `nominal_cpu` of cpu, and LocalQueue team/q.
v1::ApplyRequest QueueConfig(const std::string& nominal_cpu) {
  return ParseText<v1::ApplyRequest>(
      absl::Substitute(R"pb(
                         objects { resource_flavor { metadata { name: "default-flavor" } } }
                         objects {
                           cluster_queue {
                             metadata { name: "cq" }
                             spec {
                               resource_groups {
                                 covered_resources: "cpu"
                                 flavors {
                                   name: "default-flavor"
                                   resources { name: "cpu" nominal_quota: "$0" }
                                 }
                               }
                             }
                           }
                         }
                         objects {
                           local_queue {
                             metadata { name: "q" namespace: "team" }
                             spec { cluster_queue: "cq" }
                           }
                         }
                       )pb",
                       nominal_cpu));
}

v1::Workload MakeWorkload(const std::string& ns, const std::string& name, const std::string& queue,
                          const std::string& cpu) {
  v1::Workload workload;
  workload.mutable_metadata()->set_namespace_(ns);
  workload.mutable_metadata()->set_name(name);
  workload.mutable_spec()->set_queue_name(queue);
  v1::PodSet* pod_set = workload.mutable_spec()->add_pod_sets();
  pod_set->set_name("main");
  pod_set->set_count(1);
  (*pod_set->mutable_requests())["cpu"] = cpu;
  return workload;
}

v1::WorkloadRef Ref(const std::string& ns, const std::string& name) {
  v1::WorkloadRef ref;
  ref.set_namespace_(ns);
  ref.set_name(name);
  return ref;
}

// Reads a Watch stream on its own thread and keeps every event, so a test can wait for the
// events it expects as a condition.
class WatchReader {
 public:
  WatchReader(v1::AdmissionService::Stub& stub, const v1::WatchRequest& request) {
    stream_ = stub.Watch(&context_, request);
    thread_ = std::thread([this] {
      v1::WatchEvent event;
      while (stream_->Read(&event)) {
        absl::MutexLock lock(&mu_);
        events_.push_back(event);
      }
      grpc::Status status = stream_->Finish();
      absl::MutexLock lock(&mu_);
      status_ = std::move(status);
      done_ = true;
    });
  }
  ~WatchReader() {
    context_.TryCancel();
    thread_.join();
  }

  // Waits until `done(events)` holds; returns the events seen, or the deadline's error.
  absl::StatusOr<std::vector<v1::WatchEvent>> AwaitEvents(
      const std::function<bool(const std::vector<v1::WatchEvent>&)>& done,
      absl::Duration timeout = kEventTimeout) {
    absl::MutexLock lock(&mu_);
    auto ready = [&]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) { return done_ || done(events_); };
    mu_.AwaitWithTimeout(absl::Condition(&ready), timeout);
    if (!done(events_)) {
      std::string seen;
      for (const v1::WatchEvent& event : events_) {
        absl::StrAppend(&seen, "\n  ", v1::WatchEvent::Type_Name(event.type()), " r",
                        event.revision(), " ", event.workload().metadata().name(), " ",
                        v1::WorkloadState_Name(event.workload().status().state()));
      }
      return absl::DeadlineExceededError(absl::StrCat(
          "expected events not seen",
          done_ ? absl::StrCat(" (stream ended: ", Describe(status_), ")") : "", "; seen:", seen));
    }
    return events_;
  }

  // Waits for the stream to end; returns its status.
  absl::StatusOr<grpc::Status> AwaitEnd(absl::Duration timeout = kEventTimeout) {
    absl::MutexLock lock(&mu_);
    if (!mu_.AwaitWithTimeout(absl::Condition(&done_), timeout)) {
      return absl::DeadlineExceededError("watch stream did not end");
    }
    return status_;
  }

 private:
  grpc::ClientContext context_;
  std::unique_ptr<grpc::ClientReader<v1::WatchEvent>> stream_;
  absl::Mutex mu_;
  std::vector<v1::WatchEvent> events_ ABSL_GUARDED_BY(mu_);
  bool done_ ABSL_GUARDED_BY(mu_) = false;
  grpc::Status status_ ABSL_GUARDED_BY(mu_);
  std::thread thread_;
};

// Events about one workload, in stream order.
std::vector<v1::WatchEvent> EventsFor(const std::vector<v1::WatchEvent>& events,
                                      const std::string& name) {
  std::vector<v1::WatchEvent> out;
  for (const v1::WatchEvent& event : events) {
    if (event.type() != v1::WatchEvent::BOOKMARK && event.workload().metadata().name() == name) {
      out.push_back(event);
    }
  }
  return out;
}

bool HasEvent(const std::vector<v1::WatchEvent>& events, const std::string& name,
              v1::WatchEvent::Type type, v1::WorkloadState state = v1::WORKLOAD_STATE_UNSPECIFIED) {
  for (const v1::WatchEvent& event : EventsFor(events, name)) {
    if (event.type() == type &&
        (state == v1::WORKLOAD_STATE_UNSPECIFIED || event.workload().status().state() == state)) {
      return true;
    }
  }
  return false;
}

// One scratch directory per test (removed afterwards) holding the data dir, port files and
// tollgated's logs.
class TollgatedTest : public testing::Test {
 protected:
  static void SetUpTestSuite() {
    // On SIGTERM tollgated sends GOAWAY and waits for the client's transport to acknowledge it.
    // An idle synchronous client only reads its socket when gRPC's backup poller runs, every 5 s
    // by default, which would add 5 s to every restart here. Set before the first channel
    // initializes gRPC; an explicit setting in the environment wins.
    setenv("GRPC_CLIENT_CHANNEL_BACKUP_POLL_INTERVAL_MS", "50", /*overwrite=*/0);
  }

  void SetUp() override {
    ASSERT_OK_AND_ASSIGN(scratch_, test_support::MakeScratchDir("tollgate_e2e"));
    data_dir_ = scratch_ + "/data";
  }

  void TearDown() override {
    if (server_ != nullptr && HasFailure()) {
      std::cerr << "tollgated log:\n" << server_->Logs();
    }
    server_.reset();
    test_support::RemoveScratchDir(scratch_);
  }

  void StartServer(const std::vector<std::string>& extra_args = {}) {
    server_.reset();
    ASSERT_OK_AND_ASSIGN(server_, TollgatedProcess::Start(data_dir_, scratch_, extra_args));
    admission_ = v1::AdmissionService::NewStub(server_->channel());
    config_ = v1::ConfigService::NewStub(server_->channel());
  }

  grpc::Status Submit(const v1::Workload& workload, v1::SubmitResponse* response) {
    v1::SubmitRequest request;
    *request.mutable_workload() = workload;
    return admission_->Submit(Context().get(), request, response);
  }

  grpc::Status Get(const std::string& ns, const std::string& name, v1::Workload* workload) {
    v1::GetWorkloadRequest request;
    *request.mutable_workload() = Ref(ns, name);
    return admission_->GetWorkload(Context().get(), request, workload);
  }

  std::string scratch_;
  std::string data_dir_;
  std::unique_ptr<TollgatedProcess> server_;
  std::unique_ptr<v1::AdmissionService::Stub> admission_;
  std::unique_ptr<v1::ConfigService::Stub> config_;
};

TEST_F(TollgatedTest, HealthServingAndReflectionListsServices) {
  ASSERT_NO_FATAL_FAILURE(StartServer());

  ASSERT_OK_AND_ASSIGN(std::string health, CheckHealth(server_->channel(), kRpcTimeout));
  EXPECT_EQ(health, "SERVING");

  ASSERT_OK_AND_ASSIGN(std::vector<std::string> services,
                       ListServicesByReflection(server_->channel(), kRpcTimeout));
  const std::set<std::string> listed(services.begin(), services.end());
  for (const char* want : {"tollgate.v1.AdmissionService", "tollgate.v1.ConfigService",
                           "tollgate.v1.VisibilityService", "grpc.health.v1.Health"}) {
    EXPECT_TRUE(listed.count(want)) << want << " not listed by reflection";
  }
}

TEST_F(TollgatedTest, WorkloadLifecycleOverGrpc) {
  ASSERT_NO_FATAL_FAILURE(StartServer());

  v1::ApplyResponse applied;
  ASSERT_GRPC_OK(config_->Apply(Context().get(), QueueConfig("4"), &applied));
  EXPECT_EQ(applied.objects_size(), 3);
  EXPECT_GT(applied.revision(), 0);
  v1::ListObjectsRequest list_queues;
  list_queues.set_kind(v1::LOCAL_QUEUE);
  list_queues.set_namespace_("team");
  v1::ListObjectsResponse queues;
  ASSERT_GRPC_OK(config_->List(Context().get(), list_queues, &queues));
  ASSERT_EQ(queues.objects_size(), 1);
  EXPECT_EQ(queues.objects(0).local_queue().spec().cluster_queue(), "cq");

  // A workload that exists before the watch starts: its ADDED event proves the watch has taken
  // its initial snapshot, so everything submitted afterwards arrives as changes.
  v1::SubmitResponse submitted;
  ASSERT_GRPC_OK(Submit(MakeWorkload("team", "early", "q", "1"), &submitted));
  EXPECT_TRUE(submitted.created());
  v1::WatchRequest watch_request;
  watch_request.set_since_revision(0);
  WatchReader watch(*admission_, watch_request);
  ASSERT_TRUE(watch
                  .AwaitEvents([](const std::vector<v1::WatchEvent>& events) {
                    return HasEvent(events, "early", v1::WatchEvent::ADDED);
                  })
                  .ok());

  ASSERT_GRPC_OK(Submit(MakeWorkload("team", "job", "q", "2"), &submitted));
  EXPECT_TRUE(submitted.created());
  EXPECT_EQ(submitted.workload().metadata().name(), "job");
  ASSERT_OK_AND_ASSIGN(std::vector<v1::WatchEvent> events,
                       watch.AwaitEvents([](const std::vector<v1::WatchEvent>& events) {
                         return HasEvent(events, "job", v1::WatchEvent::MODIFIED,
                                         v1::WORKLOAD_STATE_ADMITTED);
                       }));
  std::vector<v1::WatchEvent> job_events = EventsFor(events, "job");
  ASSERT_GE(job_events.size(), 2u);
  EXPECT_EQ(job_events[0].type(), v1::WatchEvent::ADDED);
  EXPECT_EQ(job_events[0].workload().status().state(), v1::WORKLOAD_STATE_PENDING);
  EXPECT_EQ(job_events.back().type(), v1::WatchEvent::MODIFIED);
  for (size_t i = 1; i < job_events.size(); ++i) {
    EXPECT_GT(job_events[i].revision(), job_events[i - 1].revision());
  }

  v1::Workload job;
  ASSERT_GRPC_OK(Get("team", "job", &job));
  EXPECT_EQ(job.status().state(), v1::WORKLOAD_STATE_ADMITTED);
  EXPECT_EQ(job.status().admission().cluster_queue(), "cq");

  v1::ListWorkloadsRequest list_request;
  list_request.set_namespace_("team");
  v1::ListWorkloadsResponse listed;
  ASSERT_GRPC_OK(admission_->ListWorkloads(Context().get(), list_request, &listed));
  EXPECT_GT(listed.revision(), 0);
  std::set<std::string> names;
  for (const v1::Workload& wl : listed.workloads()) names.insert(wl.metadata().name());
  EXPECT_EQ(names, (std::set<std::string>{"early", "job"}));

  v1::FinishRequest finish;
  *finish.mutable_workload() = Ref("team", "job");
  finish.set_message("Job succeeded");
  v1::FinishResponse finished;
  ASSERT_GRPC_OK(admission_->Finish(Context().get(), finish, &finished));
  EXPECT_EQ(finished.workload().status().state(), v1::WORKLOAD_STATE_FINISHED);

  v1::DeleteWorkloadRequest delete_request;
  *delete_request.mutable_workload() = Ref("team", "job");
  v1::DeleteWorkloadResponse deleted;
  ASSERT_GRPC_OK(admission_->DeleteWorkload(Context().get(), delete_request, &deleted));
  EXPECT_TRUE(watch
                  .AwaitEvents([](const std::vector<v1::WatchEvent>& events) {
                    return HasEvent(events, "job", v1::WatchEvent::DELETED);
                  })
                  .ok());
  EXPECT_EQ(Get("team", "job", &job).error_code(), grpc::StatusCode::NOT_FOUND);
  EXPECT_EQ(admission_->Finish(Context().get(), finish, &finished).error_code(),
            grpc::StatusCode::NOT_FOUND);

  // A workload that can never fit stays pending, and finishing it is refused.
  ASSERT_GRPC_OK(Submit(MakeWorkload("team", "too-big", "q", "100"), &submitted));
  *finish.mutable_workload() = Ref("team", "too-big");
  EXPECT_EQ(admission_->Finish(Context().get(), finish, &finished).error_code(),
            grpc::StatusCode::FAILED_PRECONDITION);

  // SIGTERM ends the open watch with UNAVAILABLE (not a clean end of stream) and exits 0.
  ASSERT_OK_AND_ASSIGN(int exit_code, server_->Terminate());
  EXPECT_EQ(exit_code, 0) << server_->Logs();
  ASSERT_OK_AND_ASSIGN(grpc::Status watch_end, watch.AwaitEnd());
  EXPECT_EQ(watch_end.error_code(), grpc::StatusCode::UNAVAILABLE) << Describe(watch_end);
  const std::string logs = server_->Logs();
  EXPECT_TRUE(absl::StrContains(logs, R"("level":"info","msg":"serving")")) << logs;
  EXPECT_TRUE(absl::StrContains(logs, R"("msg":"stopped")")) << logs;
}

TEST_F(TollgatedTest, BadQuantityIsInvalidArgumentNamingTheValue) {
  ASSERT_NO_FATAL_FAILURE(StartServer());
  v1::ApplyResponse applied;
  grpc::Status status = config_->Apply(Context().get(), QueueConfig("lots"), &applied);
  EXPECT_EQ(status.error_code(), grpc::StatusCode::INVALID_ARGUMENT) << Describe(status);
  EXPECT_TRUE(absl::StrContains(status.error_message(), "\"lots\"")) << status.error_message();

  ASSERT_GRPC_OK(config_->Apply(Context().get(), QueueConfig("4"), &applied));
  v1::SubmitResponse submitted;
  status = Submit(MakeWorkload("team", "bad", "q", "12 cores"), &submitted);
  EXPECT_EQ(status.error_code(), grpc::StatusCode::INVALID_ARGUMENT) << Describe(status);
  EXPECT_TRUE(absl::StrContains(status.error_message(), "\"12 cores\"")) << status.error_message();
  v1::Workload workload;
  EXPECT_EQ(Get("team", "bad", &workload).error_code(), grpc::StatusCode::NOT_FOUND);
}

TEST_F(TollgatedTest, SubmitIsIdempotentForTheSameSpecOnly) {
  ASSERT_NO_FATAL_FAILURE(StartServer());
  v1::ApplyResponse applied;
  ASSERT_GRPC_OK(config_->Apply(Context().get(), QueueConfig("4"), &applied));

  const v1::Workload workload = MakeWorkload("team", "retried", "q", "1");
  v1::SubmitResponse first;
  ASSERT_GRPC_OK(Submit(workload, &first));
  EXPECT_TRUE(first.created());
  v1::SubmitResponse second;
  ASSERT_GRPC_OK(Submit(workload, &second));
  EXPECT_FALSE(second.created());
  EXPECT_EQ(second.workload().metadata().uid(), first.workload().metadata().uid());

  v1::SubmitResponse changed;
  grpc::Status status = Submit(MakeWorkload("team", "retried", "q", "2"), &changed);
  EXPECT_EQ(status.error_code(), grpc::StatusCode::ALREADY_EXISTS) << Describe(status);

  v1::ListWorkloadsRequest list_request;
  list_request.set_namespace_("team");
  v1::ListWorkloadsResponse listed;
  ASSERT_GRPC_OK(admission_->ListWorkloads(Context().get(), list_request, &listed));
  ASSERT_EQ(listed.workloads_size(), 1);
  EXPECT_EQ(listed.workloads(0).spec().pod_sets(0).requests().at("cpu"), "1");
}

TEST_F(TollgatedTest, ManifestsApplyAtStartAndSurviveRestart) {
  const std::string workload_manifest = scratch_ + "/workload.yaml";
  std::ofstream(workload_manifest) << R"(apiVersion: kueue.x-k8s.io/v1beta1
kind: Workload
metadata: {name: seeded, namespace: crash}
spec:
  queueName: crash-q
  podSets:
  - name: main
    count: 1
    template: {spec: {containers: [{name: c, resources: {requests: {cpu: "1"}}}]}}
)";
  const std::string manifests =
      absl::StrCat("--manifests=", QueuesManifest(), ",", workload_manifest);
  ASSERT_NO_FATAL_FAILURE(StartServer({manifests}));
  v1::GetObjectRequest get_cq;
  get_cq.mutable_ref()->set_kind(v1::CLUSTER_QUEUE);
  get_cq.mutable_ref()->set_name("crash-cq");
  v1::ConfigObject cq;
  ASSERT_GRPC_OK(config_->Get(Context().get(), get_cq, &cq));
  EXPECT_EQ(cq.cluster_queue().metadata().name(), "crash-cq");
  v1::Workload seeded;
  ASSERT_GRPC_OK(Get("crash", "seeded", &seeded));

  // The same manifests again on restart: the workload is a retried submit, not a conflict.
  ASSERT_OK_AND_ASSIGN(int exit_code, server_->Terminate());
  EXPECT_EQ(exit_code, 0);
  ASSERT_NO_FATAL_FAILURE(StartServer({manifests}));
  v1::Workload again;
  ASSERT_GRPC_OK(Get("crash", "seeded", &again));
  EXPECT_EQ(again.metadata().uid(), seeded.metadata().uid());
}

TEST_F(TollgatedTest, BadManifestFailsStartupWithTheError) {
  const std::string bad = scratch_ + "/bad.yaml";
  std::ofstream(bad) << R"(apiVersion: kueue.x-k8s.io/v1beta1
kind: ClusterQueue
metadata: {name: broken}
spec:
  resourceGroups:
  - coveredResources: [cpu]
    flavors: [{name: default-flavor, resources: [{name: cpu, nominalQuota: "lots"}]}]
)";
  const std::string log_path = scratch_ + "/bad.log";
  ASSERT_OK_AND_ASSIGN(
      int exit_code,
      TollgatedProcess::RunToExit(
          {"--listen=127.0.0.1:0", "--data-dir=" + data_dir_, "--manifests=" + bad}, log_path));
  EXPECT_NE(exit_code, 0);
  const std::string logs = common::ReadFileToString(log_path).value_or("");
  EXPECT_TRUE(absl::StrContains(logs, R"("level":"error")")) << logs;
  EXPECT_TRUE(absl::StrContains(logs, "bad.yaml")) << logs;
  EXPECT_TRUE(absl::StrContains(logs, "lots")) << logs;
}

// Kills tollgated with SIGKILL while eight clients submit, then restarts it on the same data:
// every Submit that returned OK must be there exactly once, and nothing that was never
// submitted may appear. Calls in flight at the kill may land either way.
// Cooperative preemption: among equal-priority victims, the one that reported the most recent
// checkpoint loses the least work and goes first, overriding Kueue's "most recently admitted".
TEST_F(TollgatedTest, ReportedCheckpointMakesTheCheaperVictimGoFirst) {
  ASSERT_NO_FATAL_FAILURE(StartServer());
  v1::ApplyRequest config = QueueConfig("4");
  config.mutable_objects(1)
      ->mutable_cluster_queue()
      ->mutable_spec()
      ->mutable_preemption()
      ->set_within_cluster_queue("LowerPriority");
  v1::ApplyResponse applied;
  ASSERT_GRPC_OK(config_->Apply(Context().get(), config, &applied));
  v1::WatchRequest watch_request;
  WatchReader watch(*admission_, watch_request);
  // The watch's initial snapshot may already show a workload admitted (as ADDED).
  auto admitted = [](const std::string& name) {
    return [name](const std::vector<v1::WatchEvent>& events) {
      return HasEvent(events, name, v1::WatchEvent::ADDED, v1::WORKLOAD_STATE_ADMITTED) ||
             HasEvent(events, name, v1::WatchEvent::MODIFIED, v1::WORKLOAD_STATE_ADMITTED);
    };
  };

  v1::SubmitResponse submitted;
  for (const char* name : {"older", "newer"}) {
    ASSERT_GRPC_OK(Submit(MakeWorkload("team", name, "q", "2"), &submitted));
    ASSERT_TRUE(watch.AwaitEvents(admitted(name)).ok());
  }

  v1::ReportCheckpointRequest checkpoint;
  v1::ReportCheckpointResponse reported;
  *checkpoint.mutable_workload() = Ref("team", "missing");
  EXPECT_EQ(admission_->ReportCheckpoint(Context().get(), checkpoint, &reported).error_code(),
            grpc::StatusCode::NOT_FOUND);
  *checkpoint.mutable_workload() = Ref("team", "older");
  checkpoint.mutable_checkpoint_time()->set_seconds(absl::ToUnixSeconds(absl::Now()) + 3600);
  const grpc::Status future = admission_->ReportCheckpoint(Context().get(), checkpoint, &reported);
  EXPECT_EQ(future.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_TRUE(absl::StrContains(future.error_message(), "checkpoint_time")) << Describe(future);
  checkpoint.clear_checkpoint_time();
  ASSERT_GRPC_OK(admission_->ReportCheckpoint(Context().get(), checkpoint, &reported));
  EXPECT_TRUE(reported.workload().status().has_last_checkpoint_time());

  v1::Workload urgent = MakeWorkload("team", "urgent", "q", "2");
  urgent.mutable_spec()->set_priority(10);
  ASSERT_GRPC_OK(Submit(urgent, &submitted));
  ASSERT_TRUE(watch.AwaitEvents(admitted("urgent")).ok());
  v1::Workload older;
  v1::Workload newer;
  ASSERT_GRPC_OK(Get("team", "older", &older));
  ASSERT_GRPC_OK(Get("team", "newer", &newer));
  EXPECT_EQ(older.status().state(), v1::WORKLOAD_STATE_PENDING);
  EXPECT_EQ(older.status().preemption_count(), 1);
  EXPECT_EQ(older.status().recent_preemptions_size(), 1);
  EXPECT_EQ(newer.status().state(), v1::WORKLOAD_STATE_ADMITTED);

  // An operator's preemption counts like the scheduler's.
  v1::PreemptRequest preempt;
  *preempt.mutable_workload() = Ref("team", "newer");
  v1::PreemptResponse preempted;
  ASSERT_GRPC_OK(admission_->Preempt(Context().get(), preempt, &preempted));
  EXPECT_EQ(preempted.workload().status().preemption_count(), 1);
  EXPECT_EQ(preempted.workload().status().last_preemption_reason(), "OnRequest");
}

TEST_F(TollgatedTest, AcknowledgedSubmitsSurviveKill9) {
  ASSERT_NO_FATAL_FAILURE(StartServer({"--manifests=" + QueuesManifest()}));
  constexpr int kWorkloads = 1000;
  constexpr int kThreads = 8;
  constexpr int kKillAfterAcks = kWorkloads / 2;
  auto name_of = [](int i) { return absl::StrFormat("wl-%04d", i); };

  std::atomic<int> next{0};
  absl::Mutex mu;
  std::vector<bool> acknowledged(kWorkloads, false);  // Guarded by mu.
  int acknowledged_count = 0;                         // Guarded by mu.
  std::vector<std::string> unexpected;                // Guarded by mu.
  std::vector<std::thread> clients;
  for (int t = 0; t < kThreads; ++t) {
    clients.emplace_back([&] {
      std::unique_ptr<v1::AdmissionService::Stub> stub =
          v1::AdmissionService::NewStub(server_->channel());
      for (int i = next.fetch_add(1); i < kWorkloads; i = next.fetch_add(1)) {
        v1::SubmitRequest request;
        *request.mutable_workload() = MakeWorkload("crash", name_of(i), "crash-q", "1");
        v1::SubmitResponse response;
        grpc::Status status = stub->Submit(Context().get(), request, &response);
        absl::MutexLock lock(&mu);
        if (status.ok()) {
          acknowledged[i] = true;
          ++acknowledged_count;
          if (!response.created()) unexpected.push_back(name_of(i) + " not created");
        }
      }
    });
  }

  bool half_acknowledged = false;
  {
    absl::MutexLock lock(&mu);
    auto enough = [&] { return acknowledged_count >= kKillAfterAcks; };
    half_acknowledged = mu.AwaitWithTimeout(absl::Condition(&enough), absl::Seconds(120));
  }
  const int dispatched_at_kill = next.load();
  // Killed (or reaped) either way so the clients finish; they fail fast once it is gone.
  EXPECT_TRUE(server_->Kill().ok());
  for (std::thread& client : clients) client.join();
  ASSERT_TRUE(half_acknowledged) << "only " << acknowledged_count << " submits acknowledged";
  EXPECT_LT(dispatched_at_kill, kWorkloads) << "the kill came after every submit was sent";
  EXPECT_TRUE(unexpected.empty()) << unexpected.front();

  ASSERT_NO_FATAL_FAILURE(StartServer({"--manifests=" + QueuesManifest()}));
  v1::ListWorkloadsRequest list_request;
  list_request.set_namespace_("crash");
  v1::ListWorkloadsResponse listed;
  ASSERT_GRPC_OK(admission_->ListWorkloads(Context().get(), list_request, &listed));
  std::map<std::string, int> present;
  for (const v1::Workload& wl : listed.workloads()) ++present[wl.metadata().name()];

  std::set<std::string> submitted;
  for (int i = 0; i < kWorkloads; ++i) submitted.insert(name_of(i));
  int lost = 0;
  absl::MutexLock lock(&mu);
  for (int i = 0; i < kWorkloads; ++i) {
    if (!acknowledged[i]) continue;
    auto it = present.find(name_of(i));
    if (it == present.end()) {
      ++lost;
      ADD_FAILURE() << "acknowledged " << name_of(i) << " is missing after restart";
    } else {
      EXPECT_EQ(it->second, 1) << name_of(i) << " listed " << it->second << " times";
    }
  }
  for (const auto& [name, count] : present) {
    EXPECT_TRUE(submitted.count(name)) << "unexpected workload " << name;
    EXPECT_EQ(count, 1) << name << " listed " << count << " times";
  }
  EXPECT_EQ(lost, 0);
  EXPECT_GE(static_cast<int>(present.size()), acknowledged_count);
  std::cerr << "crash test: " << acknowledged_count << " acknowledged, " << dispatched_at_kill
            << " dispatched at the kill, " << present.size() << " present after restart\n";
}

}  // namespace
}  // namespace tollgate::e2e
