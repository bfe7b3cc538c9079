#include "services/sim/estimate_accuracy.h"

#include <algorithm>
#include <cmath>
#include <fstream>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"

namespace tollgate::sim {
namespace {

double NearestRank(std::vector<double> values, double q) {
  if (values.empty()) return 0;
  std::sort(values.begin(), values.end());
  const double rank = std::ceil(q * static_cast<double>(values.size()));
  const size_t i =
      static_cast<size_t>(std::clamp(rank, 1.0, static_cast<double>(values.size()))) - 1;
  return values[i];
}

const char* KindName(core::StartEstimate::Kind kind) {
  switch (kind) {
    case core::StartEstimate::Kind::kEstimated:
      return "estimated";
    case core::StartEstimate::Kind::kNotBefore:
      return "not_before";
    case core::StartEstimate::Kind::kUnknown:
      return "unknown";
  }
  return "unknown";
}

std::string Hours(double seconds) { return absl::StrFormat("%.2f h", seconds / 3600); }

}  // namespace

bool WithinFactorTwo(absl::Duration estimated, absl::Duration actual) {
  if (absl::AbsDuration(estimated - actual) <= absl::Minutes(1)) return true;
  const absl::Duration lo = std::min(estimated, actual);
  const absl::Duration hi = std::max(estimated, actual);
  return lo > absl::ZeroDuration() && hi <= 2 * lo;
}

std::vector<EstimateAccuracy> MeasureEstimateAccuracy(const std::vector<TraceJob>& jobs,
                                                      const ReplayResult& result) {
  std::vector<EstimateAccuracy> rows;
  const std::pair<const char*, std::optional<WaitEstimate> JobOutcome::*> methods[] = {
      {"learned", &JobOutcome::learned_estimate},
      {"slurm", &JobOutcome::slurm_estimate},
  };
  // Every sampled job, then only those that actually waited more than a minute: on a trace
  // where most jobs start at once, the first is dominated by trivially right "now" answers.
  for (const bool waited_only : {false, true}) {
    for (const auto& [name, field] : methods) {
      EstimateAccuracy row;
      row.method = waited_only ? absl::StrCat(name, ">1m") : name;
      std::vector<double> errors, actual_waits;
      int64_t within = 0;
      for (size_t i = 0; i < jobs.size(); ++i) {
        const JobOutcome& job = result.jobs[i];
        const std::optional<WaitEstimate>& e = job.*field;
        if (!e.has_value()) continue;
        ++row.sampled;
        if (e->kind == core::StartEstimate::Kind::kNotBefore) ++row.not_before;
        if (e->kind == core::StartEstimate::Kind::kUnknown) ++row.unknown;
        if (e->kind != core::StartEstimate::Kind::kEstimated) continue;
        ++row.estimated;
        if (!job.first_admitted.has_value()) continue;
        const absl::Duration actual = *job.first_admitted - jobs[i].submit;
        if (waited_only && actual <= absl::Minutes(1)) continue;
        ++row.scored;
        errors.push_back(absl::ToDoubleSeconds(absl::AbsDuration(e->wait - actual)));
        actual_waits.push_back(absl::ToDoubleSeconds(actual));
        if (WithinFactorTwo(e->wait, actual)) ++within;
      }
      if (row.sampled == 0) continue;
      row.median_abs_error_seconds = NearestRank(errors, 0.5);
      row.p90_abs_error_seconds = NearestRank(errors, 0.9);
      row.median_actual_wait_seconds = NearestRank(actual_waits, 0.5);
      row.within_2x = row.scored == 0 ? 0 : static_cast<double>(within) / row.scored;
      rows.push_back(row);
    }
  }
  return rows;
}

std::string FormatEstimateAccuracy(const std::vector<EstimateAccuracy>& rows) {
  if (rows.empty()) return "";
  std::string out =
      absl::StrFormat("\nStart estimates made at submission vs actual start (%d jobs sampled):\n",
                      rows.front().sampled);
  absl::StrAppend(&out, absl::StrFormat("%-11s %9s %9s %8s %7s %11s %11s %10s %12s\n", "METHOD",
                                        "ESTIMATED", "NOT-BEFORE", "UNKNOWN", "SCORED",
                                        "MEDIAN-ERR", "P90-ERR", "WITHIN-2X", "MEDIAN-WAIT"));
  for (const EstimateAccuracy& r : rows) {
    absl::StrAppend(
        &out, absl::StrFormat("%-11s %9d %10d %8d %7d %11s %11s %9.1f%% %12s\n", r.method,
                              r.estimated, r.not_before, r.unknown, r.scored,
                              Hours(r.median_abs_error_seconds), Hours(r.p90_abs_error_seconds),
                              100 * r.within_2x, Hours(r.median_actual_wait_seconds)));
  }
  return out;
}

absl::Status WriteEstimatesCsv(const std::string& path, const std::vector<TraceJob>& jobs,
                               const ReplayResult& result) {
  std::string csv =
      "job,queue,submit_s,actual_wait_s,learned_kind,learned_wait_s,slurm_kind,slurm_wait_s\n";
  for (size_t i = 0; i < jobs.size(); ++i) {
    const JobOutcome& job = result.jobs[i];
    if (!job.learned_estimate.has_value() || !job.slurm_estimate.has_value()) continue;
    const std::string actual =
        job.first_admitted.has_value()
            ? absl::StrCat(absl::ToInt64Seconds(*job.first_admitted - jobs[i].submit))
            : "";
    absl::StrAppend(
        &csv, jobs[i].name, ",", job.cluster_queue, ",", absl::ToInt64Seconds(jobs[i].submit), ",",
        actual, ",", KindName(job.learned_estimate->kind), ",",
        absl::ToInt64Seconds(job.learned_estimate->wait), ",", KindName(job.slurm_estimate->kind),
        ",", absl::ToInt64Seconds(job.slurm_estimate->wait), "\n");
  }
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out << csv;
  out.close();
  if (!out) return absl::UnavailableError(absl::StrCat("cannot write ", path));
  return absl::OkStatus();
}

}  // namespace tollgate::sim
