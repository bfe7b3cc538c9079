#include "services/auth/audit_log.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <memory>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "common/json_text.h"

namespace tollgate::auth {
namespace {

void AppendJsonString(std::string& out, absl::string_view s) { out += common::JsonQuote(s); }

void AppendField(std::string& out, absl::string_view key, absl::string_view value) {
  if (out.size() > 1) out.push_back(',');
  AppendJsonString(out, key);
  out.push_back(':');
  AppendJsonString(out, value);
}

}  // namespace

std::string FormatAuditEntry(const AuditEntry& entry) {
  std::string out = "{";
  AppendField(out, "time",
              absl::FormatTime("%Y-%m-%dT%H:%M:%E6SZ", entry.time, absl::UTCTimeZone()));
  AppendField(out, "request_id", entry.request_id);
  AppendField(out, "user", entry.user);
  out += ",\"groups\":[";
  for (size_t i = 0; i < entry.groups.size(); ++i) {
    if (i > 0) out.push_back(',');
    AppendJsonString(out, entry.groups[i]);
  }
  out += "]";
  AppendField(out, "method", entry.method);
  AppendField(out, "verb", entry.verb);
  AppendField(out, "kind", entry.kind);
  AppendField(out, "namespace", entry.ns);
  AppendField(out, "name", entry.name);
  AppendField(out, "result", entry.result);
  AppendField(out, "code", entry.code);
  AppendField(out, "reason", entry.reason);
  out.push_back('}');
  return out;
}

absl::StatusOr<std::unique_ptr<AuditLog>> AuditLog::Open(Options options) {
  if (options.path.empty()) return absl::InvalidArgumentError("--audit-log: empty path");
  if (options.max_bytes < 4096) {
    return absl::InvalidArgumentError(
        absl::StrCat("--audit-log-max-bytes=", options.max_bytes, ": must be at least 4096"));
  }
  if (options.max_backups < 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("--audit-log-backups=", options.max_backups, ": must not be negative"));
  }
  std::unique_ptr<AuditLog> log(new AuditLog(std::move(options)));
  absl::MutexLock lock(&log->mu_);
  if (absl::Status s = log->OpenFileLocked(); !s.ok()) return s;
  return log;
}

AuditLog::~AuditLog() {
  absl::MutexLock lock(&mu_);
  if (fd_ >= 0) close(fd_);
}

absl::Status AuditLog::OpenFileLocked() {
  fd_ = open(options_.path.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0600);
  if (fd_ < 0) {
    return absl::FailedPreconditionError(
        absl::StrCat("--audit-log=", options_.path, ": ", std::strerror(errno)));
  }
  struct stat st;
  size_ = fstat(fd_, &st) == 0 ? st.st_size : 0;
  return absl::OkStatus();
}

absl::Status AuditLog::RotateLocked() {
  close(fd_);
  fd_ = -1;
  if (options_.max_backups == 0) {
    unlink(options_.path.c_str());
  } else {
    for (int i = options_.max_backups - 1; i >= 1; --i) {
      // A missing older backup is normal early on; ENOENT is not a failure.
      std::rename(absl::StrCat(options_.path, ".", i).c_str(),
                  absl::StrCat(options_.path, ".", i + 1).c_str());
    }
    if (std::rename(options_.path.c_str(), absl::StrCat(options_.path, ".1").c_str()) != 0) {
      return absl::InternalError(
          absl::StrCat("rotate ", options_.path, ": ", std::strerror(errno)));
    }
  }
  return OpenFileLocked();
}

void AuditLog::Write(const AuditEntry& entry) {
  std::string line = FormatAuditEntry(entry);
  line.push_back('\n');
  absl::MutexLock lock(&mu_);
  if (size_ > 0 && size_ + static_cast<int64_t>(line.size()) > options_.max_bytes) {
    if (!RotateLocked().ok()) {
      ++write_failures_;
      if (fd_ < 0) return;
    }
  }
  if (fd_ < 0) {
    ++write_failures_;
    return;
  }
  const ssize_t n = ::write(fd_, line.data(), line.size());
  if (n != static_cast<ssize_t>(line.size())) {
    ++write_failures_;
    return;
  }
  size_ += n;
}

int64_t AuditLog::write_failures() const {
  absl::MutexLock lock(&mu_);
  return write_failures_;
}

}  // namespace tollgate::auth
