// get config: tollgated's effective scheduler configuration (InfoService.GetConfiguration).
#include <string>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "cmd/tollgate/commands.h"
#include "cmd/tollgate/object_printer.h"

namespace tollgate::cli {

int RunGetConfig(Session& s, const ParsedFlags& args) {
  absl::StatusOr<OutputFormat> format = ParseOutputFormat(args.Get("output"));
  if (!format.ok()) return s.UsageError(format.status().message());
  absl::StatusOr<v1::SchedulerConfiguration> config = s.client().GetConfiguration();
  if (!config.ok()) return s.Fail(config.status());
  Json manifest = Json::parse(config->effective_json(), /*cb=*/nullptr, /*allow_exceptions=*/false);
  if (manifest.is_discarded()) {
    return s.Fail(absl::InternalError("the server sent a configuration that is not JSON"));
  }
  if (!format->is_table()) {
    absl::Status printed =
        PrintObjects(*format, {manifest}, {"configuration.config.kueue.x-k8s.io"},
                     /*single=*/true, s.out());
    return printed.ok() ? kExitOk : s.Fail(printed);
  }
  // The table form: where it came from, what is on, and what was ignored.
  s.out() << "Source:  "
          << (config->source().empty()
                  ? "built-in defaults (tollgated runs without --config)"
                  : absl::StrCat(config->source(), " (", config->api_version(), ")"))
          << "\n";
  auto on = [&](const char* key) { return manifest.contains(key); };
  s.out() << "FairSharing:           " << (on("fairSharing") ? "enabled" : "disabled") << "\n";
  s.out() << "AdmissionFairSharing:  " << (on("admissionFairSharing") ? "enabled" : "disabled")
          << "\n";
  s.out() << "WaitForPodsReady:      " << (on("waitForPodsReady") ? "enabled" : "disabled") << "\n";
  s.out() << "EvictionsNeedAck:      " << (config->evictions_need_ack() ? "true" : "false")
          << " (grace " << config->eviction_grace_seconds() << "s)\n";
  if (config->cost_attribution_labels_size() > 0) {
    s.out() << "CostAttributionLabels: " << absl::StrJoin(config->cost_attribution_labels(), ",")
            << "\n";
  }
  for (const std::string& w : config->warnings()) s.out() << "Warning: " << w << "\n";
  s.out() << "\n" << ToYaml(manifest);
  return kExitOk;
}

}  // namespace tollgate::cli
