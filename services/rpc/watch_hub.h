#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <set>
#include <string>
#include <thread>

#include "absl/base/thread_annotations.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "grpcpp/grpcpp.h"
#include "services/engine/admission_executor.h"
#include "services/rpc/watch_write_shares.h"
#include "tollgate/v1/service.pb.h"

namespace tollgate::rpc {

class WatchReactor;

// Serves Watch streams without a thread per stream and with bounded memory per stream.
//
// Each stream is a gRPC callback reactor with at most one message in flight. It pulls what it
// sends: the initial listing (since_revision 0) page by page from a store snapshot, then the
// change log one entry at a time. Nothing is queued per watcher beyond one page or one entry,
// so a client that stops reading costs one pinned snapshot or log position, never a copy of
// the state; gRPC's flow control holds the rest. A watcher that falls more than
// `max_lag_revisions` behind, or whose position is compacted away, ends with OUT_OF_RANGE and
// re-lists. One hub thread wakes the streams that have caught up when a commit lands, and
// sends them bookmarks while idle.
//
// Writes are shared fairly per client identity, not per stream (WatchWriteShares): each
// identity has at most `writes_per_identity` writes in flight, so a client with many streams
// that never read cannot take the server from other clients (docs/performance.md, section 10).
//
// The executor must outlive the hub; Stop() must be called before the gRPC server shuts down
// (it ends every stream). Thread-safe.
class WatchHub {
 public:
  struct Options {
    // Workloads read from the snapshot per page.
    int64_t snapshot_page = 32;
    // How far (in revisions) a watcher may trail the store before it is dropped.
    int64_t max_lag_revisions = 100000;
    // An idle stream gets a BOOKMARK this often.
    absl::Duration bookmark_interval = absl::Seconds(10);
    // Writes in flight per client identity; a write still in flight after `stuck_after` waits on
    // its client's flow control and stops counting. The hub checks for those every
    // `stuck_check_interval` while any write is in flight.
    int writes_per_identity = 4;
    // Writes a stream makes in a row on its identity's slot while it has events buffered,
    // before the slot goes to the identity's next waiting stream.
    int writes_per_turn = 32;
    absl::Duration stuck_after = absl::Milliseconds(50);
    absl::Duration stuck_check_interval = absl::Milliseconds(25);
  };

  // Whether the watcher may see a workload (authorization); empty: every workload.
  using Visible = std::function<bool(const v1::Workload&)>;

  WatchHub(engine::AdmissionExecutor& executor, Options options);
  ~WatchHub();
  WatchHub(const WatchHub&) = delete;
  WatchHub& operator=(const WatchHub&) = delete;

  // The reactor for one Watch call. Invalid requests (see engine::TollgateApi::CheckWatchStart) end
  // it with their status at once. `share_key` names the client identity whose write share the
  // stream uses (WatchShareKey in grpc_services.h); streams with the same key share it.
  //
  // With `check_controller` set the stream is a WatchAdmissionChecks stream for that controller
  // (docs/admission-checks.md): its listing holds the workloads that hold quota and carry one of
  // the controller's checks; its changes are those whose WatchEvent.check_controllers name the
  // controller: ADDED on the change that makes the workload its concern (a reservation),
  // MODIFIED while it stays so, DELETED on the change that ends that; each event carries only
  // that controller's entry.
  grpc::ServerWriteReactor<v1::WatchEvent>* Start(grpc::CallbackServerContext* context,
                                                  const v1::WatchRequest& request,
                                                  absl::Status start_check, Visible visible = {},
                                                  std::string check_controller = "",
                                                  const std::string& share_key = "");
  // Ends every open and future stream with UNAVAILABLE naming the revision to resume from, and
  // stops the hub's thread (waits up to a second for it): afterwards the hub no longer reads the
  // executor. Idempotent; not thread-safe against itself.
  void Stop();

  int64_t open_streams() const;

  // Streams ended with OUT_OF_RANGE since start: fell more than max_lag_revisions behind, or
  // their position in the change log was compacted away.
  struct Dropped {
    int64_t lagging = 0;
    int64_t compacted = 0;
  };
  Dropped dropped() const;

  // Events handed to gRPC on Watch streams since start (bookmarks included), whether or not
  // the client has read them yet, and their encoded bytes (counted as each write completes).
  struct Sent {
    int64_t events = 0;
    int64_t bytes = 0;
  };
  Sent sent() const;

  // Writes holding one of their identity's slots, and streams waiting for a slot.
  struct Slots {
    int64_t held = 0;
    int64_t waiting = 0;
  };
  Slots slots();

 private:
  friend class WatchReactor;
  void Loop();
  void Remove(WatchReactor* reactor);

  engine::AdmissionExecutor& executor_;
  const Options options_;
  mutable absl::Mutex mu_;
  // Lock order: mu_ before any reactor's own mutex.
  std::set<WatchReactor*> reactors_ ABSL_GUARDED_BY(mu_);
  bool stopping_ ABSL_GUARDED_BY(mu_) = false;
  std::atomic<int64_t> dropped_lagging_{0};
  std::atomic<int64_t> dropped_compacted_{0};
  std::atomic<int64_t> sent_events_{0};
  std::atomic<int64_t> sent_bytes_{0};
  WatchWriteShares<WatchReactor> shares_;
  std::thread thread_;
};

}  // namespace tollgate::rpc
