#include "cmd/tollgate/cohort_sections.h"

#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "cmd/tollgate/cli_format.h"

namespace tollgate::cli {

TablePrinter QuotaHoldersTable(const v1::CohortBreakdown& b) {
  TablePrinter table({"NAME", "KIND", "FLAVOR", "RESOURCE", "NOMINAL", "QUOTA", "USED", "BORROWED",
                      "LENDABLE", "LIMITS"});
  for (const v1::QuotaHolder& h : b.holders()) {
    std::vector<std::string> limits;
    if (h.has_borrowing_limit())
      limits.push_back(absl::StrCat("borrowingLimit=", h.borrowing_limit()));
    if (h.has_lending_limit()) limits.push_back(absl::StrCat("lendingLimit=", h.lending_limit()));
    table.AddRow({absl::StrCat(std::string(2 * static_cast<size_t>(h.depth()), ' '), h.name()),
                  h.kind() == v1::COHORT ? "Cohort" : "ClusterQueue", h.flavor(), h.resource(),
                  h.nominal(), h.quota(), h.usage(), h.borrowed(),
                  h.depth() == 0 ? std::string(kNone) : h.lendable(),
                  limits.empty() ? std::string(kNone) : absl::StrJoin(limits, ",")});
  }
  return table;
}

TablePrinter CohortUsageTable(const v1::CohortBreakdown& b) {
  TablePrinter table({"FLAVOR", "RESOURCE", "NOMINAL", "SHARED", "USED", "BORROWED", "AVAILABLE"});
  for (const v1::CohortResourceTotals& t : b.totals()) {
    table.AddRow({t.flavor(), t.resource(), t.nominal(), t.shared(), t.usage(), t.borrowed(),
                  t.available()});
  }
  return table;
}

std::string BorrowersLine(const v1::CohortBreakdown& b) {
  std::vector<std::string> parts;
  for (const v1::QuotaHolder& h : b.holders()) {
    if (h.kind() != v1::CLUSTER_QUEUE || h.borrowed() == "0" || h.borrowed().empty()) continue;
    parts.push_back(
        absl::StrCat(h.name(), " borrows ", h.borrowed(), " ", h.resource(), " in ", h.flavor()));
  }
  return parts.empty() ? std::string(kNone) : absl::StrJoin(parts, "; ");
}

void PrintBlockers(std::ostream& out, const v1::CohortBreakdown& b, absl::string_view indent) {
  for (const v1::ReclaimBlocker& r : b.blockers()) {
    out << indent << r.policy() << " (" << r.object_kind() << " " << r.object()
        << "): " << r.message() << "\n";
  }
}

std::string CohortTitle(const v1::CohortBreakdown& b) {
  if (b.cohort().empty()) return std::string(kNone);
  std::vector<std::string> notes;
  if (b.implicit()) notes.push_back("implicit");
  if (!b.parent().empty()) notes.push_back(absl::StrCat("parent ", b.parent()));
  if (!b.root().empty() && b.root() != b.cohort()) notes.push_back(absl::StrCat("root ", b.root()));
  if (notes.empty()) return b.cohort();
  return absl::StrCat(b.cohort(), " (", absl::StrJoin(notes, ", "), ")");
}

}  // namespace tollgate::cli
