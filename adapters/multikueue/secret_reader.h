#pragma once

// kubeConfig Secrets read through the Kubernetes API, as Kueue's MultiKueue controller reads
// them: a Secret of the controller's own namespace, its key `kubeconfig`; and watched, as
// Kueue's secretHandler watches them, so that a Secret created, changed or deleted reconnects
// its clusters at once instead of at the next configuration sync.

#include <functional>
#include <string>

#include "adapters/multikueue/worker_source.h"
#include "common/stop_signal.h"
#include "core/clock.h"
#include "services/kubeapi/kube_client.h"

namespace tollgate::multikueue {

// Reads Secrets from namespace `ns` of the cluster `kube` talks to; `kube` must outlive the
// reader. Errors name the Secret, the namespace or the key, and what the service account lacks.
SecretReader ApiSecretReader(kubeapi::KubeClient& kube, std::string ns);

// Follows the Secrets of namespace `ns` until `stop` (list, then watch; watched again after a
// stream ends, listed again when its version expired or after repeated failures, with
// backoff): `on_change(name)` for each Secret created, changed or deleted there, and
// `on_change("")` after each listing, since changes in between were not seen. Without list and
// watch on secrets it logs and tries again with backoff; the reads at each configuration sync
// go on.
void WatchSecrets(kubeapi::KubeClient& kube, const std::string& ns, const core::Clock& clock,
                  const std::function<void(const std::string& secret)>& on_change,
                  const common::StopSignal& stop);

}  // namespace tollgate::multikueue
