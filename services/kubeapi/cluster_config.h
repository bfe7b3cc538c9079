#pragma once

// Where a binary finds its own Kubernetes cluster, as kubectl and client-go do (first that
// applies): an explicit kubeconfig file; the pod's service account when running in a pod
// ($KUBERNETES_SERVICE_HOST); $KUBECONFIG (its first file); ~/.kube/config.

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "services/manifest/kube_config.h"

namespace tollgate::kubeapi {

// `kubeconfig`: a file given by flag ("" when none); `context`: the context to use in a file
// ("" for its current-context). FAILED_PRECONDITION when no rule applies.
absl::StatusOr<manifest::KubeConfig> LoadClusterConfig(absl::string_view kubeconfig,
                                                       absl::string_view context);

}  // namespace tollgate::kubeapi
