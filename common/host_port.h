#pragma once

// host:port addresses as flags and endpoints spell them: `127.0.0.1:50051`, `[::1]:0`,
// `localhost:2379`. The one parser behind --listen, --metrics-listen, --advertise and etcd
// endpoints, and the one loopback test behind "nothing listens beyond loopback unprotected".

#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace tollgate::common {

struct HostPort {
  // Without the brackets of an IPv6 literal.
  std::string host;
  int port = 0;
};

// Splits `address` at its last colon. Errors read `<what>=<address>: <why>`, e.g.
// `--metrics-listen=localhost: want HOST:PORT`. Port 0 ("pick one") is accepted only when
// `allow_port_zero`.
absl::StatusOr<HostPort> ParseHostPort(absl::string_view address, absl::string_view what,
                                       bool allow_port_zero = true);

// `address` with its port replaced by `port`: a listen address as actually bound (port 0 picks
// one). An address without a port gets one.
std::string WithPort(absl::string_view address, int port);

// The host part of host:port (IPv6 brackets removed), or `address` itself when it has no port.
absl::string_view HostOf(absl::string_view address);

// 127.0.0.0/8, ::1 or localhost (any case). gRPC's `ipv4:` and `ipv6:` URI prefixes are
// looked through. A host name other than localhost is never taken for loopback: it may resolve
// anywhere.
bool IsLoopbackHost(absl::string_view host);

// IsLoopbackHost(HostOf(address)).
bool IsLoopbackAddress(absl::string_view address);

}  // namespace tollgate::common
