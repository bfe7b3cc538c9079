#include "services/manifest/json_util.h"

#include <string>

#include "absl/strings/str_cat.h"

namespace tollgate::manifest {

const Json* Find(const Json& j, std::initializer_list<absl::string_view> path) {
  const Json* current = &j;
  for (absl::string_view key : path) {
    if (!current->is_object()) return nullptr;
    auto it = current->find(std::string(key));
    if (it == current->end()) return nullptr;
    current = &*it;
  }
  return current;
}

std::string GetString(const Json& j, std::initializer_list<absl::string_view> path,
                      absl::string_view fallback) {
  const Json* v = Find(j, path);
  if (v == nullptr || !v->is_string()) return std::string(fallback);
  return v->get<std::string>();
}

std::optional<int64_t> GetInt(const Json& j, std::initializer_list<absl::string_view> path) {
  const Json* v = Find(j, path);
  if (v == nullptr || !v->is_number_integer()) return std::nullopt;
  return v->get<int64_t>();
}

std::optional<bool> GetBool(const Json& j, std::initializer_list<absl::string_view> path) {
  const Json* v = Find(j, path);
  if (v == nullptr || !v->is_boolean()) return std::nullopt;
  return v->get<bool>();
}

Json& Ensure(Json& j, std::initializer_list<absl::string_view> path) {
  Json* current = &j;
  if (!current->is_object()) *current = Json::object();
  for (absl::string_view key : path) {
    Json& next = (*current)[std::string(key)];
    if (!next.is_object()) next = Json::object();
    current = &next;
  }
  return *current;
}

absl::StatusOr<Json> ParseJson(absl::string_view text, absl::string_view what) {
  Json parsed = Json::parse(text.begin(), text.end(), /*cb=*/nullptr, /*allow_exceptions=*/false);
  if (parsed.is_discarded()) {
    return absl::InvalidArgumentError(absl::StrCat(what, ": not valid JSON"));
  }
  return parsed;
}

std::string Dump(const Json& j) {
  return j.dump(/*indent=*/-1, ' ', /*ensure_ascii=*/false, Json::error_handler_t::replace);
}

Json MergePatchDiff(const Json& from, const Json& to) {
  if (!from.is_object() || !to.is_object()) return to;
  Json patch = Json::object();
  for (auto it = from.begin(); it != from.end(); ++it) {
    if (!to.contains(it.key())) patch[it.key()] = nullptr;
  }
  for (auto it = to.begin(); it != to.end(); ++it) {
    auto old = from.find(it.key());
    if (old == from.end()) {
      patch[it.key()] = it.value();
    } else if (*old != it.value()) {
      if (old->is_object() && it.value().is_object()) {
        patch[it.key()] = MergePatchDiff(*old, it.value());
      } else {
        patch[it.key()] = it.value();
      }
    }
  }
  return patch;
}

const Json* FindCondition(const Json& obj, absl::string_view type) {
  const Json* conditions = Find(obj, {"status", "conditions"});
  if (conditions == nullptr || !conditions->is_array()) return nullptr;
  for (const Json& c : *conditions) {
    if (GetString(c, {"type"}) == type) return &c;
  }
  return nullptr;
}

bool HasTrueCondition(const Json& obj, absl::string_view type) {
  const Json* c = FindCondition(obj, type);
  return c != nullptr && GetString(*c, {"status"}) == "True";
}

}  // namespace tollgate::manifest
