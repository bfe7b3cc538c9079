#include "test/adapters/fakes/fake_kube_client.h"

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"

namespace tollgate::kube {

std::string FakeKubeClient::NextVersionLocked() { return absl::StrCat(++version_); }

Json FakeKubeClient::Put(const manifest::ResourceKind& kind, Json obj) {
  absl::MutexLock lock(&mu_);
  Json& meta = obj["metadata"];
  if (!meta.contains("uid")) {
    meta["uid"] = absl::StrFormat("%08x-0000-4000-8000-%012x", next_uid_, next_uid_);
    ++next_uid_;
  }
  if (kind.namespaced && !meta.contains("namespace")) meta["namespace"] = "default";
  meta["resourceVersion"] = NextVersionLocked();
  obj["apiVersion"] = kind.ApiVersion();
  obj["kind"] = kind.kind;
  objects_[{kind.plural, manifest::GetString(obj, {"metadata", "namespace"}),
            manifest::GetString(obj, {"metadata", "name"})}] = obj;
  return obj;
}

void FakeKubeClient::SetStatus(const manifest::ResourceKind& kind, const std::string& ns,
                               const std::string& name, const Json& status) {
  absl::MutexLock lock(&mu_);
  auto it = objects_.find({kind.plural, ns, name});
  if (it == objects_.end()) return;
  it->second["status"] = status;
  it->second["metadata"]["resourceVersion"] = NextVersionLocked();
}

Json FakeKubeClient::Remove(const manifest::ResourceKind& kind, const std::string& ns,
                            const std::string& name) {
  absl::MutexLock lock(&mu_);
  auto it = objects_.find({kind.plural, ns, name});
  if (it == objects_.end()) return nullptr;
  Json obj = std::move(it->second);
  objects_.erase(it);
  return obj;
}

Json FakeKubeClient::Object(const manifest::ResourceKind& kind, const std::string& ns,
                            const std::string& name) const {
  absl::MutexLock lock(&mu_);
  auto it = objects_.find({kind.plural, ns, name});
  return it == objects_.end() ? Json(nullptr) : it->second;
}

void FakeKubeClient::InjectConflicts(int n) {
  absl::MutexLock lock(&mu_);
  conflicts_to_inject_ = n;
}

int FakeKubeClient::patch_count() const {
  absl::MutexLock lock(&mu_);
  return static_cast<int>(patches_.size());
}

std::vector<Json> FakeKubeClient::events() const {
  absl::MutexLock lock(&mu_);
  return events_;
}

std::vector<Json> FakeKubeClient::patches() const {
  absl::MutexLock lock(&mu_);
  return patches_;
}

absl::StatusOr<Json> FakeKubeClient::Get(const manifest::ResourceKind& kind, absl::string_view ns,
                                         absl::string_view name) {
  absl::MutexLock lock(&mu_);
  auto it = objects_.find({kind.plural, std::string(ns), std::string(name)});
  if (it == objects_.end()) {
    return absl::NotFoundError(absl::StrCat(kind.plural, " \"", name, "\" not found"));
  }
  return it->second;
}

absl::StatusOr<kubeapi::ListResult> FakeKubeClient::List(const manifest::ResourceKind& kind,
                                                         absl::string_view ns) {
  absl::MutexLock lock(&mu_);
  kubeapi::ListResult result;
  for (const auto& [key, obj] : objects_) {
    if (std::get<0>(key) != kind.plural) continue;
    if (!ns.empty() && std::get<1>(key) != ns) continue;
    result.items.push_back(obj);
  }
  result.resource_version = absl::StrCat(version_);
  return result;
}

absl::Status FakeKubeClient::Watch(const manifest::ResourceKind& kind, absl::string_view ns,
                                   absl::string_view resource_version,
                                   const std::function<bool(const kubeapi::WatchEvent&)>& on_event,
                                   const common::StopSignal& stop) {
  // Bounded by the stop signal: the tests that run loops stop them.
  while (!stop.WaitFor(absl::Seconds(1))) {
  }
  return absl::OkStatus();
}

absl::StatusOr<Json> FakeKubeClient::Patch(const manifest::ResourceKind& kind, absl::string_view ns,
                                           absl::string_view name, kubeapi::PatchType type,
                                           const Json& patch) {
  absl::MutexLock lock(&mu_);
  if (type != kubeapi::PatchType::kMerge)
    return absl::UnimplementedError("fake: merge patches only");
  auto it = objects_.find({kind.plural, std::string(ns), std::string(name)});
  if (it == objects_.end()) {
    return absl::NotFoundError(absl::StrCat(kind.plural, " \"", name, "\" not found"));
  }
  patches_.push_back(patch);
  if (conflicts_to_inject_ > 0) {
    --conflicts_to_inject_;
    it->second["metadata"]["resourceVersion"] = NextVersionLocked();
  }
  const std::string want = manifest::GetString(patch, {"metadata", "resourceVersion"});
  if (!want.empty() && want != manifest::GetString(it->second, {"metadata", "resourceVersion"})) {
    return absl::AbortedError(absl::StrCat("Operation cannot be fulfilled on ", kind.plural, " \"",
                                           name, "\": the object has been modified"));
  }
  Json status = it->second.contains("status") ? it->second["status"] : Json(nullptr);
  it->second.merge_patch(patch);
  if (status.is_null()) {
    it->second.erase("status");
  } else {
    it->second["status"] = status;
  }
  it->second["metadata"]["resourceVersion"] = NextVersionLocked();
  return it->second;
}

absl::StatusOr<Json> FakeKubeClient::Create(const manifest::ResourceKind& kind,
                                            absl::string_view ns, const Json& object) {
  absl::MutexLock lock(&mu_);
  if (kind == manifest::EventResource()) {
    events_.push_back(object);
    return object;
  }
  Json obj = object;
  obj["metadata"]["namespace"] = std::string(ns);
  obj["metadata"]["resourceVersion"] = NextVersionLocked();
  // As an API server: the uid is the server's to give.
  obj["metadata"]["uid"] = absl::StrFormat("%08x-0000-4000-8000-%012x", next_uid_, next_uid_);
  const Key key{kind.plural, std::string(ns), manifest::GetString(obj, {"metadata", "name"})};
  if (objects_.count(key) > 0) return absl::AlreadyExistsError("exists");
  ++next_uid_;
  objects_[key] = obj;
  return obj;
}

absl::Status FakeKubeClient::Delete(const manifest::ResourceKind& kind, absl::string_view ns,
                                    absl::string_view name) {
  absl::MutexLock lock(&mu_);
  if (objects_.erase({kind.plural, std::string(ns), std::string(name)}) == 0) {
    return absl::NotFoundError("not found");
  }
  return absl::OkStatus();
}

}  // namespace tollgate::kube
