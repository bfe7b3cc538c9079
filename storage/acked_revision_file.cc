#include "storage/acked_revision_file.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <utility>

#include "absl/strings/str_cat.h"

namespace tollgate::storage {
namespace {

constexpr size_t kRecordSize = 16;

void PutBigEndian(uint64_t v, char* out) {
  for (int i = 7; i >= 0; --i) {
    out[i] = static_cast<char>(v & 0xff);
    v >>= 8;
  }
}

uint64_t GetBigEndian(const char* in) {
  uint64_t v = 0;
  for (int i = 0; i < 8; ++i) v = (v << 8) | static_cast<uint8_t>(in[i]);
  return v;
}

std::string PathIn(const std::string& dir) {
  return absl::StrCat(dir, "/", AckedRevisionFile::kFileName);
}

absl::Status Errno(absl::string_view what, const std::string& path) {
  return absl::InternalError(absl::StrCat(what, " ", path, ": ", std::strerror(errno)));
}

}  // namespace

absl::StatusOr<std::optional<int64_t>> AckedRevisionFile::Read(const std::string& dir) {
  const std::string path = PathIn(dir);
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    if (errno == ENOENT) return std::optional<int64_t>();
    return Errno("open", path);
  }
  char buf[kRecordSize + 1];
  const ssize_t n = ::pread(fd, buf, sizeof(buf), 0);
  const int read_errno = errno;
  ::close(fd);
  if (n < 0) {
    errno = read_errno;
    return Errno("read", path);
  }
  const uint64_t value = n == kRecordSize ? GetBigEndian(buf) : 0;
  if (n != kRecordSize || ~value != GetBigEndian(buf + 8) ||
      value > static_cast<uint64_t>(INT64_MAX)) {
    return absl::DataLossError(absl::StrCat(
        path, " does not hold a valid acknowledged-revision record (", n,
        " bytes); if nothing else is wrong, delete it and start again to skip this one check"));
  }
  return std::optional<int64_t>(static_cast<int64_t>(value));
}

absl::StatusOr<AckedRevisionFile> AckedRevisionFile::Open(const std::string& dir,
                                                          int64_t revision) {
  const std::string path = PathIn(dir);
  const bool existed = ::access(path.c_str(), F_OK) == 0;
  const int fd = ::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
  if (fd < 0) return Errno("open", path);
  AckedRevisionFile file(path, fd);
  if (absl::Status s = file.WriteAndSync(revision); !s.ok()) return s;
  if (!existed) {
    // The new name must survive a machine crash too, or the next start cannot check anything.
    const int dir_fd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (dir_fd < 0) return Errno("open directory", dir);
    const int rc = ::fsync(dir_fd);
    ::close(dir_fd);
    if (rc != 0) return Errno("fsync directory", dir);
  }
  return file;
}

AckedRevisionFile::AckedRevisionFile(AckedRevisionFile&& other) noexcept
    : path_(std::move(other.path_)), fd_(std::exchange(other.fd_, -1)) {}

AckedRevisionFile& AckedRevisionFile::operator=(AckedRevisionFile&& other) noexcept {
  if (this != &other) {
    if (fd_ >= 0) ::close(fd_);
    path_ = std::move(other.path_);
    fd_ = std::exchange(other.fd_, -1);
  }
  return *this;
}

AckedRevisionFile::~AckedRevisionFile() {
  if (fd_ >= 0) ::close(fd_);
}

absl::Status AckedRevisionFile::Write(int64_t revision) {
  char buf[kRecordSize];
  PutBigEndian(static_cast<uint64_t>(revision), buf);
  PutBigEndian(~static_cast<uint64_t>(revision), buf + 8);
  const ssize_t n = ::pwrite(fd_, buf, sizeof(buf), 0);
  if (n != static_cast<ssize_t>(sizeof(buf))) {
    if (n >= 0) errno = EIO;
    return Errno("write", path_);
  }
  return absl::OkStatus();
}

absl::Status AckedRevisionFile::WriteAndSync(int64_t revision) {
  if (absl::Status s = Write(revision); !s.ok()) return s;
  if (::fdatasync(fd_) != 0) return Errno("fdatasync", path_);
  return absl::OkStatus();
}

}  // namespace tollgate::storage
