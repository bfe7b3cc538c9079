#pragma once

// Recording a core/v1 Event about an object, as client-go's recorder does: best effort (a lost
// event is logged, never an error of the caller).

#include <cstdint>
#include <string>

#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "services/kubeapi/kube_client.h"

namespace tollgate::kube {

// Kubernetes objects as JSON, as the manifest library and the REST client read them.
using Json = manifest::Json;

// Who records: the event's source.component / reportingComponent and reportingInstance.
struct EventSource {
  std::string component = "tollgate-kube";
  std::string instance;
};

// Creates an Event of `type` (Normal, Warning) about `obj` (of `kind`). `sequence` keeps two
// events of one object recorded in the same nanosecond apart: client-go names events
// <object>.<hex nanoseconds>. `action` (optional) is what was done, as events.k8s.io's recorder
// records it.
void RecordKubeEvent(kubeapi::KubeClient& kube, const manifest::ResourceKind& kind, const Json& obj,
                     absl::string_view type, absl::string_view reason, absl::string_view message,
                     absl::Time now, uint64_t sequence, const EventSource& source,
                     absl::string_view action = "");

}  // namespace tollgate::kube
