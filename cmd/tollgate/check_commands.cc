// check set|activate|deactivate: an admin deciding an admission check by hand, through the same
// AdmissionCheckService a check controller uses (so it is authorized and audited the same way).
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "cmd/tollgate/cli_format.h"
#include "cmd/tollgate/commands.h"

namespace tollgate::cli {
namespace {

// "PODSET:KEY=VALUE" of --label, --annotation and --node-selector.
struct PodSetEntry {
  std::string pod_set;
  std::string key;
  std::string value;
};

absl::StatusOr<PodSetEntry> ParsePodSetEntry(absl::string_view flag, absl::string_view text) {
  const size_t colon = text.find(':');
  const size_t equals = text.find('=', colon == absl::string_view::npos ? 0 : colon);
  if (colon == absl::string_view::npos || colon == 0 || equals == absl::string_view::npos ||
      equals == colon + 1) {
    return absl::InvalidArgumentError(
        absl::StrCat("--", flag, " \"", text, "\": want POD_SET:KEY=VALUE, e.g. main:zone=a"));
  }
  return PodSetEntry{std::string(text.substr(0, colon)),
                     std::string(text.substr(colon + 1, equals - colon - 1)),
                     std::string(text.substr(equals + 1))};
}

// "PODSET:KEY[=VALUE][:EFFECT]" of --toleration: Equal with a value, Exists without.
absl::StatusOr<std::pair<std::string, v1::Toleration>> ParseToleration(absl::string_view text) {
  std::vector<std::string> parts = absl::StrSplit(text, ':');
  if (parts.size() < 2 || parts.size() > 3 || parts[0].empty() || parts[1].empty()) {
    return absl::InvalidArgumentError(absl::StrCat(
        "--toleration \"", text, "\": want POD_SET:KEY[=VALUE][:EFFECT], e.g. main:gpu=true"));
  }
  v1::Toleration toleration;
  const size_t equals = parts[1].find('=');
  if (equals == std::string::npos) {
    toleration.set_key(parts[1]);
    toleration.set_operator_("Exists");
  } else {
    toleration.set_key(parts[1].substr(0, equals));
    toleration.set_operator_("Equal");
    toleration.set_value(parts[1].substr(equals + 1));
  }
  if (parts.size() == 3) toleration.set_effect(parts[2]);
  return std::make_pair(parts[0], toleration);
}

// The pod set updates the flags describe, one per pod set in name order.
absl::StatusOr<std::vector<v1::PodSetUpdate>> PodSetUpdatesOf(const ParsedFlags& args) {
  std::map<std::string, v1::PodSetUpdate> updates;
  auto update_of = [&](const std::string& pod_set) -> v1::PodSetUpdate& {
    v1::PodSetUpdate& update = updates[pod_set];
    update.set_name(pod_set);
    return update;
  };
  for (absl::string_view flag : {"label", "annotation", "node-selector"}) {
    for (const std::string& text : args.All(flag)) {
      absl::StatusOr<PodSetEntry> entry = ParsePodSetEntry(flag, text);
      if (!entry.ok()) return entry.status();
      v1::PodSetUpdate& update = update_of(entry->pod_set);
      auto& map = flag == "label"        ? *update.mutable_labels()
                  : flag == "annotation" ? *update.mutable_annotations()
                                         : *update.mutable_node_selector();
      map[entry->key] = entry->value;
    }
  }
  for (const std::string& text : args.All("toleration")) {
    absl::StatusOr<std::pair<std::string, v1::Toleration>> toleration = ParseToleration(text);
    if (!toleration.ok()) return toleration.status();
    *update_of(toleration->first).add_tolerations() = toleration->second;
  }
  std::vector<v1::PodSetUpdate> out;
  for (auto& [name, update] : updates) out.push_back(std::move(update));
  return out;
}

// "check1 Ready, check2 Pending: waiting for capacity"
std::string ChecksLine(const v1::Workload& wl) {
  std::vector<std::string> parts;
  for (const v1::AdmissionCheckState& check : wl.status().admission_checks()) {
    parts.push_back(absl::StrCat(check.name(), "=", check.state()));
  }
  return absl::StrJoin(parts, ", ");
}

int RunCheckSet(Session& s, const ParsedFlags& args) {
  if (args.positional.size() != 2) {
    return s.UsageError(args.positional.size() < 2
                            ? "name the workload: check set WORKLOAD --check NAME --state STATE"
                            : absl::StrCat("unexpected argument ", args.positional[2]));
  }
  if (!args.Has("check")) return s.UsageError("--check: name the admission check");
  if (!args.Has("state")) {
    return s.UsageError("--state: want Pending, Ready, Retry or Rejected");
  }
  v1::UpdateAdmissionCheckStateRequest request;
  request.mutable_workload()->set_namespace_(s.Namespace());
  request.mutable_workload()->set_name(args.positional[1]);
  request.set_check(args.Get("check"));
  request.set_state(args.Get("state"));
  request.set_message(args.Get("message"));
  if (args.Has("requeue-after")) {
    absl::StatusOr<absl::Duration> delay =
        common::FlagArg{"requeue-after", args.Get("requeue-after"), true}.Duration(
            /*allow_zero=*/true);
    if (!delay.ok()) return s.UsageError(delay.status().message());
    request.set_requeue_after_seconds(
        static_cast<int32_t>(absl::ToInt64Seconds(absl::Ceil(*delay, absl::Seconds(1)))));
  }
  absl::StatusOr<std::vector<v1::PodSetUpdate>> updates = PodSetUpdatesOf(args);
  if (!updates.ok()) return s.UsageError(updates.status().message());
  for (v1::PodSetUpdate& update : *updates) *request.add_pod_set_updates() = std::move(update);

  if (args.Has("revision")) {
    int64_t revision = 0;
    if (!absl::SimpleAtoi(args.Get("revision"), &revision) || revision <= 0) {
      return s.UsageError(absl::StrCat("--revision \"", args.Get("revision"),
                                       "\": want the workload's revision, a positive number"));
    }
    request.set_expected_revision(revision);
  } else {
    // Decided on what the admin sees now: the revision read here is the one the update
    // expects, so a change in between (an eviction, another check) refuses it.
    v1::GetWorkloadRequest get;
    *get.mutable_workload() = request.workload();
    absl::StatusOr<v1::Workload> wl = s.client().GetWorkload(get);
    if (!wl.ok()) return s.Fail(wl.status());
    request.set_expected_revision(wl->metadata().resource_version());
  }
  absl::StatusOr<v1::UpdateAdmissionCheckStateResponse> response =
      s.client().UpdateAdmissionCheckState(request);
  if (!response.ok()) return s.Fail(response.status());
  const v1::Workload& wl = response->workload();
  s.out() << "workload.kueue.x-k8s.io/" << request.workload().name() << " check " << request.check()
          << " set to " << request.state() << " (" << DisplayState(wl)
          << "; checks: " << ChecksLine(wl) << ")\n";
  return kExitOk;
}

int RunCheckActive(Session& s, const ParsedFlags& args, bool active) {
  if (args.positional.size() != 2) {
    return s.UsageError(args.positional.size() < 2
                            ? "name the admission check"
                            : absl::StrCat("unexpected argument ", args.positional[2]));
  }
  v1::SetAdmissionCheckActiveRequest request;
  request.set_name(args.positional[1]);
  request.set_active(active);
  request.set_reason(args.Get("reason", active ? "Active" : "Inactive"));
  request.set_message(args.Get("message", active ? "Activated by tollgate check activate"
                                                 : "Deactivated by tollgate check deactivate"));
  absl::StatusOr<v1::SetAdmissionCheckActiveResponse> response =
      s.client().SetAdmissionCheckActive(request);
  if (!response.ok()) return s.Fail(response.status());
  s.out() << "admissioncheck.kueue.x-k8s.io/" << request.name()
          << (active ? " activated" : " deactivated") << "\n";
  return kExitOk;
}

}  // namespace

int RunCheck(Session& s, const ParsedFlags& args) {
  const std::string sub = args.positional.empty() ? "" : args.positional[0];
  if (sub == "set") return RunCheckSet(s, args);
  if (sub == "activate") return RunCheckActive(s, args, true);
  if (sub == "deactivate") return RunCheckActive(s, args, false);
  return s.UsageError(sub.empty() ? "name a subcommand: set, activate or deactivate"
                                  : absl::StrCat("unknown subcommand \"", sub,
                                                 "\": want set, activate or deactivate"));
}

}  // namespace tollgate::cli
