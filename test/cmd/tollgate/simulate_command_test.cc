#include "cmd/tollgate/simulate_command.h"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "cmd/tollgate/cli_commands.h"
#include "core/clock.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace tollgate::cli {
namespace {

using ::testing::AllOf;
using ::testing::HasSubstr;

const std::string kData = TOLLGATE_CLI_TESTDATA_DIR;

struct CliRun {
  int code = -1;
  std::string out;
  std::string err;
};

CliRun Simulate(std::vector<std::string> args) {
  args.insert(args.begin(), "simulate");
  core::SimulatedClock clock(absl::UnixEpoch());
  std::istringstream in;
  std::ostringstream out, err;
  CliEnv env{in, out, err, "", clock};
  CliRun r;
  r.code = RunCli(args, env);
  r.out = out.str();
  r.err = err.str();
  return r;
}

std::string ReadAll(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

TEST(SimulateCommandTest, TheSameInputsGiveByteIdenticalOutputs) {
  std::vector<std::string> dirs;
  for (int i = 0; i < 2; ++i) {
    const std::string dir = absl::StrCat(::testing::TempDir(), "/simulate", i);
    std::filesystem::remove_all(dir);
    dirs.push_back(dir);
    CliRun r = Simulate({"--trace=" + kData + "/sim_trace.csv",
                         "--compare=" + kData + "/sim_isolated.yaml," + kData + "/sim_reclaim.yaml",
                         "--out=" + dir, "--quiet"});
    ASSERT_EQ(r.code, kExitOk) << r.err;
  }
  int compared = 0;
  for (const auto& entry : std::filesystem::recursive_directory_iterator(dirs[0])) {
    if (!entry.is_regular_file()) continue;
    const std::filesystem::path rel = std::filesystem::relative(entry.path(), dirs[0]);
    EXPECT_EQ(ReadAll(entry.path()), ReadAll(dirs[1] / rel)) << rel;
    ++compared;
  }
  // Per design: summary, three CSVs, five scripts and, with gnuplot installed, five SVGs.
  EXPECT_GE(compared, 2 * 9);
  EXPECT_TRUE(std::filesystem::exists(dirs[0] + "/sim_reclaim/usage.svg"))
      << "gnuplot (Debian gnuplot-nox) is needed for the plots";
}

TEST(SimulateCommandTest, ComparesDesignsSideBySide) {
  CliRun r = Simulate({"--trace=" + kData + "/sim_trace.csv",
                       "--compare=" + kData + "/sim_isolated.yaml," + kData + "/sim_reclaim.yaml",
                       "--quiet"});
  ASSERT_EQ(r.code, kExitOk) << r.err;
  std::vector<std::string> lines;
  std::istringstream text(r.out);
  for (std::string line; std::getline(text, line);) lines.push_back(line);
  ASSERT_EQ(lines.size(), 3u) << r.out;
  EXPECT_THAT(lines[0], HasSubstr("CONFIG"));
  EXPECT_THAT(lines[1], HasSubstr("sim_isolated"));
  EXPECT_THAT(lines[2], HasSubstr("sim_reclaim"));
  // Isolated queues never preempt; reclaim does on this trace.
  EXPECT_THAT(lines[1], HasSubstr("  0     0.0      0"));
  EXPECT_THAT(lines[2], ::testing::Not(HasSubstr("  0     0.0      0")));
}

TEST(SimulateCommandTest, SummaryNamesEveryQueueAndShowsProgress) {
  CliRun r =
      Simulate({"--trace=" + kData + "/sim_trace.csv", "--queues=" + kData + "/sim_reclaim.yaml"});
  ASSERT_EQ(r.code, kExitOk) << r.err;
  EXPECT_THAT(r.out, HasSubstr("240 jobs replayed"));
  for (const char* q : {"vision", "speech", "nlp", "ALL"}) EXPECT_THAT(r.out, HasSubstr(q));
  // Not a terminal: progress comes as lines, the last at 100 %.
  EXPECT_THAT(r.err, HasSubstr("100%  finished 240/240"));
}

TEST(SimulateCommandTest, BadInputIsNamed) {
  struct Case {
    std::vector<std::string> args;
    int code;
    std::string message;
  };
  const std::string bad = ::testing::TempDir() + "/bad_trace.csv";
  std::ofstream(bad) << "job_id,submit_s,duration_s,gpus,team\n1,0,60,three,vision\n";
  const Case cases[] = {
      {{"--queues=" + kData + "/sim_isolated.yaml"}, kExitUsage, "--trace: required"},
      {{"--trace=x.csv"}, kExitUsage, "exactly one of --queues=FILE or --compare"},
      {{"--trace=x.csv", "--compare=a.yaml"}, kExitUsage, "at least two"},
      {{"--trace=x.csv", "--queues=q.yaml", "--frobnicate"}, kExitUsage, "frobnicate"},
      {{"--trace=" + kData + "/nope.csv", "--queues=q.yaml"}, kExitFailure, "nope.csv"},
      {{"--trace=" + bad, "--queues=" + kData + "/sim_isolated.yaml"},
       kExitFailure,
       "row 1: column \"gpus\": expected an integer, got \"three\""},
      {{"--trace=" + kData + "/sim_trace.csv", "--queues=" + kData + "/sim_isolated.yaml",
        "--gpus-per-pod=0"},
       kExitUsage,
       "--gpus-per-pod: expected a positive integer, got \"0\""},
      {{"--trace=x.csv", "--queues=q.yaml", "--estimate-every=some"},
       kExitUsage,
       "--estimate-every: expected a non-negative integer, got \"some\""},
      {{"--trace=x.csv", "--queues=q.yaml", "--check-delay=10m"},
       kExitUsage,
       "--check-delay: expected NAME=DURATION (e.g. provisioning=10m), got \"10m\""},
      {{"--trace=x.csv", "--queues=q.yaml", "--check-delay=prov=soon"}, kExitUsage, "soon"},
  };
  for (const Case& c : cases) {
    CliRun r = Simulate(c.args);
    EXPECT_EQ(r.code, c.code) << c.message << ": " << r.err;
    EXPECT_THAT(r.err, HasSubstr(c.message));
  }
}

// A trace whose rows name a kind replays jobs of that kind's shape: a JobSet row asks for the
// documented JobSet's pod sets (9 CPUs: 6 workers of 1 and a driver of 2, plus memory), a plain
// row for its GPU column. Quota for 9 CPUs holds one JobSet at a time.
TEST(SimulateCommandTest, ReplaysRowsThatNameAKind) {
  const std::string dir = ::testing::TempDir() + "/simulate-kinds";
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  std::ofstream(dir + "/trace.csv") << "submit_s,duration_s,gpus,team,kind\n"
                                       "0,600,,ml,JobSet\n"
                                       "10,600,,ml,JobSet\n"
                                       "20,60,1,ml,\n";
  std::ofstream(dir + "/queues.yaml") << R"(
apiVersion: kueue.x-k8s.io/v1beta1
kind: ResourceFlavor
metadata: {name: default}
---
apiVersion: kueue.x-k8s.io/v1beta1
kind: ClusterQueue
metadata: {name: ml}
spec:
  namespaceSelector: {}
  resourceGroups:
  - coveredResources: [cpu, memory, nvidia.com/gpu]
    flavors:
    - name: default
      resources: [{name: cpu, nominalQuota: 9}, {name: memory, nominalQuota: 4Gi},
                  {name: nvidia.com/gpu, nominalQuota: 1}]
---
apiVersion: kueue.x-k8s.io/v1beta1
kind: LocalQueue
metadata: {namespace: ml, name: ml}
spec: {clusterQueue: ml}
)";
  CliRun r = Simulate({"--trace=" + dir + "/trace.csv", "--queues=" + dir + "/queues.yaml",
                       "--kind-column=kind",
                       "--kind-manifests=" + std::string(TOLLGATE_FIXTURES_DIR) + "/jobset",
                       "--resource=cpu", "--out=" + dir + "/out", "--plots=false", "--quiet"});
  ASSERT_EQ(r.code, kExitOk) << r.err;
  EXPECT_THAT(r.out, HasSubstr("3 jobs replayed"));
  // The second JobSet waits for the first: it is admitted when the first ends at 600 s.
  const std::string jobs = ReadAll(dir + "/out/jobs.csv");
  EXPECT_THAT(jobs, HasSubstr("job-2,ml,ml,10,600,"));
  EXPECT_THAT(jobs, ::testing::ContainsRegex("job-2,ml,ml,10,600,[0-9]+,[0-9]+,600,"));

  // A row naming a kind without a manifest, and the flags without each other, are named.
  std::ofstream(dir + "/bad.csv") << "submit_s,duration_s,gpus,team,kind\n0,60,,ml,RayJob\n";
  r = Simulate({"--trace=" + dir + "/bad.csv", "--queues=" + dir + "/queues.yaml",
                "--kind-column=kind",
                "--kind-manifests=" + std::string(TOLLGATE_FIXTURES_DIR) + "/jobset", "--quiet"});
  EXPECT_EQ(r.code, kExitFailure);
  EXPECT_THAT(r.err, HasSubstr("no manifest of kind \"RayJob\""));
  r = Simulate(
      {"--trace=" + dir + "/trace.csv", "--queues=" + dir + "/queues.yaml", "--kind-column=kind"});
  EXPECT_EQ(r.code, kExitUsage);
  EXPECT_THAT(r.err, HasSubstr("--kind-column and --kind-manifests go together"));
}

// Rack-level placement: with --required-topology a job waits for one rack to have room, where
// quota alone (and pods spread over racks) would have started it at once.
TEST(SimulateCommandTest, ARequiredTopologyShowsWhatRackPlacementCosts) {
  const std::string dir = ::testing::TempDir() + "/simulate-topology";
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  // Two 3-GPU jobs take 3 of the 4 GPUs of each rack; the third asks for 2.
  std::ofstream(dir + "/trace.csv") << "submit_s,duration_s,gpus,team\n"
                                       "0,600,3,ml\n"
                                       "1,600,3,ml\n"
                                       "2,60,2,ml\n";
  std::ofstream(dir + "/queues.yaml") << R"(
apiVersion: kueue.x-k8s.io/v1beta1
kind: Topology
metadata: {name: racks}
spec:
  levels: [{nodeLabel: rack}, {nodeLabel: kubernetes.io/hostname}]
---
apiVersion: kueue.x-k8s.io/v1beta1
kind: ResourceFlavor
metadata: {name: tas}
spec: {topologyName: racks}
---
apiVersion: kueue.x-k8s.io/v1beta1
kind: ClusterQueue
metadata: {name: ml}
spec:
  namespaceSelector: {}
  resourceGroups:
  - coveredResources: [nvidia.com/gpu]
    flavors: [{name: tas, resources: [{name: nvidia.com/gpu, nominalQuota: 8}]}]
---
apiVersion: kueue.x-k8s.io/v1beta1
kind: LocalQueue
metadata: {namespace: ml, name: ml}
spec: {clusterQueue: ml}
)";
  std::ofstream(dir + "/nodes.yaml") << R"(nodes:
- {name: n1, labels: {rack: r1, kubernetes.io/hostname: n1}, allocatable: {nvidia.com/gpu: 4, pods: 10}}
- {name: n2, labels: {rack: r2, kubernetes.io/hostname: n2}, allocatable: {nvidia.com/gpu: 4, pods: 10}}
)";
  const std::vector<std::string> common = {"--trace=" + dir + "/trace.csv",
                                           "--queues=" + dir + "/queues.yaml",
                                           "--nodes=" + dir + "/nodes.yaml",
                                           "--gpus-per-pod=1",
                                           "--plots=false",
                                           "--quiet"};
  auto run = [&](const std::string& out, std::vector<std::string> extra) {
    std::vector<std::string> args = common;
    args.push_back("--out=" + dir + "/" + out);
    args.insert(args.end(), extra.begin(), extra.end());
    CliRun r = Simulate(args);
    EXPECT_EQ(r.code, kExitOk) << r.err;
    return ReadAll(dir + "/" + out + "/jobs.csv");
  };
  // name,team,cluster_queue,submit_s,duration_s,pods,per_pod,admitted_s,...
  EXPECT_THAT(run("anywhere", {}), HasSubstr("job-3,ml,ml,2,60,2,1,2,"));
  EXPECT_THAT(run("in-a-rack", {"--required-topology=rack"}),
              HasSubstr("job-3,ml,ml,2,60,2,1,600,"));

  // A node list the inventory refuses is named, and nothing is replayed.
  std::ofstream(dir + "/bad-nodes.yaml") << "[{name: n1, allocatable: {nvidia.com/gpu: lots}}]\n";
  std::vector<std::string> bad = common;
  bad[2] = "--nodes=" + dir + "/bad-nodes.yaml";
  CliRun r = Simulate(bad);
  EXPECT_EQ(r.code, kExitFailure);
  EXPECT_THAT(r.err, AllOf(HasSubstr("--nodes"), HasSubstr("lots")));
  std::ofstream(dir + "/not-nodes.yaml") << "nodes: [{nam: n1}]\n";
  bad[2] = "--nodes=" + dir + "/not-nodes.yaml";
  r = Simulate(bad);
  EXPECT_EQ(r.code, kExitFailure);
  EXPECT_THAT(r.err, AllOf(HasSubstr("--nodes"), HasSubstr("nam")));
}

// A provisioning delay: every job waits at least that long, and the summary says what it cost.
TEST(SimulateCommandTest, ACheckDelayShowsWhatProvisioningCosts) {
  CliRun without = Simulate({"--trace=" + kData + "/sim_trace.csv",
                             "--queues=" + kData + "/sim_isolated.yaml", "--quiet"});
  ASSERT_EQ(without.code, kExitOk) << without.err;
  EXPECT_THAT(without.out, ::testing::Not(HasSubstr("CHECK-WAIT")));
  CliRun with =
      Simulate({"--trace=" + kData + "/sim_trace.csv", "--queues=" + kData + "/sim_isolated.yaml",
                "--check-delay=provisioning=10m", "--quiet"});
  ASSERT_EQ(with.code, kExitOk) << with.err;
  EXPECT_THAT(with.out, AllOf(HasSubstr("CHECK-WAIT-P50"), HasSubstr("IDLE-RESERVED-H")));
  // Every admitted job waited exactly the delay for its check (nothing preempts here).
  std::istringstream text(with.out);
  bool found = false;
  for (std::string line; std::getline(text, line);) {
    // The second table's ALL row: p50, p95 and p99 of the wait for checks.
    std::vector<std::string> cells = absl::StrSplit(line, ' ', absl::SkipEmpty());
    if (cells.size() == 5 && cells[0] == "ALL") {
      EXPECT_THAT(cells, ::testing::ElementsAre("ALL", "10m00s", "10m00s", "10m00s", ::testing::_));
      found = true;
    }
  }
  EXPECT_TRUE(found) << with.out;
}

// Every 5th of the 240 jobs is asked about at submission, both ways, and scored.
TEST(SimulateCommandTest, ReportsStartEstimateAccuracyBesideSlurmsRule) {
  const std::string dir = ::testing::TempDir() + "/simulate-estimates";
  std::filesystem::remove_all(dir);
  CliRun r =
      Simulate({"--trace=" + kData + "/sim_trace.csv", "--queues=" + kData + "/sim_reclaim.yaml",
                "--estimate-every=5", "--out=" + dir, "--plots=false", "--quiet"});
  ASSERT_EQ(r.code, kExitOk) << r.err;
  EXPECT_THAT(r.out, HasSubstr("Start estimates made at submission vs actual start (48 jobs "
                               "sampled)"));
  EXPECT_THAT(r.out,
              ::testing::ContainsRegex("\nlearned +[0-9]+ +[0-9]+ +[0-9]+ +[0-9]+ +[0-9.]+ h "));
  EXPECT_THAT(r.out,
              ::testing::ContainsRegex("\nslurm +[0-9]+ +[0-9]+ +[0-9]+ +[0-9]+ +[0-9.]+ h "));
  const std::string csv = ReadAll(dir + "/estimates.csv");
  EXPECT_EQ(std::count(csv.begin(), csv.end(), '\n'), 1 + 48) << csv;
  // Without the flag nothing is estimated and the report has no such section.
  r = Simulate({"--trace=" + kData + "/sim_trace.csv", "--queues=" + kData + "/sim_reclaim.yaml",
                "--quiet"});
  ASSERT_EQ(r.code, kExitOk) << r.err;
  EXPECT_THAT(r.out, ::testing::Not(HasSubstr("Start estimates")));
}

}  // namespace
}  // namespace tollgate::cli
