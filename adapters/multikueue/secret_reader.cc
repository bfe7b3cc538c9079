#include "adapters/multikueue/secret_reader.h"

#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"
#include "services/kubeapi/informer.h"
#include "services/manifest/json_util.h"
#include "services/manifest/kube_resource.h"

namespace tollgate::multikueue {

SecretReader ApiSecretReader(kubeapi::KubeClient& kube, std::string ns) {
  return [&kube, ns = std::move(ns)](const std::string& secret) -> absl::StatusOr<std::string> {
    absl::StatusOr<kubeapi::Json> object = kube.Get(manifest::SecretResource(), ns, secret);
    if (absl::IsNotFound(object.status())) {
      return absl::NotFoundError(
          absl::StrCat("no Secret \"", secret, "\" in namespace \"", ns, "\""));
    }
    if (absl::IsPermissionDenied(object.status())) {
      return absl::PermissionDeniedError(
          absl::StrCat("reading it is forbidden (", object.status().message(),
                       "): tollgate-multikueue's service account needs get on secrets in "
                       "namespace \"",
                       ns, "\""));
    }
    if (!object.ok()) {
      return absl::Status(
          object.status().code(),
          absl::StrCat("cannot read it from the Kubernetes API: ", object.status().message()));
    }
    const kubeapi::Json* encoded = manifest::Find(*object, {"data", "kubeconfig"});
    // Kueue's words for a Secret without the key.
    if (encoded == nullptr) {
      return absl::NotFoundError(
          absl::StrCat("key \"kubeconfig\" not found in secret \"", secret, "\""));
    }
    std::string text;
    if (!encoded->is_string() || !absl::Base64Unescape(encoded->get<std::string>(), &text)) {
      return absl::InvalidArgumentError("data.kubeconfig is not base64");
    }
    return text;
  };
}

void WatchSecrets(kubeapi::KubeClient& kube, const std::string& ns, const core::Clock& clock,
                  const std::function<void(const std::string& secret)>& on_change,
                  const common::StopSignal& stop) {
  kubeapi::InformerHandlers handlers;
  handlers.on_list = [&](const std::vector<kubeapi::Json>&) { on_change(""); };
  handlers.on_event = [&](const kubeapi::WatchEvent& event) {
    const std::string name = manifest::GetString(event.object, {"metadata", "name"});
    if (!name.empty()) on_change(name);
  };
  kubeapi::InformerOptions options;
  options.what = "kubeConfig Secret";
  options.ns = ns;
  kubeapi::RunInformer(kube, manifest::SecretResource(), handlers, clock, options, stop);
}

}  // namespace tollgate::multikueue
