#include "services/manifest/job_translator.h"

#include <algorithm>
#include <string>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"

namespace tollgate::manifest {

absl::StatusOr<std::vector<PodSetSource>> JobTranslator::PodSets(const Json& obj) const {
  const int64_t parallelism = GetInt(obj, {"spec", "parallelism"}).value_or(1);
  const int64_t completions = GetInt(obj, {"spec", "completions"}).value_or(parallelism);
  if (parallelism < 0 || completions < 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("spec.parallelism and spec.completions must not be negative, got ",
                     parallelism, " and ", completions));
  }
  const int64_t count = std::min(parallelism, completions);
  if (count > INT32_MAX) {
    return absl::InvalidArgumentError(absl::StrCat("spec.parallelism: too large: ", count));
  }
  const Json* pod_template = Find(obj, {"spec", "template"});
  if (pod_template == nullptr || !pod_template->is_object()) {
    return absl::InvalidArgumentError("spec.template: required");
  }
  PodSetSource main;
  main.name = "main";
  main.count = static_cast<int32_t>(count);
  main.template_path = "/spec/template";
  main.pod_template = *pod_template;
  const std::string min_text =
      GetString(obj, {"metadata", "annotations", kJobMinParallelismAnnotation});
  if (!min_text.empty()) {
    int32_t min_count = 0;
    if (!absl::SimpleAtoi(min_text, &min_count) || min_count < 1) {
      return absl::InvalidArgumentError(
          absl::StrCat("metadata.annotations[", kJobMinParallelismAnnotation,
                       "]: want a positive integer, got \"", min_text, "\""));
    }
    // Kueue ignores a minimum that does not shrink anything.
    if (min_count < main.count) main.min_count = min_count;
  }
  return std::vector<PodSetSource>{std::move(main)};
}

std::string JobTranslator::PodPriorityClassName(const Json& obj) const {
  return GetString(obj, {"spec", "template", "spec", "priorityClassName"});
}

std::optional<JobFinish> JobTranslator::Finished(const Json& obj) const {
  if (HasTrueCondition(obj, "Complete")) return JobFinish{true, "Job finished successfully"};
  if (const Json* failed = FindCondition(obj, "Failed");
      failed != nullptr && GetString(*failed, {"status"}) == "True") {
    std::string message = "Job failed";
    const std::string reason = GetString(*failed, {"reason"});
    const std::string detail = GetString(*failed, {"message"});
    if (!reason.empty()) absl::StrAppend(&message, ": ", reason);
    if (!detail.empty()) absl::StrAppend(&message, ": ", detail);
    return JobFinish{false, message};
  }
  return std::nullopt;
}

bool JobTranslator::IsActive(const Json& obj) const {
  return GetInt(obj, {"status", "active"}).value_or(0) > 0 ||
         GetInt(obj, {"status", "terminating"}).value_or(0) > 0;
}

bool JobTranslator::PodsReady(const Json& obj, const v1::Workload& workload) const {
  int64_t want = 0;
  for (const v1::PodSet& ps : workload.spec().pod_sets()) want += ps.count();
  // A partially admitted job runs fewer pods than it asked for.
  if (workload.status().has_admission()) {
    int64_t admitted = 0;
    for (const auto& a : workload.status().admission().pod_set_assignments()) {
      admitted += a.count();
    }
    if (admitted > 0) want = std::min(want, admitted);
  }
  const int64_t ready = GetInt(obj, {"status", "ready"}).value_or(0) +
                        GetInt(obj, {"status", "succeeded"}).value_or(0);
  return ready >= want;
}

}  // namespace tollgate::manifest
