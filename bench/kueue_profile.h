#pragma once

// Kueue's scheduler performance test (test/performance/scheduler in the Kueue repository),
// restated: the generator configurations "baseline" and "large-scale", the creation schedule
// they produce, and the measurements the test reports (wall time, ClusterQueue usage, mean
// time to admission per workload class). Shared by the real-time gRPC replay and the
// engine-only replay in virtual time, so both run exactly the same workloads.

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"

namespace tollgate::bench {

// One workloadsSet of Kueue's generator: `count` workloads of one class, one every `interval`
// from the start, per ClusterQueue.
struct WorkloadClass {
  std::string name;
  int count = 0;
  absl::Duration interval;
  absl::Duration runtime;
  int32_t priority = 0;
  // Whole CPUs requested by the workload's single pod.
  int64_t cpu = 0;
};

// Kueue's published means for the profile (its performance test's expectations).
struct KueueReference {
  double wall_s = 0;
  double usage_percent = 0;
  // Mean time to admission in seconds, per class in Profile::classes order.
  std::vector<double> tta_s;
};

struct Profile {
  std::string name;
  int cohorts = 0;
  int cqs_per_cohort = 0;
  // Whole CPUs, per ClusterQueue.
  int64_t nominal_cpu = 0;
  int64_t borrowing_limit_cpu = 0;
  std::vector<WorkloadClass> classes;
  KueueReference kueue;
  // Tollgate's targets from the issue.
  double target_wall_s = 0;

  int cluster_queues() const { return cohorts * cqs_per_cohort; }
  int64_t total_workloads() const;
};

// "baseline" or "large-scale".
absl::StatusOr<Profile> ProfileByName(absl::string_view name);

// Names of the objects the replay creates.
inline constexpr char kReplayNamespace[] = "perf";
inline constexpr char kReplayFlavor[] = "default";
std::string ReplayCqName(int cq);
std::string ReplayCohortName(int cohort);
std::string ReplayLqName(int cq);

// One workload of the schedule.
struct PlannedWorkload {
  // Offset of its creation from the start.
  absl::Duration at;
  int cq = 0;
  int cls = 0;
  std::string name;
};

// Every workload of the profile, in creation order (ties by ClusterQueue, then class).
std::vector<PlannedWorkload> BuildSchedule(const Profile& profile);

// What the performance test measures, accumulated from observed transitions. Times are seconds
// since the start of the run. Not thread-safe.
class ReplayRecorder {
 public:
  ReplayRecorder(const Profile& profile, const std::vector<PlannedWorkload>& schedule);

  void Created(int idx, double t);
  void Admitted(int idx, double t);
  // Lost its quota without finishing (preempted).
  void Evicted(int idx, double t);
  void Finished(int idx, double t);

  bool running(int idx) const { return wl_[idx].running; }
  bool finished(int idx) const { return wl_[idx].finished; }
  int64_t finished_count() const { return finished_; }
  int64_t created_count() const { return created_; }
  int64_t running_count() const { return running_; }
  int64_t admissions() const { return admissions_; }
  int64_t evictions() const { return evictions_; }
  // CPUs held by running workloads.
  int64_t used_cpu() const { return used_cpu_; }

  struct Summary {
    int64_t workloads = 0;
    int64_t finished = 0;
    int64_t admissions = 0;
    int64_t evictions = 0;
    // First creation to last finish.
    double wall_s = 0;
    // Integral of used CPU over the run / (sum of nominal quota x wall).
    double usage_percent = 0;
    // Mean of (last admission - creation) per class, seconds.
    std::vector<double> tta_mean_s;
    std::vector<double> tta_p99_s;
    // Submit, Finish and ReportStopped calls the driver made (the real-time replay only).
    int64_t unary_calls = 0;
  };
  Summary Summarize() const;

 private:
  struct State {
    double created = -1;
    double last_admitted = -1;
    bool running = false;
    bool finished = false;
  };
  void Advance(double t);

  const Profile& profile_;
  const std::vector<PlannedWorkload>& schedule_;
  std::vector<State> wl_;
  int64_t created_ = 0;
  int64_t finished_ = 0;
  int64_t running_ = 0;
  int64_t admissions_ = 0;
  int64_t evictions_ = 0;
  int64_t used_cpu_ = 0;
  double first_created_ = -1;
  double last_finished_ = 0;
  double last_t_ = 0;
  double cpu_seconds_ = 0;
};

// Prints the comparison table: Kueue's published means, the real-time replay (when given) and
// the engine-only bound.
void PrintReplayTable(const Profile& profile, const ReplayRecorder::Summary* realtime,
                      const ReplayRecorder::Summary* engine);

}  // namespace tollgate::bench
