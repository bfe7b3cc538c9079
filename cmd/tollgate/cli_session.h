#pragma once

// What every `tollgate` command shares: the flags common to all of them, and the Session one
// invocation runs in (its streams, parsed flags and lazily opened connection).

#include <memory>
#include <ostream>
#include <string>
#include <utility>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "clients/cpp/tollgate_client.h"
#include "cmd/tollgate/cli_commands.h"
#include "cmd/tollgate/client_config.h"
#include "cmd/tollgate/table_printer.h"
#include "common/command_line.h"

namespace tollgate::cli {

using common::FlagSpec;
using common::ParsedFlags;

// Flags more than one command declares (kubectl's names and short names).
inline constexpr FlagSpec kServerFlag{
    "server", 0, "HOST:PORT",
    "tollgated to talk to (default $TOLLGATE_SERVER, else 127.0.0.1:50051)"};
inline constexpr FlagSpec kTimeoutFlag{
    "timeout", 0, "DURATION", "deadline of each call to tollgated, e.g. 30s (default 10s)"};
inline constexpr FlagSpec kHelpFlag{"help", 'h', "", "show this help"};
// Connection and identity (cmd/tollgate/client_config.h), taken by every command that talks to
// tollgated.
inline constexpr FlagSpec kConnectionFlags[] = {
    {"config", 0, "FILE", "config file with contexts (default $TOLLGATE_CONFIG)"},
    {"context", 0, "NAME", "context of the config file to use (default current-context)"},
    {"certificate-authority", 0, "FILE", "CA of the server's certificate (enables TLS)"},
    {"client-certificate", 0, "FILE", "client certificate for mTLS (PEM)"},
    {"client-key", 0, "FILE", "the client certificate's key (PEM)"},
    {"token", 0, "TOKEN", "bearer token (default $TOLLGATE_TOKEN)"},
};
inline constexpr FlagSpec kNamespaceFlag{"namespace", 'n', "NAMESPACE",
                                         "namespace of the object (default \"default\")"};
inline constexpr FlagSpec kManifestNamespaceFlag{
    "namespace", 'n', "NAMESPACE", "namespace for Workloads and LocalQueues that name none"};
inline constexpr FlagSpec kAllNamespacesFlag{"all-namespaces", 'A', "", "list every namespace"};
inline constexpr FlagSpec kFileFlag{
    "filename", 'f', "FILE",
    "YAML manifests: a file, a folder of *.yaml, or - for stdin (repeatable)"};

// One command invocation: its streams, parsed flags and (lazily) its connection.
class Session {
 public:
  Session(const CliEnv& env, absl::string_view command, absl::string_view synopsis,
          const ParsedFlags& args, absl::Duration timeout, Connection connection = {})
      : env_(env),
        command_(command),
        synopsis_(synopsis),
        args_(args),
        timeout_(timeout),
        connection_(std::move(connection)) {}

  std::ostream& out() { return env_.out; }
  std::ostream& err() { return env_.err; }
  std::istream& in() { return env_.in; }
  absl::Time now() const { return env_.clock.Now(); }
  client::WatchCanceller* watch_canceller() const { return env_.watch_canceller; }
  const ParsedFlags& args() const { return args_; }

  client::TollgateClient& client();

  // The namespace for namespaced objects: -n, else "default".
  std::string Namespace() const { return args_.Get("namespace", "default"); }

  // Prints "tollgate: MESSAGE" and returns kExitFailure.
  int Fail(const absl::Status& status);
  // Prints the message with the command's synopsis and returns kExitUsage.
  int UsageError(absl::string_view message);

  // The table on stdout, or kubectl's "No resources found" on stderr when it has no rows.
  void PrintTableOrNothing(const TablePrinter& table, absl::string_view what_none,
                           bool headers = true);
  // kubectl's message for an empty list.
  std::string NoResources(bool namespaced) const;

 private:
  const CliEnv& env_;
  const std::string command_;
  const std::string synopsis_;
  const ParsedFlags& args_;
  const absl::Duration timeout_;
  const Connection connection_;
  std::unique_ptr<client::TollgateClient> client_;
};

}  // namespace tollgate::cli
