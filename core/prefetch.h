#pragma once

// Cache-line prefetches for the cycle's hot loops: a deep queue's next head is a workload no
// recent cycle touched, so its lines are asked for while the current head is worked on.

#include <cstddef>

namespace tollgate::core {

inline constexpr size_t kCacheLineBytes = 64;

// Asks for every line of [p, p + bytes) to be read soon.
inline void PrefetchLines(const void* p, size_t bytes) {
  const char* begin = static_cast<const char*>(p);
  for (size_t off = 0; off < bytes; off += kCacheLineBytes) __builtin_prefetch(begin + off);
}

// The same for lines about to be written.
inline void PrefetchLinesForWrite(const void* p, size_t bytes) {
  const char* begin = static_cast<const char*>(p);
  for (size_t off = 0; off < bytes; off += kCacheLineBytes) {
    __builtin_prefetch(begin + off, /*rw=*/1);
  }
}

}  // namespace tollgate::core
