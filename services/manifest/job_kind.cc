#include "services/manifest/job_kind.h"

#include <openssl/evp.h>

#include <algorithm>
#include <string>
#include <utility>

#include "absl/strings/ascii.h"
#include "absl/strings/cord.h"
#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"
#include "core/admission_gates.h"
#include "core/status_macros.h"
#include "services/manifest/pod_set_info.h"
#include "services/manifest/pod_translator.h"
#include "services/manifest/topology_annotations.h"

namespace tollgate::manifest {
namespace {

constexpr size_t kMaxLabelLength = 63;
constexpr size_t kUidPrefixLength = 8;
// Kueue's limits: workload names are DNS-1123 subdomains (253), the hash is 5 hex digits.
constexpr size_t kMaxWorkloadNameLength = 253;
constexpr size_t kHashLength = 5;

constexpr absl::string_view kPermanentPayload = "tollgate.dev/permanent";

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

std::string Sha1Hex(absl::string_view data) {
  unsigned char digest[EVP_MAX_MD_SIZE];
  unsigned int length = 0;
  if (EVP_Digest(data.data(), data.size(), digest, &length, EVP_sha1(), nullptr) != 1) {
    // Only fails when libcrypto cannot allocate; a fixed suffix keeps names valid.
    return "00000";
  }
  return absl::BytesToHexString(absl::string_view(reinterpret_cast<const char*>(digest), length));
}

class EmptyLookup final : public ObjectLookup {
 public:
  absl::StatusOr<Json> Get(const ResourceKind& kind, absl::string_view ns,
                           absl::string_view name) const override {
    return absl::NotFoundError(absl::StrCat(kind.kind, " ", ns.empty() ? "" : ns,
                                            ns.empty() ? "" : "/", name, " not found"));
  }
};

}  // namespace

const ObjectLookup& NoObjects() {
  static const EmptyLookup* lookup = new EmptyLookup();
  return *lookup;
}

std::string JobKindTranslator::PodPriorityClassName(
    const Json& obj, const std::vector<PodSetSource>& sources) const {
  for (const PodSetSource& source : sources) {
    std::string name = GetString(source.pod_template, {"spec", "priorityClassName"});
    if (!name.empty()) return name;
  }
  return "";
}

bool JobKindTranslator::IsSuspended(const Json& obj) const {
  const Json::json_pointer pointer(SuspendPath());
  if (!obj.is_object() || !obj.contains(pointer)) return false;
  const Json& value = obj.at(pointer);
  return value.is_boolean() && value.get<bool>();
}

void JobKindTranslator::SetSuspended(Json& obj, bool suspended) const {
  obj[Json::json_pointer(SuspendPath())] = suspended;
}

std::vector<std::string> JobKindTranslator::EnactedFields(
    const Json& obj, const std::vector<PodSetSource>& sources) const {
  std::vector<std::string> out;
  for (const PodSetSource& source : sources) {
    if (source.template_path.empty()) continue;
    if (!source.template_present) {
      out.push_back(source.template_path);
      continue;
    }
    // A template without metadata gets one for the labels; remembering the metadata itself
    // as absent lets the restore remove it again, so the object comes back exactly.
    const Json::json_pointer meta(source.template_path + "/metadata");
    if (obj.contains(meta)) {
      out.push_back(source.template_path + "/metadata/labels");
      out.push_back(source.template_path + "/metadata/annotations");
    } else {
      out.push_back(source.template_path + "/metadata");
    }
    for (const char* field : {"/spec/nodeSelector", "/spec/tolerations", "/spec/schedulingGates"}) {
      out.push_back(source.template_path + field);
    }
  }
  return out;
}

absl::Status JobKindTranslator::Enact(Json& obj, const std::vector<PodSetSource>& sources,
                                      const std::vector<PodSetInfo>& infos) const {
  for (const PodSetSource& source : sources) {
    const PodSetInfo* info = FindInfo(infos, source.name);
    if (info == nullptr) continue;
    if (source.template_path.empty()) {
      return absl::InternalError(absl::StrCat(resource().kind, " pod set ", source.name,
                                              " has no template to enact an admission on"));
    }
    const Json::json_pointer pointer(source.template_path);
    if (!source.template_present) obj[pointer] = source.pod_template;
    TOLLGATE_RETURN_IF_ERROR(
        MergeIntoTemplate(obj[pointer], *info,
                          absl::StrCat("pod set ", source.name, " (", source.template_path, ")")));
  }
  return absl::OkStatus();
}

std::vector<ReclaimablePod> JobKindTranslator::ReclaimablePods(
    const Json& obj, const std::vector<PodSetSource>& sources) const {
  return {};
}

std::string JobKindTranslator::WorkloadName(const Json& obj) const {
  return KueueWorkloadName(resource().kind, resource().group, GetString(obj, {"metadata", "name"}),
                           GetString(obj, {"metadata", "uid"}));
}

std::string KueueWorkloadName(absl::string_view kind, absl::string_view group,
                              absl::string_view name, absl::string_view uid) {
  std::string prefix = absl::StrCat(absl::AsciiStrToLower(kind), "-", name);
  prefix.resize(std::min(prefix.size(), kMaxWorkloadNameLength - 1 - kHashLength));
  const std::string hash = Sha1Hex(absl::StrCat(kind, "\n", group, "\n", name, "\n", uid));
  return absl::StrCat(prefix, "-", hash.substr(0, kHashLength));
}

std::string LegacyWorkloadName(absl::string_view kind, absl::string_view name,
                               absl::string_view uid) {
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
                                               absl::string_view queue_name,
                                               const ObjectLookup& lookup, absl::string_view name) {
  const std::string object_name = GetString(obj, {"metadata", "name"});
  const std::string ns = GetString(obj, {"metadata", "namespace"});
  const std::string uid = GetString(obj, {"metadata", "uid"});
  const std::string& kind = translator.resource().kind;
  if (object_name.empty() || ns.empty() || uid.empty()) {
    return absl::InvalidArgumentError(absl::StrCat(kind,
                                                   " needs metadata.name, metadata.namespace and "
                                                   "metadata.uid (got \"",
                                                   object_name, "\", \"", ns, "\", \"", uid,
                                                   "\")"));
  }
  if (!translator.traits().creates_workload) {
    return absl::InvalidArgumentError(
        absl::StrCat(kind, " ", ns, "/", object_name, " asks for no workload of its own"));
  }
  v1::Workload wl;
  v1::ObjectMeta* meta = wl.mutable_metadata();
  meta->set_name(name.empty() ? translator.WorkloadName(obj) : std::string(name));
  meta->set_namespace_(ns);
  meta->set_uid(uid);
  (*meta->mutable_labels())[std::string(kJobUidLabel)] = uid;
  (*meta->mutable_labels())[std::string(kJobKindLabel)] = kind;
  (*meta->mutable_annotations())[std::string(kJobNameAnnotation)] = object_name;
  CopyAdmissionGates(obj, wl);

  v1::WorkloadSpec* spec = wl.mutable_spec();
  spec->set_queue_name(queue_name.empty() ? QueueName(obj) : std::string(queue_name));
  TOLLGATE_ASSIGN_OR_RETURN(std::vector<PodSetSource> sources, translator.PodSets(obj, lookup));
  if (sources.empty()) {
    return absl::InvalidArgumentError(
        absl::StrCat(kind, " ", ns, "/", object_name, " has no pod sets"));
  }
  std::string priority_class = GetString(obj, {"metadata", "labels", kPriorityClassLabel});
  if (priority_class.empty()) priority_class = translator.PodPriorityClassName(obj, sources);
  spec->set_priority_class_name(priority_class);
  for (const PodSetSource& source : sources) {
    const std::string where =
        source.template_path.empty() ? absl::StrCat("pod set ", source.name) : source.template_path;
    v1::PodSet* pod_set = spec->add_pod_sets();
    TOLLGATE_ASSIGN_OR_RETURN(*pod_set,
                              PodSetFromTemplate(source.name, source.count, source.min_count,
                                                 source.pod_template, where));
    TOLLGATE_RETURN_IF_ERROR(
        ApplyTemplateTopology(source.pod_template, source.pod_index_label, where, pod_set));
  }
  return wl;
}

void CopyAdmissionGates(const Json& obj, v1::Workload& wl) {
  const Json* gates = Find(obj, {"metadata", "annotations", core::kAdmissionGatedByAnnotation});
  if (gates == nullptr || !gates->is_string()) return;
  (*wl.mutable_metadata()->mutable_annotations())[std::string(core::kAdmissionGatedByAnnotation)] =
      gates->get<std::string>();
}

const Json& JsonAt(const Json& obj, std::initializer_list<absl::string_view> path) {
  static const Json* kNull = new Json();
  const Json* found = Find(obj, path);
  return found == nullptr ? *kNull : *found;
}

std::optional<JobFinish> FinishFromConditions(const Json& obj, absl::string_view success_type,
                                              absl::string_view failure_type,
                                              absl::string_view kind) {
  for (const auto& [type, succeeded] : {std::pair{success_type, true}, {failure_type, false}}) {
    const Json* c = FindCondition(obj, type);
    if (c == nullptr || GetString(*c, {"status"}) != "True") continue;
    std::string message = GetString(*c, {"message"});
    if (message.empty()) message = absl::StrCat(kind, succeeded ? " succeeded" : " failed");
    return JobFinish{succeeded, message};
  }
  return std::nullopt;
}

bool IsPermanentError(const absl::Status& status) {
  return !status.ok() && status.GetPayload(kPermanentPayload).has_value();
}

absl::Status MarkPermanent(absl::Status status) {
  if (!status.ok()) status.SetPayload(kPermanentPayload, absl::Cord("1"));
  return status;
}

}  // namespace tollgate::manifest
