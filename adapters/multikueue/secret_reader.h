#pragma once

// kubeConfig Secrets read through the Kubernetes API, as Kueue's MultiKueue controller reads
// them: a Secret of the controller's own namespace, its key `kubeconfig`.

#include <string>

#include "adapters/multikueue/worker_source.h"
#include "services/kubeapi/kube_client.h"

namespace tollgate::multikueue {

// Reads Secrets from namespace `ns` of the cluster `kube` talks to; `kube` must outlive the
// reader. Errors name the Secret, the namespace or the key, and what the service account lacks.
SecretReader ApiSecretReader(kubeapi::KubeClient& kube, std::string ns);

}  // namespace tollgate::multikueue
