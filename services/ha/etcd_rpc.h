#pragma once

#include <string>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "grpcpp/grpcpp.h"
#include "etcd/etcdserver/etcdserverpb/rpc.grpc.pb.h"

namespace tollgate::services::ha {

// An etcd call's failure as an absl::Status naming what was attempted. etcd's own codes map
// through unchanged (UNAVAILABLE for no quorum, DEADLINE_EXCEEDED for a slow one).
inline absl::Status EtcdError(absl::string_view what, const grpc::Status& status) {
  return absl::Status(static_cast<absl::StatusCode>(status.error_code()),
                      absl::StrCat("etcd ", what, ": ", status.error_message()));
}

// The range_end that makes a Range or a Watch cover every key starting with `prefix`.
inline std::string PrefixEnd(absl::string_view prefix) {
  std::string end(prefix);
  while (!end.empty()) {
    if (static_cast<unsigned char>(end.back()) < 0xff) {
      end.back() = static_cast<char>(static_cast<unsigned char>(end.back()) + 1);
      return end;
    }
    end.pop_back();
  }
  // Every key: etcd reads "\0" as "to the end".
  return std::string(1, '\0');
}

}  // namespace tollgate::services::ha
