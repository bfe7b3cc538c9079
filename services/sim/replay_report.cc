#include "services/sim/replay_report.h"

#include <algorithm>
#include <cmath>
#include <fstream>
#include <map>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"

namespace tollgate::sim {
namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

// Nearest rank: the smallest value with at least p % of the values at or below it.
double Rank(const std::vector<double>& sorted, double p) {
  if (sorted.empty()) return 0;
  const size_t rank = static_cast<size_t>(std::ceil(p / 100.0 * sorted.size()));
  return sorted[std::min(sorted.size(), std::max<size_t>(rank, 1)) - 1];
}

Percentiles Of(std::vector<double> values) {
  std::sort(values.begin(), values.end());
  return {Rank(values, 50), Rank(values, 95), Rank(values, 99)};
}

// Collects one queue's (or all queues') job figures.
struct JobFigures {
  std::vector<double> waits;
  std::vector<double> completions;
  std::vector<double> check_waits;
  QueueReport report;

  void Add(const TraceJob& job, const JobOutcome& out) {
    ++report.jobs;
    if (out.first_admitted.has_value()) {
      const double wait = absl::ToDoubleSeconds(*out.first_admitted - job.submit);
      waits.push_back(wait);
      report.mean_wait_seconds += wait;
      check_waits.push_back(absl::ToDoubleSeconds(out.check_wait));
    } else {
      waits.push_back(kInf);
      ++report.never_admitted;
    }
    completions.push_back(
        out.finished.has_value() ? absl::ToDoubleSeconds(*out.finished - job.submit) : kInf);
    report.preemptions += out.preemptions;
    report.lost_hours += out.lost_resource_seconds / 3600.0;
    report.idle_reserved_hours += out.reserved_idle_resource_seconds / 3600.0;
  }

  QueueReport Finish() {
    report.wait_seconds = Of(waits);
    report.completion_seconds = Of(completions);
    report.check_wait_seconds = Of(check_waits);
    const int64_t admitted = report.jobs - report.never_admitted;
    if (admitted > 0) report.mean_wait_seconds /= admitted;
    return report;
  }
};

// "1h05m", "42s", "never": readable durations for the tables.
std::string Human(double seconds) {
  if (std::isinf(seconds)) return "never";
  if (seconds < 60) return absl::StrFormat("%.0fs", seconds);
  if (seconds < 3600)
    return absl::StrFormat("%.0fm%02.0fs", std::floor(seconds / 60), std::fmod(seconds, 60));
  if (seconds < 86400) {
    return absl::StrFormat("%.0fh%02.0fm", std::floor(seconds / 3600),
                           std::floor(std::fmod(seconds, 3600) / 60));
  }
  return absl::StrFormat("%.1fd", seconds / 86400);
}

std::string Csv(double v) {
  if (std::isinf(v)) return "inf";
  return absl::StrFormat("%.3f", v);
}

// Left-aligned first column, right-aligned others, two spaces apart.
std::string Table(const std::vector<std::vector<std::string>>& rows) {
  std::vector<size_t> width;
  for (const auto& row : rows) {
    if (width.size() < row.size()) width.resize(row.size(), 0);
    for (size_t c = 0; c < row.size(); ++c) width[c] = std::max(width[c], row[c].size());
  }
  std::string out;
  for (const auto& row : rows) {
    std::string line;
    for (size_t c = 0; c < row.size(); ++c) {
      if (c > 0) line += "  ";
      const std::string pad(width[c] - row[c].size(), ' ');
      line += c == 0 ? row[c] + pad : pad + row[c];
    }
    while (!line.empty() && line.back() == ' ') line.pop_back();
    absl::StrAppend(&out, line, "\n");
  }
  return out;
}

absl::Status WriteFile(const std::string& path, const std::string& text) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out << text;
  out.close();
  if (!out) return absl::UnavailableError(absl::StrCat("cannot write ", path));
  return absl::OkStatus();
}

// Gnuplot's SVG terminal, fixed size and font so the output never depends on the machine.
std::string PlotHeader(absl::string_view name, absl::string_view title, absl::string_view ylabel) {
  return absl::StrCat("# Draws ", name, ".svg from timeseries.csv; run: gnuplot ", name, ".gp\n",
                      "set terminal svg size 960,480 dynamic font 'sans,12' background '#ffffff'\n",
                      "set output '", name, ".svg'\n", "set datafile separator ','\n",
                      "set key outside right\n", "set grid\n", "set title '", title, "'\n",
                      "set xlabel 'virtual time (days)'\n", "set ylabel '", ylabel, "'\n");
}

}  // namespace

ReplayReport Summarize(const std::vector<TraceJob>& jobs, const ReplayResult& result,
                       const std::string& resource) {
  ReplayReport report;
  report.resource = resource;
  report.end = result.end;
  report.has_checks = result.has_checks;
  std::map<std::string, JobFigures> by_queue;
  JobFigures all;
  for (const auto& [name, info] : result.queues) {
    JobFigures& f = by_queue[name];
    f.report.name = name;
    f.report.nominal = info.nominal;
    f.report.weight = info.weight;
    report.capacity += info.nominal;
  }
  for (size_t i = 0; i < jobs.size(); ++i) {
    const JobOutcome& out = result.jobs[i];
    JobFigures& f = by_queue[out.cluster_queue.empty() ? "(none)" : out.cluster_queue];
    if (f.report.name.empty())
      f.report.name = out.cluster_queue.empty() ? "(none)" : out.cluster_queue;
    f.Add(jobs[i], out);
    all.Add(jobs[i], out);
  }

  // Time averages over the samples taken while the trace ran.
  double fairness_sum = 0;
  for (const Sample& s : result.samples) {
    double used = 0;
    std::vector<double> ratios;
    for (const auto& [name, q] : s.queues) {
      used += q.used;
      JobFigures& f = by_queue[name];
      f.report.mean_used += q.used;
      f.report.mean_borrowed += q.borrowed;
      const auto info = result.queues.find(name);
      if (q.pending > 0 && info != result.queues.end() && info->second.nominal > 0) {
        ratios.push_back(q.used / info->second.nominal);
      }
    }
    if (report.capacity > 0) report.mean_utilization += used / report.capacity;
    double sum = 0;
    double squares = 0;
    for (double r : ratios) {
      sum += r;
      squares += r * r;
    }
    fairness_sum += ratios.size() < 2 || squares == 0 ? 1.0 : sum * sum / (ratios.size() * squares);
  }
  const double samples = static_cast<double>(std::max<size_t>(1, result.samples.size()));
  report.mean_utilization /= samples;
  report.mean_fairness = fairness_sum / samples;
  for (auto& [name, f] : by_queue) {
    f.report.mean_used /= samples;
    f.report.mean_borrowed /= samples;
    QueueReport q = f.Finish();
    report.worst_queue_p95_wait_seconds =
        std::max(report.worst_queue_p95_wait_seconds, q.wait_seconds.p95);
    report.queues.push_back(std::move(q));
  }
  report.overall = all.Finish();
  report.overall.name = "ALL";
  report.overall.nominal = report.capacity;
  for (const QueueReport& q : report.queues) {
    report.overall.mean_used += q.mean_used;
    report.overall.mean_borrowed += q.mean_borrowed;
  }
  return report;
}

std::string FormatSummary(const ReplayReport& report) {
  std::string out = absl::StrFormat(
      "%d jobs replayed over %s of virtual time; capacity %.0f %s (sum of nominal quotas)\n"
      "utilization %.1f %%, fairness (Jain, queues with pending work) %.3f, "
      "preemptions %d, lost %.1f %s-hours, never admitted %d\n"
      "worst queue p95 wait: %s\n\n",
      report.overall.jobs, Human(absl::ToDoubleSeconds(report.end)), report.capacity,
      report.resource, 100 * report.mean_utilization, report.mean_fairness,
      report.overall.preemptions, report.overall.lost_hours, report.resource,
      report.overall.never_admitted, Human(report.worst_queue_p95_wait_seconds));
  std::vector<std::vector<std::string>> rows = {{"QUEUE", "JOBS", "NOMINAL", "USED", "BORROWED",
                                                 "WAIT-P50", "WAIT-P95", "WAIT-P99", "JCT-P50",
                                                 "JCT-P95", "PREEMPTED", "LOST-H", "NEVER"}};
  auto row = [](const QueueReport& q) {
    return std::vector<std::string>{q.name,
                                    absl::StrCat(q.jobs),
                                    absl::StrFormat("%.0f", q.nominal),
                                    absl::StrFormat("%.1f", q.mean_used),
                                    absl::StrFormat("%.1f", q.mean_borrowed),
                                    Human(q.wait_seconds.p50),
                                    Human(q.wait_seconds.p95),
                                    Human(q.wait_seconds.p99),
                                    Human(q.completion_seconds.p50),
                                    Human(q.completion_seconds.p95),
                                    absl::StrCat(q.preemptions),
                                    absl::StrFormat("%.1f", q.lost_hours),
                                    absl::StrCat(q.never_admitted)};
  };
  for (const QueueReport& q : report.queues) rows.push_back(row(q));
  rows.push_back(row(report.overall));
  absl::StrAppend(&out, Table(rows));
  if (report.has_checks) {
    // What the admission checks (provisioning) cost: time with quota reserved but not running.
    absl::StrAppend(&out, "\n");
    std::vector<std::vector<std::string>> checks = {
        {"QUEUE", "CHECK-WAIT-P50", "CHECK-WAIT-P95", "CHECK-WAIT-P99", "IDLE-RESERVED-H"}};
    auto check_row = [](const QueueReport& q) {
      return std::vector<std::string>{
          q.name, Human(q.check_wait_seconds.p50), Human(q.check_wait_seconds.p95),
          Human(q.check_wait_seconds.p99), absl::StrFormat("%.1f", q.idle_reserved_hours)};
    };
    for (const QueueReport& q : report.queues) checks.push_back(check_row(q));
    checks.push_back(check_row(report.overall));
    absl::StrAppend(&out, Table(checks));
  }
  return out;
}

std::string FormatComparison(const std::vector<std::pair<std::string, ReplayReport>>& reports) {
  std::vector<std::vector<std::string>> rows = {{"CONFIG", "CAPACITY", "UTIL", "FAIRNESS",
                                                 "WAIT-P50", "WAIT-P95", "WAIT-P99", "WORST-Q-P95",
                                                 "PREEMPTED", "LOST-H", "NEVER"}};
  for (const auto& [name, r] : reports) {
    rows.push_back({name, absl::StrFormat("%.0f", r.capacity),
                    absl::StrFormat("%.1f%%", 100 * r.mean_utilization),
                    absl::StrFormat("%.3f", r.mean_fairness), Human(r.overall.wait_seconds.p50),
                    Human(r.overall.wait_seconds.p95), Human(r.overall.wait_seconds.p99),
                    Human(r.worst_queue_p95_wait_seconds), absl::StrCat(r.overall.preemptions),
                    absl::StrFormat("%.1f", r.overall.lost_hours),
                    absl::StrCat(r.overall.never_admitted)});
  }
  return Table(rows);
}

std::vector<std::string> PlotScripts() {
  return {"utilization.gp", "usage.gp", "borrowed.gp", "fairness.gp", "wait.gp"};
}

absl::Status WriteReplayFiles(const std::string& dir, const std::vector<TraceJob>& jobs,
                              const ReplayResult& result, const ReplayReport& report) {
  if (absl::Status s = WriteFile(dir + "/summary.txt", FormatSummary(report)); !s.ok()) return s;

  std::string jobs_csv =
      "name,team,cluster_queue,submit_s,duration_s,pods,per_pod,admitted_s,finished_s,wait_s,"
      "preemptions,lost_resource_s\n";
  for (size_t i = 0; i < jobs.size(); ++i) {
    const TraceJob& j = jobs[i];
    const JobOutcome& o = result.jobs[i];
    auto opt = [](const std::optional<absl::Duration>& d) {
      return d.has_value() ? absl::StrCat(absl::ToInt64Seconds(*d)) : std::string();
    };
    absl::StrAppend(&jobs_csv, j.name, ",", j.team, ",", o.cluster_queue, ",",
                    absl::ToInt64Seconds(j.submit), ",", absl::ToInt64Seconds(j.duration), ",",
                    j.pods, ",", j.per_pod, ",", opt(o.first_admitted), ",", opt(o.finished), ",",
                    o.first_admitted.has_value()
                        ? absl::StrCat(absl::ToInt64Seconds(*o.first_admitted - j.submit))
                        : std::string(),
                    ",", o.preemptions, ",", Csv(o.lost_resource_seconds), "\n");
  }
  if (absl::Status s = WriteFile(dir + "/jobs.csv", jobs_csv); !s.ok()) return s;

  std::string queues_csv =
      "queue,jobs,nominal,weight,mean_used,mean_borrowed,wait_p50_s,wait_p95_s,wait_p99_s,"
      "mean_wait_s,jct_p50_s,jct_p95_s,jct_p99_s,preemptions,lost_hours,never_admitted\n";
  std::vector<QueueReport> rows = report.queues;
  rows.push_back(report.overall);
  for (const QueueReport& q : rows) {
    absl::StrAppend(&queues_csv, q.name, ",", q.jobs, ",", Csv(q.nominal), ",", Csv(q.weight), ",",
                    Csv(q.mean_used), ",", Csv(q.mean_borrowed), ",", Csv(q.wait_seconds.p50), ",",
                    Csv(q.wait_seconds.p95), ",", Csv(q.wait_seconds.p99), ",",
                    Csv(q.mean_wait_seconds), ",", Csv(q.completion_seconds.p50), ",",
                    Csv(q.completion_seconds.p95), ",", Csv(q.completion_seconds.p99), ",",
                    q.preemptions, ",", Csv(q.lost_hours), ",", q.never_admitted, "\n");
  }
  if (absl::Status s = WriteFile(dir + "/queues.csv", queues_csv); !s.ok()) return s;

  // timeseries.csv: t_days, utilization, then used, borrowed and used/nominal per queue.
  std::vector<std::string> names;
  for (const auto& [name, info] : result.queues) names.push_back(name);
  std::string ts = "t_days,utilization";
  for (const std::string& n : names) absl::StrAppend(&ts, ",used_", n);
  for (const std::string& n : names) absl::StrAppend(&ts, ",borrowed_", n);
  for (const std::string& n : names) absl::StrAppend(&ts, ",share_", n);
  ts += "\n";
  for (const Sample& s : result.samples) {
    double used = 0;
    for (const auto& [n, q] : s.queues) used += q.used;
    absl::StrAppend(&ts, Csv(absl::ToDoubleHours(s.at) / 24), ",",
                    Csv(report.capacity > 0 ? used / report.capacity : 0));
    auto value = [&](const std::string& n, auto field) {
      auto it = s.queues.find(n);
      return it == s.queues.end() ? 0.0 : field(it->second);
    };
    for (const std::string& n : names) {
      absl::StrAppend(&ts, ",", Csv(value(n, [](const QueueSample& q) { return q.used; })));
    }
    for (const std::string& n : names) {
      absl::StrAppend(&ts, ",", Csv(value(n, [](const QueueSample& q) { return q.borrowed; })));
    }
    for (const std::string& n : names) {
      const double nominal = result.queues.at(n).nominal;
      absl::StrAppend(
          &ts, ",",
          Csv(nominal > 0 ? value(n, [](const QueueSample& q) { return q.used; }) / nominal : 0));
    }
    ts += "\n";
  }
  if (absl::Status s = WriteFile(dir + "/timeseries.csv", ts); !s.ok()) return s;

  const size_t n = names.size();
  auto per_queue_plot = [&](size_t first_column) {
    std::vector<std::string> parts;
    for (size_t i = 0; i < n; ++i) {
      parts.push_back(absl::StrCat("'timeseries.csv' using 1:", first_column + i,
                                   " with lines title '", names[i], "'"));
    }
    return absl::StrCat("plot ", absl::StrJoin(parts, ", \\\n     "), "\n");
  };
  const std::string r = report.resource;
  const std::vector<std::pair<std::string, std::string>> scripts = {
      {"utilization.gp",
       absl::StrCat(
           PlotHeader("utilization", "Utilization of the nominal capacity", "used / capacity"),
           "set yrange [0:1<*]\nset key off\n",
           "plot 'timeseries.csv' using 1:2 every ::1 with lines lw 2\n")},
      {"usage.gp", absl::StrCat(PlotHeader("usage", "Usage per ClusterQueue", r),
                                "set yrange [0:1<*]\n", per_queue_plot(3))},
      {"borrowed.gp", absl::StrCat(PlotHeader("borrowed", "Borrowed above nominal quota", r),
                                   "set yrange [0:1<*]\n", per_queue_plot(3 + n))},
      {"fairness.gp",
       absl::StrCat(PlotHeader("fairness", "Usage relative to nominal quota (1 = at quota)",
                               "used / nominal"),
                    "set yrange [0:1<*]\n", per_queue_plot(3 + 2 * n))},
      {"wait.gp",
       absl::StrCat("# Draws wait.svg from queues.csv; run: gnuplot wait.gp\n",
                    "set terminal svg size 960,480 dynamic font 'sans,12' background '#ffffff'\n",
                    "set output 'wait.svg'\nset datafile separator ','\n",
                    "set title 'Wait for admission per queue (hours)'\nset style data histograms\n",
                    "set style histogram clustered gap 1\nset style fill solid 0.8 border -1\n",
                    "set grid ytics\nset xtics rotate by -30\nset ylabel 'hours'\n",
                    "set yrange [0:1<*]\n", "set key outside right\n",
                    "plot 'queues.csv' skip 1 using ($7/3600):xtic(1) title 'p50', \\\n",
                    "     '' skip 1 using ($8/3600) title 'p95', \\\n",
                    "     '' skip 1 using ($9/3600) title 'p99'\n")},
  };
  for (const auto& [file, text] : scripts) {
    if (absl::Status s = WriteFile(dir + "/" + file, text); !s.ok()) return s;
  }
  return absl::OkStatus();
}

}  // namespace tollgate::sim
