#include "core/admission_gates.h"

#include <string>
#include <utility>
#include <vector>

#include "absl/algorithm/container.h"
#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "core/error_text.h"
#include "core/names.h"

namespace tollgate::core {
namespace {

// Kubernetes' httpPathFmt: the characters a domain-prefixed path's path may hold.
bool IsHttpPathChar(char c) {
  if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9')) return true;
  return absl::string_view("/-._~%!$&'()*+,;=:").find(c) != absl::string_view::npos;
}

std::string InvalidValue(absl::string_view value, absl::string_view why) {
  return absl::StrCat(kAdmissionGatedByField, ": Invalid value: ", QuoteValue(value), ": ", why);
}

// Kubernetes' IsDomainPrefixedPath (the check on a Job's spec.managedBy): "domain/path", the
// domain an RFC 1123 subdomain, the path made of URL path characters.
void CheckDomainPrefixedPath(absl::string_view gate, std::vector<std::string>& problems) {
  std::pair<absl::string_view, absl::string_view> parts =
      absl::StrSplit(gate, absl::MaxSplits('/', 1));
  if (gate.find('/') == absl::string_view::npos || parts.first.empty() || parts.second.empty()) {
    problems.push_back(
        InvalidValue(gate, "must be a domain-prefixed path (such as \"acme.io/foo\")"));
    return;
  }
  if (absl::Status host = ValidateDns1123Subdomain(parts.first); !host.ok()) {
    problems.push_back(absl::StrCat(kAdmissionGatedByField, ": Invalid value: ", host.message()));
  }
  if (!absl::c_all_of(parts.second, IsHttpPathChar)) {
    problems.push_back(InvalidValue(
        parts.second, "must be a valid path (letters, digits and /-._~%!$&'()*+,;=: only)"));
  }
}

absl::Status Problems(const std::vector<std::string>& problems) {
  if (problems.empty()) return absl::OkStatus();
  return absl::InvalidArgumentError(absl::StrJoin(problems, "; "));
}

}  // namespace

std::optional<std::string> AdmissionGatedByOf(const WorkloadSpec& spec) {
  if (!spec.metadata.has_value()) return std::nullopt;
  // Queueable asks this of every pending workload it sees: a key built once, not per call.
  static const std::string* const kKey = new std::string(kAdmissionGatedByAnnotation);
  const Labels& annotations = spec.metadata->annotations;
  auto it = annotations.find(*kKey);
  if (it == annotations.end()) return std::nullopt;
  return it->second;
}

bool HasAdmissionGate(const WorkloadSpec& spec, bool admission_gated_by) {
  if (!admission_gated_by || !spec.metadata.has_value()) return false;
  const Labels& annotations = spec.metadata->annotations;
  auto it = annotations.find(std::string(kAdmissionGatedByAnnotation));
  return it != annotations.end() && !it->second.empty();
}

void SetAdmissionGatedBy(WorkloadSpec& spec, const std::optional<std::string>& value) {
  if (value.has_value()) {
    spec.metadata.mutable_value().annotations[std::string(kAdmissionGatedByAnnotation)] = *value;
    return;
  }
  if (!spec.metadata.has_value()) return;
  Labels& annotations = spec.metadata.mutable_value().annotations;
  annotations.erase(std::string(kAdmissionGatedByAnnotation));
  if (annotations.empty() && spec.metadata->labels.empty()) spec.metadata.reset();
}

std::vector<std::string> ParseAdmissionGates(absl::string_view value) {
  std::vector<std::string> gates;
  if (absl::StripAsciiWhitespace(value).empty()) return gates;
  for (absl::string_view gate : absl::StrSplit(value, ',')) {
    gates.emplace_back(absl::StripAsciiWhitespace(gate));
  }
  return gates;
}

absl::Status ValidateAdmissionGatesOnCreate(absl::string_view value) {
  std::vector<std::string> problems;
  absl::flat_hash_set<std::string> seen;
  for (const std::string& gate : ParseAdmissionGates(value)) {
    if (gate.empty()) {
      problems.push_back(InvalidValue(value, "cannot contain empty gate names"));
      continue;
    }
    if (!seen.insert(gate).second) {
      problems.push_back(InvalidValue(value, absl::StrCat("duplicate gate name: ", gate)));
      continue;
    }
    CheckDomainPrefixedPath(gate, problems);
    if (gate.size() > kMaxAdmissionGateBytes) {
      problems.push_back(InvalidValue(
          gate, absl::StrCat("Too long: may not be more than ", kMaxAdmissionGateBytes, " bytes")));
    }
  }
  return Problems(problems);
}

absl::Status ValidateAdmissionGatesOnUpdate(const std::optional<std::string>& before,
                                            const std::optional<std::string>& after) {
  const std::string old_value = before.value_or("");
  const std::string new_value = after.value_or("");
  std::vector<std::string> problems;
  if (old_value.empty() && !new_value.empty()) {
    problems.push_back(absl::StrCat(kAdmissionGatedByField, ": Forbidden: cannot add admission ",
                                    "gate after creation, got ", QuoteValue(new_value)));
  }
  if (!old_value.empty() && !new_value.empty()) {
    const std::vector<std::string> old_gates = ParseAdmissionGates(old_value);
    for (const std::string& gate : ParseAdmissionGates(new_value)) {
      if (!absl::c_linear_search(old_gates, gate)) {
        problems.push_back(absl::StrCat(
            kAdmissionGatedByField, ": Forbidden: can only remove gates, not add new ones, got ",
            QuoteValue(gate), " not in ", QuoteValue(old_value)));
        break;
      }
    }
  }
  if (absl::Status format = ValidateAdmissionGatesOnCreate(new_value); !format.ok()) {
    problems.emplace_back(format.message());
  }
  return Problems(problems);
}

void MarkAdmissionGated(WorkloadStatus& status, absl::string_view gates, absl::Time now,
                        bool first_seen) {
  const std::string message = absl::StrCat("Admission is gated by: ", gates);
  status.pending_message = message;
  SetPendingCondition(status, PendingReason::kAdmissionGated, message, now);
  // Kueue's workload controller records the event once, when it first sees the gate.
  if (first_seen) {
    AddEvent(status, now, "AdmissionGated",
             absl::StrCat("Workload admission is gated by: ", gates));
  }
}

void MarkAdmissionGateCleared(WorkloadStatus& status, absl::Time now) {
  status.pending_message.clear();
  SetPendingCondition(status, PendingReason::kPendingEvaluation,
                      "AdmissionGatedBy cleared, waiting for quota reservation", now);
  AddEvent(status, now, "AdmissionGateCleared",
           "Admission gate cleared, workload is now admissible");
}

}  // namespace tollgate::core
