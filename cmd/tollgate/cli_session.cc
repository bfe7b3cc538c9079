#include "cmd/tollgate/cli_session.h"

#include "absl/strings/str_cat.h"

namespace tollgate::cli {

client::TollgateClient& Session::client() {
  if (client_ == nullptr) {
    // The credentials were read by RunCli already; a failure here is a file that vanished.
    absl::StatusOr<client::Credentials> credentials = CredentialsFor(connection_);
    client::TollgateClient::Options options;
    options.call_timeout = timeout_;
    options.unreachable_hint =
        absl::StrCat("is tollgated running? set --server or ", kServerEnvVar);
    std::ostream& err = env_.err;
    options.on_stale = [&err](absl::string_view revision, absl::string_view reason) {
      // Once per client (docs/ha.md, "Follower reads"): the answer is still printed.
      err << "warning: may be stale: served by a follower at revision " << revision
          << ", which cannot confirm it is current"
          << (reason.empty() ? "" : absl::StrCat(" (", reason, ")")) << "\n";
    };
    client_ = std::make_unique<client::TollgateClient>(
        connection_.server.empty() ? ResolveServer(args_.Get("server"), env_.server_env)
                                   : connection_.server,
        credentials.ok() ? *std::move(credentials) : client::Credentials(), std::move(options));
  }
  return *client_;
}

int Session::Fail(const absl::Status& status) {
  env_.err << "tollgate: " << status.message() << "\n";
  return kExitFailure;
}

int Session::UsageError(absl::string_view message) {
  env_.err << "tollgate " << command_ << ": " << message << "\nusage: tollgate " << synopsis_
           << "\nRun 'tollgate " << command_ << " --help' for more.\n";
  return kExitUsage;
}

void Session::PrintTableOrNothing(const TablePrinter& table, absl::string_view what_none,
                                  bool headers) {
  if (table.row_count() == 0) {
    // kubectl says so on stderr, keeping stdout empty for scripts.
    env_.err << what_none << "\n";
    return;
  }
  if (headers) {
    table.Print(env_.out);
  } else {
    table.PrintRows(env_.out);
  }
}

std::string Session::NoResources(bool namespaced) const {
  if (!namespaced || args_.Has("all-namespaces")) return "No resources found";
  return absl::StrCat("No resources found in ", Namespace(), " namespace.");
}

}  // namespace tollgate::cli
