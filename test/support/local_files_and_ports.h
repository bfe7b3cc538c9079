#pragma once

// Small facts about the local machine that test harnesses starting real processes need.

#include <string>

#include "absl/status/statusor.h"

namespace tollgate::test_support {

// A TCP port free on 127.0.0.1 right now, for servers that cannot bind port 0 and report it.
// Another process may take it before the caller's server binds it: callers that can, retry.
absl::StatusOr<int> PickFreePort();

// A TCP port free on 127.0.0.1 right now, below the kernel's ephemeral range
// (/proc/sys/net/ipv4/ip_local_port_range), for servers a test restarts on the same port: a
// port from PickFreePort can be taken by any outgoing connection while its server is down, so
// the restarted server could not bind it again; these ports are never handed out that way.
absl::StatusOr<int> PickRestartablePort();

// The whole file, or "" when it cannot be read: for logs that a failing test prints, where a
// missing log is itself the answer.
std::string ReadFileOrEmpty(const std::string& path);

}  // namespace tollgate::test_support
