#include "services/kubeapi/informer.h"

#include <algorithm>
#include <string>

#include "absl/strings/str_cat.h"
#include "common/json_log.h"

namespace tollgate::kubeapi {

bool WaitBackoff(int failures, absl::Duration min_backoff, absl::Duration max_backoff,
                 const common::StopSignal& stop) {
  absl::Duration delay = min_backoff;
  for (int i = 0; i < failures && delay < max_backoff; ++i) delay *= 2;
  return !stop.WaitFor(std::min(delay, max_backoff));
}

void RunInformer(KubeClient& kube, const manifest::ResourceKind& kind,
                 const InformerHandlers& handlers, const core::Clock& clock,
                 const InformerOptions& options, const common::StopSignal& stop) {
  int failures = 0;
  std::string resource_version;
  auto backoff = [&] {
    return WaitBackoff(failures++, options.min_backoff, options.max_backoff, stop);
  };
  while (!stop.stopped()) {
    if (resource_version.empty()) {
      absl::StatusOr<ListResult> list = kube.List(kind, options.ns);
      if (!list.ok()) {
        common::Log("warning", absl::StrCat("cannot list ", options.what, "s"),
                    {{"error", list.status().ToString()}});
        // Not served (no CRD): look again much later.
        if (absl::IsNotFound(list.status()) ? stop.WaitFor(options.max_backoff) : !backoff()) {
          break;
        }
        continue;
      }
      handlers.on_list(list->items);
      resource_version = list->resource_version;
      failures = 0;
    }
    const absl::Time started = clock.Now();
    absl::Status watched = kube.Watch(
        kind, options.ns, resource_version,
        [&](const WatchEvent& event) {
          const std::string rv = manifest::GetString(event.object, {"metadata", "resourceVersion"});
          if (!rv.empty()) resource_version = rv;
          if (event.type != "BOOKMARK") handlers.on_event(event);
          return !stop.stopped();
        },
        stop);
    if (stop.stopped()) break;
    if (absl::IsOutOfRange(watched)) {
      resource_version.clear();
      continue;
    }
    if (!watched.ok()) {
      common::Log("warning", absl::StrCat(options.what, " watch failed"),
                  {{"error", watched.ToString()}});
      if (failures >= 3) resource_version.clear();
      if (!backoff()) break;
      continue;
    }
    failures = 0;
    // A stream the server ends at once is not a reason to spin.
    if (clock.Now() - started < absl::Seconds(1) && stop.WaitFor(options.min_backoff)) break;
  }
}

}  // namespace tollgate::kubeapi
