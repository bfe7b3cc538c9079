#pragma once

#include <map>
#include <string>
#include <tuple>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/synchronization/mutex.h"
#include "services/kubeapi/kube_client.h"

namespace tollgate::kube {

// Kubernetes objects as JSON, as the manifest library and the REST client read them.
using Json = manifest::Json;

// An in-memory API server for controller tests: objects keyed by resource, namespace and name;
// a store-wide resourceVersion counter; merge patches with the real server's resourceVersion
// precondition (409 -> ABORTED); status kept out of spec patches as the status subresource
// does. Watch is not simulated (it returns once `stop` fires). Thread-safe.
class FakeKubeClient final : public kubeapi::KubeClient {
 public:
  // Stores `obj` as is (a uid, namespace and resourceVersion are filled in when missing).
  Json Put(const manifest::ResourceKind& kind, Json obj);
  // Replaces the object's status, bumping its resourceVersion (what a job controller does).
  void SetStatus(const manifest::ResourceKind& kind, const std::string& ns, const std::string& name,
                 const Json& status);
  // Removes the object; returns it.
  Json Remove(const manifest::ResourceKind& kind, const std::string& ns, const std::string& name);
  // The object as stored (null when absent).
  Json Object(const manifest::ResourceKind& kind, const std::string& ns,
              const std::string& name) const;
  // Makes the next `n` patches fail with 409 after bumping the object's resourceVersion, as
  // if someone else had written in between.
  void InjectConflicts(int n);

  int patch_count() const;
  std::vector<Json> events() const;
  std::vector<Json> patches() const;

  absl::StatusOr<Json> Get(const manifest::ResourceKind& kind, absl::string_view ns,
                           absl::string_view name) override;
  absl::StatusOr<kubeapi::ListResult> List(const manifest::ResourceKind& kind,
                                           absl::string_view ns) override;
  absl::Status Watch(const manifest::ResourceKind& kind, absl::string_view ns,
                     absl::string_view resource_version,
                     const std::function<bool(const kubeapi::WatchEvent&)>& on_event,
                     const common::StopSignal& stop) override;
  absl::StatusOr<Json> Patch(const manifest::ResourceKind& kind, absl::string_view ns,
                             absl::string_view name, kubeapi::PatchType type,
                             const Json& patch) override;
  absl::StatusOr<Json> Create(const manifest::ResourceKind& kind, absl::string_view ns,
                              const Json& object) override;
  absl::Status Delete(const manifest::ResourceKind& kind, absl::string_view ns,
                      absl::string_view name) override;

 private:
  using Key = std::tuple<std::string, std::string, std::string>;
  std::string NextVersionLocked() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  mutable absl::Mutex mu_;
  std::map<Key, Json> objects_ ABSL_GUARDED_BY(mu_);
  int64_t version_ ABSL_GUARDED_BY(mu_) = 100;
  int64_t next_uid_ ABSL_GUARDED_BY(mu_) = 1;
  int conflicts_to_inject_ ABSL_GUARDED_BY(mu_) = 0;
  std::vector<Json> events_ ABSL_GUARDED_BY(mu_);
  std::vector<Json> patches_ ABSL_GUARDED_BY(mu_);
};

}  // namespace tollgate::kube
