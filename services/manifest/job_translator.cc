// batch/v1 Job (Kueue: pkg/controller/jobs/job): one pod set "main" of min(parallelism,
// completions) pods (parallelism defaults to 1, completions to parallelism), with a minCount
// from kueue.x-k8s.io/job-min-parallelism for partial admission; suspended by spec.suspend; a
// partial admission sets parallelism to the admitted count (and completions too with
// kueue.x-k8s.io/job-completions-equal-parallelism); finished by its Complete or Failed
// condition; ready when ready + succeeded pods reach the admitted count; pods of a job whose
// remaining completions no longer fill its parallelism are reclaimable.
#include <algorithm>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "core/status_macros.h"
#include "services/manifest/job_kinds.h"
#include "services/manifest/pod_set_info.h"

namespace tollgate::manifest {
namespace {

constexpr absl::string_view kCompletionsEqualParallelismAnnotation =
    "kueue.x-k8s.io/job-completions-equal-parallelism";

bool SyncCompletions(const Json& obj) {
  bool value = false;
  return absl::SimpleAtob(
             GetString(obj, {"metadata", "annotations", kCompletionsEqualParallelismAnnotation}),
             &value) &&
         value;
}

// Kueue's terminalIndexesCount: distinct indexes below `completions` in the completed and
// failed index lists ("1,3-5"), malformed intervals skipped.
int64_t TerminalIndexes(const std::string& completed, const std::string& failed,
                        int64_t completions) {
  std::vector<std::pair<int64_t, int64_t>> intervals;
  for (const std::string& list : {completed, failed}) {
    if (list.empty()) continue;
    for (absl::string_view interval : absl::StrSplit(list, ',')) {
      std::pair<absl::string_view, absl::string_view> bounds = absl::StrSplit(interval, '-');
      int64_t first = 0;
      int64_t last = 0;
      if (!absl::SimpleAtoi(bounds.first, &first)) continue;
      last = first;
      if (!bounds.second.empty() && !absl::SimpleAtoi(bounds.second, &last)) continue;
      if (first < 0 || last < first) continue;
      last = std::min(last, completions - 1);
      if (first <= last) intervals.emplace_back(first, last);
    }
  }
  std::sort(intervals.begin(), intervals.end());
  int64_t count = 0;
  int64_t counted_to = -1;
  for (const auto& [first, last] : intervals) {
    const int64_t from = std::max(first, counted_to + 1);
    if (from > last) continue;
    count += last - from + 1;
    counted_to = last;
  }
  return count;
}

class JobTranslator final : public JobKindTranslator {
 public:
  const JobKindTraits& traits() const override {
    static const JobKindTraits* traits = new JobKindTraits{
        .resource = {"batch", "v1", "jobs", "Job", true},
        .framework = "batch/job",
    };
    return *traits;
  }

  absl::StatusOr<std::vector<PodSetSource>> PodSets(const Json& obj,
                                                    const ObjectLookup& lookup) const override {
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
    main.pod_index_label = "batch.kubernetes.io/job-completion-index";
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

  std::vector<std::string> EnactedFields(const Json& obj,
                                         const std::vector<PodSetSource>& sources) const override {
    std::vector<std::string> out = JobKindTranslator::EnactedFields(obj, sources);
    out.push_back("/spec/parallelism");
    if (SyncCompletions(obj)) out.push_back("/spec/completions");
    return out;
  }

  absl::Status Enact(Json& obj, const std::vector<PodSetSource>& sources,
                     const std::vector<PodSetInfo>& infos) const override {
    TOLLGATE_RETURN_IF_ERROR(JobKindTranslator::Enact(obj, sources, infos));
    const PodSetInfo* info = FindInfo(infos, "main");
    // A partially admitted job runs as many pods as it was admitted with (only a job with a
    // minimum can be, so this is Kueue's "when minPodsCount is set").
    if (info != nullptr && !sources.empty() && info->count > 0 && info->count < sources[0].count) {
      obj["spec"]["parallelism"] = info->count;
      if (SyncCompletions(obj)) obj["spec"]["completions"] = info->count;
    }
    return absl::OkStatus();
  }

  std::optional<JobFinish> Finished(const Json& obj) const override {
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

  bool IsActive(const Json& obj) const override {
    return GetInt(obj, {"status", "active"}).value_or(0) > 0 ||
           GetInt(obj, {"status", "terminating"}).value_or(0) > 0;
  }

  bool PodsReady(const Json& obj, const std::vector<PodSetSource>& sources,
                 const v1::Workload& workload) const override {
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

  std::vector<ReclaimablePod> ReclaimablePods(
      const Json& obj, const std::vector<PodSetSource>& sources) const override {
    const int64_t parallelism = GetInt(obj, {"spec", "parallelism"}).value_or(1);
    const int64_t completions = GetInt(obj, {"spec", "completions"}).value_or(parallelism);
    int64_t terminal = GetInt(obj, {"status", "succeeded"}).value_or(0);
    if (GetString(obj, {"spec", "completionMode"}) == "Indexed") {
      terminal = TerminalIndexes(GetString(obj, {"status", "completedIndexes"}),
                                 GetString(obj, {"status", "failedIndexes"}), completions);
    }
    if (parallelism <= 1 || terminal <= 0) return {};
    const int64_t remaining = std::max<int64_t>(completions - terminal, 0);
    if (remaining >= parallelism) return {};
    return {ReclaimablePod{"main", static_cast<int32_t>(parallelism - remaining)}};
  }
};

}  // namespace

std::unique_ptr<JobKindTranslator> NewJobTranslator() { return std::make_unique<JobTranslator>(); }

}  // namespace tollgate::manifest
