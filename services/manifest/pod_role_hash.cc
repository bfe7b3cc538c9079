#include "services/manifest/pod_role_hash.h"

#include <openssl/evp.h>

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "core/quantity.h"

namespace tollgate::manifest {
namespace {

using Json = nlohmann::json;

// How Go's encoding/json writes one struct field, read from the pod's JSON the way Go decodes
// it: an absent or null value is the field's zero value.
enum class Kind {
  kString,      // string: "" when absent
  kInt,         // int32/int64: 0 when absent
  kStringPtr,   // *string: null when absent
  kIntPtr,      // *int32/*int64: null when absent
  kStringList,  // []string: null when absent
  kStringMap,   // map[string]string: null when absent, keys sorted
  kStruct,      // a struct value: always written, its fields zero when absent
  kStructPtr,   // *struct: null when absent
  kStructList,  // []struct: null when absent
};

struct Field {
  const char* name;
  Kind kind;
  // Go's omitempty: left out when absent, or (for strings, numbers, lists and maps) empty.
  bool omit_empty;
  // The element type of kStruct, kStructPtr and kStructList.
  const std::vector<Field>* fields = nullptr;
};

// k8s.io/api core/v1 and apimachinery meta/v1, in their Go declaration order (the vendored
// versions Kueue builds with); fields Kueue's version does not have are ignored, as Go ignores
// unknown JSON fields.
const std::vector<Field>& LabelSelectorRequirementFields() {
  static const auto* f = new std::vector<Field>{
      {"key", Kind::kString, false},
      {"operator", Kind::kString, false},
      {"values", Kind::kStringList, true},
  };
  return *f;
}
const std::vector<Field>& LabelSelectorFields() {
  static const auto* f = new std::vector<Field>{
      {"matchLabels", Kind::kStringMap, true},
      {"matchExpressions", Kind::kStructList, true, &LabelSelectorRequirementFields()},
  };
  return *f;
}
const std::vector<Field>& NodeSelectorTermFields() {
  // NodeSelectorRequirement has the same three fields as LabelSelectorRequirement.
  static const auto* f = new std::vector<Field>{
      {"matchExpressions", Kind::kStructList, true, &LabelSelectorRequirementFields()},
      {"matchFields", Kind::kStructList, true, &LabelSelectorRequirementFields()},
  };
  return *f;
}
const std::vector<Field>& NodeSelectorFields() {
  static const auto* f = new std::vector<Field>{
      {"nodeSelectorTerms", Kind::kStructList, false, &NodeSelectorTermFields()},
  };
  return *f;
}
const std::vector<Field>& PreferredSchedulingTermFields() {
  static const auto* f = new std::vector<Field>{
      {"weight", Kind::kInt, false},
      {"preference", Kind::kStruct, false, &NodeSelectorTermFields()},
  };
  return *f;
}
const std::vector<Field>& NodeAffinityFields() {
  static const auto* f = new std::vector<Field>{
      {"requiredDuringSchedulingIgnoredDuringExecution", Kind::kStructPtr, true,
       &NodeSelectorFields()},
      {"preferredDuringSchedulingIgnoredDuringExecution", Kind::kStructList, true,
       &PreferredSchedulingTermFields()},
  };
  return *f;
}
const std::vector<Field>& PodAffinityTermFields() {
  static const auto* f = new std::vector<Field>{
      {"labelSelector", Kind::kStructPtr, true, &LabelSelectorFields()},
      {"namespaces", Kind::kStringList, true},
      {"topologyKey", Kind::kString, false},
      {"namespaceSelector", Kind::kStructPtr, true, &LabelSelectorFields()},
      {"matchLabelKeys", Kind::kStringList, true},
      {"mismatchLabelKeys", Kind::kStringList, true},
  };
  return *f;
}
const std::vector<Field>& WeightedPodAffinityTermFields() {
  static const auto* f = new std::vector<Field>{
      {"weight", Kind::kInt, false},
      {"podAffinityTerm", Kind::kStruct, false, &PodAffinityTermFields()},
  };
  return *f;
}
const std::vector<Field>& PodAffinityFields() {
  // PodAntiAffinity has the same fields.
  static const auto* f = new std::vector<Field>{
      {"requiredDuringSchedulingIgnoredDuringExecution", Kind::kStructList, true,
       &PodAffinityTermFields()},
      {"preferredDuringSchedulingIgnoredDuringExecution", Kind::kStructList, true,
       &WeightedPodAffinityTermFields()},
  };
  return *f;
}
const std::vector<Field>& AffinityFields() {
  static const auto* f = new std::vector<Field>{
      {"nodeAffinity", Kind::kStructPtr, true, &NodeAffinityFields()},
      {"podAffinity", Kind::kStructPtr, true, &PodAffinityFields()},
      {"podAntiAffinity", Kind::kStructPtr, true, &PodAffinityFields()},
  };
  return *f;
}
const std::vector<Field>& TolerationFields() {
  static const auto* f = new std::vector<Field>{
      {"key", Kind::kString, true},
      {"operator", Kind::kString, true},
      {"value", Kind::kString, true},
      {"effect", Kind::kString, true},
      {"tolerationSeconds", Kind::kIntPtr, true},
  };
  return *f;
}
const std::vector<Field>& TopologySpreadConstraintFields() {
  static const auto* f = new std::vector<Field>{
      {"maxSkew", Kind::kInt, false},
      {"topologyKey", Kind::kString, false},
      {"whenUnsatisfiable", Kind::kString, false},
      {"labelSelector", Kind::kStructPtr, true, &LabelSelectorFields()},
      {"minDomains", Kind::kIntPtr, true},
      {"nodeAffinityPolicy", Kind::kStringPtr, true},
      {"nodeTaintsPolicy", Kind::kStringPtr, true},
      {"matchLabelKeys", Kind::kStringList, true},
  };
  return *f;
}
const std::vector<Field>& ContainerPortFields() {
  static const auto* f = new std::vector<Field>{
      {"name", Kind::kString, true},        {"hostPort", Kind::kInt, true},
      {"containerPort", Kind::kInt, false}, {"protocol", Kind::kString, true},
      {"hostIP", Kind::kString, true},
  };
  return *f;
}
const std::vector<Field>& PodResourceClaimFields() {
  static const auto* f = new std::vector<Field>{
      {"name", Kind::kString, false},
      {"resourceClaimName", Kind::kStringPtr, true},
      {"resourceClaimTemplateName", Kind::kStringPtr, true},
  };
  return *f;
}

// Go's encoding/json string: HTML-safe escapes for <, > and &, \u2028 and \u2029, the short
// escapes Go uses (\" \\ \n \r \t \b \f), \u00XX for other control bytes.
void AppendString(std::string& out, const std::string& s) {
  out.push_back('"');
  for (size_t i = 0; i < s.size(); ++i) {
    const unsigned char c = static_cast<unsigned char>(s[i]);
    switch (c) {
      case '"':
        out += "\\\"";
        continue;
      case '\\':
        out += "\\\\";
        continue;
      case '\n':
        out += "\\n";
        continue;
      case '\r':
        out += "\\r";
        continue;
      case '\t':
        out += "\\t";
        continue;
      case '\b':
        out += "\\b";
        continue;
      case '\f':
        out += "\\f";
        continue;
      case '<':
      case '>':
      case '&':
        absl::StrAppendFormat(&out, "\\u%04x", c);
        continue;
      default:
        break;
    }
    if (c < 0x20) {
      absl::StrAppendFormat(&out, "\\u%04x", c);
    } else if (c == 0xE2 && i + 2 < s.size() && static_cast<unsigned char>(s[i + 1]) == 0x80 &&
               (static_cast<unsigned char>(s[i + 2]) == 0xA8 ||
                static_cast<unsigned char>(s[i + 2]) == 0xA9)) {
      absl::StrAppendFormat(&out, "\\u%04x",
                            static_cast<unsigned char>(s[i + 2]) == 0xA8 ? 0x2028 : 0x2029);
      i += 2;
    } else {
      out.push_back(static_cast<char>(c));
    }
  }
  out.push_back('"');
}

bool Absent(const Json* v) { return v == nullptr || v->is_null(); }

absl::Status WrongType(const std::string& path, absl::string_view want, const Json& v) {
  return absl::InvalidArgumentError(
      absl::StrCat(path, ": expected ", want, ", got ", v.type_name()));
}

absl::StatusOr<std::string> StringOf(const Json& v, const std::string& path) {
  if (!v.is_string()) return WrongType(path, "a string", v);
  return v.get<std::string>();
}

absl::StatusOr<std::string> IntOf(const Json& v, const std::string& path) {
  if (v.is_number_integer()) return absl::StrCat(v.get<int64_t>());
  if (v.is_number_unsigned()) return absl::StrCat(v.get<uint64_t>());
  if (v.is_number_float()) {
    const double d = v.get<double>();
    if (d == static_cast<double>(static_cast<int64_t>(d))) {
      return absl::StrCat(static_cast<int64_t>(d));
    }
  }
  return WrongType(path, "an integer", v);
}

absl::Status AppendStruct(std::string& out, const Json* v, const std::vector<Field>& fields,
                          const std::string& path);

absl::Status AppendStringMap(std::string& out, const Json& v, const std::string& path) {
  if (!v.is_object()) return WrongType(path, "an object", v);
  out.push_back('{');
  bool first = true;
  // nlohmann keeps object members in std::map order: bytewise, as Go sorts map keys.
  for (const auto& [key, value] : v.items()) {
    if (!first) out.push_back(',');
    first = false;
    AppendString(out, key);
    out.push_back(':');
    absl::StatusOr<std::string> s = StringOf(value, absl::StrCat(path, ".", key));
    if (!s.ok()) return s.status();
    AppendString(out, *s);
  }
  out.push_back('}');
  return absl::OkStatus();
}

// A ResourceList: quantities in Kubernetes' canonical spelling (what the API server stores and
// Go's Quantity.MarshalJSON writes), keys sorted; null when absent.
absl::Status AppendQuantityMap(std::string& out, const Json* v, const std::string& path) {
  if (Absent(v)) {
    out += "null";
    return absl::OkStatus();
  }
  if (!v->is_object()) return WrongType(path, "an object", *v);
  out.push_back('{');
  bool first = true;
  for (const auto& [key, value] : v->items()) {
    if (!first) out.push_back(',');
    first = false;
    AppendString(out, key);
    out.push_back(':');
    std::string text;
    if (value.is_string()) {
      text = value.get<std::string>();
    } else if (value.is_number()) {
      text = value.dump();
    } else {
      return WrongType(absl::StrCat(path, ".", key), "a quantity", value);
    }
    absl::StatusOr<core::Quantity> q = core::Quantity::Parse(text);
    if (!q.ok()) {
      return absl::InvalidArgumentError(absl::StrCat(path, ".", key, ": ", q.status().message()));
    }
    AppendString(out, q->ToString());
  }
  out.push_back('}');
  return absl::OkStatus();
}

absl::Status AppendList(std::string& out, const Json& v, const Field& field,
                        const std::string& path) {
  if (!v.is_array()) return WrongType(path, "a list", v);
  out.push_back('[');
  for (size_t i = 0; i < v.size(); ++i) {
    if (i > 0) out.push_back(',');
    const std::string item_path = absl::StrCat(path, "[", i, "]");
    if (field.kind == Kind::kStringList) {
      absl::StatusOr<std::string> s = StringOf(v[i], item_path);
      if (!s.ok()) return s.status();
      AppendString(out, *s);
    } else {
      absl::Status st = AppendStruct(out, &v[i], *field.fields, item_path);
      if (!st.ok()) return st;
    }
  }
  out.push_back(']');
  return absl::OkStatus();
}

// One field's value, or false in `written` when omitempty leaves it out.
absl::Status AppendField(std::string& out, const Json* v, const Field& field,
                         const std::string& path, bool& written) {
  written = true;
  const bool absent = Absent(v);
  switch (field.kind) {
    case Kind::kString: {
      std::string s;
      if (!absent) {
        absl::StatusOr<std::string> read = StringOf(*v, path);
        if (!read.ok()) return read.status();
        s = *std::move(read);
      }
      if (field.omit_empty && s.empty()) break;
      AppendString(out, s);
      return absl::OkStatus();
    }
    case Kind::kInt: {
      std::string n = "0";
      if (!absent) {
        absl::StatusOr<std::string> read = IntOf(*v, path);
        if (!read.ok()) return read.status();
        n = *std::move(read);
      }
      if (field.omit_empty && n == "0") break;
      out += n;
      return absl::OkStatus();
    }
    case Kind::kStringPtr:
    case Kind::kIntPtr: {
      if (absent) {
        if (field.omit_empty) break;
        out += "null";
        return absl::OkStatus();
      }
      absl::StatusOr<std::string> read =
          field.kind == Kind::kIntPtr ? IntOf(*v, path) : StringOf(*v, path);
      if (!read.ok()) return read.status();
      if (field.kind == Kind::kIntPtr) {
        out += *read;
      } else {
        AppendString(out, *read);
      }
      return absl::OkStatus();
    }
    case Kind::kStringList:
    case Kind::kStructList:
      if (absent || (field.omit_empty && v->is_array() && v->empty())) {
        if (field.omit_empty) break;
        out += "null";
        return absl::OkStatus();
      }
      return AppendList(out, *v, field, path);
    case Kind::kStringMap:
      if (absent || (field.omit_empty && v->is_object() && v->empty())) {
        if (field.omit_empty) break;
        out += "null";
        return absl::OkStatus();
      }
      return AppendStringMap(out, *v, path);
    case Kind::kStruct:
      return AppendStruct(out, absent ? nullptr : v, *field.fields, path);
    case Kind::kStructPtr:
      if (absent) {
        if (field.omit_empty) break;
        out += "null";
        return absl::OkStatus();
      }
      return AppendStruct(out, v, *field.fields, path);
  }
  written = false;
  return absl::OkStatus();
}

absl::Status AppendStruct(std::string& out, const Json* v, const std::vector<Field>& fields,
                          const std::string& path) {
  if (v != nullptr && !v->is_object()) return WrongType(path, "an object", *v);
  out.push_back('{');
  bool first = true;
  for (const Field& field : fields) {
    const Json* value = nullptr;
    if (v != nullptr) {
      auto it = v->find(field.name);
      if (it != v->end()) value = &*it;
    }
    std::string piece;
    bool written = false;
    absl::Status st =
        AppendField(piece, value, field, absl::StrCat(path, ".", field.name), written);
    if (!st.ok()) return st;
    if (!written) continue;
    if (!first) out.push_back(',');
    first = false;
    AppendString(out, field.name);
    out.push_back(':');
    out += piece;
  }
  out.push_back('}');
  return absl::OkStatus();
}

const Json* Member(const Json& obj, const char* name) {
  if (!obj.is_object()) return nullptr;
  auto it = obj.find(name);
  return it == obj.end() ? nullptr : &*it;
}

// Kueue's ContainersShape: per container its requests and ports; null for no containers.
absl::Status AppendContainers(std::string& out, const Json* containers, const std::string& path) {
  if (Absent(containers) || (containers->is_array() && containers->empty())) {
    out += "null";
    return absl::OkStatus();
  }
  if (!containers->is_array()) return WrongType(path, "a list", *containers);
  static const Field kPorts{"ports", Kind::kStructList, false, &ContainerPortFields()};
  out.push_back('[');
  for (size_t i = 0; i < containers->size(); ++i) {
    const Json& c = (*containers)[i];
    const std::string c_path = absl::StrCat(path, "[", i, "]");
    if (!c.is_object()) return WrongType(c_path, "an object", c);
    if (i > 0) out.push_back(',');
    out += "{\"ports\":";
    bool written = false;
    absl::Status st = AppendField(out, Member(c, "ports"), kPorts, c_path + ".ports", written);
    if (!st.ok()) return st;
    out += ",\"resources\":{\"requests\":";
    const Json* resources = Member(c, "resources");
    st = AppendQuantityMap(out, resources == nullptr ? nullptr : Member(*resources, "requests"),
                           c_path + ".resources.requests");
    if (!st.ok()) return st;
    out += "}}";
  }
  out.push_back(']');
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<std::string> RoleShapeJson(const Json& spec) {
  if (!spec.is_object()) return WrongType("spec", "an object", spec);
  std::string out = "{\"spec\":{";
  // Go writes a map[string]any with its keys sorted.
  static const Field kAffinity{"affinity", Kind::kStructPtr, false, &AffinityFields()};
  static const Field kNodeSelector{"nodeSelector", Kind::kStringMap, false};
  static const Field kPriority{"priority", Kind::kIntPtr, false};
  static const Field kClaims{"resourceClaims", Kind::kStructList, false, &PodResourceClaimFields()};
  static const Field kRuntimeClass{"runtimeClassName", Kind::kStringPtr, false};
  static const Field kTolerations{"tolerations", Kind::kStructList, false, &TolerationFields()};
  static const Field kSpread{"topologySpreadConstraints", Kind::kStructList, false,
                             &TopologySpreadConstraintFields()};
  bool written = false;
  auto field = [&](const Field& f) {
    out += absl::StrCat("\"", f.name, "\":");
    return AppendField(out, Member(spec, f.name), f, absl::StrCat("spec.", f.name), written);
  };
  absl::Status st = field(kAffinity);
  if (st.ok()) {
    out += ",\"containers\":";
    st = AppendContainers(out, Member(spec, "containers"), "spec.containers");
  }
  if (st.ok()) {
    out += ",\"initContainers\":";
    st = AppendContainers(out, Member(spec, "initContainers"), "spec.initContainers");
  }
  if (st.ok()) {
    out += ",";
    st = field(kNodeSelector);
  }
  if (st.ok()) {
    out += ",\"overhead\":";
    st = AppendQuantityMap(out, Member(spec, "overhead"), "spec.overhead");
  }
  if (st.ok()) {
    out += ",";
    st = field(kPriority);
  }
  if (st.ok()) {
    out += ",";
    st = field(kClaims);
  }
  // Pod-level resources (KEP-2837) count only when set, so hashes of pods without them stay
  // what older Kueue versions computed.
  const Json* resources = Member(spec, "resources");
  if (st.ok() && !Absent(resources)) {
    out += ",\"resources\":";
    st = AppendQuantityMap(out, Member(*resources, "requests"), "spec.resources.requests");
  }
  if (st.ok()) {
    out += ",";
    st = field(kRuntimeClass);
  }
  if (st.ok()) {
    out += ",";
    st = field(kTolerations);
  }
  if (st.ok()) {
    out += ",";
    st = field(kSpread);
  }
  if (!st.ok()) return st;
  out += "}}";
  return out;
}

absl::StatusOr<std::string> RoleHashOfSpec(const Json& pod_spec) {
  absl::StatusOr<std::string> shape = RoleShapeJson(pod_spec);
  if (!shape.ok()) return shape.status();
  unsigned char digest[EVP_MAX_MD_SIZE];
  unsigned int length = 0;
  if (EVP_Digest(shape->data(), shape->size(), digest, &length, EVP_sha256(), nullptr) != 1 ||
      length < 4) {
    return absl::InternalError("SHA-256 failed");
  }
  return absl::StrFormat("%02x%02x%02x%02x", digest[0], digest[1], digest[2], digest[3]);
}

absl::StatusOr<std::string> PodRoleHash(const Json& pod) {
  if (const Json* metadata = Member(pod, "metadata")) {
    if (const Json* annotations = Member(*metadata, "annotations")) {
      if (const Json* hash = Member(*annotations, kRoleHashAnnotation);
          hash != nullptr && hash->is_string()) {
        return hash->get<std::string>();
      }
    }
  }
  const Json* spec = Member(pod, "spec");
  if (spec == nullptr) return absl::InvalidArgumentError("spec: a pod needs a spec");
  return RoleHashOfSpec(*spec);
}

}  // namespace tollgate::manifest
