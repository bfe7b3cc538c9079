#pragma once

// Names of a Kubernetes resource type as the REST API needs them.

#include <string>

#include "absl/strings/string_view.h"

namespace tollgate::manifest {

struct ResourceKind {
  // Empty for the core group ("/api/v1").
  std::string group;
  std::string version;
  // Lower-case plural used in URLs, e.g. "jobs".
  std::string plural;
  // CamelCase kind, e.g. "Job".
  std::string kind;
  bool namespaced = true;

  // "batch/v1", or "v1" for the core group.
  std::string ApiVersion() const { return group.empty() ? version : group + "/" + version; }
  // "/apis/batch/v1" or "/api/v1".
  std::string GroupVersionPath() const {
    return group.empty() ? "/api/" + version : "/apis/" + group + "/" + version;
  }
  bool operator==(const ResourceKind&) const = default;
};

inline const ResourceKind& JobResource() {
  static const ResourceKind* kind = new ResourceKind{"batch", "v1", "jobs", "Job", true};
  return *kind;
}
inline const ResourceKind& RayJobResource() {
  static const ResourceKind* kind = new ResourceKind{"ray.io", "v1", "rayjobs", "RayJob", true};
  return *kind;
}
inline const ResourceKind& PyTorchJobResource() {
  static const ResourceKind* kind =
      new ResourceKind{"kubeflow.org", "v1", "pytorchjobs", "PyTorchJob", true};
  return *kind;
}
inline const ResourceKind& NamespaceResource() {
  static const ResourceKind* kind = new ResourceKind{"", "v1", "namespaces", "Namespace", false};
  return *kind;
}
inline const ResourceKind& EventResource() {
  static const ResourceKind* kind = new ResourceKind{"", "v1", "events", "Event", true};
  return *kind;
}
inline const ResourceKind& NodeResource() {
  static const ResourceKind* kind = new ResourceKind{"", "v1", "nodes", "Node", false};
  return *kind;
}
inline const ResourceKind& PodResource() {
  static const ResourceKind* kind = new ResourceKind{"", "v1", "pods", "Pod", true};
  return *kind;
}
inline const ResourceKind& SecretResource() {
  static const ResourceKind* kind = new ResourceKind{"", "v1", "secrets", "Secret", true};
  return *kind;
}

}  // namespace tollgate::manifest
