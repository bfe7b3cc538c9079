#pragma once

// How `describe` and `get -o usage` show a cohort breakdown (the visibility API's answer to
// "who holds the quota I am waiting for"): pure functions of the response.

#include <ostream>
#include <string>

#include "absl/strings/string_view.h"
#include "cmd/tollgate/table_printer.h"
#include "tollgate/v1/service.pb.h"

namespace tollgate::cli {

// One row per ClusterQueue and Cohort of the tree and flavor-resource: NAME (indented by
// depth), KIND, FLAVOR, RESOURCE, NOMINAL, QUOTA, USED, BORROWED, LENDABLE, LIMITS.
TablePrinter QuotaHoldersTable(const v1::CohortBreakdown& breakdown);

// A cohort's usage view, like a ClusterQueue's `-o usage`: FLAVOR, RESOURCE, NOMINAL (every
// quota in it), SHARED, USED, BORROWED (from its parent), AVAILABLE.
TablePrinter CohortUsageTable(const v1::CohortBreakdown& breakdown);

// "team-a-cq borrows 8 cpu in default-flavor; ..." or "<none>".
std::string BorrowersLine(const v1::CohortBreakdown& breakdown);

// The blockers as "  policy (Kind name): message" lines, or nothing.
void PrintBlockers(std::ostream& out, const v1::CohortBreakdown& breakdown,
                   absl::string_view indent);

// "evalhub (implicit)", "research (parent org, root org)", or "<none>".
std::string CohortTitle(const v1::CohortBreakdown& breakdown);

}  // namespace tollgate::cli
