#pragma once

// client-go's informer loop, reduced to what tollgate-kube's controllers and
// tollgate-multikueue's kubeConfig Secret watch share: list a kind in every namespace (or one),
// then watch from the list's resourceVersion, watching again from the last
// version seen when a stream ends, listing again on 410 Gone or after repeated failures, and
// backing off on errors.

#include <functional>
#include <string>
#include <vector>

#include "absl/time/time.h"
#include "common/stop_signal.h"
#include "core/clock.h"
#include "services/kubeapi/kube_client.h"
#include "services/manifest/kube_resource.h"

namespace tollgate::kubeapi {

struct InformerHandlers {
  // Every object after a (re)list: the state to converge on (changes in between were missed).
  std::function<void(const std::vector<Json>& items)> on_list;
  // Each ADDED, MODIFIED or DELETED event after it.
  std::function<void(const WatchEvent& event)> on_event;
};

struct InformerOptions {
  absl::Duration min_backoff = absl::Milliseconds(200);
  absl::Duration max_backoff = absl::Seconds(30);
  // Named in log lines, e.g. "node".
  const char* what = "object";
  // The namespace to follow; empty: every namespace (or a cluster-scoped kind).
  std::string ns;
};

// Runs until `stop` fires. A kind the server does not serve (404) is listed again after
// max_backoff.
void RunInformer(KubeClient& kube, const manifest::ResourceKind& kind,
                 const InformerHandlers& handlers, const core::Clock& clock,
                 const InformerOptions& options, const common::StopSignal& stop);

// Waits the backoff of the `failures`-th consecutive failure (min_backoff doubling up to
// max_backoff); false when `stop` fired meanwhile.
bool WaitBackoff(int failures, absl::Duration min_backoff, absl::Duration max_backoff,
                 const common::StopSignal& stop);

}  // namespace tollgate::kubeapi
