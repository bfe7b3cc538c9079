// tollgate-bench: Tollgate's load driver and service benchmarks. See bench/README.md and
// docs/performance.md for what each command measures and the results.
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <memory>
#include <string>
#include <system_error>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/time/clock.h"
#include "bench/bench_util.h"
#include "bench/engine_replay.h"
#include "bench/grpc_replay.h"
#include "bench/kueue_profile.h"
#include "bench/metrics_scraper.h"
#include "bench/restart_probe.h"
#include "bench/service_load.h"
#include "bench/stalled_watchers.h"
#include "bench/tollgated_launcher.h"
#include "bench/unary_floor.h"
#include "core/status_macros.h"

extern char** environ;

namespace tollgate::bench {
namespace {

#ifdef TOLLGATE_BENCH_DEFAULT_TOLLGATED
constexpr char kDefaultTollgated[] = TOLLGATE_BENCH_DEFAULT_TOLLGATED;
#else
constexpr char kDefaultTollgated[] = "tollgated";
#endif

constexpr char kUsage[] = R"(usage: tollgate-bench COMMAND [FLAGS]

Commands:
  kueue    Kueue's scheduler performance test replayed in real time against tollgated over
           gRPC, beside the same generator run through the engine alone in virtual time.
             --profile=baseline|large-scale   (default baseline)
             --engine-only                    skip the gRPC replay
             --timeout=10m --progress=5s
  service  Submit throughput and p50/p99 at 1, 8 and 64 concurrent streams, beside the gRPC
           health Check and raw synced RocksDB commits at the same concurrency; Watch fan-out.
             --phase=5s --concurrency=1,8,64 --watchers=10 --watch-workloads=3000
  restart  Restart-to-first-admission with N stored workloads, and RSS per workload (the
           reopen runs in a fresh process).
             --workloads=100000
             --data-dir=DIR     reopen (and change) an existing store instead of filling one
             --populate-only    fill --data-dir (or a new directory) and stop, so one filled
                                store can be copied for several reopens
             --unclean          with --populate-only: exit without closing the store, as after
                                kill -9 (the reopen then replays the write-ahead log)
  watchers Stalled watchers: N stored workloads, S Watch(since=0) streams that never read and
           A that do: how long the active ones take to list and to see each later submit,
           what tollgated sends and spends meanwhile, its RSS and threads. A list of S runs
           each on a fresh server and compares them with the first.
             --workloads=100000 --stalled=1000 --active=2 --submits=1000
             --stalled-window=KiB  the stalled clients' fixed HTTP/2 window (0: gRPC's
                                default client, which keeps taking data it never reads)
             --no-progress-timeout=2m  an active watch silent this long fails the run
  memory   Resident memory per pending workload of the pure core (ClusterState).
             --workloads=1000000

Server flags (kueue, service):
  --metrics=off|on|both  spawn tollgated with --metrics-listen and scrape /metrics every second
                       while measuring (on), or measure without and then with it in one run
                       (both); default off
  --target=HOST:PORT   use a running tollgated instead of spawning one
  --tollgated=PATH     the binary to spawn (default: the one built beside this program)
  --work-dir=DIR       data directories and scratch files (default /tmp/tollgate-bench)
  --keep               keep spawned data directories
  --tollgated-arg=ARG  one more flag for the spawned tollgated (repeat as --tollgated-args=A,B),
                       e.g. its --tls-cert/--tls-key/--client-ca/--token-file
Client authentication (for a secured --target, or a spawned server given security flags):
  --ca=FILE            verify the server's certificate with this CA (TLS)
  --cert=FILE --key=FILE  client certificate (mTLS)
  --token=TOKEN        bearer token (static or OIDC) sent on every call
  --token-file=FILE    the same, read from a file
  --tls-server-name=N  the name in the server's certificate, when not the target's host
)";

struct ServerFlags {
  std::string target;
  std::string tollgated;
  std::string work_dir;
  bool keep = false;
  // Spawn with --metrics-listen and scrape it while measuring.
  bool metrics = false;
  std::vector<std::string> tollgated_args;
  client::Credentials auth;
};

// The flags every server-using mode accepts on top of its own.
const std::vector<std::string> kAuthFlags = {
    "tollgated-arg", "tollgated-args", "ca",         "cert",
    "key",           "token",          "token-file", "tls-server-name"};

// The --metrics runs: {false}, {true} or {false, true}.
absl::StatusOr<std::vector<bool>> MetricsRuns(const Flags& flags) {
  const std::string mode = flags.String("metrics", "off");
  if (mode == "off") return std::vector<bool>{false};
  if (mode == "on") return std::vector<bool>{true};
  if (mode == "both") return std::vector<bool>{false, true};
  return absl::InvalidArgumentError(absl::StrCat("--metrics=", mode, ": want off, on or both"));
}

std::vector<std::string> WithAuthFlags(std::vector<std::string> known) {
  known.insert(known.end(), kAuthFlags.begin(), kAuthFlags.end());
  return known;
}

absl::StatusOr<ServerFlags> ReadServerFlags(const Flags& flags) {
  ServerFlags sf;
  sf.target = flags.String("target", "");
  sf.tollgated = flags.String("tollgated", kDefaultTollgated);
  sf.work_dir = flags.String("work-dir", "/tmp/tollgate-bench");
  sf.keep = flags.Bool("keep");
  if (const std::string one = flags.String("tollgated-arg", ""); !one.empty()) {
    sf.tollgated_args.push_back(one);
  }
  for (absl::string_view arg :
       absl::StrSplit(flags.String("tollgated-args", ""), ',', absl::SkipEmpty())) {
    sf.tollgated_args.emplace_back(arg);
  }
  client::ConnectionFiles files;
  files.ca_file = flags.String("ca", "");
  files.cert_file = flags.String("cert", "");
  files.key_file = flags.String("key", "");
  files.token_file = flags.String("token-file", "");
  if (!files.cert_file.empty() && files.ca_file.empty()) {
    return absl::InvalidArgumentError("--cert needs --ca (the server's CA) for TLS");
  }
  TOLLGATE_ASSIGN_OR_RETURN(sf.auth, client::LoadCredentials(files));
  if (const std::string token = flags.String("token", ""); !token.empty()) {
    sf.auth.bearer_token = token;
  }
  sf.auth.tls_server_name = flags.String("tls-server-name", "");
  return sf;
}

// A spawned tollgated and its data directory, removed afterwards unless --keep.
struct Server {
  std::unique_ptr<TollgatedTarget> target;
  // Scrapes while the server runs (--metrics); destroyed before the server.
  std::unique_ptr<MetricsScraper> scraper;
  std::string data_dir;
  bool keep = false;
  ~Server() {
    scraper.reset();
    target.reset();
    if (!data_dir.empty() && !keep) {
      std::error_code ec;
      std::filesystem::remove_all(data_dir, ec);
      std::filesystem::remove(data_dir + ".port", ec);
      std::filesystem::remove(data_dir + ".log", ec);
      std::filesystem::remove(data_dir + ".metrics-port", ec);
    }
  }
};

absl::Status StartServer(const ServerFlags& sf, const std::string& name, Server& server) {
  server.keep = sf.keep;
  if (!sf.target.empty()) {
    TOLLGATE_ASSIGN_OR_RETURN(server.target, TollgatedTarget::Connect(sf.target, sf.auth));
    return absl::OkStatus();
  }
  TOLLGATE_ASSIGN_OR_RETURN(server.data_dir, MakeTempDir(sf.work_dir, name + "-"));
  std::vector<std::string> extra_args = sf.tollgated_args;
  const std::string metrics_port_file = server.data_dir + ".metrics-port";
  if (sf.metrics) {
    extra_args.push_back("--metrics-listen=127.0.0.1:0");
    extra_args.push_back("--metrics-port-file=" + metrics_port_file);
  }
  TOLLGATE_ASSIGN_OR_RETURN(
      server.target, TollgatedTarget::Spawn(sf.tollgated, server.data_dir, extra_args, sf.auth));
  std::printf("spawned %s (pid %d) on %s, data dir %s, metrics %s\n", sf.tollgated.c_str(),
              server.target->pid(), server.target->address().c_str(), server.data_dir.c_str(),
              sf.metrics ? "on (scraped every 1s)" : "off");
  if (sf.metrics) {
    // The metrics port file is written right after the gRPC port's; wait for it briefly.
    int port = 0;
    const absl::Time deadline = absl::Now() + absl::Seconds(10);
    while (port == 0 && absl::Now() < deadline) {
      std::ifstream in(metrics_port_file);
      if (!(in >> port)) {
        port = 0;
        absl::SleepFor(absl::Milliseconds(10));
      }
    }
    if (port == 0) return absl::UnavailableError("tollgated wrote no metrics port");
    server.scraper = std::make_unique<MetricsScraper>(port, absl::Seconds(1));
  }
  return absl::OkStatus();
}

// The replay's unary calls, made again on the same server as empty health Checks: how long the
// calls alone take on this machine, beside the engine bound (which counts no RPC at all).
absl::Status PrintUnaryFloor(const TollgatedTarget& target, const ReplayRecorder::Summary& realtime,
                             const ReplayRecorder::Summary& engine, int channels) {
  // About the replay's own peak of outstanding calls.
  constexpr int kMaxInFlight = 4096;
  TOLLGATE_ASSIGN_OR_RETURN(
      UnaryFloor floor, MeasureUnaryFloor(target, realtime.unary_calls, channels, kMaxInFlight));
  std::printf(
      "unary floor: the replay's %lld Submit/Finish/ReportStopped calls as empty health Checks "
      "on the same server over %d channels: %.2f s (%.0f/s) = %.2fx the engine bound; "
      "wall / unary floor: %.2f\n",
      static_cast<long long>(floor.calls), channels, floor.seconds, floor.per_second(),
      engine.wall_s > 0 ? floor.seconds / engine.wall_s : 0,
      floor.seconds > 0 ? realtime.wall_s / floor.seconds : 0);
  std::fflush(stdout);
  return absl::OkStatus();
}

absl::Status RunKueue(const Flags& flags) {
  TOLLGATE_RETURN_IF_ERROR(
      flags.CheckKnown(WithAuthFlags({"profile", "engine-only", "timeout", "progress", "target",
                                      "tollgated", "work-dir", "keep", "metrics"})));
  TOLLGATE_ASSIGN_OR_RETURN(std::vector<bool> metrics_runs, MetricsRuns(flags));
  TOLLGATE_ASSIGN_OR_RETURN(Profile profile, ProfileByName(flags.String("profile", "baseline")));
  GrpcReplayOptions options;
  TOLLGATE_ASSIGN_OR_RETURN(options.timeout, flags.Duration("timeout", absl::Minutes(10)));
  TOLLGATE_ASSIGN_OR_RETURN(options.progress_every, flags.Duration("progress", absl::Seconds(5)));

  // The bound first: it is quick and tells what to expect.
  const double e0 = MonotonicSeconds();
  EngineReplayOptions engine_options;
  engine_options.progress_every = absl::Seconds(profile.name == "baseline" ? 30 : 2);
  TOLLGATE_ASSIGN_OR_RETURN(ReplayRecorder::Summary engine,
                            RunEngineReplay(profile, engine_options));
  std::printf("[engine %s] done: %.2fs virtual in %.2fs real\n", profile.name.c_str(),
              engine.wall_s, MonotonicSeconds() - e0);
  if (flags.Bool("engine-only")) {
    PrintReplayTable(profile, nullptr, &engine);
    return absl::OkStatus();
  }
  for (bool metrics : metrics_runs) {
    Server server;
    TOLLGATE_ASSIGN_OR_RETURN(ServerFlags sf, ReadServerFlags(flags));
    sf.metrics = metrics;
    TOLLGATE_RETURN_IF_ERROR(StartServer(sf, "kueue-" + profile.name, server));
    TOLLGATE_ASSIGN_OR_RETURN(ReplayRecorder::Summary realtime,
                              RunGrpcReplay(*server.target, profile, options));
    if (server.target->pid() > 0) {
      std::printf("tollgated RSS at the end: %.1f MiB\n",
                  static_cast<double>(ResidentBytesOf(server.target->pid())) / (1 << 20));
    }
    std::printf("== metrics %s%s\n", metrics ? "on: " : "off",
                server.scraper ? server.scraper->Summary().c_str() : "");
    PrintReplayTable(profile, &realtime, &engine);
    TOLLGATE_RETURN_IF_ERROR(PrintUnaryFloor(*server.target, realtime, engine, options.channels));
  }
  return absl::OkStatus();
}

absl::Status RunService(const Flags& flags) {
  TOLLGATE_RETURN_IF_ERROR(
      flags.CheckKnown(WithAuthFlags({"phase", "concurrency", "watchers", "watch-workloads",
                                      "target", "tollgated", "work-dir", "keep", "metrics"})));
  TOLLGATE_ASSIGN_OR_RETURN(std::vector<bool> metrics_runs, MetricsRuns(flags));
  ServiceLoadOptions options;
  TOLLGATE_ASSIGN_OR_RETURN(options.phase, flags.Duration("phase", absl::Seconds(5)));
  TOLLGATE_ASSIGN_OR_RETURN(int64_t watchers, flags.Int("watchers", 10));
  TOLLGATE_ASSIGN_OR_RETURN(int64_t watch_workloads, flags.Int("watch-workloads", 3000));
  options.watchers = static_cast<int>(watchers);
  options.watch_workloads = static_cast<int>(watch_workloads);
  options.concurrency.clear();
  for (absl::string_view n : absl::StrSplit(flags.String("concurrency", "1,8,64"), ',')) {
    int v = 0;
    if (!absl::SimpleAtoi(n, &v) || v < 1) {
      return absl::InvalidArgumentError(absl::StrCat("--concurrency: bad value ", n));
    }
    options.concurrency.push_back(v);
  }
  for (bool metrics : metrics_runs) {
    TOLLGATE_ASSIGN_OR_RETURN(ServerFlags sf, ReadServerFlags(flags));
    sf.metrics = metrics;
    options.scratch_dir = sf.work_dir;
    Server server;
    TOLLGATE_RETURN_IF_ERROR(StartServer(sf, "service", server));
    std::printf("== metrics %s\n", metrics ? "on" : "off");
    TOLLGATE_RETURN_IF_ERROR(RunServiceLoad(*server.target, options));
    if (server.scraper) std::printf("metrics scraper: %s\n", server.scraper->Summary().c_str());
  }
  return absl::OkStatus();
}

absl::Status RunRestart(const Flags& flags, const char* self) {
  TOLLGATE_RETURN_IF_ERROR(flags.CheckKnown(
      {"workloads", "work-dir", "keep", "reopen", "data-dir", "populate-only", "unclean"}));
  TOLLGATE_ASSIGN_OR_RETURN(int64_t workloads, flags.Int("workloads", 100000));
  if (workloads < 3) return absl::InvalidArgumentError("--workloads: want at least 3");
  if (flags.Bool("reopen")) {
    return ProbeRestart(flags.String("data-dir", ""), workloads);
  }
  if (flags.Bool("unclean") && !flags.Bool("populate-only")) {
    return absl::InvalidArgumentError("--unclean needs --populate-only");
  }
  std::string data_dir = flags.String("data-dir", "");
  if (flags.Bool("populate-only")) {
    if (data_dir.empty()) {
      TOLLGATE_ASSIGN_OR_RETURN(
          data_dir, MakeTempDir(flags.String("work-dir", "/tmp/tollgate-bench"), "restart-"));
    }
    const PopulateEnd end = flags.Bool("unclean") ? PopulateEnd::kExitUnclean : PopulateEnd::kClose;
    TOLLGATE_RETURN_IF_ERROR(PopulateRestartStore(data_dir, workloads, end));
    std::printf("[populate] store left in %s\n", data_dir.c_str());
    return absl::OkStatus();
  }
  const bool made_here = data_dir.empty();
  if (made_here) {
    TOLLGATE_ASSIGN_OR_RETURN(
        data_dir, MakeTempDir(flags.String("work-dir", "/tmp/tollgate-bench"), "restart-"));
    TOLLGATE_RETURN_IF_ERROR(PopulateRestartStore(data_dir, workloads, PopulateEnd::kClose));
  }
  // Reopen in a fresh process so its RSS holds only what the restart built.
  std::vector<std::string> args = {self, "restart", "--reopen",
                                   absl::StrCat("--data-dir=", data_dir),
                                   absl::StrCat("--workloads=", workloads)};
  std::vector<char*> argv;
  for (std::string& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  pid_t pid = -1;
  const int err = posix_spawn(&pid, "/proc/self/exe", nullptr, nullptr, argv.data(), environ);
  if (err != 0) return absl::InternalError(absl::StrCat("posix_spawn: ", std::strerror(err)));
  int status = 0;
  waitpid(pid, &status, 0);
  if (made_here && !flags.Bool("keep")) {
    std::error_code ec;
    std::filesystem::remove_all(data_dir, ec);
  }
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
    return absl::InternalError(absl::StrCat("the reopen process failed (status ", status, ")"));
  }
  return absl::OkStatus();
}

absl::Status RunWatchers(const Flags& flags) {
  TOLLGATE_RETURN_IF_ERROR(
      flags.CheckKnown({"workloads", "stalled", "stalled-window", "active", "submits",
                        "no-progress-timeout", "tollgated", "work-dir", "keep"}));
  StalledWatchersOptions options;
  TOLLGATE_ASSIGN_OR_RETURN(options.workloads, flags.Int("workloads", 100000));
  TOLLGATE_ASSIGN_OR_RETURN(int64_t active, flags.Int("active", 2));
  TOLLGATE_ASSIGN_OR_RETURN(int64_t submits, flags.Int("submits", 1000));
  TOLLGATE_ASSIGN_OR_RETURN(options.stalled_window_kib, flags.Int("stalled-window", 0));
  TOLLGATE_ASSIGN_OR_RETURN(options.no_progress_timeout,
                            flags.Duration("no-progress-timeout", absl::Minutes(2)));
  if (options.workloads < 3) return absl::InvalidArgumentError("--workloads: want at least 3");
  if (active < 1) return absl::InvalidArgumentError("--active: want at least 1");
  if (options.stalled_window_kib < 0) {
    return absl::InvalidArgumentError("--stalled-window: want KiB >= 0");
  }
  std::vector<int> stalled_counts;
  for (absl::string_view n : absl::StrSplit(flags.String("stalled", "1000"), ',')) {
    int count = 0;
    if (!absl::SimpleAtoi(n, &count) || count < 0) {
      return absl::InvalidArgumentError(
          absl::StrCat("--stalled: \"", n, "\" is not a count (a list like 10,1000)"));
    }
    stalled_counts.push_back(count);
  }
  options.active = static_cast<int>(active);
  options.submits = static_cast<int>(submits);
  TOLLGATE_ASSIGN_OR_RETURN(const ServerFlags sf, ReadServerFlags(flags));
  options.tollgated = sf.tollgated;
  options.work_dir = sf.work_dir;
  options.keep = sf.keep;
  std::vector<StalledWatchersResult> results;
  for (int count : stalled_counts) {
    options.stalled = count;
    std::printf("== %d stalled (%s), %d active, %lld stored, %d submits\n", count,
                options.stalled_window_kib > 0
                    ? absl::StrCat("window ", options.stalled_window_kib, " KiB").c_str()
                    : "gRPC's default client",
                options.active, static_cast<long long>(options.workloads), options.submits);
    TOLLGATE_ASSIGN_OR_RETURN(StalledWatchersResult result, RunStalledWatchers(options));
    results.push_back(result);
  }
  // The first count is the reference the others are compared with.
  std::printf(
      "\n stalled | list s (x)     | lag p50 ms | lag p99 ms (x)  | listing: events sent, CPU s "
      "| submits: events sent, CPU ms per submit\n");
  for (const StalledWatchersResult& r : results) {
    const StalledWatchersResult& ref = results.front();
    std::printf(" %7d | %6.2f (%5.1fx) | %10.1f | %8.1f (%5.1fx) | %12lld, %6.1f | %12lld, %6.2f\n",
                r.stalled, r.list_seconds, r.list_seconds / std::max(ref.list_seconds, 1e-9),
                r.lag_p50_ms, r.lag_p99_ms, r.lag_p99_ms / std::max(ref.lag_p99_ms, 1e-9),
                static_cast<long long>(r.list_events_sent), r.list_cpu_seconds,
                static_cast<long long>(r.submit_events_sent),
                1000.0 * r.submit_cpu_seconds / std::max(options.submits, 1));
  }
  return absl::OkStatus();
}

absl::Status RunMemory(const Flags& flags) {
  TOLLGATE_RETURN_IF_ERROR(flags.CheckKnown({"workloads"}));
  TOLLGATE_ASSIGN_OR_RETURN(int64_t workloads, flags.Int("workloads", 1000000));
  return ProbeEngineMemory(workloads);
}

int Main(int argc, char** argv) {
  if (argc < 2 || std::strcmp(argv[1], "-h") == 0 || std::strcmp(argv[1], "--help") == 0) {
    std::cout << kUsage;
    return argc < 2 ? 2 : 0;
  }
  absl::StatusOr<Flags> flags = Flags::Parse(argc, argv, 2);
  absl::Status status;
  const std::string command = argv[1];
  if (!flags.ok()) {
    status = flags.status();
  } else if (command == "kueue") {
    status = RunKueue(*flags);
  } else if (command == "service") {
    status = RunService(*flags);
  } else if (command == "restart") {
    status = RunRestart(*flags, argv[0]);
  } else if (command == "watchers") {
    status = RunWatchers(*flags);
  } else if (command == "memory") {
    status = RunMemory(*flags);
  } else {
    status = absl::InvalidArgumentError(absl::StrCat("unknown command ", command));
  }
  if (!status.ok()) {
    std::fprintf(stderr, "tollgate-bench %s: %s\n", command.c_str(), status.ToString().c_str());
    if (absl::IsInvalidArgument(status)) std::cerr << kUsage;
    return 1;
  }
  return 0;
}

}  // namespace
}  // namespace tollgate::bench

int main(int argc, char** argv) { return tollgate::bench::Main(argc, argv); }
