#include "services/rpc/scheduler_audit.h"

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"

namespace tollgate::rpc {

SchedulerAudit::~SchedulerAudit() {
  stop_.store(true);
  if (thread_.joinable()) thread_.join();
}

void SchedulerAudit::Start(int64_t revision) {
  thread_ = std::thread([this, revision] { Run(revision); });
}

void SchedulerAudit::Run(int64_t revision) {
  while (!stop_.load()) {
    v1::WatchRequest request;
    request.set_since_revision(revision);
    // From revision 0 the watch lists the current state first (ADDED events at one revision):
    // that is the past, not decisions, and only seeds the known states.
    bool listing = revision == 0;
    int64_t listing_revision = -1;
    absl::Status status = api_.Watch(
        request,
        [&](const v1::WatchEvent& event) {
          if (listing && listing_revision < 0) listing_revision = event.revision();
          if (listing &&
              (event.type() != v1::WatchEvent::ADDED || event.revision() != listing_revision)) {
            listing = false;
          }
          if (event.revision() > revision) revision = event.revision();
          Observe(event, listing);
          return true;
        },
        [&] { return stop_.load(); });
    if (stop_.load()) return;
    // The revision was compacted away (or the store failed): continue from now. Entries between
    // are lost; the RPC audit lines still name every call.
    if (!status.ok()) {
      revision = 0;
      states_.clear();
      // Paces retries of a failing store; the loop ends as soon as stop_ is set.
      absl::SleepFor(absl::Milliseconds(100));
    }
  }
}

void SchedulerAudit::Observe(const v1::WatchEvent& event, bool seeding) {
  if (!event.has_workload()) return;
  const v1::Workload& workload = event.workload();
  const std::string key =
      absl::StrCat(workload.metadata().namespace_(), "/", workload.metadata().name());
  if (event.type() == v1::WatchEvent::DELETED) {
    states_.erase(key);
    return;
  }
  const v1::WorkloadState state = workload.status().state();
  v1::WorkloadState& known = states_[key];
  const v1::WorkloadState previous = known;
  known = state;
  if (seeding || state == previous) return;
  const std::string latest = workload.status().events().empty()
                                 ? ""
                                 : absl::StrCat(workload.status().events().rbegin()->reason(), ": ",
                                                workload.status().events().rbegin()->message());
  if (state == v1::WORKLOAD_STATE_QUOTA_RESERVED) {
    gate_.RecordSchedulerDecision(
        "reserve", workload,
        absl::StrCat("quota reserved in ClusterQueue ",
                     workload.status().admission().cluster_queue(),
                     "; waiting for admission checks", latest.empty() ? "" : "; ", latest));
  } else if (state == v1::WORKLOAD_STATE_ADMITTED) {
    gate_.RecordSchedulerDecision(
        "admit", workload,
        absl::StrCat("admitted to ClusterQueue ", workload.status().admission().cluster_queue(),
                     latest.empty() ? "" : "; ", latest));
  } else if (state == v1::WORKLOAD_STATE_EVICTING) {
    const std::string& why = workload.status().last_preemption_reason();
    gate_.RecordSchedulerDecision(
        why.empty() ? "evict" : "preempt", workload,
        absl::StrCat(why.empty() ? "" : why, why.empty() ? "" : "; ", latest));
  }
}

}  // namespace tollgate::rpc
