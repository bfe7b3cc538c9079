#include "services/api/breakdown_codec.h"

#include "core/quantity.h"

namespace tollgate::api {

v1::CohortBreakdown CohortBreakdownToProto(const core::CohortBreakdown& b,
                                           const core::Workload* workload) {
  v1::CohortBreakdown out;
  out.set_cohort(b.cohort);
  out.set_parent(b.parent);
  out.set_implicit(b.implicit);
  out.set_root(b.root);
  out.set_cluster_queue(b.cluster_queue);
  if (workload != nullptr) {
    out.mutable_workload()->set_namespace_(workload->spec.namespace_name);
    out.mutable_workload()->set_name(workload->spec.name);
    out.set_pending_message(workload->status.pending_message);
  }
  for (const core::CohortResourceTotals& t : b.totals) {
    v1::CohortResourceTotals* p = out.add_totals();
    auto q = [&t](int64_t v) { return core::FormatResourceScalar(t.resource, v); };
    p->set_flavor(t.flavor);
    p->set_resource(t.resource);
    p->set_nominal(q(t.nominal));
    p->set_shared(q(t.shared));
    p->set_usage(q(t.usage));
    p->set_borrowed(q(t.borrowed));
    p->set_available(q(t.available));
  }
  for (const core::QuotaHolder& h : b.holders) {
    v1::QuotaHolder* p = out.add_holders();
    auto q = [&h](int64_t v) { return core::FormatResourceScalar(h.resource, v); };
    p->set_name(h.name);
    p->set_kind(h.is_cohort ? v1::COHORT : v1::CLUSTER_QUEUE);
    p->set_parent(h.parent);
    p->set_depth(h.depth);
    p->set_flavor(h.flavor);
    p->set_resource(h.resource);
    p->set_nominal(q(h.nominal));
    p->set_quota(q(h.quota));
    p->set_usage(q(h.usage));
    p->set_borrowed(q(h.borrowed));
    p->set_lendable(q(h.lendable));
    if (h.borrowing_limit.has_value()) p->set_borrowing_limit(q(*h.borrowing_limit));
    if (h.lending_limit.has_value()) p->set_lending_limit(q(*h.lending_limit));
  }
  for (const core::ReclaimBlocker& r : b.blockers) {
    v1::ReclaimBlocker* p = out.add_blockers();
    p->set_policy(r.policy);
    p->set_object_kind(r.object_kind);
    p->set_object(r.object);
    p->set_flavor(r.flavor);
    p->set_resource(r.resource);
    p->set_message(r.message);
  }
  return out;
}

}  // namespace tollgate::api
