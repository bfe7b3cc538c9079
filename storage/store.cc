#include "storage/store.h"

#include <string>

namespace tollgate::storage {

void WriteBatch::Put(absl::string_view key, absl::string_view value) {
  ops_.push_back(Op{.is_delete = false, .key = std::string(key), .value = std::string(value)});
}

void WriteBatch::Delete(absl::string_view key) {
  ops_.push_back(Op{.is_delete = true, .key = std::string(key), .value = {}});
}

void WriteBatch::AppendChange(absl::string_view record) { changes_.emplace_back(record); }

}  // namespace tollgate::storage
