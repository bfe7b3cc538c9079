#include "services/kubeapi/cluster_config.h"

#include <cstdlib>
#include <string>
#include <vector>

#include "absl/strings/str_split.h"

namespace tollgate::kubeapi {
namespace {

std::string Env(const char* name) {
  const char* value = std::getenv(name);
  return value == nullptr ? "" : value;
}

}  // namespace

absl::StatusOr<manifest::KubeConfig> LoadClusterConfig(absl::string_view kubeconfig,
                                                       absl::string_view context) {
  if (!kubeconfig.empty()) return manifest::LoadKubeConfigFile(std::string(kubeconfig), context);
  const std::string host = Env("KUBERNETES_SERVICE_HOST");
  if (!host.empty()) return manifest::LoadInClusterConfig(host, Env("KUBERNETES_SERVICE_PORT"));
  std::string path = Env("KUBECONFIG");
  // $KUBECONFIG may list several files; the first one is the one we read.
  if (!path.empty()) {
    const std::vector<std::string> files = absl::StrSplit(path, ':', absl::SkipEmpty());
    path = files.empty() ? "" : files.front();
  }
  if (path.empty() && !Env("HOME").empty()) path = Env("HOME") + "/.kube/config";
  if (path.empty()) {
    return absl::FailedPreconditionError(
        "no cluster: pass --kubeconfig, run in a pod, or set $KUBECONFIG");
  }
  return manifest::LoadKubeConfigFile(path, context);
}

}  // namespace tollgate::kubeapi
