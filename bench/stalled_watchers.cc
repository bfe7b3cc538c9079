#include "bench/stalled_watchers.h"

#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <set>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "bench/bench_util.h"
#include "bench/restart_probe.h"
#include "bench/tollgated_launcher.h"
#include "clients/cpp/connection.h"
#include "core/status_macros.h"
#include "grpcpp/grpcpp.h"
#include "httplib.h"
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
  std::printf("[watchers] %-40s RSS %8.1f MiB (%+8.1f MiB)  threads %lld\n", when,
              static_cast<double>(rss) / (1 << 20), static_cast<double>(rss - base_rss) / (1 << 20),
              static_cast<long long>(ThreadsOf(pid)));
  std::fflush(stdout);
}

// tollgated's count of events handed to Watch streams (tollgate_watch_events_sent_total).
class SentEvents {
 public:
  SentEvents(int port, const std::string& bearer_token) : client_("127.0.0.1", port) {
    client_.set_read_timeout(10, 0);
    if (!bearer_token.empty()) client_.set_bearer_token_auth(bearer_token);
  }
  int64_t Now() {
    httplib::Result result = client_.Get("/metrics");
    if (!result || result->status != 200) return -1;
    std::istringstream lines(result->body);
    std::string line;
    while (std::getline(lines, line)) {
      absl::string_view rest = line;
      double value = 0;
      if (absl::ConsumePrefix(&rest, "tollgate_watch_events_sent_total ") &&
          absl::SimpleAtod(rest, &value)) {
        return static_cast<int64_t>(value);
      }
    }
    return -1;
  }

 private:
  httplib::Client client_;
};

// One stream that reads everything: when it finished listing, the highest revision it has seen
// (bookmarks included), when it last received anything, and when each later ADDED arrived.
class ActiveWatch {
 public:
  ActiveWatch(std::shared_ptr<grpc::Channel> channel, int64_t stored)
      : stub_(v1::AdmissionService::NewStub(channel)), stored_(stored), opened_(absl::Now()) {
    stream_ = stub_->Watch(&context_, v1::WatchRequest());
    thread_ = std::thread([this] {
      v1::WatchEvent event;
      int64_t snapshot_revision = -1;
      while (stream_->Read(&event)) {
        const absl::Time now = absl::Now();
        absl::MutexLock lock(&mu_);
        last_event_ = now;
        if (snapshot_revision < 0) snapshot_revision = event.revision();
        const bool listing =
            event.type() == v1::WatchEvent::ADDED && event.revision() == snapshot_revision;
        if (listing) {
          ++listed_;
        } else if (event.type() == v1::WatchEvent::ADDED) {
          seen_.emplace(event.workload().metadata().name(), now);
        }
        if (listed_done_ == absl::InfinitePast() && (!listing || listed_ == stored_)) {
          listed_done_ = now;
        }
        max_revision_ = std::max(max_revision_, event.revision());
      }
      grpc::Status status = stream_->Finish();
      absl::MutexLock lock(&mu_);
      ended_ = true;
      status_ = std::move(status);
    });
  }
  ~ActiveWatch() {
    context_.TryCancel();
    thread_.join();
  }

  struct Progress {
    int64_t listed = 0;
    bool listing_done = false;
    double list_seconds = 0;
    int64_t max_revision = 0;
    absl::Time last_event;
    bool ended = false;
    std::string end_status;
  };
  Progress Now() {
    absl::MutexLock lock(&mu_);
    Progress p;
    p.listed = listed_;
    p.listing_done = listed_done_ != absl::InfinitePast();
    p.list_seconds = p.listing_done ? absl::ToDoubleSeconds(listed_done_ - opened_) : 0;
    p.max_revision = max_revision_;
    p.last_event = std::max(last_event_, opened_);
    p.ended = ended_;
    p.end_status = status_.error_message();
    return p;
  }
  // When each name arrived, for those that did.
  std::map<std::string, absl::Time> Seen() {
    absl::MutexLock lock(&mu_);
    return seen_;
  }

 private:
  std::unique_ptr<v1::AdmissionService::Stub> stub_;
  const int64_t stored_;
  const absl::Time opened_;
  grpc::ClientContext context_;
  std::unique_ptr<grpc::ClientReader<v1::WatchEvent>> stream_;
  absl::Mutex mu_;
  int64_t listed_ ABSL_GUARDED_BY(mu_) = 0;
  absl::Time listed_done_ ABSL_GUARDED_BY(mu_) = absl::InfinitePast();
  int64_t max_revision_ ABSL_GUARDED_BY(mu_) = 0;
  absl::Time last_event_ ABSL_GUARDED_BY(mu_) = absl::InfinitePast();
  std::map<std::string, absl::Time> seen_ ABSL_GUARDED_BY(mu_);
  bool ended_ ABSL_GUARDED_BY(mu_) = false;
  grpc::Status status_ ABSL_GUARDED_BY(mu_);
  std::thread thread_;
};

// Waits until `done` holds for every active stream, printing progress every 5 s. A stream
// that ended, or received nothing for `no_progress` while not done, fails the wait.
absl::Status AwaitActive(std::vector<std::unique_ptr<ActiveWatch>>& active, const char* what,
                         absl::Duration no_progress, SentEvents& sent, pid_t pid,
                         const std::function<bool(const ActiveWatch::Progress&)>& done) {
  absl::Time next_report = absl::Now() + absl::Seconds(5);
  while (true) {
    bool all = true;
    std::string line;
    for (size_t i = 0; i < active.size(); ++i) {
      const ActiveWatch::Progress p = active[i]->Now();
      if (done(p)) continue;
      all = false;
      if (p.ended) {
        return absl::UnavailableError(
            absl::StrCat("active watch ", i, " ended while ", what, ": ", p.end_status));
      }
      if (absl::Now() - p.last_event > no_progress) {
        return absl::DeadlineExceededError(absl::StrCat(
            "active watch ", i, " received nothing for ", absl::FormatDuration(no_progress),
            " while ", what, " (listed ", p.listed, ", at revision ", p.max_revision,
            "): the server is too slow for this run, no event is known to be missing"));
      }
      absl::StrAppend(&line, " watch ", i, ": listed ", p.listed, ", revision ", p.max_revision,
                      ";");
    }
    if (all) return absl::OkStatus();
    if (absl::Now() >= next_report) {
      std::printf("[watchers]   %s:%s tollgated sent %lld events, %.0f CPU s\n", what, line.c_str(),
                  static_cast<long long>(sent.Now()), CpuSecondsOf(pid));
      std::fflush(stdout);
      next_report += absl::Seconds(5);
    }
    absl::SleepFor(absl::Milliseconds(50));
  }
}

}  // namespace

absl::StatusOr<StalledWatchersResult> RunStalledWatchers(const StalledWatchersOptions& options) {
  TOLLGATE_ASSIGN_OR_RETURN(std::string data_dir, MakeTempDir(options.work_dir, "watchers-"));
  struct Cleanup {
    std::string dir;
    bool keep;
    ~Cleanup() {
      std::error_code ec;
      if (!keep) {
        std::filesystem::remove_all(dir, ec);
        for (const char* suffix : {".port", ".log", ".metrics-port", ".tokens"}) {
          std::filesystem::remove(dir + suffix, ec);
        }
      }
    }
  } cleanup{data_dir, options.keep};
  TOLLGATE_RETURN_IF_ERROR(PopulateRestartStore(data_dir, options.workloads, PopulateEnd::kClose));
  const std::string metrics_port_file = data_dir + ".metrics-port";
  std::vector<std::string> server_args = {"--metrics-listen=127.0.0.1:0",
                                          "--metrics-port-file=" + metrics_port_file};
  client::Credentials active_auth;
  client::Credentials stalled_auth;
  if (!options.stalled_identity.empty()) {
    // Two identities on loopback by bearer token (plaintext is allowed there).
    const std::string token_file = data_dir + ".tokens";
    std::ofstream out(token_file);
    out << "bench-active-token,bench-active,1,\"tollgate:admins\"\n"
        << "bench-stalled-token," << options.stalled_identity << ",2,\"tollgate:admins\"\n";
    out.close();
    if (!out) return absl::InternalError(absl::StrCat("cannot write ", token_file));
    server_args.push_back("--token-file=" + token_file);
    active_auth.bearer_token = "bench-active-token";
    stalled_auth.bearer_token = "bench-stalled-token";
  }
  TOLLGATE_ASSIGN_OR_RETURN(
      std::unique_ptr<TollgatedTarget> server,
      TollgatedTarget::Spawn(options.tollgated, data_dir, server_args, active_auth));
  int metrics_port = 0;
  for (const absl::Time deadline = absl::Now() + absl::Seconds(10);
       metrics_port == 0 && absl::Now() < deadline;) {
    std::ifstream in(metrics_port_file);
    if (!(in >> metrics_port)) {
      metrics_port = 0;
      absl::SleepFor(absl::Milliseconds(10));
    }
  }
  if (metrics_port == 0) return absl::UnavailableError("tollgated wrote no metrics port");
  SentEvents sent(metrics_port, active_auth.bearer_token);
  const pid_t pid = server->pid();
  const int64_t base = ResidentBytesOf(pid);
  Report("serving, no watches", pid, base);

  // Stalled streams: started, never read. 100 per connection so each connection's flow-control
  // window, not one shared one, is what fills up.
  grpc::ChannelArguments stalled_args;
  if (options.stalled_window_kib > 0) {
    stalled_args.SetInt(GRPC_ARG_HTTP2_BDP_PROBE, 0);
    stalled_args.SetInt(GRPC_ARG_HTTP2_STREAM_LOOKAHEAD_BYTES,
                        static_cast<int>(options.stalled_window_kib * 1024));
  }
  static std::atomic<int> next_stalled_channel{0};
  stalled_args.SetMaxReceiveMessageSize(256 << 20);
  std::vector<std::shared_ptr<grpc::Channel>> channels;
  std::vector<std::unique_ptr<v1::AdmissionService::Stub>> stubs;
  std::vector<std::unique_ptr<grpc::ClientContext>> contexts;
  std::vector<std::unique_ptr<grpc::ClientReader<v1::WatchEvent>>> stalled;
  for (int i = 0; i < options.stalled; ++i) {
    if (i % 100 == 0) {
      if (options.stalled_identity.empty()) {
        channels.push_back(server->NewChannel(stalled_args));
      } else {
        // Its own connection, as TollgatedTarget::NewChannel makes, with the stalled token.
        grpc::ChannelArguments args = stalled_args;
        args.SetInt("tollgate.bench.stalled-channel", next_stalled_channel.fetch_add(1));
        channels.push_back(client::NewChannel(server->address(), stalled_auth, args));
      }
      stubs.push_back(v1::AdmissionService::NewStub(channels.back()));
    }
    contexts.push_back(std::make_unique<grpc::ClientContext>());
    stalled.push_back(stubs.back()->Watch(contexts.back().get(), v1::WatchRequest()));
  }
  const double list_cpu0 = CpuSecondsOf(pid);
  const int64_t list_sent0 = sent.Now();
  std::vector<std::unique_ptr<ActiveWatch>> active;
  for (int i = 0; i < options.active; ++i) {
    active.push_back(std::make_unique<ActiveWatch>(server->NewChannel(), options.workloads));
  }
  TOLLGATE_RETURN_IF_ERROR(
      AwaitActive(active, "listing", options.no_progress_timeout, sent, pid,
                  [](const ActiveWatch::Progress& p) { return p.listing_done; }));
  StalledWatchersResult result;
  result.stalled = options.stalled;
  result.list_cpu_seconds = CpuSecondsOf(pid) - list_cpu0;
  result.list_events_sent = sent.Now() - list_sent0;
  std::vector<double> list_seconds;
  for (auto& watch : active) list_seconds.push_back(watch->Now().list_seconds);
  result.list_seconds = Percentile(list_seconds, 0.5);
  Report(absl::StrCat(options.stalled, " stalled + ", options.active, " active, listed").c_str(),
         pid, base);

  auto submit_stub = v1::AdmissionService::NewStub(server->NewChannel());
  std::map<std::string, absl::Time> submitted;
  int64_t last_revision = 0;
  const double submit_cpu0 = CpuSecondsOf(pid);
  const int64_t submit_sent0 = sent.Now();
  const absl::Time submit_start = absl::Now();
  for (int i = 0; i < options.submits; ++i) {
    v1::SubmitRequest request;
    v1::Workload* wl = request.mutable_workload();
    const std::string name = absl::StrCat("late-", i);
    wl->mutable_metadata()->set_namespace_("restart");
    wl->mutable_metadata()->set_name(name);
    wl->mutable_spec()->set_queue_name("restart-lq");
    v1::PodSet* ps = wl->mutable_spec()->add_pod_sets();
    ps->set_name("main");
    ps->set_count(1);
    (*ps->mutable_requests())["cpu"] = "1";
    grpc::ClientContext context;
    context.set_deadline(absl::ToChronoTime(absl::Now() + absl::Seconds(30)));
    v1::SubmitResponse response;
    submitted[name] = absl::Now();
    grpc::Status status = submit_stub->Submit(&context, request, &response);
    if (!status.ok()) {
      return absl::UnavailableError(absl::StrCat("submit: ", status.error_message()));
    }
    last_revision = std::max(last_revision, response.workload().metadata().resource_version());
  }
  // Caught up: an event or bookmark at or after the last submit's revision. Events arrive in
  // revision order, so a stream that got there and lacks a submitted workload really missed it.
  TOLLGATE_RETURN_IF_ERROR(
      AwaitActive(active, "catching up", options.no_progress_timeout, sent, pid,
                  [&](const ActiveWatch::Progress& p) { return p.max_revision >= last_revision; }));
  result.submit_seconds = absl::ToDoubleSeconds(absl::Now() - submit_start);
  result.submit_cpu_seconds = CpuSecondsOf(pid) - submit_cpu0;
  result.submit_events_sent = sent.Now() - submit_sent0;

  std::vector<double> lags;
  int64_t missing = 0;
  for (size_t i = 0; i < active.size(); ++i) {
    const std::map<std::string, absl::Time> seen = active[i]->Seen();
    int64_t found = 0;
    for (const auto& [name, sent_at] : submitted) {
      auto it = seen.find(name);
      if (it == seen.end()) continue;
      ++found;
      lags.push_back(absl::ToDoubleMilliseconds(it->second - sent_at));
    }
    missing += static_cast<int64_t>(submitted.size()) - found;
    std::printf("[watchers] active watch %zu: listed in %.2f s, saw %lld of %zu later submits\n", i,
                active[i]->Now().list_seconds, static_cast<long long>(found), submitted.size());
  }
  result.lag_p50_ms = Percentile(lags, 0.5);
  result.lag_p99_ms = Percentile(lags, 0.99);
  Report(absl::StrCat("after ", options.submits, " submits").c_str(), pid, base);
  for (auto& context : contexts) context->TryCancel();
  active.clear();
  if (missing > 0) {
    return absl::DataLossError(absl::StrCat(
        missing, " submitted workloads never reached an active watch that caught up with them"));
  }
  return result;
}

}  // namespace tollgate::bench
