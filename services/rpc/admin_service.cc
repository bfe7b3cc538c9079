#include "services/rpc/admin_service.h"

#include <filesystem>
#include <string>
#include <system_error>

#include "absl/strings/str_cat.h"
#include "core/error_text.h"
#include "services/rpc/grpc_status.h"

namespace tollgate::rpc {

absl::Status CheckBackupTarget(const std::string& to) {
  namespace fs = std::filesystem;
  if (to.empty()) return absl::InvalidArgumentError("to: required (a directory to create)");
  const fs::path path(to);
  if (!path.is_absolute()) {
    return absl::InvalidArgumentError(
        absl::StrCat("to: ", core::QuoteValue(to),
                     " is not an absolute path (it names a directory on the server's machine)"));
  }
  std::error_code ec;
  if (fs::exists(path, ec)) {
    // A checkpoint never mixes with other files, and an old backup is never overwritten.
    return absl::AlreadyExistsError(absl::StrCat(
        "to: ", core::QuoteValue(to), " already exists; name a directory that does not exist yet"));
  }
  const fs::path parent = path.parent_path();
  if (!fs::is_directory(parent, ec)) {
    return absl::FailedPreconditionError(
        absl::StrCat("to: ", core::QuoteValue(to), ": its parent ", parent.string(),
                     " is not an existing directory on the server's machine"));
  }
  return absl::OkStatus();
}

grpc::Status AdminGrpcService::Backup(grpc::ServerContext* context,
                                      const v1::BackupRequest* request,
                                      v1::BackupResponse* response) {
  auth::AccessRequest access;
  access.verb = "backup";
  access.kind = "Store";
  absl::StatusOr<rpc::AuthorizedCall> call = gate_.Check(*context, access);
  if (!call.ok()) return rpc::ToGrpcStatus(call.status());
  absl::Status outcome;
  if (!backup_) {
    outcome = absl::UnimplementedError(
        "Backup: the store is etcd; back it up with `etcdctl snapshot save FILE` "
        "(docs/etcd-store.md)");
  } else {
    outcome = CheckBackupTarget(request->to());
  }
  if (outcome.ok()) {
    absl::StatusOr<int64_t> revision = backup_(request->to());
    if (revision.ok()) {
      response->set_revision(*revision);
      response->set_to(request->to());
      response->set_store_id(identity_.store_id);
      response->set_store_epoch(identity_.epoch);
    }
    outcome = revision.status();
  }
  gate_.Finish(*call, outcome);
  return rpc::ToGrpcStatus(outcome);
}

}  // namespace tollgate::rpc
