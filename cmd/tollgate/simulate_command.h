#pragma once

// `tollgate simulate`: replays a job trace through the real scheduling core on a virtual clock
// and reports wait times, utilization, borrowing, preemption cost and fairness
// (docs/simulation.md).

#include <ostream>
#include <string>
#include <vector>

namespace tollgate::cli {

// `args` are the words after "simulate". Returns the process exit code (0 ok, 1 failed, 2 usage).
int RunSimulateCommand(const std::vector<std::string>& args, std::ostream& out, std::ostream& err,
                       bool err_is_terminal);

// The command's help text.
const char* SimulateUsage();

}  // namespace tollgate::cli
