#include "bench/stalled_watchers.h"

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <memory>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/strip.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "bench/bench_util.h"
#include "bench/restart_probe.h"
#include "bench/tollgated_launcher.h"
#include "core/status_macros.h"
#include "grpcpp/grpcpp.h"
#include "tollgate/v1/service.grpc.pb.h"

namespace tollgate::bench {
namespace {

int64_t ThreadsOf(pid_t pid) {
  std::ifstream in(absl::StrCat("/proc/", pid, "/status"));
  std::string line;
  while (std::getline(in, line)) {
    absl::string_view rest = line;
    int64_t threads = 0;
    if (absl::ConsumePrefix(&rest, "Threads:") &&
        absl::SimpleAtoi(absl::StripAsciiWhitespace(rest), &threads)) {
      return threads;
    }
  }
  return -1;
}

void Report(const char* when, pid_t pid, int64_t base_rss) {
  const int64_t rss = ResidentBytesOf(pid);
  std::printf("[watchers] %-34s RSS %8.1f MiB (%+8.1f MiB)  threads %lld\n", when,
              static_cast<double>(rss) / (1 << 20), static_cast<double>(rss - base_rss) / (1 << 20),
              static_cast<long long>(ThreadsOf(pid)));
  std::fflush(stdout);
}

// One stream that reads everything and records the names of ADDED workloads it sees after the
// initial listing.
class ActiveWatch {
 public:
  explicit ActiveWatch(std::shared_ptr<grpc::Channel> channel)
      : stub_(v1::AdmissionService::NewStub(channel)) {
    v1::WatchRequest request;
    stream_ = stub_->Watch(&context_, request);
    thread_ = std::thread([this] {
      v1::WatchEvent event;
      int64_t snapshot_revision = -1;
      while (stream_->Read(&event)) {
        absl::MutexLock lock(&mu_);
        if (snapshot_revision < 0) snapshot_revision = event.revision();
        if (event.type() == v1::WatchEvent::ADDED && event.revision() > snapshot_revision) {
          seen_.insert(event.workload().metadata().name());
        } else if (event.type() == v1::WatchEvent::ADDED) {
          ++listed_;
        }
      }
      status_ = stream_->Finish();
    });
  }
  ~ActiveWatch() {
    context_.TryCancel();
    thread_.join();
  }
  // Waits until every name in `want` was seen; returns how many were.
  int64_t AwaitAll(const std::set<std::string>& want, absl::Duration timeout) {
    absl::MutexLock lock(&mu_);
    auto all = [&]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
      for (const std::string& name : want) {
        if (!seen_.count(name)) return false;
      }
      return true;
    };
    mu_.AwaitWithTimeout(absl::Condition(&all), timeout);
    int64_t n = 0;
    for (const std::string& name : want) n += seen_.count(name);
    return n;
  }
  int64_t listed() {
    absl::MutexLock lock(&mu_);
    return listed_;
  }

 private:
  std::unique_ptr<v1::AdmissionService::Stub> stub_;
  grpc::ClientContext context_;
  std::unique_ptr<grpc::ClientReader<v1::WatchEvent>> stream_;
  absl::Mutex mu_;
  std::set<std::string> seen_ ABSL_GUARDED_BY(mu_);
  int64_t listed_ ABSL_GUARDED_BY(mu_) = 0;
  grpc::Status status_;
  std::thread thread_;
};

}  // namespace

absl::Status RunStalledWatchers(const StalledWatchersOptions& options) {
  TOLLGATE_ASSIGN_OR_RETURN(std::string data_dir, MakeTempDir(options.work_dir, "watchers-"));
  struct Cleanup {
    std::string dir;
    bool keep;
    ~Cleanup() {
      std::error_code ec;
      if (!keep) std::filesystem::remove_all(dir, ec);
    }
  } cleanup{data_dir, options.keep};
  TOLLGATE_RETURN_IF_ERROR(PopulateRestartStore(data_dir, options.workloads, PopulateEnd::kClose));
  TOLLGATE_ASSIGN_OR_RETURN(std::unique_ptr<TollgatedTarget> server,
                            TollgatedTarget::Spawn(options.tollgated, data_dir));
  const pid_t pid = server->pid();
  const int64_t base = ResidentBytesOf(pid);
  Report("serving, no watches", pid, base);

  // Stalled streams: started, never read. 100 per connection so each connection's flow-control
  // window, not one shared one, is what fills up.
  std::vector<std::shared_ptr<grpc::Channel>> channels;
  std::vector<std::unique_ptr<v1::AdmissionService::Stub>> stubs;
  std::vector<std::unique_ptr<grpc::ClientContext>> contexts;
  std::vector<std::unique_ptr<grpc::ClientReader<v1::WatchEvent>>> stalled;
  for (int i = 0; i < options.stalled; ++i) {
    if (i % 100 == 0) {
      channels.push_back(server->NewChannel());
      stubs.push_back(v1::AdmissionService::NewStub(channels.back()));
    }
    contexts.push_back(std::make_unique<grpc::ClientContext>());
    stalled.push_back(stubs.back()->Watch(contexts.back().get(), v1::WatchRequest()));
  }
  std::vector<std::unique_ptr<ActiveWatch>> active;
  for (int i = 0; i < options.active; ++i) {
    active.push_back(std::make_unique<ActiveWatch>(server->NewChannel()));
  }
  // Give the server time to fill every stalled stream's window.
  absl::SleepFor(absl::Seconds(5));
  Report(absl::StrCat(options.stalled, " stalled + ", options.active, " active watches").c_str(),
         pid, base);

  auto submit_stub = v1::AdmissionService::NewStub(server->NewChannel());
  std::set<std::string> names;
  for (int i = 0; i < options.submits; ++i) {
    v1::SubmitRequest request;
    v1::Workload* wl = request.mutable_workload();
    wl->mutable_metadata()->set_namespace_("restart");
    wl->mutable_metadata()->set_name(absl::StrCat("late-", i));
    wl->mutable_spec()->set_queue_name("restart-lq");
    v1::PodSet* ps = wl->mutable_spec()->add_pod_sets();
    ps->set_name("main");
    ps->set_count(1);
    (*ps->mutable_requests())["cpu"] = "1";
    grpc::ClientContext context;
    context.set_deadline(absl::ToChronoTime(absl::Now() + absl::Seconds(30)));
    v1::SubmitResponse response;
    grpc::Status status = submit_stub->Submit(&context, request, &response);
    if (!status.ok()) {
      return absl::UnavailableError(absl::StrCat("submit: ", status.error_message()));
    }
    names.insert(absl::StrCat("late-", i));
  }
  bool all_seen = true;
  for (size_t i = 0; i < active.size(); ++i) {
    const int64_t seen = active[i]->AwaitAll(names, absl::Minutes(2));
    std::printf("[watchers] active watch %zu: listed %lld, saw %lld of %zu later submits\n", i,
                static_cast<long long>(active[i]->listed()), static_cast<long long>(seen),
                names.size());
    all_seen = all_seen && seen == static_cast<int64_t>(names.size());
  }
  Report(absl::StrCat("after ", options.submits, " submits").c_str(), pid, base);
  for (auto& context : contexts) context->TryCancel();
  active.clear();
  if (!all_seen) return absl::DataLossError("an active watch missed events");
  return absl::OkStatus();
}

}  // namespace tollgate::bench
