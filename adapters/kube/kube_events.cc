#include "adapters/kube/kube_events.h"

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "common/json_log.h"

namespace tollgate::kube {

using manifest::GetString;

void RecordKubeEvent(kubeapi::KubeClient& kube, const manifest::ResourceKind& kind, const Json& obj,
                     absl::string_view type, absl::string_view reason, absl::string_view message,
                     absl::Time now, uint64_t sequence, const EventSource& source,
                     absl::string_view action) {
  const std::string ns = GetString(obj, {"metadata", "namespace"});
  const std::string name = GetString(obj, {"metadata", "name"});
  const std::string timestamp = absl::FormatTime("%Y-%m-%dT%H:%M:%SZ", now, absl::UTCTimeZone());
  Json event = {
      {"apiVersion", "v1"},
      {"kind", "Event"},
      {"metadata",
       {{"name", absl::StrFormat("%s.%x%04x", name, absl::ToUnixNanos(now), sequence & 0xffff)},
        {"namespace", ns}}},
      {"involvedObject",
       {{"apiVersion", kind.ApiVersion()},
        {"kind", kind.kind},
        {"name", name},
        {"namespace", ns},
        {"uid", GetString(obj, {"metadata", "uid"})},
        {"resourceVersion", GetString(obj, {"metadata", "resourceVersion"})}}},
      {"reason", std::string(reason)},
      {"message", std::string(message)},
      {"type", std::string(type)},
      {"source", {{"component", source.component}}},
      {"reportingComponent", source.component},
      {"reportingInstance", source.instance},
      {"firstTimestamp", timestamp},
      {"lastTimestamp", timestamp},
      {"count", 1}};
  if (!action.empty()) event["action"] = std::string(action);
  absl::Status created = kube.Create(manifest::EventResource(), ns, event).status();
  // Events are best effort, as in client-go's recorder: losing one must not fail a reconcile.
  if (!created.ok()) {
    common::Log("warning", "cannot record event",
                {{"object", absl::StrCat(ns, "/", name)}, {"error", created.ToString()}});
  }
}

}  // namespace tollgate::kube
