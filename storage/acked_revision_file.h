#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"

namespace tollgate::storage {

// A small file beside the RocksDB files recording the last revision whose commit was
// acknowledged (its WAL write synced). Recovery compares it with the revision RocksDB brings
// back: a synced WAL can only lose an unacknowledged torn tail, so recovering less than this
// means acknowledged data is gone (a flipped bit mid-WAL, a truncated or deleted WAL file).
//
// It is rewritten in place after every acknowledged commit without its own fsync: one 16-byte
// pwrite into the page cache. That is enough against everything but a machine crash, after
// which it may lag behind the WAL by the writes the kernel had not flushed yet (it can never
// run ahead: it is written only after the WAL fsync returned). Contents: the revision as 8
// bytes big-endian followed by its bitwise complement, so a torn or garbage file is told apart
// from a real record. Not thread-safe: the store writes it under its commit mutex.
class AckedRevisionFile {
 public:
  static constexpr char kFileName[] = "TOLLGATE-ACKED-REVISION";

  // Reads the record in directory `dir`: nullopt when the file does not exist, DATA_LOSS when
  // it exists but does not hold a valid record.
  static absl::StatusOr<std::optional<int64_t>> Read(const std::string& dir);
  // Opens (creating if needed, and syncing the directory once then) the file in `dir` and
  // writes `revision` into it.
  static absl::StatusOr<AckedRevisionFile> Open(const std::string& dir, int64_t revision);

  AckedRevisionFile(AckedRevisionFile&& other) noexcept;
  AckedRevisionFile& operator=(AckedRevisionFile&& other) noexcept;
  AckedRevisionFile(const AckedRevisionFile&) = delete;
  AckedRevisionFile& operator=(const AckedRevisionFile&) = delete;
  ~AckedRevisionFile();

  absl::Status Write(int64_t revision);
  // Write and fsync; for the points where the record must not lag (after a recovery that
  // accepted data loss, after a restore).
  absl::Status WriteAndSync(int64_t revision);

 private:
  AckedRevisionFile(std::string path, int fd) : path_(std::move(path)), fd_(fd) {}
  std::string path_;
  int fd_ = -1;
};

}  // namespace tollgate::storage
