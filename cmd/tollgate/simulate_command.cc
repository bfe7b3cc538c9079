#include "cmd/tollgate/simulate_command.h"

#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <map>
#include <optional>
#include <sstream>
#include <system_error>
#include <utility>
#include <variant>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_split.h"
#include "common/command_line.h"
#include "common/file_util.h"
#include "core/status_macros.h"
#include "services/manifest/job_kind.h"
#include "services/manifest/job_kinds.h"
#include "services/manifest/kueue_configuration.h"
#include "services/manifest/manifest_input.h"
#include "services/manifest/manifest_parser.h"
#include "services/sim/estimate_accuracy.h"
#include "services/sim/replay_report.h"
#include "services/sim/scenario_parser.h"
#include "services/sim/trace_reader.h"
#include "services/sim/trace_replay.h"

namespace tollgate::cli {
namespace {

using sim::ReplayReport;

constexpr int kOk = 0;
constexpr int kFailed = 1;
constexpr int kUsage = 2;

struct SimulateFlags {
  std::string trace;
  std::string queues;
  std::vector<std::string> compare;
  std::string out_dir;
  sim::TraceMapping mapping;
  absl::Duration sample_every = absl::Hours(1);
  std::string config_file;
  std::optional<bool> fair_sharing;
  bool plots = true;
  bool quiet = false;
  // Estimate every Nth job's start at submission (0: none); docs/simulation.md.
  int64_t estimate_every = 0;
  // Manifests of job kinds (a folder or a file) whose pod sets rows naming a kind ask for.
  std::string kind_manifests;
  // Kind -> pod sets, read from kind_manifests.
  std::map<std::string, std::vector<v1::PodSet>> kind_pod_sets;
  // --check-delay NAME=DURATION: admission checks Ready that long after the reservation.
  std::map<std::string, absl::Duration> check_delays;
  // --nodes FILE: the node inventory (the scenario format's `nodes:`), read into `nodes`.
  std::string nodes_file;
  std::vector<v1::Node> nodes;
  // --required-topology LEVEL: every job's pods must fit in one domain of LEVEL.
  std::string required_topology;
};

// The pod sets each kind asks for, from job manifests as tollgate-kube translates them
// (services/manifest/job_kinds.h): one manifest per kind; another document (a runtime, a
// ConfigMap) is only there for the jobs to refer to.
absl::StatusOr<std::map<std::string, std::vector<v1::PodSet>>> ReadKindManifests(
    const std::string& path) {
  std::istringstream no_stdin;
  std::vector<std::string> notes;
  TOLLGATE_ASSIGN_OR_RETURN(std::vector<manifest::Manifest> manifests,
                            manifest::ReadManifests(no_stdin, {path}, notes));
  std::map<std::string, std::vector<v1::PodSet>> out;
  for (const manifest::Manifest& m : manifests) {
    const v1::Workload* wl = std::get_if<v1::Workload>(&m.object);
    if (wl == nullptr) continue;
    auto kind = wl->metadata().labels().find(std::string(manifest::kJobKindLabel));
    if (kind == wl->metadata().labels().end()) continue;
    if (out.count(kind->second) > 0) {
      return absl::InvalidArgumentError(
          absl::StrCat("--kind-manifests: ", path, " has two manifests of kind ", kind->second));
    }
    out[kind->second].assign(wl->spec().pod_sets().begin(), wl->spec().pod_sets().end());
  }
  if (out.empty()) {
    return absl::InvalidArgumentError(absl::StrCat("--kind-manifests: no job manifest in ", path,
                                                   " (kinds: ", manifest::JobKindList(), ")"));
  }
  return out;
}

absl::StatusOr<std::string> ReadText(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return absl::NotFoundError(absl::StrCat("cannot read ", path));
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

absl::StatusOr<SimulateFlags> ParseFlags(const std::vector<std::string>& args, bool& help) {
  std::vector<char*> argv = {const_cast<char*>("simulate")};
  for (const std::string& a : args) argv.push_back(const_cast<char*>(a.c_str()));
  SimulateFlags f;
  TOLLGATE_RETURN_IF_ERROR(common::ForEachFlag(
      static_cast<int>(argv.size()), argv.data(), help,
      [&f](const common::FlagArg& flag) -> absl::Status {
        sim::TraceColumns& c = f.mapping.columns;
        const std::pair<absl::string_view, std::string*> strings[] = {
            {"trace", &f.trace},
            {"queues", &f.queues},
            {"out", &f.out_dir},
            {"config", &f.config_file},
            {"resource", &f.mapping.resource},
            {"default-queue", &f.mapping.default_queue},
            {"submit-column", &c.submit},
            {"duration-column", &c.duration},
            {"gpus-column", &c.gpus},
            {"queue-column", &c.queue},
            {"priority-column", &c.priority},
            {"name-column", &c.name},
            {"kind-column", &c.kind},
            {"kind-manifests", &f.kind_manifests},
            {"nodes", &f.nodes_file},
            {"required-topology", &f.required_topology},
        };
        for (const auto& [name, target] : strings) {
          if (flag.name != name) continue;
          TOLLGATE_ASSIGN_OR_RETURN(*target, flag.String());
          return absl::OkStatus();
        }
        if (flag.name == "compare") {
          TOLLGATE_ASSIGN_OR_RETURN(std::string list, flag.String());
          f.compare = absl::StrSplit(list, ',', absl::SkipEmpty());
        } else if (flag.name == "queue-map") {
          TOLLGATE_ASSIGN_OR_RETURN(std::string text, flag.String());
          TOLLGATE_ASSIGN_OR_RETURN(f.mapping.queues, sim::ParseQueueMap(text));
        } else if (flag.name == "gpus-per-pod") {
          TOLLGATE_ASSIGN_OR_RETURN(std::string text, flag.String());
          if (!absl::SimpleAtoi(text, &f.mapping.gpus_per_pod) || f.mapping.gpus_per_pod < 1) {
            return absl::InvalidArgumentError(
                absl::StrCat("--gpus-per-pod: expected a positive integer, got \"", text, "\""));
          }
        } else if (flag.name == "sample-every") {
          TOLLGATE_ASSIGN_OR_RETURN(f.sample_every, flag.Duration(/*allow_zero=*/false));
        } else if (flag.name == "fair-sharing") {
          TOLLGATE_ASSIGN_OR_RETURN(f.fair_sharing, flag.Bool());
        } else if (flag.name == "plots") {
          TOLLGATE_ASSIGN_OR_RETURN(f.plots, flag.Bool());
        } else if (flag.name == "estimate-every") {
          TOLLGATE_ASSIGN_OR_RETURN(std::string text, flag.String());
          if (!absl::SimpleAtoi(text, &f.estimate_every) || f.estimate_every < 0) {
            return absl::InvalidArgumentError(absl::StrCat(
                "--estimate-every: expected a non-negative integer, got \"", text, "\""));
          }
        } else if (flag.name == "check-delay") {
          TOLLGATE_ASSIGN_OR_RETURN(std::string text, flag.String());
          const size_t equals = text.find('=');
          if (equals == std::string::npos || equals == 0) {
            return absl::InvalidArgumentError(absl::StrCat(
                "--check-delay: expected NAME=DURATION (e.g. provisioning=10m), got \"", text,
                "\""));
          }
          const std::string name = text.substr(0, equals);
          TOLLGATE_ASSIGN_OR_RETURN(
              f.check_delays[name],
              (common::FlagArg{"check-delay", absl::string_view(text).substr(equals + 1), true}
                   .Duration(/*allow_zero=*/true)));
        } else if (flag.name == "quiet") {
          TOLLGATE_ASSIGN_OR_RETURN(f.quiet, flag.Bool());
        } else {
          return common::UnknownFlag(flag);
        }
        return absl::OkStatus();
      }));
  if (help) return f;
  if (f.trace.empty()) return absl::InvalidArgumentError("--trace: required");
  if (f.queues.empty() == f.compare.empty()) {
    return absl::InvalidArgumentError("give exactly one of --queues=FILE or --compare=A,B,...");
  }
  if (f.compare.size() == 1) {
    return absl::InvalidArgumentError("--compare: name at least two queue files");
  }
  return f;
}

// A progress bar on a terminal, a line per 10 % otherwise (logs stay readable).
class ProgressPrinter {
 public:
  ProgressPrinter(std::ostream& err, bool terminal, std::string label)
      : err_(err),
        terminal_(terminal),
        label_(std::move(label)),
        start_(std::chrono::steady_clock::now()) {}

  void Update(const sim::ReplayProgress& p) {
    const int percent = p.total == 0 ? 100 : static_cast<int>(100 * p.finished / p.total);
    const double wall =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
    const std::string bar(static_cast<size_t>(percent / 5), '#');
    const std::string line = absl::StrFormat(
        "%s [%-20s] %3d%%  finished %d/%d  virtual day %.1f  %.1fs", label_, bar, percent,
        p.finished, p.total, absl::ToDoubleHours(p.virtual_time) / 24, wall);
    if (terminal_) {
      err_ << "\r" << line << std::flush;
      if (percent == 100 && p.finished == p.total) err_ << "\n";
    } else if (percent >= next_line_percent_) {
      err_ << line << "\n";
      next_line_percent_ = percent / 10 * 10 + 10;
    }
  }

 private:
  std::ostream& err_;
  bool terminal_;
  std::string label_;
  std::chrono::steady_clock::time_point start_;
  int next_line_percent_ = 0;
};

// Runs gnuplot on each script in `dir`; a missing gnuplot is a note, not a failure.
void DrawPlots(const std::string& dir, std::ostream& err) {
  for (const std::string& script : sim::PlotScripts()) {
    const pid_t pid = fork();
    if (pid == 0) {
      if (chdir(dir.c_str()) != 0) _exit(126);
      execlp("gnuplot", "gnuplot", script.c_str(), static_cast<char*>(nullptr));
      _exit(127);
    }
    int status = 0;
    if (pid < 0 || waitpid(pid, &status, 0) < 0) {
      err << "simulate: could not run gnuplot; plots skipped\n";
      return;
    }
    if (WIFEXITED(status) && WEXITSTATUS(status) == 127) {
      err << "simulate: gnuplot not found (Debian: gnuplot-nox); the .gp scripts in " << dir
          << " draw the plots\n";
      return;
    }
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
      err << "simulate: gnuplot failed on " << dir << "/" << script << "\n";
    }
  }
}

absl::StatusOr<ReplayReport> RunOne(const SimulateFlags& f, const std::string& queues_file,
                                    const std::vector<sim::TraceJob>& jobs,
                                    const std::string& out_dir, std::ostream& err,
                                    bool err_is_terminal, std::string* accuracy) {
  TOLLGATE_ASSIGN_OR_RETURN(std::string text, ReadText(queues_file));
  TOLLGATE_ASSIGN_OR_RETURN(std::vector<manifest::Manifest> objects,
                            manifest::ParseManifests(text, queues_file));
  sim::ReplayOptions options;
  manifest::KueueConfiguration config;
  config.source.clear();
  if (!f.config_file.empty()) {
    TOLLGATE_ASSIGN_OR_RETURN(config, manifest::ParseKueueConfigurationFile(f.config_file));
  }
  TOLLGATE_RETURN_IF_ERROR(manifest::ApplyFairSharingFlag(f.fair_sharing, config));
  if (config.scheduler.wait_for_pods_ready.enable) {
    // A replayed job's pods start the moment it is admitted, so no timeout could fire; the
    // blocking half would only serialize admissions the trace never had.
    err << "simulate: " << config.source
        << ": waitForPodsReady has no effect in a replay (pods are ready at admission)\n";
    config.scheduler.wait_for_pods_ready.enable = false;
  }
  options.config = config.scheduler;
  options.resource = f.mapping.resource;
  options.sample_every = f.sample_every;
  options.estimate_every = f.estimate_every;
  options.kind_pod_sets = f.kind_pod_sets;
  options.check_delays = f.check_delays;
  options.nodes = f.nodes;
  options.required_topology = f.required_topology;
  ProgressPrinter progress(err, err_is_terminal,
                           std::filesystem::path(queues_file).stem().string());
  if (!f.quiet) {
    options.progress = [&progress](const sim::ReplayProgress& p) { progress.Update(p); };
  }
  TOLLGATE_ASSIGN_OR_RETURN(sim::ReplayResult result, sim::ReplayTrace(objects, jobs, options));
  ReplayReport report = sim::Summarize(jobs, result, f.mapping.resource);
  *accuracy = sim::FormatEstimateAccuracy(sim::MeasureEstimateAccuracy(jobs, result));
  if (!out_dir.empty()) {
    std::error_code ec;
    std::filesystem::create_directories(out_dir, ec);
    if (ec)
      return absl::UnavailableError(
          absl::StrCat("--out: cannot create ", out_dir, ": ", ec.message()));
    TOLLGATE_RETURN_IF_ERROR(sim::WriteReplayFiles(out_dir, jobs, result, report));
    if (f.estimate_every > 0) {
      TOLLGATE_RETURN_IF_ERROR(sim::WriteEstimatesCsv(out_dir + "/estimates.csv", jobs, result));
    }
    if (f.plots) DrawPlots(out_dir, err);
  }
  return report;
}

}  // namespace

const char* SimulateUsage() {
  return R"(usage: tollgate simulate --trace=CSV (--queues=FILE | --compare=A,B,...) [flags]

Replay a job trace through Tollgate's scheduling core on a virtual clock (the same code tollgated
runs) and report wait times, completion times, utilization, borrowing, preemptions and fairness.

  --trace=CSV             the job trace: a CSV file with a header row
  --queues=FILE           Kueue manifests (ResourceFlavors, Cohorts, ClusterQueues, LocalQueues,
                          priority classes) to replay against
  --compare=A,B,...       several such files, replayed over the same trace, side by side
  --out=DIR               write summary.txt, jobs.csv, queues.csv, timeseries.csv and SVG plots
                          (with --compare: one folder per file under DIR)
  --config=FILE           Kueue's Configuration, as tollgated --config reads it (fairSharing,
                          admissionFairSharing, resources; docs/configuration.md)
  --fair-sharing          enable fair sharing (Kueue's fairSharing.enable; adds to --config)
  --submit-column=NAME    submit time in seconds (default submit_s)
  --duration-column=NAME  run time in seconds (default duration_s)
  --gpus-column=NAME      GPUs per job (default gpus)
  --queue-column=NAME     the value that picks the LocalQueue (default team)
  --priority-column=NAME  optional integer priority
  --name-column=NAME      optional job name (default job-ROW)
  --kind-column=NAME      optional job kind (JobSet, RayJob, ...): such a row asks for what the
                          kind's manifest in --kind-manifests asks for, not for --gpus-column
  --kind-manifests=PATH   a file or folder with one job manifest per kind (docs/job-kinds.md)
  --queue-map=V=NS/LQ,... map queue-column values to namespace/LocalQueue (default: both
                          named after the value)
  --default-queue=NS/LQ   where unmapped values go
  --resource=NAME         the resource jobs request (default nvidia.com/gpu)
  --gpus-per-pod=N        larger jobs are gangs of pods of N (default 8)
  --sample-every=DURATION how often usage is sampled, virtual time (default 1h)
  --estimate-every=N       estimate every Nth job's start at submission, with learned runtimes
                          and with Slurm's time-limit rule, and report their accuracy (and
                          estimates.csv under --out); 0 (default) makes none
  --check-delay=NAME=DURATION
                          an admission check that becomes Ready DURATION after a job's quota is
                          reserved (a provisioning delay; repeatable). A check the queue files do
                          not define is added to every ClusterQueue. The summary then reports
                          the wait for checks and the quota held idle meanwhile
  --nodes=FILE            the nodes topology flavors place pods on (a YAML list in the scenario
                          format's `nodes:` shape: name, labels, allocatable, taints,
                          unschedulable, ready); the queue files then hold the Topology and the
                          flavors that name it (docs/topology.md)
  --required-topology=LEVEL
                          every job's pods must fit in one domain of LEVEL (a node label of the
                          Topology, e.g. a rack label), to measure what rack-level placement
                          costs in waiting time; rows of a kind keep their manifest's requests
  --plots=false           skip running gnuplot
  --quiet                 no progress bar
)";
}

int RunSimulateCommand(const std::vector<std::string>& args, std::ostream& out, std::ostream& err,
                       bool err_is_terminal) {
  bool help = false;
  absl::StatusOr<SimulateFlags> flags = ParseFlags(args, help);
  if (help) {
    out << SimulateUsage();
    return kOk;
  }
  if (!flags.ok()) {
    err << "simulate: " << flags.status().message() << "\n\n" << SimulateUsage();
    return kUsage;
  }
  if (!flags->mapping.columns.kind.empty() || !flags->kind_manifests.empty()) {
    if (flags->kind_manifests.empty() || flags->mapping.columns.kind.empty()) {
      err << "simulate: --kind-column and --kind-manifests go together\n\n" << SimulateUsage();
      return kUsage;
    }
    absl::StatusOr<std::map<std::string, std::vector<v1::PodSet>>> kinds =
        ReadKindManifests(flags->kind_manifests);
    if (!kinds.ok()) {
      err << "simulate: " << kinds.status().message() << "\n";
      return kFailed;
    }
    flags->kind_pod_sets = *std::move(kinds);
  }
  if (!flags->nodes_file.empty()) {
    absl::StatusOr<std::string> nodes_text = common::ReadFileToString(flags->nodes_file);
    absl::StatusOr<std::vector<v1::Node>> nodes =
        nodes_text.ok() ? sim::ParseNodeListText(*nodes_text, flags->nodes_file)
                        : absl::StatusOr<std::vector<v1::Node>>(nodes_text.status());
    if (!nodes.ok()) {
      err << "simulate: --nodes: " << nodes.status().message() << "\n";
      return kFailed;
    }
    flags->nodes = *std::move(nodes);
  }
  const SimulateFlags& f = *flags;
  absl::StatusOr<std::string> text = ReadText(f.trace);
  if (!text.ok()) {
    err << "simulate: --trace: " << text.status().message() << "\n";
    return kFailed;
  }
  absl::StatusOr<std::vector<sim::TraceJob>> jobs = sim::ParseTrace(*text, f.mapping, f.trace);
  if (!jobs.ok()) {
    err << "simulate: " << jobs.status().message() << "\n";
    return kFailed;
  }
  if (f.compare.empty()) {
    std::string accuracy;
    absl::StatusOr<ReplayReport> report =
        RunOne(f, f.queues, *jobs, f.out_dir, err, err_is_terminal, &accuracy);
    if (!report.ok()) {
      err << "simulate: " << report.status().message() << "\n";
      return kFailed;
    }
    out << sim::FormatSummary(*report) << accuracy;
    return kOk;
  }
  std::vector<std::pair<std::string, ReplayReport>> reports;
  std::string accuracies;
  for (const std::string& file : f.compare) {
    const std::string name = std::filesystem::path(file).stem().string();
    const std::string dir = f.out_dir.empty() ? "" : absl::StrCat(f.out_dir, "/", name);
    std::string accuracy;
    absl::StatusOr<ReplayReport> report =
        RunOne(f, file, *jobs, dir, err, err_is_terminal, &accuracy);
    if (!report.ok()) {
      err << "simulate: " << file << ": " << report.status().message() << "\n";
      return kFailed;
    }
    reports.emplace_back(name, *std::move(report));
    if (!accuracy.empty()) absl::StrAppend(&accuracies, "\n", name, ":", accuracy);
  }
  out << sim::FormatComparison(reports) << accuracies;
  return kOk;
}

}  // namespace tollgate::cli
