#pragma once

#include <cstdint>
#include <string>

#include "absl/status/status.h"

namespace tollgate::bench {

struct StalledWatchersOptions {
  // The tollgated binary and a directory for its store.
  std::string tollgated;
  std::string work_dir;
  int64_t workloads = 100000;
  // Watch(since_revision=0) streams that are opened and never read.
  int stalled = 1000;
  // Streams that read everything; each must see every submit made afterwards.
  int active = 2;
  // Workloads submitted while the stalled streams sit there.
  int submits = 1000;
  bool keep = false;
};

// Fills a store with `workloads`, serves it with tollgated, opens `stalled` watches from
// revision 0 that never read, and `active` ones that do; then submits `submits` workloads and
// checks every active watch saw each of them. Prints tollgated's RSS and thread count before
// the watches, with them open, and after the submits.
absl::Status RunStalledWatchers(const StalledWatchersOptions& options);

}  // namespace tollgate::bench
