#include "services/manifest/gated_kinds_input.h"

#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "core/status_macros.h"
#include "services/manifest/job_kind.h"
#include "services/manifest/pod_group.h"
#include "services/manifest/pod_kinds.h"

namespace tollgate::manifest {
namespace {

struct GatedKind {
  absl::string_view kind;
  absl::string_view api_version;
};

constexpr GatedKind kGatedKinds[] = {
    {"Pod", "v1"},
    {"Deployment", "apps/v1"},
    {"StatefulSet", "apps/v1"},
    {"LeaderWorkerSet", "leaderworkerset.x-k8s.io/v1"},
};

// A stable stand-in for the uid the API server would assign (FNV-1a, as a UUID-shaped string).
std::string StableUid(absl::string_view text) {
  uint64_t h = 14695981039346656037ull;
  for (unsigned char c : text) {
    h ^= c;
    h *= 1099511628211ull;
  }
  return absl::StrFormat("%08x-%04x-%04x-%04x-%012x", h >> 32, (h >> 16) & 0xffff, h & 0xffff,
                         (h >> 48) & 0xffff, h & 0xffffffffffffull);
}

Manifest AsManifest(v1::Workload wl) {
  // The uid only named the workload; the server gives the workload its own.
  wl.mutable_metadata()->clear_uid();
  Manifest m;
  m.kind = "Workload";
  m.object = std::move(wl);
  return m;
}

}  // namespace

bool GatedKindsInput::Handles(absl::string_view kind) {
  for (const GatedKind& k : kGatedKinds) {
    if (k.kind == kind) return true;
  }
  return false;
}

absl::Status GatedKindsInput::Add(Json obj, absl::string_view where, std::vector<Manifest>& out) {
  const std::string kind = GetString(obj, {"kind"});
  const std::string api_version = GetString(obj, {"apiVersion"});
  for (const GatedKind& k : kGatedKinds) {
    if (k.kind == kind && k.api_version != api_version) {
      return absl::InvalidArgumentError(absl::StrCat(where, ": ", kind, ": apiVersion \"",
                                                     api_version, "\" is not ", k.api_version));
    }
  }
  Json& meta = obj["metadata"];
  if (!meta.is_object()) meta = Json::object();
  if (!meta.contains("namespace")) meta["namespace"] = "default";
  const std::string name = GetString(obj, {"metadata", "name"});
  if (name.empty()) {
    return absl::InvalidArgumentError(
        absl::StrCat(where, ": ", kind, ": metadata.name is required"));
  }
  const std::string ns = GetString(obj, {"metadata", "namespace"});
  if (!meta.contains("uid")) meta["uid"] = StableUid(absl::StrCat(kind, "/", ns, "/", name));
  // Without the queue label, the namespace's LocalQueue "default" (an empty queue name).
  const std::string queue = QueueName(obj);
  auto refused = [&](const absl::Status& status) {
    return absl::InvalidArgumentError(
        absl::StrCat(where, ": ", kind, " ", ns, "/", name, ": ", status.message()));
  };
  if (kind == "Pod") {
    if (std::string group = PodGroupName(obj); !group.empty()) {
      groups_[{ns, group}].push_back(std::move(obj));
      return absl::OkStatus();
    }
    absl::StatusOr<v1::Workload> wl = PodWorkload(obj, queue);
    if (!wl.ok()) return refused(wl.status());
    out.push_back(AsManifest(*std::move(wl)));
    return absl::OkStatus();
  }
  if (kind == "Deployment") {
    // Each replica's pod is its own workload (Kueue's model); the pods' names stand in.
    const Json* tmpl = Find(obj, {"spec", "template"});
    if (tmpl == nullptr || !tmpl->is_object()) {
      return refused(absl::InvalidArgumentError("spec.template: Required value"));
    }
    const int64_t replicas = GetInt(obj, {"spec", "replicas"}).value_or(1);
    for (int64_t i = 0; i < replicas; ++i) {
      Json pod = *tmpl;
      Ensure(pod, {"metadata"})["name"] = absl::StrCat(name, "-", i);
      pod["metadata"]["namespace"] = ns;
      pod["metadata"]["uid"] = StableUid(absl::StrCat("Pod/", ns, "/", name, "-", i));
      if (!queue.empty()) Ensure(pod, {"metadata", "labels"})[kQueueNameLabel] = queue;
      absl::StatusOr<v1::Workload> wl = PodWorkload(pod, queue);
      if (!wl.ok()) return refused(wl.status());
      out.push_back(AsManifest(*std::move(wl)));
    }
    return absl::OkStatus();
  }
  if (kind == "StatefulSet") {
    if (StatefulSetReplicas(obj) == 0) return absl::OkStatus();  // on hold: nothing to admit
    absl::StatusOr<v1::Workload> wl = StatefulSetWorkload(obj, queue);
    if (!wl.ok()) return refused(wl.status());
    out.push_back(AsManifest(*std::move(wl)));
    return absl::OkStatus();
  }
  absl::StatusOr<std::vector<v1::Workload>> groups = LeaderWorkerSetWorkloads(obj, queue);
  if (!groups.ok()) return refused(groups.status());
  for (v1::Workload& wl : *groups) out.push_back(AsManifest(std::move(wl)));
  return absl::OkStatus();
}

size_t GatedKindsInput::PendingPods() const {
  size_t n = 0;
  for (const auto& [key, pods] : groups_) n += pods.size();
  return n;
}

absl::Status GatedKindsInput::Finish(std::vector<Manifest>& out) {
  for (auto& [key, pods] : groups_) {
    const auto& [ns, group] = key;
    const std::string what = absl::StrCat("pod group ", ns, "/", group);
    absl::StatusOr<PodGroupInfo> info = ReadPodGroup(pods, kQueueNameLabel);
    if (!info.ok())
      return absl::InvalidArgumentError(absl::StrCat(what, ": ", info.status().message()));
    absl::StatusOr<NewGroupWorkload> composed = ComposeGroup(pods, *info);
    if (!composed.ok()) {
      return absl::Status(composed.status().code(),
                          absl::StrCat(what, ": ", composed.status().message(), " (", pods.size(),
                                       " given, total ", info->total_count, ")"));
    }
    if (!composed->excess_pods.empty()) {
      return absl::InvalidArgumentError(absl::StrCat(
          what, ": ", pods.size(), " pods given, more than its total ", info->total_count));
    }
    absl::StatusOr<v1::Workload> wl =
        PodGroupWorkload(ns, *info, composed->roles, pods.front(), info->queue_name);
    if (!wl.ok())
      return absl::InvalidArgumentError(absl::StrCat(what, ": ", wl.status().message()));
    out.push_back(AsManifest(*std::move(wl)));
  }
  groups_.clear();
  return absl::OkStatus();
}

}  // namespace tollgate::manifest
