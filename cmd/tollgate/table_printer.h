#pragma once

// Text formatting for the CLI's output, kept apart from the commands so its rules (column
// alignment, kubectl's ages) can be tested on their own.

#include <cstddef>
#include <map>
#include <ostream>
#include <string>
#include <vector>

#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "google/protobuf/map.h"
#include "google/protobuf/timestamp.pb.h"

namespace tollgate::cli {

// Shown for an empty cell, as kubectl does, so every row keeps one token per column for
// `awk`-style readers.
inline constexpr absl::string_view kNone = "<none>";

// A table printed the way `kubectl get` prints one: the header row as given (upper case by
// convention), cells left-aligned, each column as wide as its widest cell plus three spaces,
// and no trailing whitespace. Cells must not contain newlines. Not thread-safe.
class TablePrinter {
 public:
  explicit TablePrinter(std::vector<std::string> headers);

  // A row shorter than the header is padded with empty cells; a longer one is cut to the header.
  void AddRow(std::vector<std::string> cells);
  size_t row_count() const { return rows_.size(); }

  // Writes the header and the rows, each line prefixed with `indent`.
  void Print(std::ostream& out, absl::string_view indent = "") const;
  std::string ToString(absl::string_view indent = "") const;
  // The rows alone, aligned among themselves (kubectl --no-headers).
  void PrintRows(std::ostream& out) const;

 private:
  void PrintTable(std::ostream& out, absl::string_view indent, bool headers) const;

  std::vector<std::string> headers_;
  std::vector<std::vector<std::string>> rows_;
};

// kubectl's age (k8s.io/apimachinery's duration.HumanDuration): "45s", "90s", "5m30s", "15m",
// "2h10m", "20h", "3d4h", "12d", "2y30d". Durations slightly negative (clock skew up to a
// second) read "0s"; more negative ones "<invalid>".
std::string FormatAge(absl::Duration age);
// The age of something created at `created`; "<unknown>" when the time is unset.
std::string FormatAge(const google::protobuf::Timestamp& created, absl::Time now);

// RFC 3339 in UTC with second precision ("2026-01-01T00:00:05Z"), or "<unknown>" when unset.
std::string FormatTimestamp(const google::protobuf::Timestamp& t);

// Converts a protobuf timestamp; absl::InfinitePast() when unset (all zero).
absl::Time ToAbslTime(const google::protobuf::Timestamp& t);

// "k1=v1,k2=v2" in key order, or kNone when empty.
std::string JoinKeyValues(const std::map<std::string, std::string>& values,
                          absl::string_view separator = ",");
std::string JoinKeyValues(const google::protobuf::Map<std::string, std::string>& values,
                          absl::string_view separator = ",");

// Lines of `key: value` with the values aligned, as `kubectl describe` prints its top level.
// Not thread-safe.
class FieldPrinter {
 public:
  void Add(std::string key, std::string value);
  void Print(std::ostream& out, absl::string_view indent = "") const;

 private:
  std::vector<std::pair<std::string, std::string>> fields_;
};

}  // namespace tollgate::cli
