#pragma once

// The audit log: one JSON object per line for every mutating call, every denied call and every
// admission or preemption the scheduler decides on its own. Bounded: when the file would grow
// past max_bytes it is renamed to FILE.1 (FILE.1 to FILE.2, ... up to max_backups) and a new one
// started. The line format is documented in docs/security.md.

#include <cstdint>
#include <string>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"

namespace tollgate::auth {

struct AuditEntry {
  absl::Time time;
  std::string request_id;
  std::string user;
  std::vector<std::string> groups;
  // How the caller authenticated ("x509", "token", "anonymous"); "scheduler" for the
  // scheduler's own decisions.
  std::string method;
  std::string verb;
  std::string kind;
  std::string ns;
  std::string name;
  // "allowed" (and then code is the call's outcome, e.g. OK or NOT_FOUND), "denied"
  // (PERMISSION_DENIED), "unauthenticated" or, for scheduler entries, "decided".
  std::string result;
  std::string code;
  std::string reason;
};

// One entry as its JSON line (no trailing newline). Keys in a fixed order.
std::string FormatAuditEntry(const AuditEntry& entry);

// Appends entries to a file with size-bounded rotation. Thread-safe; each entry is one write(2)
// so lines never interleave. Write failures are counted, not returned: an RPC is not refused
// because the audit disk is full (the count is logged by the owner).
class AuditLog {
 public:
  struct Options {
    std::string path;
    int64_t max_bytes = 100 << 20;
    int max_backups = 5;
  };

  static absl::StatusOr<std::unique_ptr<AuditLog>> Open(Options options);
  ~AuditLog();
  AuditLog(const AuditLog&) = delete;
  AuditLog& operator=(const AuditLog&) = delete;

  void Write(const AuditEntry& entry);
  int64_t write_failures() const;

 private:
  explicit AuditLog(Options options) : options_(std::move(options)) {}
  absl::Status OpenFileLocked() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  absl::Status RotateLocked() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  const Options options_;
  mutable absl::Mutex mu_;
  int fd_ ABSL_GUARDED_BY(mu_) = -1;
  int64_t size_ ABSL_GUARDED_BY(mu_) = 0;
  int64_t write_failures_ ABSL_GUARDED_BY(mu_) = 0;
};

}  // namespace tollgate::auth
