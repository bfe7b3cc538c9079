#pragma once

// How the daemons (tollgated, tollgate-kube) learn they must stop: SIGTERM and SIGINT are
// blocked in every thread and taken by sigwait in one, so no work happens in a signal handler.

#include <signal.h>

#include <initializer_list>

namespace tollgate::common {

// Blocks SIGTERM and SIGINT, plus `also` (e.g. SIGHUP for a reload), in the calling thread and
// returns that set for sigwait. Call it first in main, before any thread exists: threads
// inherit the mask, so the signals reach the process only through sigwait on the returned set.
sigset_t BlockStopSignals(std::initializer_list<int> also = {});

}  // namespace tollgate::common
