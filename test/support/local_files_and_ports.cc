#include "test/support/local_files_and_ports.h"

#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <cstring>
#include <fstream>
#include <random>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "common/file_util.h"

namespace tollgate::test_support {

absl::StatusOr<int> PickFreePort() {
  const int fd = socket(AF_INET, SOCK_STREAM, 0);
  if (fd < 0) return absl::InternalError(absl::StrCat("socket: ", std::strerror(errno)));
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  addr.sin_port = 0;
  socklen_t len = sizeof(addr);
  if (bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) != 0 ||
      getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len) != 0) {
    const int err = errno;
    close(fd);
    return absl::InternalError(absl::StrCat("bind: ", std::strerror(err)));
  }
  close(fd);
  return ntohs(addr.sin_port);
}

absl::StatusOr<int> PickRestartablePort() {
  // The ephemeral range starts at 32768 unless configured otherwise; ports below it from 20000
  // up are left to servers.
  int ephemeral_start = 32768;
  {
    std::ifstream range("/proc/sys/net/ipv4/ip_local_port_range");
    int first = 0;
    if (range >> first && first > 20000 + 1000) ephemeral_start = first;
  }
  std::random_device seed;
  std::mt19937 random(seed());
  std::uniform_int_distribution<int> pick(20000, ephemeral_start - 1);
  for (int attempt = 0; attempt < 200; ++attempt) {
    const int port = pick(random);
    const int fd = socket(AF_INET, SOCK_STREAM, 0);
    if (fd < 0) return absl::InternalError(absl::StrCat("socket: ", std::strerror(errno)));
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    addr.sin_port = htons(static_cast<uint16_t>(port));
    const bool bound = bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) == 0;
    close(fd);
    if (bound) return port;
  }
  return absl::UnavailableError(
      absl::StrCat("no free port between 20000 and ", ephemeral_start - 1, " after 200 tries"));
}

std::string ReadFileOrEmpty(const std::string& path) {
  return common::ReadFileToString(path).value_or(std::string());
}

}  // namespace tollgate::test_support
