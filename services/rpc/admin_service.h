#pragma once

// tollgate.v1.AdminService: administration of the running server. Today one call, Backup: a
// consistent RocksDB checkpoint of the live store into a directory on the server's machine
// (`tollgate admin backup --to=DIR`; docs/operations.md). Every call needs the admin role:
// a backup holds every object and workload, and writes files as the server's user.

#include <grpcpp/grpcpp.h>

#include <cstdint>
#include <functional>
#include <string>
#include <utility>

#include "absl/status/statusor.h"
#include "services/rpc/access_gate.h"
#include "storage/store.h"
#include "tollgate/v1/service.grpc.pb.h"

namespace tollgate::rpc {

// Thread-safe. `gate` must outlive it.
class AdminGrpcService final : public v1::AdminService::Service {
 public:
  // Writes a checkpoint of the store into a directory that does not exist yet and returns the
  // revision it holds; null when the store cannot (etcd: UNIMPLEMENTED, naming etcdctl).
  using BackupFn = std::function<absl::StatusOr<int64_t>(const std::string& dir)>;

  AdminGrpcService(rpc::AccessGate& gate, BackupFn backup, storage::StoreIdentity identity)
      : gate_(gate), backup_(std::move(backup)), identity_(std::move(identity)) {}

  grpc::Status Backup(grpc::ServerContext* context, const v1::BackupRequest* request,
                      v1::BackupResponse* response) override;

 private:
  rpc::AccessGate& gate_;
  const BackupFn backup_;
  const storage::StoreIdentity identity_;
};

// The checks on BackupRequest.to before any file is touched: an absolute path that does not
// exist, in a directory that does. INVALID_ARGUMENT / ALREADY_EXISTS / FAILED_PRECONDITION
// naming the field and the path.
absl::Status CheckBackupTarget(const std::string& to);

}  // namespace tollgate::rpc
