#include "cmd/tollgate/table_printer.h"

#include <algorithm>
#include <cstdint>
#include <sstream>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"

namespace tollgate::cli {
namespace {

// kubectl's tabwriter padding between columns.
constexpr size_t kColumnGap = 3;

void PrintLine(std::ostream& out, absl::string_view indent, const std::vector<std::string>& cells,
               const std::vector<size_t>& widths) {
  std::string line(indent);
  for (size_t i = 0; i < cells.size(); ++i) {
    line += cells[i];
    if (i + 1 < cells.size()) line.append(widths[i] + kColumnGap - cells[i].size(), ' ');
  }
  // An empty last cell would otherwise leave the previous column's padding behind.
  while (line.size() > indent.size() && line.back() == ' ') line.pop_back();
  out << line << '\n';
}

}  // namespace

TablePrinter::TablePrinter(std::vector<std::string> headers) : headers_(std::move(headers)) {}

void TablePrinter::AddRow(std::vector<std::string> cells) {
  cells.resize(headers_.size());
  rows_.push_back(std::move(cells));
}

void TablePrinter::Print(std::ostream& out, absl::string_view indent) const {
  PrintTable(out, indent, /*headers=*/true);
}

void TablePrinter::PrintRows(std::ostream& out) const { PrintTable(out, "", /*headers=*/false); }

void TablePrinter::PrintTable(std::ostream& out, absl::string_view indent, bool headers) const {
  std::vector<size_t> widths(headers_.size());
  // Without the header row, as kubectl --no-headers, the header does not widen the columns.
  if (headers) {
    for (size_t i = 0; i < headers_.size(); ++i) widths[i] = headers_[i].size();
  }
  for (const std::vector<std::string>& row : rows_) {
    for (size_t i = 0; i < row.size(); ++i) widths[i] = std::max(widths[i], row[i].size());
  }
  if (headers) PrintLine(out, indent, headers_, widths);
  for (const std::vector<std::string>& row : rows_) PrintLine(out, indent, row, widths);
}

std::string TablePrinter::ToString(absl::string_view indent) const {
  std::ostringstream out;
  Print(out, indent);
  return out.str();
}

std::string FormatAge(absl::Duration age) {
  // Go converts with truncation toward zero; so does IDivDuration.
  const int64_t seconds = absl::IDivDuration(age, absl::Seconds(1), &age);
  if (seconds < -1) return "<invalid>";
  if (seconds < 0) return "0s";
  if (seconds < 2 * 60) return absl::StrCat(seconds, "s");
  const int64_t minutes = seconds / 60;
  if (minutes < 10) {
    const int64_t s = seconds % 60;
    return s == 0 ? absl::StrCat(minutes, "m") : absl::StrCat(minutes, "m", s, "s");
  }
  if (minutes < 3 * 60) return absl::StrCat(minutes, "m");
  const int64_t hours = minutes / 60;
  if (hours < 8) {
    const int64_t m = minutes % 60;
    return m == 0 ? absl::StrCat(hours, "h") : absl::StrCat(hours, "h", m, "m");
  }
  if (hours < 48) return absl::StrCat(hours, "h");
  const int64_t days = hours / 24;
  if (hours < 24 * 8) {
    const int64_t h = hours % 24;
    return h == 0 ? absl::StrCat(days, "d") : absl::StrCat(days, "d", h, "h");
  }
  if (hours < 24 * 365 * 2) return absl::StrCat(days, "d");
  const int64_t years = days / 365;
  if (hours < 24 * 365 * 8) {
    const int64_t d = days % 365;
    return d == 0 ? absl::StrCat(years, "y") : absl::StrCat(years, "y", d, "d");
  }
  return absl::StrCat(years, "y");
}

absl::Time ToAbslTime(const google::protobuf::Timestamp& t) {
  if (t.seconds() == 0 && t.nanos() == 0) return absl::InfinitePast();
  return absl::FromUnixSeconds(t.seconds()) + absl::Nanoseconds(t.nanos());
}

std::string FormatAge(const google::protobuf::Timestamp& created, absl::Time now) {
  const absl::Time t = ToAbslTime(created);
  if (t == absl::InfinitePast()) return "<unknown>";
  return FormatAge(now - t);
}

std::string FormatTimestamp(const google::protobuf::Timestamp& t) {
  const absl::Time time = ToAbslTime(t);
  if (time == absl::InfinitePast()) return "<unknown>";
  return absl::FormatTime("%Y-%m-%dT%H:%M:%SZ", time, absl::UTCTimeZone());
}

std::string JoinKeyValues(const std::map<std::string, std::string>& values,
                          absl::string_view separator) {
  if (values.empty()) return std::string(kNone);
  return absl::StrJoin(values, separator, absl::PairFormatter("="));
}

std::string JoinKeyValues(const google::protobuf::Map<std::string, std::string>& values,
                          absl::string_view separator) {
  // protobuf maps iterate in no particular order; output must not depend on it.
  return JoinKeyValues(std::map<std::string, std::string>(values.begin(), values.end()), separator);
}

void FieldPrinter::Add(std::string key, std::string value) {
  fields_.emplace_back(std::move(key), std::move(value));
}

void FieldPrinter::Print(std::ostream& out, absl::string_view indent) const {
  size_t width = 0;
  for (const auto& [key, value] : fields_) width = std::max(width, key.size() + 1);
  for (const auto& [key, value] : fields_) {
    std::string line = absl::StrCat(indent, key, ":");
    if (!value.empty()) {
      line.append(width + 2 - key.size() - 1, ' ');
      line += value;
    }
    out << line << '\n';
  }
}

}  // namespace tollgate::cli
