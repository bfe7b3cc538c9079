#pragma once

// Non-throwing helpers over nlohmann::json for reading Kubernetes objects. nlohmann throws on a
// type mismatch and asserts on a missing key of a const object; objects come from an API server
// we do not control, so every read here checks the type and falls back to a default instead.

#include <cstdint>
#include <initializer_list>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace tollgate::manifest {

using Json = nlohmann::json;

// The value at `path` (object keys only), or null when a key is missing or a step is not an
// object.
const Json* Find(const Json& j, std::initializer_list<absl::string_view> path);

// The value at `path` when it has the wanted type, else `fallback` / nullopt.
std::string GetString(const Json& j, std::initializer_list<absl::string_view> path,
                      absl::string_view fallback = "");
std::optional<int64_t> GetInt(const Json& j, std::initializer_list<absl::string_view> path);
std::optional<bool> GetBool(const Json& j, std::initializer_list<absl::string_view> path);

// Object at `path`, created (replacing a non-object) when missing. For building desired states.
Json& Ensure(Json& j, std::initializer_list<absl::string_view> path);

// Parses JSON text; a syntax error becomes INVALID_ARGUMENT naming `what`.
absl::StatusOr<Json> ParseJson(absl::string_view text, absl::string_view what);

// Compact serialisation that never throws (invalid UTF-8 is replaced).
std::string Dump(const Json& j);

// The RFC 7386 merge patch that turns `from` into `to`: changed object members recursively,
// removed members as null, and any other changed value (arrays included) whole. Empty object
// when they are equal. `to` must not contain null members (they would read as deletions);
// Kubernetes objects as served do not.
Json MergePatchDiff(const Json& from, const Json& to);

// True when `status.conditions` has an entry of `type` whose status is "True".
bool HasTrueCondition(const Json& obj, absl::string_view type);
// That condition, or null.
const Json* FindCondition(const Json& obj, absl::string_view type);

}  // namespace tollgate::manifest
