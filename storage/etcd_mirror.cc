#include "storage/etcd_mirror.h"

#include <algorithm>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/time/clock.h"

namespace tollgate::storage {
namespace {

constexpr absl::string_view kDataPrefix = "data/";

}  // namespace

absl::StatusOr<std::unique_ptr<EtcdMirror>> EtcdMirror::Start(std::unique_ptr<EtcdStore> store,
                                                              Options options) {
  if (store == nullptr) return absl::InvalidArgumentError("EtcdMirror: no store");
  std::unique_ptr<EtcdMirror> mirror(new EtcdMirror(std::move(store), options));
  {
    absl::MutexLock lock(&mirror->mu_);
    mirror->identity_ = mirror->store_->Identity();
  }
  if (absl::Status loaded = mirror->Load(); !loaded.ok()) return loaded;
  mirror->thread_ = std::thread([raw = mirror.get()] { raw->Follow(); });
  return mirror;
}

EtcdMirror::~EtcdMirror() {
  Stop();
  // The thread notices within one Watch call (watch_timeout).
  if (thread_.joinable()) thread_.join();
}

void EtcdMirror::Stop() {
  // Frozen at once: nothing is applied after this, whatever the thread still receives. A
  // promotion must not wait for the Watch call in flight to end.
  absl::MutexLock lock(&mu_);
  stopping_ = true;
}

absl::Status EtcdMirror::Load() {
  const absl::Time started = absl::Now();
  std::map<std::string, std::shared_ptr<const std::string>, std::less<>> data;
  absl::StatusOr<EtcdStore::ReadAllPoint> point =
      store_->ReadAll([&](absl::string_view key, absl::string_view value) {
        data.emplace_hint(data.end(), std::string(key), std::make_shared<const std::string>(value));
      });
  absl::MutexLock lock(&mu_);
  if (stopping_) return absl::OkStatus();
  if (!point.ok()) {
    last_error_ = std::string(point.status().message());
    return point.status();
  }
  data_.swap(data);
  revision_ = point->revision;
  held_revision_ = point->revision;
  etcd_revision_ = point->etcd_revision;
  // A large commit still being applied at the point was laid over what was read: the copy is
  // whole at `revision_`; the rest of its application arrives as events and is held until its
  // marker goes, like any other.
  staged_ = point->staged;
  held_.clear();
  needs_load_ = false;
  NoteConfirmedLocked();
  ++loads_;
  last_load_ = absl::Now() - started;
  return absl::OkStatus();
}

void EtcdMirror::Follow() {
  const std::string prefix = store_->key_prefix();
  const std::string end = EtcdPrefixEnd(prefix);
  while (true) {
    int64_t from = 0;
    bool load = false;
    {
      absl::MutexLock lock(&mu_);
      if (stopping_) return;
      from = etcd_revision_ + 1;
      load = needs_load_;
    }
    if (absl::Now() >= next_confirm_) {
      next_confirm_ = absl::Now() + options_.confirm_interval;
      Confirm();
    }
    absl::Status failed;
    if (load) {
      failed = Load();
    } else {
      absl::StatusOr<std::vector<mvccpb::Event>> events =
          store_->client().WatchRangeOnce(prefix, end, from, options_.watch_timeout);
      if (events.ok()) {
        Apply(*events);
      } else if (absl::IsFailedPrecondition(events.status())) {
        // Compacted past the copy's point (it fell behind the leader's retention): read it all
        // again.
        absl::MutexLock lock(&mu_);
        needs_load_ = true;
        last_error_ = std::string(events.status().message());
        continue;
      } else if (!absl::IsDeadlineExceeded(events.status())) {
        failed = events.status();
      } else {
        absl::MutexLock lock(&mu_);
        following_ = true;
      }
    }
    absl::MutexLock lock(&mu_);
    if (failed.ok()) {
      following_ = true;
      continue;
    }
    following_ = false;
    last_error_ = std::string(failed.message());
    // Wait before the next try, but wake at once for Stop.
    auto stopping = [this]() ABSL_SHARED_LOCKS_REQUIRED(mu_) { return stopping_; };
    mu_.AwaitWithTimeout(absl::Condition(&stopping), options_.retry_delay);
  }
}

void EtcdMirror::Apply(const std::vector<mvccpb::Event>& events) {
  const std::string& prefix = store_->key_prefix();
  absl::MutexLock lock(&mu_);
  if (stopping_) return;
  // A watch response holds whole etcd revisions, oldest first; the copy may move only between
  // them (and only when no large commit is half applied).
  for (size_t i = 0; i < events.size();) {
    const int64_t group = events[i].kv().mod_revision();
    for (; i < events.size() && events[i].kv().mod_revision() == group; ++i) {
      const mvccpb::Event& event = events[i];
      const bool put = event.type() == mvccpb::Event::PUT;
      absl::string_view key = event.kv().key();
      if (!absl::ConsumePrefix(&key, prefix)) continue;
      if (absl::ConsumePrefix(&key, kDataPrefix)) {
        held_.emplace_back(std::string(key),
                           put ? std::make_shared<const std::string>(event.kv().value()) : nullptr);
      } else if (key == "meta/revision" && put) {
        int64_t revision = 0;
        if (absl::SimpleAtoi(event.kv().value(), &revision)) held_revision_ = revision;
      } else if (key == "meta/staged") {
        staged_ = put;
      } else if (key == "meta/identity" && put) {
        const std::vector<std::string> parts = absl::StrSplit(event.kv().value(), ' ');
        int64_t epoch = 0;
        if (parts.size() == 2 && absl::SimpleAtoi(parts[1], &epoch) &&
            (parts[0] != identity_.store_id || epoch != identity_.epoch)) {
          // Another history (a restore): nothing applied so far relates to it.
          identity_ = StoreIdentity{parts[0], epoch};
          needs_load_ = true;
        }
      }
    }
    if (group > etcd_revision_) etcd_revision_ = group;
    if (staged_ || needs_load_) continue;
    for (auto& [key, value] : held_) {
      if (value != nullptr) {
        data_.insert_or_assign(std::move(key), std::move(value));
      } else {
        data_.erase(key);
      }
    }
    held_.clear();
    revision_ = std::max(revision_, held_revision_);
    NoteConfirmedLocked();
  }
}

void EtcdMirror::Confirm() {
  const absl::Time asked = absl::Now();
  // A quorum read: a member cut off from the others fails it, where its Watch may go on
  // delivering nothing as if nothing happened.
  absl::StatusOr<int64_t> revision = store_->FetchRevision();
  absl::MutexLock lock(&mu_);
  if (!revision.ok()) {
    confirm_error_ =
        absl::StrCat("etcd cannot confirm the copy is current: ", revision.status().message());
    return;
  }
  confirm_error_.clear();
  pending_ = true;
  pending_revision_ = *revision;
  pending_at_ = asked;
  NoteConfirmedLocked();
}

void EtcdMirror::NoteConfirmedLocked() {
  if (!pending_ || revision_ < pending_revision_ || staged_) return;
  confirmed_at_ = std::max(confirmed_at_, pending_at_);
  pending_ = false;
}

EtcdMirror::Freshness EtcdMirror::freshness() const {
  absl::MutexLock lock(&mu_);
  Freshness freshness;
  freshness.confirmed_at = confirmed_at_;
  const absl::Duration age = absl::Now() - confirmed_at_;
  freshness.current = !stopping_ && age <= options_.stale_after;
  if (freshness.current) return freshness;
  if (stopping_) {
    freshness.reason = "the copy no longer follows etcd";
  } else if (!confirm_error_.empty()) {
    freshness.reason = confirm_error_;
  } else if (!following_) {
    freshness.reason = absl::StrCat("not following etcd: ", last_error_);
  } else if (pending_) {
    freshness.reason = absl::StrCat("the copy is behind etcd's revision ", pending_revision_);
  } else {
    freshness.reason = "etcd has not answered a quorum read";
  }
  if (confirmed_at_ != absl::InfinitePast()) {
    absl::StrAppend(&freshness.reason, " (last confirmed current ",
                    absl::FormatDuration(absl::Trunc(age, absl::Milliseconds(100))), " ago)");
  }
  return freshness;
}

std::shared_ptr<const EtcdMirror::Frozen> EtcdMirror::Freeze() const {
  auto frozen = std::make_shared<Frozen>();
  absl::MutexLock lock(&mu_);
  frozen->revision = revision_;
  frozen->identity = identity_;
  frozen->data = data_;
  return frozen;
}

int64_t EtcdMirror::revision() const {
  absl::MutexLock lock(&mu_);
  return revision_;
}

StoreIdentity EtcdMirror::identity() const {
  absl::MutexLock lock(&mu_);
  return identity_;
}

absl::Status EtcdMirror::WaitForRevision(int64_t revision, absl::Time deadline) const {
  absl::MutexLock lock(&mu_);
  auto reached = [&]() ABSL_SHARED_LOCKS_REQUIRED(mu_) { return revision_ >= revision; };
  if (mu_.AwaitWithDeadline(absl::Condition(&reached), deadline)) return absl::OkStatus();
  return absl::DeadlineExceededError(
      absl::StrCat("the warm copy is at revision ", revision_, ", not yet at ", revision,
                   staged_ ? " (a large commit is still being applied)" : "",
                   following_ ? "" : absl::StrCat(" (not following etcd: ", last_error_, ")")));
}

std::optional<std::string> EtcdMirror::Get(absl::string_view key) const {
  absl::MutexLock lock(&mu_);
  auto it = data_.find(key);
  if (it == data_.end()) return std::nullopt;
  return *it->second;
}

void EtcdMirror::Scan(
    absl::string_view prefix,
    const std::function<bool(absl::string_view key, absl::string_view value)>& visit) const {
  absl::MutexLock lock(&mu_);
  for (auto it = data_.lower_bound(prefix);
       it != data_.end() && absl::StartsWith(it->first, prefix); ++it) {
    if (!visit(it->first, *it->second)) return;
  }
}

EtcdMirror::Stats EtcdMirror::stats() const {
  absl::MutexLock lock(&mu_);
  Stats stats;
  stats.revision = revision_;
  stats.keys = static_cast<int64_t>(data_.size());
  stats.following = following_;
  stats.loads = loads_;
  stats.last_error = last_error_;
  stats.last_load = last_load_;
  return stats;
}

}  // namespace tollgate::storage
