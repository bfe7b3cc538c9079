#include "cmd/signals/stop_signals.h"

#include <pthread.h>

namespace tollgate::cmd {

sigset_t BlockStopSignals() {
  sigset_t stop_signals;
  sigemptyset(&stop_signals);
  sigaddset(&stop_signals, SIGTERM);
  sigaddset(&stop_signals, SIGINT);
  // Cannot fail with SIG_BLOCK and a valid set.
  pthread_sigmask(SIG_BLOCK, &stop_signals, nullptr);
  return stop_signals;
}

}  // namespace tollgate::cmd
