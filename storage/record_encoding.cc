#include "storage/record_encoding.h"

#include <utility>

namespace tollgate::storage {

void PutVarint(std::string& out, uint64_t value) {
  while (value >= 0x80) {
    out.push_back(static_cast<char>((value & 0x7f) | 0x80));
    value >>= 7;
  }
  out.push_back(static_cast<char>(value));
}

bool GetVarint(absl::string_view& in, uint64_t& value) {
  uint64_t result = 0;
  for (int shift = 0; shift < 64 && !in.empty(); shift += 7) {
    const auto byte = static_cast<uint8_t>(in.front());
    in.remove_prefix(1);
    result |= static_cast<uint64_t>(byte & 0x7f) << shift;
    if ((byte & 0x80) == 0) {
      value = result;
      return true;
    }
  }
  return false;
}

void PutBytes(std::string& out, absl::string_view bytes) {
  PutVarint(out, bytes.size());
  out.append(bytes.data(), bytes.size());
}

bool GetBytes(absl::string_view& in, std::string& bytes) {
  uint64_t size = 0;
  if (!GetVarint(in, size) || size > in.size()) return false;
  bytes.assign(in.data(), size);
  in.remove_prefix(size);
  return true;
}

std::string EncodeRecords(const std::vector<std::string>& records) {
  size_t size = 0;
  for (const std::string& record : records) size += record.size() + 10;
  std::string out;
  out.reserve(size);
  for (const std::string& record : records) PutBytes(out, record);
  return out;
}

bool DecodeRecords(absl::string_view in, std::vector<std::string>& records) {
  records.clear();
  while (!in.empty()) {
    std::string record;
    if (!GetBytes(in, record)) return false;
    records.push_back(std::move(record));
  }
  return true;
}

}  // namespace tollgate::storage
