// The describe verbs and the cohort breakdown through the real binaries: tollgated on loopback,
// driven by the `tollgate` CLI as a user runs it, with the EvalHub example of deploy/evalhub.
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <memory>
#include <string>
#include <system_error>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "gtest/gtest.h"
#include "test/e2e/tollgated_process.h"
#include "test/status_matchers.h"
#include "test/support/scratch_dir.h"

namespace tollgate::e2e {
namespace {

struct CliRun {
  int code = -1;
  std::string out;  // stdout and stderr
};

// Runs a program with `args`; returns its exit code and its output.
CliRun RunProgram(const std::string& program, const std::string& args) {
  CliRun run;
  const std::string command = absl::StrCat(program, " ", args, " 2>&1");
  FILE* pipe = popen(command.c_str(), "r");
  if (pipe == nullptr) return run;
  char buffer[4096];
  for (size_t n; (n = fread(buffer, 1, sizeof(buffer), pipe)) > 0;) run.out.append(buffer, n);
  const int status = pclose(pipe);
  run.code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return run;
}

int CountLines(const std::string& text, absl::string_view needle) {
  int n = 0;
  for (absl::string_view line : absl::StrSplit(text, '\n')) n += absl::StrContains(line, needle);
  return n;
}

class DescribeE2eTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_OK_AND_ASSIGN(scratch_, test_support::MakeScratchDir("tollgate_describe_e2e"));
    ASSERT_OK_AND_ASSIGN(server_, TollgatedProcess::Start(scratch_ + "/data", scratch_));
  }
  void TearDown() override {
    server_.reset();
    test_support::RemoveScratchDir(scratch_);
  }

  CliRun Cli(const std::string& args) {
    return RunProgram(TOLLGATE_CLI_PATH, absl::StrCat("--server=", server_->address(), " ", args));
  }

  // Re-runs `args` until its output contains `needle` `count` times, or the deadline passes.
  CliRun CliUntil(const std::string& args, absl::string_view needle, int count) {
    const absl::Time deadline = absl::Now() + absl::Seconds(30);
    CliRun run;
    while (absl::Now() < deadline) {
      run = Cli(args);
      if (run.code == 0 && CountLines(run.out, needle) == count) return run;
      absl::SleepFor(absl::Milliseconds(50));
    }
    ADD_FAILURE() << "tollgate " << args << ": wanted " << count << " lines with " << needle
                  << ", last output:\n"
                  << run.out;
    return run;
  }

  std::string scratch_;
  std::unique_ptr<TollgatedProcess> server_;
};

TEST_F(DescribeE2eTest, EvalHubWaitIsExplainedByTheCohortBreakdown) {
  const std::string deploy = absl::StrCat(TOLLGATE_SOURCE_DIR, "/deploy/evalhub/");
  CliRun r = Cli(absl::StrCat("apply -f ", deploy, "queues.yaml -f ", deploy, "priorities.yaml"));
  ASSERT_EQ(r.code, 0) << r.out;
  r = Cli(absl::StrCat("submit -f ", deploy, "workloads.yaml"));
  ASSERT_EQ(r.code, 0) << r.out;
  CliUntil("get workloads -n team-b", "Pending", 2);

  // Who borrowed, and which policy keeps team-b from taking its quota back.
  r = Cli("describe workload qwen2-7b-arc -n team-b");
  ASSERT_EQ(r.code, 0) << r.out;
  EXPECT_TRUE(absl::StrContains(r.out, "team-a-cq borrows 16 cpu in default-flavor")) << r.out;
  EXPECT_TRUE(absl::StrContains(r.out,
                                "reclaimWithinCohort (ClusterQueue team-b-cq): team-b-cq "
                                "has reclaimWithinCohort: Never"))
      << r.out;
  r = Cli("describe clusterqueue team-b-cq");
  ASSERT_EQ(r.code, 0) << r.out;
  EXPECT_TRUE(absl::StrContains(r.out, "Head Workload team-b/qwen2-7b-arc:")) << r.out;

  // The implicit cohort: get, usage, describe.
  r = Cli("get cohort evalhub");
  ASSERT_EQ(r.code, 0) << r.out;
  EXPECT_TRUE(absl::StrContains(r.out, "evalhub   <none>   true")) << r.out;
  r = Cli("get cohort evalhub -o usage");
  ASSERT_EQ(r.code, 0) << r.out;
  EXPECT_EQ(CountLines(r.out, "default-flavor"), 3) << r.out;
  r = Cli("describe cohort evalhub");
  ASSERT_EQ(r.code, 0) << r.out;
  EXPECT_TRUE(absl::StrContains(r.out, "Quota Holders (tree of evalhub):")) << r.out;
  EXPECT_EQ(CountLines(r.out, "team-a-cq"), 5) << r.out;  // members, borrowers, 3 resources
  r = Cli("describe localqueue eval-queue -n team-b");
  ASSERT_EQ(r.code, 0) << r.out;
  EXPECT_TRUE(absl::StrContains(r.out, "Pending Workloads (2):")) << r.out;
  r = Cli("describe resourceflavor default-flavor");
  ASSERT_EQ(r.code, 0) << r.out;
  EXPECT_EQ(CountLines(r.out, "ClusterQueue"), 6) << r.out;

  // Server-side dry run stores nothing.
  r = Cli(absl::StrCat("submit --dry-run=server -f ", deploy, "workloads.yaml"));
  ASSERT_EQ(r.code, 0) << r.out;
  EXPECT_EQ(CountLines(r.out, "unchanged (server dry run)"), 7) << r.out;
}

// One version string: the CLI's, tollgated's own and what tollgated's InfoService answers agree.
TEST_F(DescribeE2eTest, EveryBinaryReportsTheSameVersion) {
  CliRun client = RunProgram(TOLLGATE_CLI_PATH, "version --client");
  ASSERT_EQ(client.code, 0) << client.out;
  CliRun daemon = RunProgram(TOLLGATED_PATH, "--version");
  ASSERT_EQ(daemon.code, 0) << daemon.out;
  CliRun both = Cli("version");
  ASSERT_EQ(both.code, 0) << both.out;
  // "Client Version: 0.1.0+abc (RelWithDebInfo, ...)" -> "0.1.0+abc".
  auto word = [](const std::string& text, const std::string& prefix) {
    const size_t at = text.find(prefix);
    if (at == std::string::npos) return std::string();
    const size_t begin = at + prefix.size();
    return text.substr(begin, text.find(' ', begin) - begin);
  };
  const std::string version = word(client.out, "Client Version: ");
  ASSERT_FALSE(version.empty()) << client.out;
  EXPECT_EQ(word(daemon.out, "tollgated "), version) << daemon.out;
  EXPECT_EQ(word(both.out, "Server Version: "), version) << both.out;
}

}  // namespace
}  // namespace tollgate::e2e
