#include "bench/grpc_replay.h"

#include <grpcpp/grpcpp.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <functional>
#include <memory>
#include <queue>
#include <thread>
#include <tuple>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/clock.h"
#include "bench/bench_util.h"
#include "tollgate/v1/service.grpc.pb.h"

namespace tollgate::bench {
namespace {

v1::ApplyRequest ClusterObjects(const Profile& p) {
  v1::ApplyRequest request;
  request.add_objects()->mutable_namespace_()->mutable_metadata()->set_name(kReplayNamespace);
  request.add_objects()->mutable_resource_flavor()->mutable_metadata()->set_name(kReplayFlavor);
  for (int cq = 0; cq < p.cluster_queues(); ++cq) {
    v1::ClusterQueue* q = request.add_objects()->mutable_cluster_queue();
    q->mutable_metadata()->set_name(ReplayCqName(cq));
    v1::ClusterQueueSpec* spec = q->mutable_spec();
    spec->set_cohort(ReplayCohortName(cq / p.cqs_per_cohort));
    v1::ResourceGroup* group = spec->add_resource_groups();
    group->add_covered_resources("cpu");
    v1::FlavorQuotas* flavor = group->add_flavors();
    flavor->set_name(kReplayFlavor);
    v1::ResourceQuota* quota = flavor->add_resources();
    quota->set_name("cpu");
    quota->set_nominal_quota(absl::StrCat(p.nominal_cpu));
    quota->set_borrowing_limit(absl::StrCat(p.borrowing_limit_cpu));
    spec->mutable_preemption()->set_within_cluster_queue("LowerPriority");
    spec->mutable_preemption()->set_reclaim_within_cohort("Any");
    v1::LocalQueue* lq = request.add_objects()->mutable_local_queue();
    lq->mutable_metadata()->set_name(ReplayLqName(cq));
    lq->mutable_metadata()->set_namespace_(kReplayNamespace);
    lq->mutable_spec()->set_cluster_queue(ReplayCqName(cq));
  }
  return request;
}

// Every call gets a deadline, so a run that times out against a stalled server still drains
// its outstanding calls (and counts them as errors) instead of waiting forever.
void SetDeadline(grpc::ClientContext& context) {
  context.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(60));
}

int64_t TimestampNanos(const google::protobuf::Timestamp& t) {
  return t.seconds() * 1'000'000'000 + t.nanos();
}

// The driver's shared state. Callbacks run on gRPC threads; everything below mu_ is guarded.
class Replay {
 public:
  Replay(const TollgatedTarget& target, const Profile& profile, const GrpcReplayOptions& options)
      : target_(target),
        profile_(profile),
        options_(options),
        schedule_(BuildSchedule(profile)),
        recorder_(profile, schedule_),
        generation_(schedule_.size(), 0),
        admitted_at_(schedule_.size(), -1) {
    for (int i = 0; i < static_cast<int>(schedule_.size()); ++i) idx_of_[schedule_[i].name] = i;
    for (int i = 0; i < std::max(1, options.channels); ++i) {
      stubs_.push_back(v1::AdmissionService::NewStub(target.NewChannel()));
    }
  }

  absl::StatusOr<ReplayRecorder::Summary> Run();

 private:
  struct Timer {
    double due = 0;
    int idx = 0;
    int64_t generation = 0;
    bool operator>(const Timer& o) const { return std::tie(due, idx) > std::tie(o.due, o.idx); }
  };

  double Now() const { return MonotonicSeconds() - t0_; }
  v1::AdmissionService::Stub& NextStub() {
    return *stubs_[next_stub_.fetch_add(1, std::memory_order_relaxed) % stubs_.size()];
  }
  void CreateLoop();
  void WatchLoop(int64_t since_revision);
  void FinishLoop();
  void OnEvent(const v1::WatchEvent& event);
  void SendSubmit(int idx);
  void SendFinish(int idx);
  void SendReportStopped(int idx);
  void CountError(const grpc::Status& status, const char* what);

  const TollgatedTarget& target_;
  const Profile& profile_;
  const GrpcReplayOptions options_;
  const std::vector<PlannedWorkload> schedule_;
  absl::flat_hash_map<std::string, int> idx_of_;
  std::vector<std::unique_ptr<v1::AdmissionService::Stub>> stubs_;
  std::atomic<uint64_t> next_stub_{0};
  double t0_ = 0;

  std::atomic<int64_t> in_flight_{0};
  std::atomic<int64_t> submitted_{0};
  std::atomic<int64_t> submit_acked_{0};
  std::atomic<int64_t> finish_sent_{0};
  std::atomic<int64_t> stopped_sent_{0};
  std::atomic<int64_t> events_{0};
  std::atomic<double> create_lag_s_{0};
  std::atomic<bool> stop_{false};

  mutable absl::Mutex mu_;
  ReplayRecorder recorder_ ABSL_GUARDED_BY(mu_);
  std::vector<int64_t> generation_ ABSL_GUARDED_BY(mu_);
  // Server admission_time of the run the driver is timing, to spot a readmission.
  std::vector<int64_t> admitted_at_ ABSL_GUARDED_BY(mu_);
  std::priority_queue<Timer, std::vector<Timer>, std::greater<>> timers_ ABSL_GUARDED_BY(mu_);
  int64_t errors_ ABSL_GUARDED_BY(mu_) = 0;
  std::string first_error_ ABSL_GUARDED_BY(mu_);
  bool watch_ended_ ABSL_GUARDED_BY(mu_) = false;
  grpc::Status watch_status_ ABSL_GUARDED_BY(mu_);
};

void Replay::CountError(const grpc::Status& status, const char* what) {
  absl::MutexLock lock(&mu_);
  if (errors_++ == 0) {
    first_error_ = absl::StrCat(what, ": ", status.error_code(), " ", status.error_message());
  }
}

void Replay::SendSubmit(int idx) {
  struct Call {
    grpc::ClientContext context;
    v1::SubmitRequest request;
    v1::SubmitResponse response;
  };
  auto* call = new Call();
  SetDeadline(call->context);
  const PlannedWorkload& pw = schedule_[idx];
  const WorkloadClass& c = profile_.classes[pw.cls];
  v1::Workload* wl = call->request.mutable_workload();
  wl->mutable_metadata()->set_name(pw.name);
  wl->mutable_metadata()->set_namespace_(kReplayNamespace);
  wl->mutable_spec()->set_queue_name(ReplayLqName(pw.cq));
  wl->mutable_spec()->set_priority(c.priority);
  v1::PodSet* ps = wl->mutable_spec()->add_pod_sets();
  ps->set_name("main");
  ps->set_count(1);
  (*ps->mutable_requests())["cpu"] = absl::StrCat(c.cpu);
  {
    absl::MutexLock lock(&mu_);
    recorder_.Created(idx, Now());
  }
  in_flight_.fetch_add(1);
  submitted_.fetch_add(1);
  NextStub().async()->Submit(&call->context, &call->request, &call->response,
                             [this, call](grpc::Status status) {
                               if (!status.ok()) {
                                 CountError(status, "Submit");
                               } else {
                                 submit_acked_.fetch_add(1);
                               }
                               delete call;
                               in_flight_.fetch_sub(1);
                             });
}

void Replay::SendFinish(int idx) {
  struct Call {
    grpc::ClientContext context;
    v1::FinishRequest request;
    v1::FinishResponse response;
  };
  auto* call = new Call();
  SetDeadline(call->context);
  call->request.mutable_workload()->set_namespace_(kReplayNamespace);
  call->request.mutable_workload()->set_name(schedule_[idx].name);
  in_flight_.fetch_add(1);
  finish_sent_.fetch_add(1);
  NextStub().async()->Finish(
      &call->context, &call->request, &call->response, [this, call](grpc::Status status) {
        // FAILED_PRECONDITION: preempted after the timer was set; the
        // Watch shows it pending and the timer is already void.
        if (!status.ok() && status.error_code() != grpc::FAILED_PRECONDITION) {
          CountError(status, "Finish");
        }
        delete call;
        in_flight_.fetch_sub(1);
      });
}

void Replay::SendReportStopped(int idx) {
  struct Call {
    grpc::ClientContext context;
    v1::ReportStoppedRequest request;
    v1::ReportStoppedResponse response;
  };
  auto* call = new Call();
  SetDeadline(call->context);
  call->request.mutable_workload()->set_namespace_(kReplayNamespace);
  call->request.mutable_workload()->set_name(schedule_[idx].name);
  in_flight_.fetch_add(1);
  stopped_sent_.fetch_add(1);
  NextStub().async()->ReportStopped(
      &call->context, &call->request, &call->response, [this, call](grpc::Status status) {
        if (!status.ok() && status.error_code() != grpc::FAILED_PRECONDITION) {
          CountError(status, "ReportStopped");
        }
        delete call;
        in_flight_.fetch_sub(1);
      });
}

void Replay::CreateLoop() {
  for (int i = 0; i < static_cast<int>(schedule_.size()) && !stop_.load(); ++i) {
    const double due = absl::ToDoubleSeconds(schedule_[i].at);
    const double wait = due - Now();
    if (wait > 0) {
      absl::SleepFor(absl::Seconds(wait));
    } else {
      create_lag_s_.store(-wait, std::memory_order_relaxed);
    }
    SendSubmit(i);
  }
}

void Replay::OnEvent(const v1::WatchEvent& event) {
  events_.fetch_add(1, std::memory_order_relaxed);
  if (event.type() == v1::WatchEvent::BOOKMARK) return;
  const v1::Workload& wl = event.workload();
  auto it = idx_of_.find(wl.metadata().name());
  if (it == idx_of_.end()) return;
  const int idx = it->second;
  const double now = Now();
  bool report_stopped = false;
  {
    absl::MutexLock lock(&mu_);
    switch (wl.status().state()) {
      case v1::WORKLOAD_STATE_ADMITTED: {
        const int64_t at = TimestampNanos(wl.status().admission_time());
        if (recorder_.running(idx) && admitted_at_[idx] == at) break;
        // Newly admitted, or preempted and readmitted between two events.
        if (recorder_.running(idx)) recorder_.Evicted(idx, now);
        recorder_.Admitted(idx, now);
        admitted_at_[idx] = at;
        ++generation_[idx];
        timers_.push(
            Timer{now + absl::ToDoubleSeconds(profile_.classes[schedule_[idx].cls].runtime), idx,
                  generation_[idx]});
        break;
      }
      case v1::WORKLOAD_STATE_EVICTING:
        report_stopped = true;
        [[fallthrough]];
      case v1::WORKLOAD_STATE_PENDING:
        if (recorder_.running(idx)) {
          recorder_.Evicted(idx, now);
          ++generation_[idx];
        }
        break;
      case v1::WORKLOAD_STATE_FINISHED:
        recorder_.Finished(idx, now);
        break;
      default:
        break;
    }
  }
  if (report_stopped) SendReportStopped(idx);
}

void Replay::WatchLoop(int64_t since_revision) {
  // One stream for the whole run; its context is cancelled by Run() at the end.
  grpc::ClientContext context;
  std::unique_ptr<v1::AdmissionService::Stub> stub =
      v1::AdmissionService::NewStub(target_.NewChannel());
  v1::WatchRequest request;
  request.set_since_revision(since_revision);
  request.set_namespace_(kReplayNamespace);
  std::unique_ptr<grpc::ClientReader<v1::WatchEvent>> reader = stub->Watch(&context, request);
  std::thread canceller([&] {
    while (!stop_.load()) absl::SleepFor(absl::Milliseconds(50));
    context.TryCancel();
  });
  v1::WatchEvent event;
  while (reader->Read(&event)) OnEvent(event);
  grpc::Status status = reader->Finish();
  canceller.join();
  absl::MutexLock lock(&mu_);
  watch_ended_ = true;
  watch_status_ = status;
}

void Replay::FinishLoop() {
  while (!stop_.load()) {
    std::vector<int> due;
    {
      absl::MutexLock lock(&mu_);
      const double now = Now();
      while (!timers_.empty() && timers_.top().due <= now) {
        const Timer t = timers_.top();
        timers_.pop();
        if (t.generation == generation_[t.idx] && recorder_.running(t.idx)) due.push_back(t.idx);
      }
    }
    for (int idx : due) SendFinish(idx);
    if (due.empty()) absl::SleepFor(absl::Microseconds(500));
  }
}

absl::StatusOr<ReplayRecorder::Summary> Replay::Run() {
  // Configuration first, in one request.
  int64_t revision = 0;
  {
    std::unique_ptr<v1::ConfigService::Stub> config =
        v1::ConfigService::NewStub(target_.NewChannel());
    grpc::ClientContext context;
    v1::ApplyResponse response;
    grpc::Status status = config->Apply(&context, ClusterObjects(profile_), &response);
    if (!status.ok()) {
      return absl::UnavailableError(absl::StrCat("Apply: ", status.error_message()));
    }
    revision = response.revision();
  }
  std::printf(
      "[tollgated %s] applied %d ClusterQueues at revision %lld; replaying %zu "
      "workloads in real time against %s\n",
      profile_.name.c_str(), profile_.cluster_queues(), static_cast<long long>(revision),
      schedule_.size(), target_.address().c_str());
  std::fflush(stdout);

  t0_ = MonotonicSeconds();
  std::thread watcher([this, revision] { WatchLoop(revision); });
  std::thread finisher([this] { FinishLoop(); });
  std::thread creator([this] { CreateLoop(); });

  const double deadline = absl::ToDoubleSeconds(options_.timeout);
  double next_progress = absl::ToDoubleSeconds(options_.progress_every);
  bool timed_out = false;
  while (true) {
    {
      absl::MutexLock lock(&mu_);
      if (recorder_.finished_count() == static_cast<int64_t>(schedule_.size())) break;
      if (watch_ended_) break;
    }
    const double now = Now();
    if (now > deadline) {
      timed_out = true;
      break;
    }
    if (options_.progress_every > absl::ZeroDuration() && now >= next_progress) {
      absl::MutexLock lock(&mu_);
      std::printf(
          "[tollgated %s] t=%6.1fs created=%lld acked=%lld running=%lld (%lld cpu) "
          "finished=%lld evictions=%lld in-flight=%lld events=%lld create-lag=%.3fs "
          "errors=%lld\n",
          profile_.name.c_str(), now, static_cast<long long>(recorder_.created_count()),
          static_cast<long long>(submit_acked_.load()),
          static_cast<long long>(recorder_.running_count()),
          static_cast<long long>(recorder_.used_cpu()),
          static_cast<long long>(recorder_.finished_count()),
          static_cast<long long>(recorder_.evictions()), static_cast<long long>(in_flight_.load()),
          static_cast<long long>(events_.load()), create_lag_s_.load(),
          static_cast<long long>(errors_));
      std::fflush(stdout);
      while (next_progress <= now) next_progress += absl::ToDoubleSeconds(options_.progress_every);
    }
    absl::SleepFor(absl::Milliseconds(10));
  }
  stop_.store(true);
  creator.join();
  finisher.join();
  watcher.join();
  // Outstanding callbacks reference this object: wait for them.
  while (in_flight_.load() > 0) absl::SleepFor(absl::Milliseconds(10));

  absl::MutexLock lock(&mu_);
  if (errors_ > 0) {
    std::printf("[tollgated %s] %lld RPC errors; first: %s\n", profile_.name.c_str(),
                static_cast<long long>(errors_), first_error_.c_str());
  }
  if (timed_out) {
    std::printf("[tollgated %s] TIMED OUT after %.0fs with %lld of %zu finished\n",
                profile_.name.c_str(), deadline, static_cast<long long>(recorder_.finished_count()),
                schedule_.size());
  } else if (recorder_.finished_count() != static_cast<int64_t>(schedule_.size())) {
    return absl::UnavailableError(
        absl::StrCat("the watch ended early: ", watch_status_.error_message()));
  }
  ReplayRecorder::Summary summary = recorder_.Summarize();
  summary.unary_calls = submitted_.load() + finish_sent_.load() + stopped_sent_.load();
  return summary;
}

}  // namespace

absl::StatusOr<ReplayRecorder::Summary> RunGrpcReplay(const TollgatedTarget& target,
                                                      const Profile& profile,
                                                      const GrpcReplayOptions& options) {
  Replay replay(target, profile, options);
  return replay.Run();
}

}  // namespace tollgate::bench
