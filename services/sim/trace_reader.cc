#include "services/sim/trace_reader.h"

#include <algorithm>
#include <limits>
#include <utility>

#include "absl/container/flat_hash_map.h"
#include "absl/status/status.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "core/status_macros.h"

namespace tollgate::sim {
namespace {

// Long enough to name a value, short enough that a runaway cell cannot flood a terminal.
std::string Quoted(absl::string_view value) {
  constexpr size_t kMaxEcho = 64;
  if (value.size() > kMaxEcho) return absl::StrCat("\"", value.substr(0, kMaxEcho), "...\"");
  return absl::StrCat("\"", value, "\"");
}

class RowReader {
 public:
  RowReader(absl::string_view source, int64_t row, const std::vector<absl::string_view>& cells)
      : source_(source), row_(row), cells_(cells) {}

  absl::Status Error(absl::string_view column, absl::string_view what) const {
    return absl::InvalidArgumentError(
        absl::StrCat(source_, ": row ", row_, ": column \"", column, "\": ", what));
  }

  absl::StatusOr<int64_t> Integer(absl::string_view column, int index, int64_t lo,
                                  int64_t hi) const {
    const absl::string_view cell = absl::StripAsciiWhitespace(cells_[index]);
    int64_t value = 0;
    if (!absl::SimpleAtoi(cell, &value)) {
      // Traces often write whole seconds as "600.0".
      double d = 0;
      if (!absl::SimpleAtod(cell, &d) || d != static_cast<double>(static_cast<int64_t>(d))) {
        return Error(column, absl::StrCat("expected an integer, got ", Quoted(cell)));
      }
      value = static_cast<int64_t>(d);
    }
    if (value < lo || value > hi) {
      return Error(column, absl::StrCat("expected an integer from ", lo, " to ", hi, ", got ",
                                        Quoted(cell)));
    }
    return value;
  }

  absl::StatusOr<std::string> Text(absl::string_view column, int index) const {
    const absl::string_view cell = absl::StripAsciiWhitespace(cells_[index]);
    if (cell.empty()) return Error(column, "must not be empty");
    return std::string(cell);
  }

 private:
  absl::string_view source_;
  int64_t row_;
  const std::vector<absl::string_view>& cells_;
};

absl::Status SplitQueue(absl::string_view where, absl::string_view target, TraceJob& job) {
  std::vector<absl::string_view> parts = absl::StrSplit(target, '/');
  if (parts.size() != 2 || parts[0].empty() || parts[1].empty()) {
    return absl::InvalidArgumentError(
        absl::StrCat(where, ": expected namespace/localQueue, got ", Quoted(target)));
  }
  job.namespace_name = std::string(parts[0]);
  job.local_queue = std::string(parts[1]);
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<std::map<std::string, std::string>> ParseQueueMap(absl::string_view text) {
  std::map<std::string, std::string> out;
  for (absl::string_view pair : absl::StrSplit(text, ',', absl::SkipWhitespace())) {
    pair = absl::StripAsciiWhitespace(pair);
    const size_t eq = pair.find('=');
    if (eq == absl::string_view::npos || eq == 0 || eq + 1 == pair.size()) {
      return absl::InvalidArgumentError(
          absl::StrCat("--queue-map: expected value=namespace/localQueue, got ", Quoted(pair)));
    }
    TraceJob probe;
    TOLLGATE_RETURN_IF_ERROR(SplitQueue("--queue-map", pair.substr(eq + 1), probe));
    if (!out.emplace(std::string(pair.substr(0, eq)), std::string(pair.substr(eq + 1))).second) {
      return absl::InvalidArgumentError(
          absl::StrCat("--queue-map: ", Quoted(pair.substr(0, eq)), " is mapped twice"));
    }
  }
  return out;
}

absl::StatusOr<std::vector<TraceJob>> ParseTrace(absl::string_view csv_text,
                                                 const TraceMapping& mapping,
                                                 absl::string_view source_name) {
  if (mapping.gpus_per_pod < 1) {
    return absl::InvalidArgumentError(
        absl::StrCat("--gpus-per-pod: must be at least 1, got ", mapping.gpus_per_pod));
  }
  std::vector<absl::string_view> lines = absl::StrSplit(csv_text, '\n');
  while (!lines.empty() && absl::StripAsciiWhitespace(lines.back()).empty()) lines.pop_back();
  if (lines.empty()) {
    return absl::InvalidArgumentError(absl::StrCat(source_name, ": empty trace (no header row)"));
  }
  absl::flat_hash_map<std::string, int> column_index;
  std::vector<absl::string_view> header = absl::StrSplit(absl::StripSuffix(lines[0], "\r"), ',');
  for (int i = 0; i < static_cast<int>(header.size()); ++i) {
    column_index.emplace(std::string(absl::StripAsciiWhitespace(header[i])), i);
  }
  auto find = [&](absl::string_view flag, const std::string& column,
                  bool required) -> absl::StatusOr<int> {
    if (column.empty() && !required) return -1;
    auto it = column_index.find(column);
    if (it == column_index.end()) {
      return absl::InvalidArgumentError(absl::StrCat(source_name, ": ", flag, ": no column ",
                                                     Quoted(column),
                                                     " in the header (columns: ", lines[0], ")"));
    }
    return it->second;
  };
  const TraceColumns& c = mapping.columns;
  TOLLGATE_ASSIGN_OR_RETURN(const int submit_col, find("--submit-column", c.submit, true));
  TOLLGATE_ASSIGN_OR_RETURN(const int duration_col, find("--duration-column", c.duration, true));
  TOLLGATE_ASSIGN_OR_RETURN(const int gpus_col, find("--gpus-column", c.gpus, true));
  TOLLGATE_ASSIGN_OR_RETURN(const int queue_col, find("--queue-column", c.queue, true));
  TOLLGATE_ASSIGN_OR_RETURN(const int priority_col, find("--priority-column", c.priority, false));
  TOLLGATE_ASSIGN_OR_RETURN(const int name_col, find("--name-column", c.name, false));
  TOLLGATE_ASSIGN_OR_RETURN(const int kind_col, find("--kind-column", c.kind, false));

  constexpr int64_t kMaxSeconds = int64_t{1} << 40;
  std::vector<TraceJob> jobs;
  jobs.reserve(lines.size() - 1);
  for (size_t i = 1; i < lines.size(); ++i) {
    const int64_t row = static_cast<int64_t>(i);
    const absl::string_view line = absl::StripSuffix(lines[i], "\r");
    if (absl::StripAsciiWhitespace(line).empty()) continue;
    std::vector<absl::string_view> cells = absl::StrSplit(line, ',');
    if (cells.size() != header.size()) {
      return absl::InvalidArgumentError(absl::StrCat(source_name, ": row ", row, ": ", cells.size(),
                                                     " cells, the header has ", header.size()));
    }
    const RowReader r(source_name, row, cells);
    TraceJob job;
    job.row = row;
    TOLLGATE_ASSIGN_OR_RETURN(const int64_t submit,
                              r.Integer(c.submit, submit_col, 0, kMaxSeconds));
    TOLLGATE_ASSIGN_OR_RETURN(const int64_t duration,
                              r.Integer(c.duration, duration_col, 0, kMaxSeconds));
    job.submit = absl::Seconds(submit);
    job.duration = absl::Seconds(duration);
    if (kind_col >= 0) job.kind = std::string(absl::StripAsciiWhitespace(cells[kind_col]));
    if (job.kind.empty()) {
      TOLLGATE_ASSIGN_OR_RETURN(
          const int64_t gpus, r.Integer(c.gpus, gpus_col, 1, std::numeric_limits<int32_t>::max()));
      if (gpus <= mapping.gpus_per_pod) {
        job.per_pod = gpus;
      } else if (gpus % mapping.gpus_per_pod != 0) {
        return r.Error(
            c.gpus,
            absl::StrCat(gpus, " is not a multiple of --gpus-per-pod=", mapping.gpus_per_pod));
      } else {
        job.per_pod = mapping.gpus_per_pod;
        job.pods = static_cast<int32_t>(gpus / mapping.gpus_per_pod);
      }
    } else {
      // A job of a kind asks for what its manifest asks for; the GPU column does not apply.
      job.pods = 0;
    }
    TOLLGATE_ASSIGN_OR_RETURN(job.team, r.Text(c.queue, queue_col));
    if (priority_col >= 0) {
      TOLLGATE_ASSIGN_OR_RETURN(const int64_t p,
                                r.Integer(c.priority, priority_col, -1000000000, 1000000000));
      job.priority = static_cast<int32_t>(p);
    }
    if (name_col >= 0) {
      TOLLGATE_ASSIGN_OR_RETURN(job.name, r.Text(c.name, name_col));
    } else {
      job.name = absl::StrCat("job-", row);
    }
    auto mapped = mapping.queues.find(job.team);
    if (mapped != mapping.queues.end()) {
      TOLLGATE_RETURN_IF_ERROR(SplitQueue("--queue-map", mapped->second, job));
    } else if (!mapping.default_queue.empty()) {
      TOLLGATE_RETURN_IF_ERROR(SplitQueue("--default-queue", mapping.default_queue, job));
    } else {
      job.namespace_name = job.team;
      job.local_queue = job.team;
    }
    jobs.push_back(std::move(job));
  }
  std::stable_sort(jobs.begin(), jobs.end(),
                   [](const TraceJob& a, const TraceJob& b) { return a.submit < b.submit; });
  return jobs;
}

}  // namespace tollgate::sim
