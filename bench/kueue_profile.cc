#include "bench/kueue_profile.h"

#include <algorithm>
#include <cstdio>
#include <tuple>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"

namespace tollgate::bench {

int64_t Profile::total_workloads() const {
  int64_t per_cq = 0;
  for (const WorkloadClass& c : classes) per_cq += c.count;
  return per_cq * cluster_queues();
}

absl::StatusOr<Profile> ProfileByName(absl::string_view name) {
  Profile p;
  p.name = std::string(name);
  p.nominal_cpu = 20;
  p.borrowing_limit_cpu = 100;
  if (name == "baseline") {
    // Kueue's default_generator_config.yaml.
    p.cohorts = 5;
    p.cqs_per_cohort = 6;
    p.classes = {
        {"small", 350, absl::Milliseconds(100), absl::Milliseconds(200), 50, 1},
        {"medium", 100, absl::Milliseconds(500), absl::Milliseconds(500), 100, 5},
        {"large", 50, absl::Milliseconds(1200), absl::Milliseconds(1000), 200, 20},
    };
    p.kueue = {351, 55.9, {215.5, 76.8, 16.5}};
    p.target_wall_s = 90;
    return p;
  }
  if (name == "large-scale") {
    // Kueue's large-scale generator config.
    p.cohorts = 10;
    p.cqs_per_cohort = 100;
    p.classes = {
        {"small", 35, absl::Milliseconds(60), absl::Milliseconds(150), 50, 1},
        {"medium", 11, absl::Milliseconds(300), absl::Milliseconds(350), 100, 5},
        {"large", 4, absl::Milliseconds(700), absl::Milliseconds(700), 200, 20},
    };
    p.kueue = {1179, 38.6, {700.4, 256.4, 105.6}};
    p.target_wall_s = 20;
    return p;
  }
  return absl::InvalidArgumentError(
      absl::StrCat("unknown profile \"", name, "\" (want baseline or large-scale)"));
}

std::string ReplayCqName(int cq) { return absl::StrCat("cq-", cq); }
std::string ReplayCohortName(int cohort) { return absl::StrCat("cohort-", cohort); }
std::string ReplayLqName(int cq) { return absl::StrCat("lq-", cq); }

std::vector<PlannedWorkload> BuildSchedule(const Profile& profile) {
  std::vector<PlannedWorkload> out;
  out.reserve(static_cast<size_t>(profile.total_workloads()));
  for (int cq = 0; cq < profile.cluster_queues(); ++cq) {
    for (int cls = 0; cls < static_cast<int>(profile.classes.size()); ++cls) {
      const WorkloadClass& c = profile.classes[cls];
      for (int i = 0; i < c.count; ++i) {
        out.push_back(
            PlannedWorkload{c.interval * i, cq, cls, absl::StrCat(c.name, "-", cq, "-", i)});
      }
    }
  }
  std::stable_sort(out.begin(), out.end(), [](const PlannedWorkload& a, const PlannedWorkload& b) {
    return std::tie(a.at, a.cq, a.cls) < std::tie(b.at, b.cq, b.cls);
  });
  return out;
}

ReplayRecorder::ReplayRecorder(const Profile& profile, const std::vector<PlannedWorkload>& schedule)
    : profile_(profile), schedule_(schedule), wl_(schedule.size()) {}

void ReplayRecorder::Advance(double t) {
  if (t > last_t_) {
    cpu_seconds_ += static_cast<double>(used_cpu_) * (t - last_t_);
    last_t_ = t;
  }
}

void ReplayRecorder::Created(int idx, double t) {
  if (wl_[idx].created >= 0) return;
  wl_[idx].created = t;
  ++created_;
  if (first_created_ < 0 || t < first_created_) first_created_ = t;
}

void ReplayRecorder::Admitted(int idx, double t) {
  State& s = wl_[idx];
  if (s.running || s.finished) return;
  Advance(t);
  s.running = true;
  s.last_admitted = t;
  ++running_;
  ++admissions_;
  used_cpu_ += profile_.classes[schedule_[idx].cls].cpu;
}

void ReplayRecorder::Evicted(int idx, double t) {
  State& s = wl_[idx];
  if (!s.running) return;
  Advance(t);
  s.running = false;
  --running_;
  ++evictions_;
  used_cpu_ -= profile_.classes[schedule_[idx].cls].cpu;
}

void ReplayRecorder::Finished(int idx, double t) {
  State& s = wl_[idx];
  if (s.finished) return;
  Advance(t);
  if (s.running) {
    s.running = false;
    --running_;
    used_cpu_ -= profile_.classes[schedule_[idx].cls].cpu;
  }
  s.finished = true;
  ++finished_;
  last_finished_ = std::max(last_finished_, t);
}

ReplayRecorder::Summary ReplayRecorder::Summarize() const {
  Summary out;
  out.workloads = static_cast<int64_t>(wl_.size());
  out.finished = finished_;
  out.admissions = admissions_;
  out.evictions = evictions_;
  out.wall_s = std::max(0.0, last_finished_ - std::max(0.0, first_created_));
  const double nominal = static_cast<double>(profile_.nominal_cpu) * profile_.cluster_queues();
  out.usage_percent = out.wall_s > 0 ? 100.0 * cpu_seconds_ / (nominal * out.wall_s) : 0;
  std::vector<std::vector<double>> tta(profile_.classes.size());
  for (size_t i = 0; i < wl_.size(); ++i) {
    if (wl_[i].created < 0 || wl_[i].last_admitted < 0) continue;
    tta[schedule_[i].cls].push_back(wl_[i].last_admitted - wl_[i].created);
  }
  for (std::vector<double>& v : tta) {
    double sum = 0;
    for (double x : v) sum += x;
    out.tta_mean_s.push_back(v.empty() ? 0 : sum / static_cast<double>(v.size()));
    std::sort(v.begin(), v.end());
    out.tta_p99_s.push_back(
        v.empty() ? 0 : v[std::min(v.size() - 1, static_cast<size_t>(0.99 * v.size()))]);
  }
  return out;
}

void PrintReplayTable(const Profile& profile, const ReplayRecorder::Summary* realtime,
                      const ReplayRecorder::Summary* engine) {
  std::printf("\n%s: %d cohorts x %d ClusterQueues, %lld workloads\n", profile.name.c_str(),
              profile.cohorts, profile.cqs_per_cohort,
              static_cast<long long>(profile.total_workloads()));
  std::printf("%-26s %14s %16s %16s\n", "", "Kueue (mean)", "tollgated (gRPC)", "engine bound");
  auto cell = [](const ReplayRecorder::Summary* s, auto get) -> std::string {
    return s == nullptr ? std::string("-") : get(*s);
  };
  std::printf(
      "%-26s %14.1f %16s %16s\n", "wall time (s)", profile.kueue.wall_s,
      cell(realtime, [](const auto& s) { return absl::StrFormat("%.2f", s.wall_s); }).c_str(),
      cell(engine, [](const auto& s) { return absl::StrFormat("%.2f", s.wall_s); }).c_str());
  std::printf(
      "%-26s %14.1f %16s %16s\n", "ClusterQueue usage (%)", profile.kueue.usage_percent,
      cell(realtime, [](const auto& s) { return absl::StrFormat("%.1f", s.usage_percent); })
          .c_str(),
      cell(engine, [](const auto& s) { return absl::StrFormat("%.1f", s.usage_percent); }).c_str());
  for (int c = static_cast<int>(profile.classes.size()) - 1; c >= 0; --c) {
    const std::string label = absl::StrCat("mean TTA ", profile.classes[c].name, " (s)");
    std::printf(
        "%-26s %14.1f %16s %16s\n", label.c_str(), profile.kueue.tta_s[c],
        cell(realtime, [c](const auto& s) { return absl::StrFormat("%.2f", s.tta_mean_s[c]); })
            .c_str(),
        cell(engine, [c](const auto& s) {
          return absl::StrFormat("%.2f", s.tta_mean_s[c]);
        }).c_str());
  }
  for (int c = static_cast<int>(profile.classes.size()) - 1; c >= 0; --c) {
    const std::string label = absl::StrCat("p99 TTA ", profile.classes[c].name, " (s)");
    std::printf(
        "%-26s %14s %16s %16s\n", label.c_str(), "-",
        cell(realtime, [c](const auto& s) { return absl::StrFormat("%.2f", s.tta_p99_s[c]); })
            .c_str(),
        cell(engine, [c](const auto& s) {
          return absl::StrFormat("%.2f", s.tta_p99_s[c]);
        }).c_str());
  }
  std::printf(
      "%-26s %14s %16s %16s\n", "admissions / evictions", "-",
      cell(realtime, [](const auto& s) { return absl::StrCat(s.admissions, " / ", s.evictions); })
          .c_str(),
      cell(engine, [](const auto& s) {
        return absl::StrCat(s.admissions, " / ", s.evictions);
      }).c_str());
  std::printf(
      "%-26s %14s %16s %16s\n", "finished", "-",
      cell(realtime, [](const auto& s) { return absl::StrCat(s.finished, "/", s.workloads); })
          .c_str(),
      cell(engine, [](const auto& s) {
        return absl::StrCat(s.finished, "/", s.workloads);
      }).c_str());
  if (realtime != nullptr && engine != nullptr && engine->wall_s > 0) {
    std::printf("wall / engine bound: %.3f (target <= 1.2 for baseline); target wall <= %.0f s\n",
                realtime->wall_s / engine->wall_s, profile.target_wall_s);
  }
  std::fflush(stdout);
}

}  // namespace tollgate::bench
