#include "storage/store.h"

#include <random>
#include <string>

#include "absl/strings/str_format.h"

namespace tollgate::storage {

std::string NewStoreId() {
  // random_device reads the kernel's entropy pool; ids only need to differ between stores.
  std::random_device random;
  std::string id;
  for (int i = 0; i < 4; ++i) absl::StrAppendFormat(&id, "%08x", random());
  return id;
}

void WriteBatch::Put(absl::string_view key, absl::string_view value) {
  ops_.push_back(Op{.is_delete = false, .key = std::string(key), .value = std::string(value)});
}

void WriteBatch::Delete(absl::string_view key) {
  ops_.push_back(Op{.is_delete = true, .key = std::string(key), .value = {}});
}

void WriteBatch::AppendChange(absl::string_view record) { changes_.emplace_back(record); }

}  // namespace tollgate::storage
