#include "services/manifest/workload_translator.h"

#include <algorithm>
#include <cctype>
#include <string>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "core/status_macros.h"
#include "services/manifest/pod_translator.h"

namespace tollgate::manifest {
namespace {

constexpr size_t kMaxLabelLength = 63;
constexpr size_t kUidPrefixLength = 8;

// Lower-case [a-z0-9-] only; other characters become '-'.
std::string DnsLabelChars(absl::string_view raw) {
  std::string out;
  out.reserve(raw.size());
  for (char c : raw) {
    const char lower = absl::ascii_tolower(static_cast<unsigned char>(c));
    out += (absl::ascii_isalnum(static_cast<unsigned char>(lower)) || lower == '-') ? lower : '-';
  }
  return out;
}

void TrimDashes(std::string& s) {
  const size_t first = s.find_first_not_of('-');
  if (first == std::string::npos) {
    s.clear();
    return;
  }
  const size_t last = s.find_last_not_of('-');
  s = s.substr(first, last - first + 1);
}

}  // namespace

bool IsSuspended(const JobKindTranslator& translator, const Json& obj) {
  const Json::json_pointer pointer(translator.SuspendPath());
  if (!obj.contains(pointer)) return false;
  const Json& value = obj.at(pointer);
  return value.is_boolean() && value.get<bool>();
}

std::string WorkloadName(absl::string_view kind, absl::string_view name, absl::string_view uid) {
  std::string suffix;
  for (char c : uid) {
    if (suffix.size() == kUidPrefixLength) break;
    if (absl::ascii_isalnum(static_cast<unsigned char>(c))) {
      suffix += absl::ascii_tolower(static_cast<unsigned char>(c));
    }
  }
  if (suffix.empty()) suffix = "0";
  std::string prefix = DnsLabelChars(absl::StrCat(kind, "-", name));
  prefix.resize(std::min(prefix.size(), kMaxLabelLength - 1 - suffix.size()));
  TrimDashes(prefix);
  if (prefix.empty()) return suffix;
  return absl::StrCat(prefix, "-", suffix);
}

std::string PodSetNameFrom(absl::string_view raw) {
  std::string out = DnsLabelChars(raw);
  out.resize(std::min(out.size(), kMaxLabelLength));
  TrimDashes(out);
  return out;
}

std::string QueueName(const Json& obj) {
  std::string queue = GetString(obj, {"metadata", "labels", kQueueNameLabel});
  if (queue.empty()) queue = GetString(obj, {"metadata", "annotations", kQueueNameLabel});
  return queue;
}

absl::StatusOr<v1::Workload> TranslateWorkload(const JobKindTranslator& translator, const Json& obj,
                                               absl::string_view queue_name) {
  const std::string name = GetString(obj, {"metadata", "name"});
  const std::string ns = GetString(obj, {"metadata", "namespace"});
  const std::string uid = GetString(obj, {"metadata", "uid"});
  if (name.empty() || ns.empty() || uid.empty()) {
    return absl::InvalidArgumentError(absl::StrCat(translator.resource().kind,
                                                   " needs metadata.name, metadata.namespace and "
                                                   "metadata.uid (got \"",
                                                   name, "\", \"", ns, "\", \"", uid, "\")"));
  }
  v1::Workload wl;
  v1::ObjectMeta* meta = wl.mutable_metadata();
  meta->set_name(WorkloadName(absl::AsciiStrToLower(translator.resource().kind), name, uid));
  meta->set_namespace_(ns);
  meta->set_uid(uid);

  v1::WorkloadSpec* spec = wl.mutable_spec();
  spec->set_queue_name(queue_name.empty() ? QueueName(obj) : std::string(queue_name));
  std::string priority_class = GetString(obj, {"metadata", "labels", kPriorityClassLabel});
  if (priority_class.empty()) priority_class = translator.PodPriorityClassName(obj);
  spec->set_priority_class_name(priority_class);

  TOLLGATE_ASSIGN_OR_RETURN(std::vector<PodSetSource> sources, translator.PodSets(obj));
  if (sources.empty()) {
    return absl::InvalidArgumentError(
        absl::StrCat(translator.resource().kind, " ", ns, "/", name, " has no pod sets"));
  }
  for (const PodSetSource& source : sources) {
    TOLLGATE_ASSIGN_OR_RETURN(*spec->add_pod_sets(),
                              PodSetFromTemplate(source.name, source.count, source.min_count,
                                                 source.pod_template, source.template_path));
  }
  return wl;
}

}  // namespace tollgate::manifest
