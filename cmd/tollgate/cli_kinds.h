#pragma once

// The kinds as users name them on the command line and as kubectl prints them.

#include <string>
#include <vector>

#include "absl/strings/string_view.h"
#include "tollgate/v1/objects.pb.h"
#include "tollgate/v1/service.pb.h"

namespace tollgate::cli {

// Derived from the kinds table (core/object_kind.h).
struct KindInfo {
  std::string name;            // singular, lower case: what `delete KIND` takes
  absl::string_view kind;      // the manifest kind
  std::string resource;        // kubectl's "resource.group" spelling in apply/delete output
  v1::ObjectKind object_kind;  // OBJECT_KIND_UNSPECIFIED for Workload (not a config object)
  bool namespaced;
  std::vector<absl::string_view> aliases;  // the plural first
};

const std::vector<KindInfo>& Kinds();
// By any spelling kubectl would take (singular, plural, short name, Kind, plural.group); null
// when unknown.
const KindInfo* FindKind(absl::string_view word);
const KindInfo& KindByObjectKind(v1::ObjectKind kind);
inline bool IsWorkloadKind(const KindInfo* kind) {
  return kind != nullptr && kind->object_kind == v1::OBJECT_KIND_UNSPECIFIED;
}

v1::ObjectRef RefOf(const v1::ConfigObject& object);

// What the user wrote, without what the server fills in, so an unchanged manifest compares equal
// to its stored object.
v1::ConfigObject UserIntent(v1::ConfigObject object);

}  // namespace tollgate::cli
