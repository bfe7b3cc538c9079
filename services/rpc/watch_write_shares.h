#pragma once

#include <cstdint>
#include <deque>
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"

namespace tollgate::rpc {

// Fair shares of Watch writes per client identity (docs/performance.md, section 10).
//
// A client whose application never reads its streams can still take data as fast as the server
// writes (gRPC's transport buffers up to a window it grows by itself), so serving streams in
// turn gives an identity with 1,000 such streams 1,000 turns for every one of an identity with
// one stream. Here each identity has at most `writes_per_identity` writes in flight; a stream of
// an identity at its limit waits in that identity's queue, and the completion of one of the
// identity's writes hands its slot to the first stream waiting — on the completing thread, with
// no wake-up of another thread. Identities do not share slots, so one client's streams cannot
// slow another's beyond taking their own slots' part of the machine.
//
// A write still in flight after `stuck_after` is waiting on the client's flow control (a hung
// client, or a window that filled): it stops counting, and its slot goes to the next waiter
// (ReleaseStuck, called by the hub's thread). Without that, an identity with as many hung
// streams as slots would starve its other streams.
//
// Writers are opaque pointers; the caller guarantees a writer stays valid while it is queued or
// holds a slot, asks for at most one slot at a time, and starts the write of a writer that
// Release or ReleaseStuck returns (it now holds a slot). Thread-safe.
template <typename Writer>
class WatchWriteShares {
 public:
  struct Options {
    int writes_per_identity = 4;
    absl::Duration stuck_after = absl::Milliseconds(50);
  };

  // One identity's slots and queue.
  class Share {
   public:
    const std::string& key() const { return key_; }

   private:
    friend class WatchWriteShares;
    explicit Share(std::string key) : key_(std::move(key)) {}

    const std::string key_;
    // Streams of this identity that joined and have not left (guarded by the registry's lock).
    int members_ = 0;
    absl::Mutex mu_;
    // Writes in flight that count, with when each started.
    std::vector<std::pair<Writer*, absl::Time>> holders_ ABSL_GUARDED_BY(mu_);
    std::deque<Writer*> waiting_ ABSL_GUARDED_BY(mu_);
  };

  explicit WatchWriteShares(Options options) : options_(options) {
    if (options_.writes_per_identity < 1) options_.writes_per_identity = 1;
  }
  WatchWriteShares(const WatchWriteShares&) = delete;
  WatchWriteShares& operator=(const WatchWriteShares&) = delete;

  // The share of identity `key` for one more stream; Leave when the stream is done.
  Share* Join(const std::string& key) {
    absl::MutexLock lock(&registry_mu_);
    std::unique_ptr<Share>& share = shares_[key];
    if (share == nullptr) share.reset(new Share(key));
    ++share->members_;
    return share.get();
  }

  // The stream neither holds a slot nor waits for one.
  void Leave(Share* share) {
    absl::MutexLock lock(&registry_mu_);
    if (--share->members_ == 0) shares_.erase(share->key_);
  }

  // A slot for `writer`'s next write: true when it may write now; false when the identity is at
  // its limit, and `writer` waits for Release or ReleaseStuck to hand it one.
  bool Acquire(Share& share, Writer* writer, absl::Time now) {
    absl::MutexLock lock(&share.mu_);
    if (static_cast<int>(share.holders_.size()) < options_.writes_per_identity) {
      share.holders_.emplace_back(writer, now);
      return true;
    }
    share.waiting_.push_back(writer);
    return false;
  }

  // `writer`'s write completed (or it gives back a slot it was handed and will not use). Returns
  // the writer its slot passes to, which the caller starts, or null.
  Writer* Release(Share& share, Writer* writer, absl::Time now) {
    absl::MutexLock lock(&share.mu_);
    for (auto& holder : share.holders_) {
      if (holder.first != writer) continue;
      if (share.waiting_.empty()) {
        holder = share.holders_.back();
        share.holders_.pop_back();
        return nullptr;
      }
      Writer* next = share.waiting_.front();
      share.waiting_.pop_front();
      holder = {next, now};
      return next;
    }
    // Its slot was released as stuck and handed on then.
    return nullptr;
  }

  // `writer` goes on writing on the slot it holds (its next write starts now). False when it
  // holds none (its slot was counted out as stuck): it must Acquire one.
  bool Renew(Share& share, Writer* writer, absl::Time now) {
    absl::MutexLock lock(&share.mu_);
    for (auto& holder : share.holders_) {
      if (holder.first != writer) continue;
      holder.second = now;
      return true;
    }
    return false;
  }

  // Takes a waiting `writer` out of the queue (its stream ends). False when it is not queued:
  // then it holds a slot, or is being handed one.
  bool Withdraw(Share& share, Writer* writer) {
    absl::MutexLock lock(&share.mu_);
    for (auto it = share.waiting_.begin(); it != share.waiting_.end(); ++it) {
      if (*it != writer) continue;
      share.waiting_.erase(it);
      return true;
    }
    return false;
  }

  // Slots held since before now - stuck_after stop counting; returns the writers they pass to.
  std::vector<Writer*> ReleaseStuck(absl::Time now) {
    std::vector<Writer*> granted;
    absl::MutexLock lock(&registry_mu_);
    for (auto& [key, share] : shares_) {
      absl::MutexLock share_lock(&share->mu_);
      for (auto& holder : share->holders_) {
        if (now - holder.second < options_.stuck_after) continue;
        if (share->waiting_.empty()) {
          holder.first = nullptr;
          continue;
        }
        holder = {share->waiting_.front(), now};
        share->waiting_.pop_front();
        granted.push_back(holder.first);
      }
      std::erase_if(share->holders_, [](const auto& holder) { return holder.first == nullptr; });
    }
    return granted;
  }

  // Whether some write holds a slot (the hub then checks for stuck ones often).
  bool AnyHeld() {
    absl::MutexLock lock(&registry_mu_);
    for (auto& [key, share] : shares_) {
      absl::MutexLock share_lock(&share->mu_);
      if (!share->holders_.empty()) return true;
    }
    return false;
  }

  // Writes holding a slot, and streams waiting for one, over all identities.
  struct Counts {
    int64_t held = 0;
    int64_t waiting = 0;
  };
  Counts Count() {
    Counts counts;
    absl::MutexLock lock(&registry_mu_);
    for (auto& [key, share] : shares_) {
      absl::MutexLock share_lock(&share->mu_);
      counts.held += static_cast<int64_t>(share->holders_.size());
      counts.waiting += static_cast<int64_t>(share->waiting_.size());
    }
    return counts;
  }

  const Options& options() const { return options_; }

 private:
  Options options_;
  // Lock order: registry_mu_ before a share's mu_.
  absl::Mutex registry_mu_;
  std::map<std::string, std::unique_ptr<Share>> shares_ ABSL_GUARDED_BY(registry_mu_);
};

}  // namespace tollgate::rpc
