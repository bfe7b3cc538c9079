#include "cmd/tollgate/object_printer.h"

#include <algorithm>
#include <cctype>
#include <utility>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_replace.h"
#include "absl/strings/str_split.h"
#include "cmd/tollgate/cli_format.h"
#include "google/protobuf/util/json_util.h"
#include "services/engine/config_objects.h"

namespace tollgate::cli {
namespace {

constexpr absl::string_view kKueueApiVersion = "kueue.x-k8s.io/v1beta1";
// The authorization policy kinds (docs/security.md).
constexpr absl::string_view kPolicyApiVersion = "tollgate.dev/v1alpha1";

// Compact JSON that never throws (invalid UTF-8 is replaced).
std::string Dump(const Json& j) { return j.dump(-1, ' ', false, Json::error_handler_t::replace); }

// proto3 JSON spells int64 as strings; these are integers in Kueue's and Kubernetes' schemas.
bool IsIntegerField(absl::string_view key) {
  return key == "generation" || key == "windowSeconds" || key == "checkpointGraceSeconds" ||
         key == "weightedShare" || key == "tolerationSeconds" || key == "retryDelayMinutes";
}

void FixIntegers(Json& j) {
  if (j.is_object()) {
    for (auto it = j.begin(); it != j.end(); ++it) {
      int64_t v = 0;
      if (IsIntegerField(it.key()) && it->is_string() &&
          absl::SimpleAtoi(it->get<std::string>(), &v)) {
        *it = v;
      } else {
        FixIntegers(*it);
      }
    }
  } else if (j.is_array()) {
    for (Json& item : j) FixIntegers(item);
  }
}

Json MessageJson(const google::protobuf::Message& message) {
  std::string text;
  google::protobuf::util::JsonPrintOptions options;
  // The generated messages always print; a failure would be a bug in protobuf.
  if (!google::protobuf::util::MessageToJsonString(message, &text, options).ok()) {
    return Json::object();
  }
  Json j = Json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded()) return Json::object();
  FixIntegers(j);
  return j;
}

Json Envelope(absl::string_view api_version, absl::string_view kind, const Json& body,
              bool namespaced) {
  Json m = body;
  m["apiVersion"] = api_version;
  m["kind"] = kind;
  Json& meta = m["metadata"];
  if (!namespaced) meta.erase("namespace");
  // Kubernetes spells the resource version as an opaque string.
  if (meta.contains("resourceVersion") && !meta["resourceVersion"].is_string()) {
    meta["resourceVersion"] = Dump(meta["resourceVersion"]);
  }
  return m;
}

std::string StateWord(v1::WorkloadState state) { return StateName(state); }

// How kubectl's YAML writer (go-yaml v2 behind sigs.k8s.io/yaml) spells a string: double
// quotes when plain text would read back as another type, single quotes when plain text would
// not parse, else plain; long plain and single-quoted strings fold at spaces past column 80.
enum class Style { kPlain, kSingle, kDouble };

// Plain text that YAML 1.1 would read as a bool, null, number or timestamp.
bool ResolvesToNonString(const std::string& s) {
  if (s.empty()) return true;
  static const char* kWords[] = {"true", "false", "yes",  "no",    "on",    "off",  "null", "~",
                                 "y",    "n",     "True", "False", "Null",  "NULL", "TRUE", "FALSE",
                                 "Yes",  "No",    "YES",  "NO",    "On",    "Off",  "ON",   "OFF",
                                 "Y",    "N",     ".inf", ".Inf",  "-.inf", ".nan", ".NaN"};
  for (const char* w : kWords) {
    if (s == w) return true;
  }
  double d = 0;
  if (absl::SimpleAtod(s, &d) || absl::StartsWith(s, "0x") || absl::StartsWith(s, "0o")) {
    return true;
  }
  // A date or RFC 3339 time would read back as a timestamp.
  return s.size() >= 8 && absl::ascii_isdigit(s[0]) && absl::ascii_isdigit(s[1]) &&
         absl::ascii_isdigit(s[2]) && absl::ascii_isdigit(s[3]) && s[4] == '-';
}

Style StyleOf(const std::string& s) {
  if (ResolvesToNonString(s)) return Style::kDouble;
  for (char c : s) {
    if (static_cast<unsigned char>(c) < 0x20) return Style::kDouble;
  }
  const auto space = [](char c) { return c == ' '; };
  if (space(s.front()) || space(s.back())) return Style::kSingle;
  const char first = s.front();
  const bool followed_by_space = s.size() == 1 || s[1] == ' ';
  if (absl::StrContains(",[]{}#&*!|>'\"%@`", first)) return Style::kSingle;
  if ((first == '-' || first == '?' || first == ':') && followed_by_space) return Style::kSingle;
  if (absl::StrContains(s, ": ") || absl::StrContains(s, " #") || absl::EndsWith(s, ":")) {
    return Style::kSingle;
  }
  return Style::kPlain;
}

constexpr size_t kFoldWidth = 80;

// Writes `text` starting at `column`, breaking at a single space once past kFoldWidth onto a
// new line indented by `continuation` (go-yaml's rule).
void AppendFolded(const std::string& text, size_t column, const std::string& continuation,
                  size_t offset, std::string& out) {
  for (size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (c == ' ' && column > kFoldWidth && i != 0 && i + 1 < text.size() && text[i - 1] != ' ' &&
        text[i + 1] != ' ') {
      absl::StrAppend(&out, "\n", continuation);
      column = offset + continuation.size();
      continue;
    }
    out.push_back(c);
    ++column;
  }
}

// Appends a scalar that starts at `column`; continuation lines (folding) get `continuation`.
// `offset`: how far right of its text the line will be indented by a caller.
void AppendScalar(const Json& v, size_t column, const std::string& continuation, size_t offset,
                  std::string& out) {
  if (!v.is_string()) {
    out += v.is_null() ? "null" : Dump(v);
    return;
  }
  const std::string& s = v.get_ref<const std::string&>();
  switch (StyleOf(s)) {
    case Style::kDouble:
      out += Dump(v);  // a JSON string is a valid double-quoted YAML scalar
      return;
    case Style::kSingle:
      AppendFolded(absl::StrCat("'", absl::StrReplaceAll(s, {{"'", "''"}}), "'"), column,
                   continuation, offset, out);
      return;
    case Style::kPlain:
      AppendFolded(s, column, continuation, offset, out);
      return;
  }
}

std::string YamlKey(const std::string& key) {
  std::string out;
  AppendScalar(Json(key), 0, "", 0, out);
  return out;
}

bool IsScalar(const Json& v) { return !(v.is_object() || v.is_array()) || v.empty(); }

void AppendValue(const Json& v, size_t column, const std::string& continuation, size_t offset,
                 std::string& out) {
  if (v.is_object()) {
    out += "{}";
  } else if (v.is_array()) {
    out += "[]";
  } else {
    AppendScalar(v, column, continuation, offset, out);
  }
}

// Appends `v` as block YAML, every line indented by `indent`. `offset` is how far right of
// `indent` the lines will end up (items of a sequence are re-indented by their caller), for
// folding at the right column.
void EmitYaml(const Json& v, const std::string& indent, size_t offset, std::string& out) {
  if (v.is_object()) {
    for (auto it = v.begin(); it != v.end(); ++it) {
      const std::string key = YamlKey(it.key());
      if (IsScalar(*it)) {
        absl::StrAppend(&out, indent, key, ": ");
        AppendValue(*it, offset + indent.size() + key.size() + 2, indent + "  ", offset, out);
        out += "\n";
      } else if (it->is_object()) {
        absl::StrAppend(&out, indent, key, ":\n");
        EmitYaml(*it, indent + "  ", offset, out);
      } else {
        absl::StrAppend(&out, indent, key, ":\n");
        EmitYaml(*it, indent, offset, out);
      }
    }
    return;
  }
  if (v.is_array()) {
    for (const Json& item : v) {
      if (IsScalar(item)) {
        absl::StrAppend(&out, indent, "- ");
        AppendValue(item, offset + indent.size() + 2, indent + "  ", offset, out);
        out += "\n";
        continue;
      }
      // The item's block with its first line after "- " and the rest under it.
      std::string block;
      EmitYaml(item, "", offset + indent.size() + 2, block);
      bool first = true;
      for (absl::string_view line : absl::StrSplit(block, '\n', absl::SkipEmpty())) {
        absl::StrAppend(&out, indent, first ? "- " : "  ", line, "\n");
        first = false;
      }
    }
    return;
  }
  out += indent;
  AppendValue(v, offset + indent.size(), indent, offset, out);
  out += "\n";
}

// --- JSONPath ---------------------------------------------------------------------------------

struct Step {
  enum class Kind { kField, kIndex, kAll } kind;
  std::string field;
  int64_t index = 0;
};

absl::StatusOr<std::vector<Step>> ParsePath(absl::string_view expr) {
  std::vector<Step> steps;
  absl::string_view rest = absl::StripAsciiWhitespace(expr);
  absl::ConsumePrefix(&rest, "$");
  while (!rest.empty()) {
    if (rest.front() == '.') {
      rest.remove_prefix(1);
      if (absl::ConsumePrefix(&rest, "*")) {
        steps.push_back({Step::Kind::kAll, "", 0});
        continue;
      }
      std::string field;
      while (!rest.empty() && rest.front() != '.' && rest.front() != '[') {
        if (rest.front() == '\\' && rest.size() > 1) rest.remove_prefix(1);
        field.push_back(rest.front());
        rest.remove_prefix(1);
      }
      if (field.empty()) {
        return absl::InvalidArgumentError(absl::StrCat("JSONPath \"", expr, "\": empty field"));
      }
      steps.push_back({Step::Kind::kField, field, 0});
    } else if (rest.front() == '[') {
      const size_t close = rest.find(']');
      if (close == absl::string_view::npos) {
        return absl::InvalidArgumentError(absl::StrCat("JSONPath \"", expr, "\": missing ]"));
      }
      absl::string_view inside = rest.substr(1, close - 1);
      rest.remove_prefix(close + 1);
      if (inside == "*") {
        steps.push_back({Step::Kind::kAll, "", 0});
        continue;
      }
      if (inside.size() >= 2 && (inside.front() == '\'' || inside.front() == '"')) {
        steps.push_back({Step::Kind::kField, std::string(inside.substr(1, inside.size() - 2)), 0});
        continue;
      }
      int64_t index = 0;
      if (!absl::SimpleAtoi(inside, &index)) {
        return absl::InvalidArgumentError(absl::StrCat(
            "JSONPath \"", expr, "\": unsupported subscript [", inside, "] (want [n] or [*])"));
      }
      steps.push_back({Step::Kind::kIndex, "", index});
    } else {
      return absl::InvalidArgumentError(
          absl::StrCat("JSONPath \"", expr, "\": expected . or [ at \"", rest, "\""));
    }
  }
  return steps;
}

std::vector<const Json*> Select(const Json& start, const std::vector<Step>& steps) {
  std::vector<const Json*> current{&start};
  for (const Step& step : steps) {
    std::vector<const Json*> next;
    for (const Json* node : current) {
      switch (step.kind) {
        case Step::Kind::kField:
          if (node->is_object() && node->contains(step.field)) next.push_back(&(*node)[step.field]);
          break;
        case Step::Kind::kIndex: {
          if (!node->is_array()) break;
          const int64_t size = static_cast<int64_t>(node->size());
          const int64_t i = step.index < 0 ? size + step.index : step.index;
          if (i >= 0 && i < size) next.push_back(&(*node)[static_cast<size_t>(i)]);
          break;
        }
        case Step::Kind::kAll:
          if (node->is_array() || node->is_object()) {
            for (const Json& child : *node) next.push_back(&child);
          }
          break;
      }
    }
    current = std::move(next);
  }
  return current;
}

std::string JsonPathText(const Json& v) {
  if (v.is_string()) return v.get<std::string>();
  return Dump(v);
}

// A template: literal text and {...} actions.
struct Action {
  enum class Kind { kText, kPath, kRange, kEnd } kind;
  std::string text;  // the literal, or the path expression
};

absl::StatusOr<std::vector<Action>> ParseTemplate(absl::string_view tmpl) {
  std::vector<Action> actions;
  while (!tmpl.empty()) {
    const size_t open = tmpl.find('{');
    if (open != 0) {
      actions.push_back({Action::Kind::kText, std::string(tmpl.substr(0, open))});
      if (open == absl::string_view::npos) break;
      tmpl.remove_prefix(open);
    }
    // Find the closing brace outside quotes.
    size_t close = 1;
    char quote = 0;
    for (; close < tmpl.size(); ++close) {
      const char c = tmpl[close];
      if (quote != 0) {
        if (c == '\\') {
          ++close;
        } else if (c == quote) {
          quote = 0;
        }
      } else if (c == '"' || c == '\'') {
        quote = c;
      } else if (c == '}') {
        break;
      }
    }
    if (close >= tmpl.size()) {
      return absl::InvalidArgumentError(
          absl::StrCat("JSONPath template: unclosed { in \"", tmpl, "\""));
    }
    absl::string_view body = absl::StripAsciiWhitespace(tmpl.substr(1, close - 1));
    tmpl.remove_prefix(close + 1);
    if (body == "end") {
      actions.push_back({Action::Kind::kEnd, ""});
    } else if (absl::ConsumePrefix(&body, "range ")) {
      actions.push_back({Action::Kind::kRange, std::string(absl::StripAsciiWhitespace(body))});
    } else if (!body.empty() && (body.front() == '"' || body.front() == '\'')) {
      std::string literal;
      for (size_t i = 1; i + 1 < body.size(); ++i) {
        if (body[i] == '\\' && i + 2 < body.size()) {
          const char e = body[++i];
          literal.push_back(e == 'n' ? '\n' : e == 't' ? '\t' : e == 'r' ? '\r' : e);
        } else {
          literal.push_back(body[i]);
        }
      }
      actions.push_back({Action::Kind::kText, literal});
    } else {
      actions.push_back({Action::Kind::kPath, std::string(body)});
    }
  }
  return actions;
}

absl::Status Render(const std::vector<Action>& actions, size_t begin, size_t end, const Json& root,
                    const Json& current, std::string& out) {
  for (size_t i = begin; i < end; ++i) {
    const Action& a = actions[i];
    switch (a.kind) {
      case Action::Kind::kText:
        out += a.text;
        break;
      case Action::Kind::kPath: {
        absl::StatusOr<std::vector<Step>> steps = ParsePath(a.text);
        if (!steps.ok()) return steps.status();
        const Json& start = absl::StartsWith(a.text, "$") ? root : current;
        std::vector<std::string> values;
        for (const Json* v : Select(start, *steps)) values.push_back(JsonPathText(*v));
        out += absl::StrJoin(values, " ");
        break;
      }
      case Action::Kind::kRange: {
        // The matching {end}, counting nested ranges.
        size_t depth = 1;
        size_t j = i + 1;
        for (; j < end; ++j) {
          if (actions[j].kind == Action::Kind::kRange) ++depth;
          if (actions[j].kind == Action::Kind::kEnd && --depth == 0) break;
        }
        if (j >= end) return absl::InvalidArgumentError("JSONPath template: range without end");
        absl::StatusOr<std::vector<Step>> steps = ParsePath(a.text);
        if (!steps.ok()) return steps.status();
        const Json& start = absl::StartsWith(a.text, "$") ? root : current;
        for (const Json* item : Select(start, *steps)) {
          if (absl::Status st = Render(actions, i + 1, j, root, *item, out); !st.ok()) return st;
        }
        i = j;
        break;
      }
      case Action::Kind::kEnd:
        return absl::InvalidArgumentError("JSONPath template: end without range");
    }
  }
  return absl::OkStatus();
}

}  // namespace

Json ManifestOf(const v1::ConfigObject& object) {
  switch (object.kind_case()) {
    case v1::ConfigObject::kResourceFlavor:
      return Envelope(kKueueApiVersion, "ResourceFlavor", MessageJson(object.resource_flavor()),
                      false);
    case v1::ConfigObject::kClusterQueue:
      return Envelope(kKueueApiVersion, "ClusterQueue", MessageJson(object.cluster_queue()), false);
    case v1::ConfigObject::kCohort:
      return Envelope(kKueueApiVersion, "Cohort", MessageJson(object.cohort()), false);
    case v1::ConfigObject::kLocalQueue:
      return Envelope(kKueueApiVersion, "LocalQueue", MessageJson(object.local_queue()), true);
    case v1::ConfigObject::kWorkloadPriorityClass:
      return Envelope(kKueueApiVersion, "WorkloadPriorityClass",
                      MessageJson(object.workload_priority_class()), false);
    case v1::ConfigObject::kPriorityClass:
      return Envelope("scheduling.k8s.io/v1", "PriorityClass", MessageJson(object.priority_class()),
                      false);
    case v1::ConfigObject::kNamespace:
      return Envelope("v1", "Namespace", MessageJson(object.namespace_()), false);
    case v1::ConfigObject::kRole:
      return Envelope(kPolicyApiVersion, "Role", MessageJson(object.role()), false);
    case v1::ConfigObject::kRoleBinding:
      return Envelope(kPolicyApiVersion, "RoleBinding", MessageJson(object.role_binding()), false);
    case v1::ConfigObject::kQueueGrant:
      return Envelope(kPolicyApiVersion, "QueueGrant", MessageJson(object.queue_grant()), false);
    case v1::ConfigObject::kAdmissionCheck:
      return Envelope(kKueueApiVersion, "AdmissionCheck", MessageJson(object.admission_check()),
                      false);
    case v1::ConfigObject::kTopology:
      return Envelope(kKueueApiVersion, "Topology", MessageJson(object.topology()), false);
    case v1::ConfigObject::kMultiKueueConfig:
      return Envelope(kKueueApiVersion, "MultiKueueConfig",
                      MessageJson(object.multi_kueue_config()), false);
    case v1::ConfigObject::kMultiKueueCluster:
      return Envelope(kKueueApiVersion, "MultiKueueCluster",
                      MessageJson(object.multi_kueue_cluster()), false);
    case v1::ConfigObject::KIND_NOT_SET:
      break;
  }
  return Json::object();
}

Json ManifestOf(const v1::Workload& workload) {
  Json m = Envelope(kKueueApiVersion, "Workload", MessageJson(workload), true);
  // Kueue's pod sets carry pod templates; Tollgate keeps their effective per-pod requests. One
  // container with those requests is a template whose effective requests are the same.
  if (m.contains("spec") && m["spec"].contains("podSets")) {
    for (Json& ps : m["spec"]["podSets"]) {
      Json container = {{"name", "main"}};
      if (ps.contains("requests")) {
        container["resources"] = {{"requests", ps["requests"]}};
        ps.erase("requests");
      }
      Json pod_spec = {{"containers", Json::array({container})}};
      if (ps.contains("nodeSelector")) {
        pod_spec["nodeSelector"] = ps["nodeSelector"];
        ps.erase("nodeSelector");
      }
      if (ps.contains("tolerations")) {
        pod_spec["tolerations"] = ps["tolerations"];
        ps.erase("tolerations");
      }
      ps["template"] = {{"spec", pod_spec}};
    }
  }
  if (m.contains("status") && m["status"].contains("state")) {
    m["status"]["state"] = StateWord(workload.status().state());
  }
  return m;
}

Json ListOf(std::vector<Json> items) {
  Json list = {{"apiVersion", "v1"}, {"kind", "List"}, {"metadata", {{"resourceVersion", ""}}}};
  list["items"] = Json::array();
  for (Json& item : items) list["items"].push_back(std::move(item));
  return list;
}

std::string ToYaml(const Json& value) {
  std::string out;
  EmitYaml(value, "", 0, out);
  return out;
}

std::string ToJson(const Json& value) {
  return value.dump(4, ' ', false, Json::error_handler_t::replace) + "\n";
}

absl::StatusOr<OutputFormat> ParseOutputFormat(absl::string_view value) {
  OutputFormat f;
  if (value.empty()) return f;
  if (value == "wide") {
    f.kind = OutputFormat::Kind::kWide;
  } else if (value == "yaml") {
    f.kind = OutputFormat::Kind::kYaml;
  } else if (value == "json") {
    f.kind = OutputFormat::Kind::kJson;
  } else if (value == "name") {
    f.kind = OutputFormat::Kind::kName;
  } else if (absl::ConsumePrefix(&value, "jsonpath=")) {
    f.kind = OutputFormat::Kind::kJsonPath;
    f.jsonpath = std::string(value);
    // Catch a malformed template before anything is fetched.
    absl::StatusOr<std::string> probe = RenderJsonPath(Json::object(), f.jsonpath);
    if (!probe.ok()) return probe.status();
  } else {
    return absl::InvalidArgumentError(
        absl::StrCat("unsupported output format \"", value,
                     "\" (supported: wide, yaml, json, name, jsonpath=TEMPLATE)"));
  }
  return f;
}

absl::StatusOr<std::string> RenderJsonPath(const Json& root, absl::string_view tmpl) {
  absl::StatusOr<std::vector<Action>> actions = ParseTemplate(tmpl);
  if (!actions.ok()) return actions.status();
  std::string out;
  if (absl::Status st = Render(*actions, 0, actions->size(), root, root, out); !st.ok()) return st;
  return out;
}

absl::StatusOr<std::vector<Json>> SelectJsonPath(const Json& root, absl::string_view expr) {
  absl::string_view e = absl::StripAsciiWhitespace(expr);
  if (absl::ConsumePrefix(&e, "{")) {
    if (!absl::ConsumeSuffix(&e, "}")) {
      return absl::InvalidArgumentError(absl::StrCat("JSONPath \"", expr, "\": unclosed {"));
    }
  }
  absl::StatusOr<std::vector<Step>> steps = ParsePath(e);
  if (!steps.ok()) return steps.status();
  std::vector<Json> values;
  for (const Json* v : Select(root, *steps)) values.push_back(*v);
  return values;
}

absl::StatusOr<std::vector<size_t>> SortOrder(const std::vector<Json>& manifests,
                                              absl::string_view expr) {
  std::vector<std::pair<Json, size_t>> keys;
  for (size_t i = 0; i < manifests.size(); ++i) {
    absl::StatusOr<std::vector<Json>> values = SelectJsonPath(manifests[i], expr);
    if (!values.ok()) return values.status();
    keys.emplace_back(values->empty() ? Json() : values->front(), i);
  }
  // null < numbers < strings < the rest (as JSON text); ties keep their order.
  auto rank = [](const Json& j) {
    return j.is_null() ? 0 : j.is_number() ? 1 : j.is_string() ? 2 : 3;
  };
  std::stable_sort(keys.begin(), keys.end(), [&](const auto& a, const auto& b) {
    const int ra = rank(a.first), rb = rank(b.first);
    if (ra != rb) return ra < rb;
    if (ra == 1) return a.first.template get<double>() < b.first.template get<double>();
    if (ra == 2) return a.first.template get<std::string>() < b.first.template get<std::string>();
    if (ra == 3) return Dump(a.first) < Dump(b.first);
    return false;
  });
  std::vector<size_t> order;
  order.reserve(keys.size());
  for (const auto& [key, i] : keys) order.push_back(i);
  return order;
}

absl::Status PrintObjects(const OutputFormat& format, const std::vector<Json>& items,
                          const std::vector<std::string>& resources, bool single,
                          std::ostream& out) {
  const bool one = single && items.size() == 1;
  switch (format.kind) {
    case OutputFormat::Kind::kYaml:
      out << ToYaml(one ? items.front() : ListOf(items));
      break;
    case OutputFormat::Kind::kJson:
      out << ToJson(one ? items.front() : ListOf(items));
      break;
    case OutputFormat::Kind::kName:
      for (size_t i = 0; i < items.size(); ++i) {
        out << resources[i] << "/" << items[i]["metadata"].value("name", "") << "\n";
      }
      break;
    case OutputFormat::Kind::kJsonPath: {
      absl::StatusOr<std::string> text =
          RenderJsonPath(one ? items.front() : ListOf(items), format.jsonpath);
      if (!text.ok()) return text.status();
      out << *text;
      break;
    }
    case OutputFormat::Kind::kTable:
    case OutputFormat::Kind::kWide:
      return absl::InternalError("a table format reached PrintObjects");
  }
  return absl::OkStatus();
}

}  // namespace tollgate::cli
