#pragma once

#include <cstddef>
#include <deque>
#include <memory>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/synchronization/mutex.h"
#include "core/workload.h"

namespace tollgate::engine {

// Turns stored workload records (store key, serialized v1::Workload) into core workloads on all
// cores while the store is still being scanned: restart time is dominated by this. Add copies
// each record into a batch; full batches go to helper threads, started once the first batch
// fills (a small store never starts one); Finish parses what is left on the calling thread too
// and returns the workloads in Add order.
//
// A record is accepted only if it parses, passes the same validation as on submit, and its key
// is the one the executor writes for its namespace and name. Not thread-safe: one thread calls
// Add and Finish.
class StoredWorkloadParser {
 public:
  // `helpers`: threads parsing alongside the caller; by default one per core but the caller's.
  explicit StoredWorkloadParser(int helpers = DefaultHelpers());
  ~StoredWorkloadParser();
  StoredWorkloadParser(const StoredWorkloadParser&) = delete;
  StoredWorkloadParser& operator=(const StoredWorkloadParser&) = delete;

  void Add(absl::string_view key, absl::string_view value);
  // DATA_LOSS naming the first record, in Add order, that is not a valid stored workload. Call
  // once.
  absl::StatusOr<std::vector<std::unique_ptr<core::Workload>>> Finish();

  static int DefaultHelpers();

 private:
  // Records are copied back to back into `bytes` (the scan's buffers are only valid during the
  // callback); `sizes` holds each record's key and value lengths.
  struct Batch {
    std::string bytes;
    std::vector<std::pair<uint32_t, uint32_t>> sizes;
    std::vector<std::unique_ptr<core::Workload>> parsed;
    // The first failure in this batch, in record order.
    absl::Status error;
  };
  static constexpr size_t kRecordsPerBatch = 4096;

  static std::unique_ptr<Batch> NewBatch();
  static void Parse(Batch& batch);
  void Submit(std::unique_ptr<Batch> batch, bool start_helpers);
  // Parses queued batches until none is left (helpers: until Finish closes the queue).
  void Drain(bool wait_for_more);

  const int helpers_;
  std::unique_ptr<Batch> current_;
  // Every batch in Add order; owned here, parsed by whichever thread takes it from `queue_`.
  std::vector<std::unique_ptr<Batch>> batches_;
  std::vector<std::thread> threads_;

  absl::Mutex mu_;
  std::deque<Batch*> queue_ ABSL_GUARDED_BY(mu_);
  bool closed_ ABSL_GUARDED_BY(mu_) = false;
};

// Parses `stored` (key, value) records with a StoredWorkloadParser; the result is in input order.
absl::StatusOr<std::vector<std::unique_ptr<core::Workload>>> ParseStoredWorkloads(
    const std::vector<std::pair<std::string, std::string>>& stored);

}  // namespace tollgate::engine
