#pragma once

#include "core/cohort_breakdown.h"
#include "tollgate/v1/service.pb.h"

namespace tollgate::api {

// The core's cohort breakdown as the visibility API answers it, quantities formatted as usage
// is ("32", "128Gi"). `workload` is the analysed pending workload, if any.
v1::CohortBreakdown CohortBreakdownToProto(const core::CohortBreakdown& breakdown,
                                           const core::Workload* workload);

}  // namespace tollgate::api
