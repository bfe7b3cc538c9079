#include "services/manifest/job_kinds.h"

#include <memory>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"

namespace tollgate::manifest {
namespace {

const std::vector<const JobKindTranslator*>& Table() {
  // The rows. Add a kind here (and its factory in job_kinds.h); never reorder, the order is
  // what users see listed.
  static constexpr std::unique_ptr<JobKindTranslator> (*kRows[])() = {
      &NewJobTranslator,        &NewCronJobTranslator,          &NewJobSetTranslator,
      &NewMpiJobTranslator,     &NewPyTorchJobTranslator,       &NewTfJobTranslator,
      &NewJaxJobTranslator,     &NewPaddleJobTranslator,        &NewXgboostJobTranslator,
      &NewTrainJobTranslator,   &NewRayJobTranslator,           &NewRayClusterTranslator,
      &NewRayServiceTranslator, &NewSparkApplicationTranslator, &NewAppWrapperTranslator,
  };
  static const auto* table = [] {
    auto* rows = new std::vector<const JobKindTranslator*>;
    for (auto factory : kRows) rows->push_back(factory().release());
    return rows;
  }();
  return *table;
}

}  // namespace

absl::Span<const JobKindTranslator* const> AllJobKinds() { return Table(); }

const JobKindTranslator* FindJobKind(absl::string_view kind) {
  for (const JobKindTranslator* t : Table()) {
    if (t->resource().kind == kind) return t;
  }
  return nullptr;
}

const JobKindTranslator* FindJobKindByPlural(absl::string_view plural) {
  for (const JobKindTranslator* t : Table()) {
    if (t->resource().plural == plural) return t;
  }
  return nullptr;
}

const JobKindTranslator* FindJobKindByFramework(absl::string_view framework) {
  for (const JobKindTranslator* t : Table()) {
    if (!framework.empty() && t->traits().framework == framework) return t;
  }
  return nullptr;
}

absl::StatusOr<const JobKindTranslator*> JobKindOfManifest(absl::string_view api_version,
                                                           absl::string_view kind) {
  const JobKindTranslator* t = FindJobKind(kind);
  if (t == nullptr) return nullptr;
  const ResourceKind& r = t->resource();
  if (api_version == r.ApiVersion()) return t;
  std::string message = absl::StrCat(kind, ": apiVersion \"", api_version, "\" is not served; ");
  bool known = false;
  for (const std::string& v : t->traits().other_versions) {
    const std::string other = r.group.empty() ? v : absl::StrCat(r.group, "/", v);
    known = known || other == api_version;
  }
  absl::StrAppend(&message, "Tollgate reads ", kind, " as ", r.ApiVersion(),
                  known ? " (convert the manifest to that version)" : "");
  return absl::InvalidArgumentError(message);
}

std::string JobKindList() {
  std::vector<std::string> parts;
  for (const JobKindTranslator* t : Table()) {
    parts.push_back(absl::StrCat(t->resource().kind, " (", t->resource().ApiVersion(), ")"));
  }
  return absl::StrJoin(parts, ", ");
}

std::string FrameworkList() {
  std::vector<std::string> parts;
  for (const JobKindTranslator* t : Table()) {
    if (!t->traits().framework.empty()) parts.push_back(t->traits().framework);
  }
  return absl::StrJoin(parts, ", ");
}

}  // namespace tollgate::manifest
