#pragma once

// What the adapter needs to know about one job kind (batch/v1 Job, ray.io/v1 RayJob,
// kubeflow.org/v1 PyTorchJob), and the translation of such an object into a Tollgate Workload
// that all kinds share. Pure; no I/O. Kueue's jobframework GenericJob plays the same role.

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "services/manifest/json_util.h"
#include "services/manifest/kube_resource.h"
#include "tollgate/v1/objects.pb.h"

namespace tollgate::manifest {

inline constexpr absl::string_view kQueueNameLabel = "kueue.x-k8s.io/queue-name";
inline constexpr absl::string_view kPriorityClassLabel = "kueue.x-k8s.io/priority-class";

// Where one pod set of a job comes from.
struct PodSetSource {
  std::string name;
  int32_t count = 1;
  std::optional<int32_t> min_count;
  // JSON pointer to the PodTemplateSpec inside the object, e.g. "/spec/template".
  std::string template_path;
  // The template itself; a default when the object has none at template_path (RayJob's
  // submitter), in which case `template_present` is false.
  Json pod_template;
  bool template_present = true;
};

// A job's terminal state, as its own controller reports it.
struct JobFinish {
  bool succeeded = false;
  std::string message;
};

// One job kind. Implementations are stateless. Thread-safe.
class JobKindTranslator {
 public:
  virtual ~JobKindTranslator() = default;

  virtual const ResourceKind& resource() const = 0;
  // The pod sets in Kueue's order. INVALID_ARGUMENT for an object Kueue would refuse to manage.
  virtual absl::StatusOr<std::vector<PodSetSource>> PodSets(const Json& obj) const = 0;
  // The scheduling.k8s.io PriorityClass the pods name, used when the object carries no
  // kueue.x-k8s.io/priority-class label; empty when none.
  virtual std::string PodPriorityClassName(const Json& obj) const = 0;
  // JSON pointer to the boolean that suspends the job.
  virtual std::string SuspendPath() const = 0;
  // Set once the job has succeeded or failed.
  virtual std::optional<JobFinish> Finished(const Json& obj) const = 0;
  // Some pod of the job may still be running (so an evicted workload is not yet stopped).
  virtual bool IsActive(const Json& obj) const = 0;
  // Every pod of the admitted job is running (Kueue's PodsReady).
  virtual bool PodsReady(const Json& obj, const v1::Workload& workload) const = 0;
};

// Whether the object is suspended per translator.SuspendPath().
bool IsSuspended(const JobKindTranslator& translator, const Json& obj);

// The Workload name for an object: `<kind>-<name>-<uid prefix>`, lower-case, at most 63 bytes
// and a DNS-1123 label, so the same object always maps to the same workload and a re-created
// object with the same name to a different one.
std::string WorkloadName(absl::string_view kind, absl::string_view name, absl::string_view uid);

// The LocalQueue an object asks for: the kueue.x-k8s.io/queue-name label, else the annotation
// of the same name (Kueue's deprecated spelling); empty when neither.
std::string QueueName(const Json& obj);

// The Workload for a job object as it was before admission changed it: `obj` must already have
// its original pod templates restored (see RestoreOriginalTemplates). `queue_name` overrides
// QueueName(obj) when non-empty (jobs managed without a queue label use "default").
absl::StatusOr<v1::Workload> TranslateWorkload(const JobKindTranslator& translator, const Json& obj,
                                               absl::string_view queue_name);

// A pod set name from a user-chosen name (RayJob group, PyTorchJob replica type): lower-cased,
// characters outside [a-z0-9-] replaced by '-', trimmed to a DNS-1123 label.
std::string PodSetNameFrom(absl::string_view raw);

}  // namespace tollgate::manifest
