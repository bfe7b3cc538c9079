#pragma once

namespace tollgate::common {

// Turns off Abseil's lock-order (deadlock) detection for this process.
//
// Debian builds Abseil without NDEBUG, so every absl::Mutex::Lock records its lock in a
// process-wide graph under one global spin lock: a cost on every lock and a point where all
// threads meet. Tests keep the detection (it finds lock-order bugs); the production binaries
// call this first thing in main, before any thread starts.
void DisableMutexDeadlockDetection();

}  // namespace tollgate::common
