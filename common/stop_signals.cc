#include "common/stop_signals.h"

#include <pthread.h>

namespace tollgate::common {

sigset_t BlockStopSignals(std::initializer_list<int> also) {
  sigset_t stop_signals;
  sigemptyset(&stop_signals);
  sigaddset(&stop_signals, SIGTERM);
  sigaddset(&stop_signals, SIGINT);
  for (int signal_number : also) sigaddset(&stop_signals, signal_number);
  // Cannot fail with SIG_BLOCK and a valid set.
  pthread_sigmask(SIG_BLOCK, &stop_signals, nullptr);
  return stop_signals;
}

}  // namespace tollgate::common
