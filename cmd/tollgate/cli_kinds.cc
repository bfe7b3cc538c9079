#include "cmd/tollgate/cli_kinds.h"

#include <algorithm>
#include <string>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "core/object_kind.h"
#include "services/engine/config_objects.h"

namespace tollgate::cli {

const std::vector<KindInfo>& Kinds() {
  // Derived from the one kinds table (core/object_kind.h).
  static const auto* kinds = [] {
    auto* out = new std::vector<KindInfo>;
    for (const core::KindTraits& t : core::AllKinds()) {
      KindInfo info{absl::AsciiStrToLower(t.name), t.name,       "",
                    v1::OBJECT_KIND_UNSPECIFIED,   t.namespaced, {t.plural}};
      info.resource = t.group.empty() ? info.name : absl::StrCat(info.name, ".", t.group);
      if (t.config_kind.has_value()) info.object_kind = engine::ToProtoKind(*t.config_kind);
      info.aliases.insert(info.aliases.end(), t.short_names.begin(), t.short_names.end());
      out->push_back(std::move(info));
    }
    return out;
  }();
  return *kinds;
}

const KindInfo* FindKind(absl::string_view word) {
  const std::string lower = absl::AsciiStrToLower(word);
  for (const KindInfo& info : Kinds()) {
    if (info.name == lower || absl::AsciiStrToLower(info.kind) == lower ||
        std::find(info.aliases.begin(), info.aliases.end(), lower) != info.aliases.end()) {
      return &info;
    }
  }
  // kubectl also takes the fully qualified spelling, e.g. clusterqueues.kueue.x-k8s.io.
  if (size_t dot = lower.find('.'); dot != std::string::npos) {
    const KindInfo* info = FindKind(lower.substr(0, dot));
    if (info != nullptr && absl::EndsWith(info->resource, lower.substr(dot))) return info;
  }
  return nullptr;
}

const KindInfo& KindByObjectKind(v1::ObjectKind kind) {
  for (const KindInfo& info : Kinds()) {
    if (info.object_kind == kind) return info;
  }
  return Kinds().front();  // unreachable for the kinds ConfigObject can hold
}

v1::ObjectRef RefOf(const v1::ConfigObject& object) {
  v1::ObjectRef ref;
  ref.set_kind(engine::KindOf(object));
  if (KindByObjectKind(ref.kind()).namespaced) {
    ref.set_namespace_(engine::MetadataOf(object).namespace_().empty()
                           ? "default"
                           : engine::MetadataOf(object).namespace_());
  }
  ref.set_name(engine::MetadataOf(object).name());
  return ref;
}

v1::ConfigObject UserIntent(v1::ConfigObject object) {
  if (object.kind_case() != v1::ConfigObject::KIND_NOT_SET) {
    v1::ObjectMeta* meta = engine::MutableMetadataOf(object);
    meta->clear_uid();
    meta->clear_resource_version();
    meta->clear_generation();
    meta->clear_creation_timestamp();
    if (!KindByObjectKind(engine::KindOf(object)).namespaced) meta->clear_namespace_();
  }
  engine::ClearStatus(object);
  return object;
}

}  // namespace tollgate::cli
