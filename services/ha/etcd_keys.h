#pragma once

#include <string>

#include "absl/strings/string_view.h"
#include "etcd/etcdserver/etcdserverpb/rpc.grpc.pb.h"

namespace tollgate::ha {

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

}  // namespace tollgate::ha
