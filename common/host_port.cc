#include "common/host_port.h"

#include <utility>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/strip.h"

namespace tollgate::common {
namespace {

absl::string_view Unbracketed(absl::string_view host) {
  if (host.size() >= 2 && host.front() == '[' && host.back() == ']') {
    return host.substr(1, host.size() - 2);
  }
  return host;
}

// Where the port starts: after the last colon, unless that colon is inside an IPv6 literal
// without a port ("[::1]" or a bare "::1").
absl::string_view::size_type PortColon(absl::string_view address) {
  const auto colon = address.rfind(':');
  if (colon == absl::string_view::npos) return colon;
  const auto close = address.rfind(']');
  if (close != absl::string_view::npos && close > colon) return absl::string_view::npos;
  if (address.front() != '[' && address.find(':') != colon) return absl::string_view::npos;
  return colon;
}

}  // namespace

absl::StatusOr<HostPort> ParseHostPort(absl::string_view address, absl::string_view what,
                                       bool allow_port_zero) {
  auto bad = [&](absl::string_view why) {
    return absl::InvalidArgumentError(absl::StrCat(what, "=", address, ": ", why));
  };
  const auto colon = address.rfind(':');
  if (colon == absl::string_view::npos) return bad("want HOST:PORT");
  HostPort parsed;
  parsed.host = std::string(Unbracketed(address.substr(0, colon)));
  if (parsed.host.empty()) return bad("the host is empty (use 127.0.0.1 or 0.0.0.0)");
  if (!absl::SimpleAtoi(address.substr(colon + 1), &parsed.port) || parsed.port < 0 ||
      parsed.port > 65535) {
    return bad("the port is not a number from 0 to 65535");
  }
  if (parsed.port == 0 && !allow_port_zero) return bad("the port must not be 0");
  return parsed;
}

std::string WithPort(absl::string_view address, int port) {
  const auto colon = PortColon(address);
  const absl::string_view host =
      colon == absl::string_view::npos ? address : address.substr(0, colon);
  return absl::StrCat(host, ":", port);
}

absl::string_view HostOf(absl::string_view address) {
  const auto colon = PortColon(address);
  return Unbracketed(colon == absl::string_view::npos ? address : address.substr(0, colon));
}

bool IsLoopbackHost(absl::string_view host) {
  if (!absl::ConsumePrefix(&host, "ipv4:")) absl::ConsumePrefix(&host, "ipv6:");
  host = Unbracketed(host);
  return absl::StartsWith(host, "127.") || host == "::1" ||
         absl::EqualsIgnoreCase(host, "localhost");
}

bool IsLoopbackAddress(absl::string_view address) {
  absl::string_view rest = address;
  if (absl::ConsumePrefix(&rest, "ipv4:") || absl::ConsumePrefix(&rest, "ipv6:")) {
    return IsLoopbackHost(HostOf(rest));
  }
  return IsLoopbackHost(HostOf(address));
}

}  // namespace tollgate::common
