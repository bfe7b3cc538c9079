#pragma once

// The byte encoding both stores use for a change-log entry's records: each record as its length
// (a base-128 varint, least significant group first, as protobuf writes it) followed by its
// bytes. One definition, so an entry written by one store reads back identically in the other
// (`tollgated --store` migrations copy the log as it is).

#include <cstdint>
#include <string>
#include <vector>

#include "absl/strings/string_view.h"

namespace tollgate::storage {

void PutVarint(std::string& out, uint64_t value);
// Reads one varint from the front of `in` and consumes it; false if `in` ends inside it or it
// runs past 64 bits.
bool GetVarint(absl::string_view& in, uint64_t& value);

// A length-prefixed byte string.
void PutBytes(std::string& out, absl::string_view bytes);
bool GetBytes(absl::string_view& in, std::string& bytes);

std::string EncodeRecords(const std::vector<std::string>& records);
// False if `in` is truncated; `records` then holds the records before the damage.
bool DecodeRecords(absl::string_view in, std::vector<std::string>& records);

}  // namespace tollgate::storage
