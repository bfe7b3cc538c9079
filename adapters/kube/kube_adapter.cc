#include "adapters/kube/kube_adapter.h"

#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <thread>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "common/atomic_file.h"
#include "common/file_util.h"
#include "common/json_log.h"
#include "services/kubeapi/informer.h"
#include "services/manifest/kube_config.h"

namespace tollgate::kube {

ResumePoint ReadResumeFile(const std::string& path) {
  absl::StatusOr<std::string> text = common::ReadFileToString(path);
  if (!text.ok()) return ResumePoint();
  const std::vector<absl::string_view> fields =
      absl::StrSplit(absl::StripAsciiWhitespace(*text), ' ', absl::SkipEmpty());
  ResumePoint point;
  if (fields.empty() || !absl::SimpleAtoi(fields[0], &point.revision) || point.revision < 0) {
    return ResumePoint();
  }
  if (fields.size() == 3 && absl::SimpleAtoi(fields[2], &point.store_epoch)) {
    point.store_id = std::string(fields[1]);
  } else {
    point.store_epoch = 0;
  }
  return point;
}

absl::Status WriteResumeFile(const std::string& path, const ResumePoint& point) {
  return common::WriteFileAtomically(
      path, point.store_id.empty()
                ? absl::StrCat(point.revision, "\n")
                : absl::StrCat(point.revision, " ", point.store_id, " ", point.store_epoch, "\n"));
}

int64_t ReadRevisionFile(const std::string& path) { return ReadResumeFile(path).revision; }

absl::Status WriteRevisionFile(const std::string& path, int64_t revision) {
  ResumePoint point;
  point.revision = revision;
  return WriteResumeFile(path, point);
}

KubeAdapter::KubeAdapter(kubeapi::KubeClient& kube, client::AdmissionClient& admission,
                         JobController& controller, const core::Clock& clock, Options options,
                         PodController* pods)
    : kube_(kube),
      admission_(admission),
      controller_(controller),
      pods_(pods),
      clock_(clock),
      options_(std::move(options)),
      queue_(clock, options_.min_backoff, options_.max_backoff) {
  // A reconcile waiting for a time (a retention that ends then) runs again at that time.
  controller_.SetRequeueAt([this](const ObjectKey& key, absl::Time at) { queue_.AddAt(key, at); });
  if (pods_ != nullptr) {
    pods_->SetRequeueAt([this](const ObjectKey& key, absl::Time at) { queue_.AddAt(key, at); });
  }
}

bool KubeAdapter::Synced() const {
  absl::MutexLock lock(&mu_);
  return expected_informers_ > 0 && static_cast<int>(synced_.size()) == expected_informers_;
}

bool KubeAdapter::Backoff(int failures, const common::StopSignal& stop) const {
  return kubeapi::WaitBackoff(failures, options_.min_backoff, options_.max_backoff, stop);
}

void KubeAdapter::EnqueueAll() {
  std::vector<ObjectKey> keys;
  {
    absl::MutexLock lock(&mu_);
    for (const auto& [resource, objects] : cache_) {
      if (pods_ != nullptr && pods_->Handles(resource)) continue;
      for (const auto& [key, uid] : objects) keys.push_back(key);
    }
    for (const auto& [object, mapped] : mapped_keys_) {
      keys.insert(keys.end(), mapped.begin(), mapped.end());
    }
  }
  for (const ObjectKey& key : keys) queue_.Add(key);
}

std::vector<ObjectKey> KubeAdapter::KeysOf(const manifest::ResourceKind& kind,
                                           const Json& obj) const {
  if (pods_ != nullptr && pods_->Handles(kind.plural)) return pods_->KeysFor(kind.plural, obj);
  return {ObjectKey{kind.plural, manifest::GetString(obj, {"metadata", "namespace"}),
                    manifest::GetString(obj, {"metadata", "name"})}};
}

void KubeAdapter::EnqueueForWorkload(const v1::Workload& wl) {
  if (pods_ == nullptr) return;
  for (const ObjectKey& key : pods_->KeysForWorkload(wl)) queue_.Add(key);
}

void KubeAdapter::InformerLoop(const manifest::ResourceKind& kind, bool is_job_kind,
                               const common::StopSignal& stop) {
  auto key_of = [&](const Json& obj) {
    return ObjectKey{kind.plural, manifest::GetString(obj, {"metadata", "namespace"}),
                     manifest::GetString(obj, {"metadata", "name"})};
  };
  std::string resource_version;
  bool need_list = true;
  int failures = 0;
  while (!stop.stopped()) {
    if (need_list) {
      absl::StatusOr<kubeapi::ListResult> list = kube_.List(kind, "");
      if (absl::IsNotFound(list.status())) {
        // The cluster does not serve this kind (its CRD is not installed): there is nothing
        // to manage, so count it as synced and empty, and look again later.
        {
          absl::MutexLock lock(&mu_);
          if (synced_.insert(kind.plural).second) {
            common::Log("warning",
                        "resource not served (CRD not installed?); skipped, will look again",
                        {{"resource", kind.plural}, {"error", list.status().ToString()}});
          }
          cache_[kind.plural];
        }
        if (stop.WaitFor(options_.max_backoff)) break;
        continue;
      }
      if (!list.ok()) {
        common::Log("warning", "list failed",
                    {{"resource", kind.plural}, {"error", list.status().ToString()}});
        if (!Backoff(failures++, stop)) break;
        continue;
      }
      std::map<ObjectKey, std::string> fresh;
      std::map<ObjectKey, std::vector<ObjectKey>> mapped;
      const bool mapped_kind = pods_ != nullptr && pods_->Handles(kind.plural);
      for (const Json& obj : list->items) {
        fresh[key_of(obj)] = manifest::GetString(obj, {"metadata", "uid"});
        if (is_job_kind) controller_.Observe(kind.plural, obj);
        if (mapped_kind) mapped[key_of(obj)] = KeysOf(kind, obj);
      }
      std::map<ObjectKey, std::string> gone;
      {
        absl::MutexLock lock(&mu_);
        std::map<ObjectKey, std::string>& cached = cache_[kind.plural];
        for (const auto& [key, uid] : cached) {
          auto it = fresh.find(key);
          if (it == fresh.end() || it->second != uid) gone.emplace(key, uid);
        }
        cached = fresh;
        synced_.insert(kind.plural);
        if (mapped_kind) {
          for (const auto& [key, uid] : gone) {
            auto it = mapped_keys_.find(key);
            if (it != mapped_keys_.end()) {
              // What the gone object belonged to is looked at again.
              mapped[key];
              for (const ObjectKey& k : it->second) queue_.Add(k);
            }
          }
          for (auto it = mapped_keys_.begin(); it != mapped_keys_.end();) {
            it = it->first.resource == kind.plural ? mapped_keys_.erase(it) : std::next(it);
          }
          for (auto& [key, keys] : mapped) {
            if (fresh.count(key) > 0) mapped_keys_[key] = keys;
          }
        }
      }
      // Deletions missed while the watch was down.
      for (const auto& [key, uid] : gone) {
        if (is_job_kind) controller_.RecordDeletion(key, uid);
        if (mapped_kind) {
          pods_->RecordDeletion(key, uid);
        }
        queue_.Add(key);
      }
      for (const auto& [key, uid] : fresh) {
        if (!mapped_kind) queue_.Add(key);
      }
      for (const auto& [key, keys] : mapped) {
        for (const ObjectKey& k : keys) queue_.Add(k);
      }
      resource_version = list->resource_version;
      need_list = false;
      failures = 0;
      common::Log("info", "listed",
                  {{"resource", kind.plural},
                   {"objects", absl::StrCat(fresh.size())},
                   {"resourceVersion", resource_version}});
    }
    const absl::Time started = clock_.Now();
    absl::Status watched = kube_.Watch(
        kind, "", resource_version,
        [&](const kubeapi::WatchEvent& event) {
          const std::string rv = manifest::GetString(event.object, {"metadata", "resourceVersion"});
          if (!rv.empty()) resource_version = rv;
          if (event.type == "BOOKMARK") return !stop.stopped();
          const ObjectKey key = key_of(event.object);
          const std::string uid = manifest::GetString(event.object, {"metadata", "uid"});
          const bool mapped_kind = pods_ != nullptr && pods_->Handles(kind.plural);
          {
            absl::MutexLock lock(&mu_);
            if (event.type == "DELETED") {
              cache_[kind.plural].erase(key);
              mapped_keys_.erase(key);
            } else {
              cache_[kind.plural][key] = uid;
              if (mapped_kind) mapped_keys_[key] = KeysOf(kind, event.object);
            }
          }
          if (mapped_kind) {
            if (event.type == "DELETED") pods_->RecordDeletion(key, uid);
            // A deleted pod's group and parent look again (a member gone, a replacement due).
            for (const ObjectKey& k : KeysOf(kind, event.object)) queue_.Add(k);
            if (event.type == "DELETED") queue_.Add(key);
            return !stop.stopped();
          }
          if (is_job_kind) {
            if (event.type == "DELETED") {
              controller_.RecordDeletion(key, uid);
            } else {
              controller_.Observe(kind.plural, event.object);
            }
          }
          queue_.Add(key);
          return !stop.stopped();
        },
        stop);
    if (stop.stopped()) break;
    if (absl::IsOutOfRange(watched)) {
      common::Log("info", "resourceVersion expired; relisting",
                  {{"resource", kind.plural}, {"resourceVersion", resource_version}});
      need_list = true;
      continue;
    }
    if (!watched.ok()) {
      common::Log("warning", "watch failed",
                  {{"resource", kind.plural}, {"error", watched.ToString()}});
      // Persistent watch errors may come from a version the server no longer accepts.
      if (failures >= 3) need_list = true;
      if (!Backoff(failures++, stop)) break;
      continue;
    }
    failures = 0;
    // A server that ends streams at once must not make this a busy loop.
    if (clock_.Now() - started < absl::Seconds(1) && stop.WaitFor(options_.min_backoff)) break;
  }
}

void KubeAdapter::PersistRevision(bool force) {
  if (options_.state_file.empty()) return;
  ResumePoint point;
  {
    absl::MutexLock lock(&mu_);
    point = ResumePoint{.revision = revision_, .store_id = store_id_, .store_epoch = store_epoch_};
    const absl::Time now = clock_.Now();
    if (point.revision == persisted_revision_) return;
    if (!force && now - last_persist_ < absl::Seconds(1)) return;
    persisted_revision_ = point.revision;
    last_persist_ = now;
  }
  absl::Status written = WriteResumeFile(options_.state_file, point);
  if (!written.ok())
    common::Log("warning", "cannot write state file", {{"error", written.ToString()}});
}

void KubeAdapter::TollgateLoop(const common::StopSignal& stop) {
  const ResumePoint resume =
      options_.state_file.empty() ? ResumePoint() : ReadResumeFile(options_.state_file);
  int64_t revision = resume.revision;
  {
    absl::MutexLock lock(&mu_);
    revision_ = revision;
    store_id_ = resume.store_id;
    store_epoch_ = resume.store_epoch;
    persisted_revision_ = revision;
  }
  int failures = 0;
  bool reconnect = false;
  while (!stop.stopped()) {
    if (revision > 0) {
      // A tollgated whose store was replaced restarts its revisions below ours, and a watch
      // from ours would wait for changes that already happened. Its list says where it is.
      absl::StatusOr<v1::ListWorkloadsResponse> current =
          admission_.ListWorkloads(v1::ListWorkloadsRequest());
      if (current.ok() && current->revision() < revision) {
        common::Log("warning", "tollgate revision went backwards; watching from the current state",
                    {{"had", absl::StrCat(revision)}, {"now", absl::StrCat(current->revision())}});
        revision = 0;
      }
    }
    v1::WatchRequest request;
    request.set_since_revision(revision);
    if (revision > 0) {
      // The server refuses a revision of another store or epoch, instead of going blind.
      absl::MutexLock lock(&mu_);
      request.set_store_id(store_id_);
      request.set_store_epoch(store_epoch_);
    }
    bool first = true;
    bool went_back = false;
    absl::Status watched = admission_.Watch(
        request,
        [&](const v1::WatchEvent& event) {
          if (first) {
            first = false;
            failures = 0;
            common::Log("info", "following tollgate", {{"since_revision", absl::StrCat(revision)}});
            // Anything may have happened while we were away, including a tollgated that lost
            // its state: look at every object again.
            if (reconnect) EnqueueAll();
          }
          if (event.revision() < request.since_revision()) {
            // tollgated's history restarted below where we were (its store was replaced): the
            // revisions we would wait for mean nothing now. Start again from its current state.
            common::Log("warning",
                        "tollgate revision went backwards; watching from the current state",
                        {{"had", absl::StrCat(request.since_revision())},
                         {"got", absl::StrCat(event.revision())}});
            revision = 0;
            {
              absl::MutexLock lock(&mu_);
              revision_ = 0;
            }
            went_back = true;
            return false;
          }
          revision = std::max(revision, event.revision());
          {
            absl::MutexLock lock(&mu_);
            revision_ = revision;
            store_id_ = event.store_id();
            store_epoch_ = event.store_epoch();
          }
          if (event.type() != v1::WatchEvent::BOOKMARK) {
            const v1::ObjectMeta& meta = event.workload().metadata();
            if (std::optional<ObjectKey> owner =
                    controller_.OwnerOf(meta.namespace_(), meta.name());
                owner.has_value()) {
              queue_.Add(*owner);
            }
            if (event.type() != v1::WatchEvent::DELETED &&
                event.workload().status().multi_kueue_winner()) {
              // A MultiKueue copy declared the winner here: its carried job may be due.
              queue_.Add(
                  ObjectKey{std::string(kMultiKueueCopyResource), meta.namespace_(), meta.name()});
            }
            EnqueueForWorkload(event.workload());
          }
          PersistRevision(/*force=*/false);
          return !stop.stopped();
        },
        stop);
    if (stop.stopped()) break;
    reconnect = true;
    if (went_back) continue;
    // OUT_OF_RANGE: the revision was compacted, is ahead of the store, or we fell too far
    // behind; FAILED_PRECONDITION: another store or epoch. Either way only a re-list (a watch
    // from 0, which starts with the current state, then EnqueueAll) is safe.
    if (absl::IsOutOfRange(watched) || absl::IsFailedPrecondition(watched)) {
      common::Log("info", "tollgate cannot resume from our revision; re-listing",
                  {{"revision", absl::StrCat(revision)}, {"reason", watched.ToString()}});
      revision = 0;
      {
        absl::MutexLock lock(&mu_);
        revision_ = 0;
        store_id_.clear();
        store_epoch_ = 0;
      }
      continue;
    }
    common::Log("warning", "tollgate watch ended", {{"error", watched.ToString()}});
    if (!Backoff(failures++, stop)) break;
  }
  PersistRevision(/*force=*/true);
}

void KubeAdapter::WorkerLoop() {
  DrainWorkQueue(
      queue_,
      [this](const ObjectKey& key) {
        return pods_ != nullptr && pods_->Handles(key.resource) ? pods_->Reconcile(key)
                                                                : controller_.Reconcile(key);
      },
      "reconcile");
}

void KubeAdapter::CollectOrphans() {
  auto live_uids = [this] {
    JobController::UidsByResource live;
    absl::MutexLock lock(&mu_);
    for (const auto& [resource, objects] : cache_) {
      if (resource == "namespaces") continue;
      std::set<std::string>& uids = live[resource];
      for (const auto& [key, uid] : objects) uids.insert(uid);
    }
    return live;
  };
  absl::StatusOr<int> deleted = controller_.CollectOrphans(live_uids);
  if (deleted.ok() && pods_ != nullptr) deleted = pods_->CollectOrphans(live_uids);
  if (!deleted.ok()) {
    common::Log("warning", "orphan collection failed", {{"error", deleted.status().ToString()}});
  }
}

void KubeAdapter::Run(const common::StopSignal& stop) {
  std::vector<std::thread> threads;
  {
    absl::MutexLock lock(&mu_);
    expected_informers_ =
        static_cast<int>(controller_.translators().size()) + (options_.watch_namespaces ? 1 : 0);
    if (pods_ != nullptr) {
      expected_informers_ += static_cast<int>(pods_->WatchedResources().size());
    }
  }
  if (pods_ != nullptr) {
    for (const manifest::ResourceKind* kind : pods_->WatchedResources()) {
      threads.emplace_back(
          [this, kind, &stop] { InformerLoop(*kind, /*is_job_kind=*/false, stop); });
    }
  }
  for (const manifest::JobKindTranslator* translator : controller_.translators()) {
    threads.emplace_back([this, translator, &stop] {
      InformerLoop(translator->resource(), /*is_job_kind=*/true, stop);
    });
  }
  if (options_.watch_namespaces) {
    threads.emplace_back([this, &stop] {
      InformerLoop(manifest::NamespaceResource(), /*is_job_kind=*/false, stop);
    });
  }
  threads.emplace_back([this, &stop] { TollgateLoop(stop); });
  for (int i = 0; i < std::max(1, options_.workers); ++i) {
    threads.emplace_back([this] { WorkerLoop(); });
  }

  bool collected_once = false;
  absl::Time next_resync = clock_.Now() + options_.resync_period;
  // One tick a second: collect orphans as soon as every informer has synced, then resync.
  while (!stop.WaitFor(absl::Seconds(1))) {
    // The watch only persists while events flow; the tail of a burst is written here.
    PersistRevision(/*force=*/true);
    if (!options_.health_file.empty()) {
      absl::Status written =
          common::WriteFileAtomically(options_.health_file, Synced() ? "synced\n" : "syncing\n");
      if (!written.ok()) {
        common::Log("warning", "cannot write the health file", {{"error", written.ToString()}});
      }
    }
    if (!collected_once && Synced()) {
      CollectOrphans();
      collected_once = true;
    }
    if (clock_.Now() >= next_resync) {
      next_resync = clock_.Now() + options_.resync_period;
      EnqueueAll();
      if (Synced()) CollectOrphans();
    }
  }
  queue_.ShutDown();
  for (std::thread& t : threads) t.join();
}

}  // namespace tollgate::kube
