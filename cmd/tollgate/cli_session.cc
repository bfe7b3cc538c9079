#include "cmd/tollgate/cli_session.h"

#include "absl/strings/str_cat.h"

namespace tollgate::cli {

CliClient& Session::client() {
  if (client_ == nullptr) {
    // The credentials were read by RunCli already; a failure here is a file that vanished.
    absl::StatusOr<std::shared_ptr<grpc::ChannelCredentials>> credentials =
        ChannelCredentials(connection_);
    client_ = std::make_unique<CliClient>(
        connection_.server.empty() ? ResolveServer(args_.Get("server"), env_.server_env)
                                   : connection_.server,
        credentials.ok() ? *credentials : grpc::InsecureChannelCredentials(), connection_.token,
        timeout_);
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
