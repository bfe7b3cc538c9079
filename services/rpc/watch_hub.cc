#include "services/rpc/watch_hub.h"

#include <algorithm>
#include <deque>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "core/real_clock.h"
#include "core/status_macros.h"
#include "services/engine/check_controllers.h"
#include "services/engine/config_objects.h"
#include "services/engine/state_keys.h"
#include "services/rpc/grpc_status.h"

namespace tollgate::rpc {

// One Watch stream (see WatchHub). All state is under mu_; gRPC calls (StartWrite, Finish) are
// made outside it, with `writing_` / `finished_` making sure only one thread makes them.
class WatchReactor final : public grpc::ServerWriteReactor<v1::WatchEvent> {
 public:
  WatchReactor(WatchHub& hub, const v1::WatchRequest& request, WatchHub::Visible visible,
               std::string check_controller)
      : hub_(hub),
        request_(request),
        visible_(std::move(visible)),
        check_controller_(std::move(check_controller)),
        identity_(hub.executor_.store().Identity()),
        revision_(request.since_revision()),
        last_sent_(core::RealClock().Now()) {
    prefix_ = request.namespace_().empty()
                  ? std::string(engine::kWorkloadPrefix)
                  : absl::StrCat(engine::kWorkloadPrefix, request.namespace_(), "/");
  }

  // Ends the stream with `status` before anything was sent.
  void Reject(const absl::Status& status) {
    {
      absl::MutexLock lock(&mu_);
      finished_ = true;
    }
    Finish(ToGrpcStatus(status));
  }

  // Starts the next write if none is in flight and there is something to send; otherwise the
  // stream stays parked until the hub pumps it again. A stream whose identity has all its write
  // slots in flight waits in its share's queue instead; the completion that frees a slot starts
  // it (Granted).
  void Pump() {
    // A stream with a write in flight is pumped again by its OnWriteDone, which clears writing_
    // before it pumps, and a stream waiting for a slot is started by the write that frees it;
    // skipping either here without the lock cannot lose a wake-up. This keeps the hub's
    // per-commit sweep to one atomic load per stalled stream.
    if (writing_.load(std::memory_order_acquire)) return;
    grpc::Status finish;
    bool write = false;
    bool slot = false;
    {
      absl::MutexLock lock(&mu_);
      if (writing_.load(std::memory_order_relaxed) || finished_) return;
      if (!stopping_ && buffer_.empty() && ListingLocked()) {
        // A listing stream always has a page due, and reading it is part of the identity's
        // share: it takes the slot first, so a stream waiting for its turn holds no page (and
        // has pinned no snapshot yet).
        writing_.store(true, std::memory_order_relaxed);
        if (!hub_.shares_.Acquire(*share_, this, core::RealClock().Now())) return;
        slot = true;
      } else {
        bool due = false;
        absl::Status next = PrepareLocked(due);
        if (!next.ok()) {
          finished_ = true;
          finish = ToGrpcStatus(next);
        } else if (!due) {
          return;
        } else {
          writing_.store(true, std::memory_order_relaxed);
          if (!hub_.shares_.Acquire(*share_, this, core::RealClock().Now())) return;
          TakeNextLocked();
          write = true;
        }
      }
    }
    if (slot) {
      StartGranted(this);
      return;
    }
    if (write) {
      Write();
    } else {
      Finish(finish);
    }
  }

  // Called with a write slot this stream waited for, or took before reading a listing page (it
  // is out of the queue, writing_ is set). Returns the stream the slot passes to when this one
  // has nothing to send after all.
  WatchReactor* Granted() {
    grpc::Status finish;
    bool write = false;
    WatchReactor* passed = nullptr;
    {
      absl::MutexLock lock(&mu_);
      bool due = false;
      absl::Status next = finished_ ? absl::OkStatus() : PrepareLocked(due);
      if (!next.ok()) {
        finished_ = true;
        finish = ToGrpcStatus(next);
      }
      if (due) {
        TakeNextLocked();
        write = true;
      } else {
        // The slot is given back before writing_ clears, so a Pump racing in cannot hold two.
        passed = hub_.shares_.Release(*share_, this, core::RealClock().Now());
        writing_.store(false, std::memory_order_release);
      }
    }
    if (write) {
      Write();
    } else if (!finish.ok()) {
      Finish(finish);
    }
    return passed;
  }

  // A stream keeps its slot for up to `writes_per_turn` writes while it has events buffered:
  // the identity's streams take turns a page at a time, not an event at a time, so a turn does
  // not switch streams (and read a page for each) on every write. Fills in_flight_ when the turn
  // goes on.
  bool ContinueTurn() {
    absl::MutexLock lock(&mu_);
    if (finished_ || stopping_ || buffer_.empty() ||
        turn_writes_ + 1 >= hub_.options_.writes_per_turn) {
      return false;
    }
    bool due = false;
    // An error here is met again, and ends the stream, in the Pump that follows the turn.
    if (!PrepareLocked(due).ok() || !due) return false;
    // False when the slot was counted out as stuck meanwhile: the stream asks for one anew.
    if (!hub_.shares_.Renew(*share_, this, core::RealClock().Now())) return false;
    ++turn_writes_;
    TakeNextLocked();
    return true;
  }

  // Starts each stream handed a slot in turn, on the calling thread.
  static void StartGranted(WatchReactor* granted) {
    while (granted != nullptr) granted = granted->Granted();
  }

  void StopServing() {
    {
      absl::MutexLock lock(&mu_);
      stopping_ = true;
      // A stream waiting for a slot leaves the queue and ends now; one being handed a slot ends
      // when it gets it.
      if (writing_.load(std::memory_order_relaxed) && share_ != nullptr &&
          hub_.shares_.Withdraw(*share_, this)) {
        writing_.store(false, std::memory_order_release);
      }
    }
    Pump();
  }

  void OnWriteDone(bool ok) override {
    // gRPC sized the event when it serialized it; the size is read here, not computed twice on
    // the way out, and before the next Pump reuses in_flight_.
    hub_.sent_bytes_.fetch_add(in_flight_.GetCachedSize(), std::memory_order_relaxed);
    if (ok && ContinueTurn()) {
      Write();
      return;
    }
    // The turn is over: the slot goes to the identity's next waiting stream first, so this one
    // queues behind it.
    WatchReactor* next = hub_.shares_.Release(*share_, this, core::RealClock().Now());
    bool finish_now = false;
    {
      absl::MutexLock lock(&mu_);
      turn_writes_ = 0;
      writing_.store(false, std::memory_order_release);
      if (!ok && !finished_) {
        // The client is gone (or cancelled); nothing more can be sent.
        finished_ = true;
        finish_now = true;
      }
    }
    StartGranted(next);
    if (finish_now) {
      Finish(grpc::Status(grpc::StatusCode::CANCELLED, "watch stream broken"));
    } else if (ok) {
      Pump();
    }
  }

  void OnCancel() override {
    {
      absl::MutexLock lock(&mu_);
      if (finished_) return;
      if (writing_.load(std::memory_order_relaxed)) {
        // A write in flight (or a slot being handed over, which starts one) completes with
        // ok=false and finishes the stream there; a stream waiting for a slot leaves the queue.
        if (!hub_.shares_.Withdraw(*share_, this)) return;
        writing_.store(false, std::memory_order_release);
      }
      finished_ = true;
    }
    Finish(grpc::Status(grpc::StatusCode::CANCELLED, "watch cancelled"));
  }

  void OnDone() override {
    hub_.Remove(this);
    if (share_ != nullptr) hub_.shares_.Leave(share_);
    delete this;
  }

  // Called once by the hub before anything can pump the stream.
  void JoinShare(const std::string& key) { share_ = hub_.shares_.Join(key); }

 private:
  // Sets `due` when something is to be sent (buffered, or a bookmark); an error ends the stream.
  absl::Status PrepareLocked(bool& due) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    due = false;
    if (stopping_) {
      return absl::UnavailableError(
          absl::StrCat("tollgated is shutting down; watch again from revision ", ResumeLocked(),
                       " (store_id ", identity_.store_id, ", store_epoch ", identity_.epoch, ")"));
    }
    while (true) {
      if (buffer_.empty()) {
        if (absl::Status filled = FillLocked(); !filled.ok()) return filled;
      }
      // Events the watcher may not see are dropped here; bookmarks carry no workload.
      if (buffer_.empty() || !visible_ || !buffer_.front().has_workload() ||
          visible_(buffer_.front().workload())) {
        break;
      }
      buffer_.pop_front();
    }
    due = !buffer_.empty() || BookmarkDueLocked(core::RealClock().Now());
    return absl::OkStatus();
  }

  // The initial listing is not done (or not started).
  bool ListingLocked() const ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    return (revision_ == 0 && !started_snapshot_) || snapshot_ != nullptr;
  }

  bool BookmarkDueLocked(absl::Time now) const ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    return now - last_sent_ >= hub_.options_.bookmark_interval && snapshot_ == nullptr;
  }

  // Moves what PrepareLocked found due into in_flight_: the next buffered event, else a
  // bookmark at the stream's revision (nothing is buffered, so revision_ is all sent).
  void TakeNextLocked() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    if (!buffer_.empty()) {
      in_flight_ = std::move(buffer_.front());
      buffer_.pop_front();
    } else {
      in_flight_.Clear();
      in_flight_.set_type(v1::WatchEvent::BOOKMARK);
      in_flight_.set_revision(revision_);
      Stamp(in_flight_);
    }
    last_sent_ = core::RealClock().Now();
  }

  void Write() {
    hub_.sent_events_.fetch_add(1, std::memory_order_relaxed);
    StartWrite(&in_flight_);
  }

  // The revision a client that got everything sent so far can resume from.
  int64_t ResumeLocked() const ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    if (started_snapshot_ && snapshot_ != nullptr) return 0;
    return buffer_.empty() ? revision_ : buffer_.front().revision() - 1;
  }

  void Stamp(v1::WatchEvent& event) const {
    event.set_store_id(identity_.store_id);
    event.set_store_epoch(identity_.epoch);
  }

  // Buffers the next page of the initial listing, or the events of the next change-log
  // entries that match, or nothing when the stream has caught up.
  absl::Status FillLocked() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    storage::Store& store = hub_.executor_.store();
    if (revision_ == 0 && !started_snapshot_) {
      started_snapshot_ = true;
      absl::StatusOr<std::unique_ptr<storage::StoreSnapshot>> snapshot = store.TakeSnapshot();
      if (!snapshot.ok()) return snapshot.status();
      snapshot_ = *std::move(snapshot);
      if (!check_controller_.empty()) {
        TOLLGATE_RETURN_IF_ERROR(ReadCheckControllersLocked());
      }
    }
    if (snapshot_ != nullptr) {
      const int64_t page = hub_.options_.snapshot_page;
      absl::Status parse_error;
      absl::StatusOr<int64_t> visited = snapshot_->ScanPage(
          prefix_, last_key_, page, [&](absl::string_view key, absl::string_view value) {
            v1::WatchEvent& event = buffer_.emplace_back();
            event.set_type(v1::WatchEvent::ADDED);
            event.set_revision(snapshot_->revision());
            if (!event.mutable_workload()->ParseFromArray(value.data(),
                                                          static_cast<int>(value.size()))) {
              parse_error =
                  absl::DataLossError(absl::StrCat("stored workload ", key, " is not a Workload"));
            }
            Stamp(event);
            last_key_ = std::string(key);
            if (!check_controller_.empty() && !ListedForController(event)) buffer_.pop_back();
          });
      if (!visited.ok()) return visited.status();
      if (!parse_error.ok()) return parse_error;
      if (*visited < page) {
        revision_ = snapshot_->revision();
        snapshot_.reset();
      }
      if (!buffer_.empty()) return absl::OkStatus();
    }

    const int64_t behind = store.CurrentRevision() - revision_;
    if (behind > hub_.options_.max_lag_revisions) {
      hub_.dropped_lagging_.fetch_add(1, std::memory_order_relaxed);
      return absl::OutOfRangeError(absl::StrCat(
          "watcher fell ", behind, " revisions behind (limit ", hub_.options_.max_lag_revisions,
          "); list again (or watch from revision 0) and resume from that revision"));
    }
    while (buffer_.empty()) {
      // One entry at a time: a stalled client holds at most one commit's events.
      absl::StatusOr<std::vector<storage::ChangeLogEntry>> entries =
          store.ReadChanges(revision_, 1);
      if (!entries.ok()) {
        if (absl::IsFailedPrecondition(entries.status())) {
          hub_.dropped_compacted_.fetch_add(1, std::memory_order_relaxed);
          return absl::OutOfRangeError(absl::StrCat("watch from revision ", revision_,
                                                    " is too old: ", entries.status().message(),
                                                    "; list again and watch from its revision"));
        }
        return entries.status();
      }
      if (entries->empty()) return absl::OkStatus();
      const storage::ChangeLogEntry& entry = entries->front();
      for (const std::string& record : entry.records) {
        v1::WatchEvent event;
        if (!event.ParseFromString(record)) {
          return absl::DataLossError(
              absl::StrCat("change log entry ", entry.revision, " is not a WatchEvent"));
        }
        if (!request_.namespace_().empty() &&
            event.workload().metadata().namespace_() != request_.namespace_()) {
          continue;
        }
        if (!check_controller_.empty() && !ChangedForController(event)) continue;
        event.set_revision(entry.revision);
        Stamp(event);
        buffer_.push_back(std::move(event));
      }
      revision_ = entry.revision;
    }
    return absl::OkStatus();
  }

  // WatchAdmissionChecks: the AdmissionChecks of the listing's snapshot, name -> controller.
  absl::Status ReadCheckControllersLocked() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    const std::string prefix = engine::ConfigObjectKey(v1::ADMISSION_CHECK, "", "");
    constexpr int64_t kPage = 256;
    std::string after;
    absl::Status parse_error;
    while (true) {
      absl::StatusOr<int64_t> visited = snapshot_->ScanPage(
          prefix, after, kPage, [&](absl::string_view key, absl::string_view value) {
            after = std::string(key);
            v1::ConfigObject object;
            if (!object.ParseFromArray(value.data(), static_cast<int>(value.size()))) {
              parse_error =
                  absl::DataLossError(absl::StrCat("store key ", key, " is not a ConfigObject"));
              return;
            }
            check_controllers_[object.admission_check().metadata().name()] =
                object.admission_check().spec().controller_name();
          });
      if (!visited.ok()) return visited.status();
      TOLLGATE_RETURN_IF_ERROR(parse_error);
      if (*visited < kPage) return absl::OkStatus();
    }
  }

  // A listed workload goes to the controller when it holds quota for one of its checks; the
  // event keeps only the controller's entry.
  bool ListedForController(v1::WatchEvent& event) const ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    for (v1::CheckControllerRef& ref :
         engine::CheckControllersOf(event.workload(), check_controllers_)) {
      if (ref.controller_name() != check_controller_ || !ref.holds_quota()) continue;
      *event.add_check_controllers() = std::move(ref);
      return true;
    }
    return false;
  }

  // A change goes to the controller when its record names it: as it is while the workload holds
  // quota for the controller's checks, DELETED on the change that ends that.
  bool ChangedForController(v1::WatchEvent& event) const {
    for (const v1::CheckControllerRef& ref : event.check_controllers()) {
      if (ref.controller_name() != check_controller_) continue;
      const v1::CheckControllerRef mine = ref;
      event.clear_check_controllers();
      if (!mine.holds_quota()) event.set_type(v1::WatchEvent::DELETED);
      if (mine.added()) event.set_type(v1::WatchEvent::ADDED);
      *event.add_check_controllers() = mine;
      return true;
    }
    return false;
  }

  WatchHub& hub_;
  const v1::WatchRequest request_;
  const WatchHub::Visible visible_;
  const std::string check_controller_;
  engine::CheckControllerNames check_controllers_ ABSL_GUARDED_BY(mu_);
  const storage::StoreIdentity identity_;
  std::string prefix_;

  absl::Mutex mu_;
  // The last revision whose events are all in buffer_ or sent.
  int64_t revision_ ABSL_GUARDED_BY(mu_);
  bool started_snapshot_ ABSL_GUARDED_BY(mu_) = false;
  std::unique_ptr<storage::StoreSnapshot> snapshot_ ABSL_GUARDED_BY(mu_);
  std::string last_key_ ABSL_GUARDED_BY(mu_);
  std::deque<v1::WatchEvent> buffer_ ABSL_GUARDED_BY(mu_);
  // Owned by the write in flight while writing_.
  v1::WatchEvent in_flight_;
  // Written under mu_; read without it by Pump's fast path. Set while a write is in flight and
  // while the stream waits for (or is being handed) a write slot of its identity.
  std::atomic<bool> writing_{false};
  // The identity's write slots (WatchHub::Start joins it before the first Pump).
  WatchWriteShares<WatchReactor>::Share* share_ = nullptr;
  bool finished_ ABSL_GUARDED_BY(mu_) = false;
  bool stopping_ ABSL_GUARDED_BY(mu_) = false;
  // Writes made in the current turn on the identity's slot, beyond the first.
  int turn_writes_ ABSL_GUARDED_BY(mu_) = 0;
  absl::Time last_sent_ ABSL_GUARDED_BY(mu_);
};

WatchHub::WatchHub(engine::AdmissionExecutor& executor, Options options)
    : executor_(executor),
      options_(options),
      shares_({options.writes_per_identity, options.stuck_after}),
      thread_([this] { Loop(); }) {}

WatchHub::~WatchHub() { Stop(); }

grpc::ServerWriteReactor<v1::WatchEvent>* WatchHub::Start(grpc::CallbackServerContext* context,
                                                          const v1::WatchRequest& request,
                                                          absl::Status start_check, Visible visible,
                                                          std::string check_controller,
                                                          const std::string& share_key) {
  auto* reactor = new WatchReactor(*this, request, std::move(visible), std::move(check_controller));
  if (!start_check.ok()) {
    reactor->Reject(start_check);
    return reactor;
  }
  // Before the stream is in reactors_: from then on the hub's sweep (and Stop) may pump it.
  reactor->JoinShare(share_key);
  bool stopping = false;
  {
    absl::MutexLock lock(&mu_);
    stopping = stopping_;
    if (!stopping) reactors_.insert(reactor);
  }
  if (stopping) {
    reactor->Reject(absl::UnavailableError(absl::StrCat(
        "tollgated is shutting down; watch again from revision ", request.since_revision())));
    return reactor;
  }
  reactor->Pump();
  return reactor;
}

void WatchHub::Stop() {
  {
    absl::MutexLock lock(&mu_);
    stopping_ = true;
    for (WatchReactor* reactor : reactors_) reactor->StopServing();
  }
  // The hub's thread waits on the executor: once Stop returns it touches the executor no more,
  // so the owner may destroy the executor before the hub (tollgated's shutdown does).
  if (thread_.joinable()) thread_.join();
}

int64_t WatchHub::open_streams() const {
  absl::MutexLock lock(&mu_);
  return static_cast<int64_t>(reactors_.size());
}

WatchHub::Dropped WatchHub::dropped() const {
  return {dropped_lagging_.load(std::memory_order_relaxed),
          dropped_compacted_.load(std::memory_order_relaxed)};
}

WatchHub::Sent WatchHub::sent() const {
  return {sent_events_.load(std::memory_order_relaxed),
          sent_bytes_.load(std::memory_order_relaxed)};
}

WatchHub::Slots WatchHub::slots() {
  const WatchWriteShares<WatchReactor>::Counts counts = shares_.Count();
  return {counts.held, counts.waiting};
}

void WatchHub::Remove(WatchReactor* reactor) {
  absl::MutexLock lock(&mu_);
  reactors_.erase(reactor);
}

void WatchHub::Loop() {
  int64_t seen = executor_.revision();
  // Wall time: waiting, bookmarks and stuck writes are about connections, not scheduling.
  absl::Time next_sweep = core::RealClock().Now() + absl::Seconds(1);
  while (true) {
    absl::Time deadline = next_sweep;
    if (shares_.AnyHeld()) {
      deadline = std::min(deadline, core::RealClock().Now() + options_.stuck_check_interval);
    }
    const int64_t revision = executor_.WaitForRevision(seen, deadline);
    const absl::Time now = core::RealClock().Now();
    {
      absl::MutexLock lock(&mu_);
      if (stopping_) return;
      if (revision != seen || now >= next_sweep) {
        seen = revision;
        next_sweep = now + absl::Seconds(1);
        // Streams with a write in flight (or waiting for a slot) return at once; parked ones
        // read what is new (or send a bookmark when one is due).
        for (WatchReactor* reactor : reactors_) reactor->Pump();
      }
    }
    // After the commit's wake-ups: writes waiting on their client's flow control give their
    // identity's slots to its waiting streams (one hand-over per stuck write, not per write).
    for (WatchReactor* granted : shares_.ReleaseStuck(now)) WatchReactor::StartGranted(granted);
  }
}

}  // namespace tollgate::rpc
