#pragma once

// Runs the real `tollgate` CLI from end-to-end tests. A target that includes this defines
// TOLLGATE_CLI_PATH (the built binary).

#include <sys/wait.h>

#include <cstdio>
#include <string>

#include "absl/strings/str_cat.h"

namespace tollgate::e2e {

// Runs `tollgate ARGS` through the shell; returns its exit code (-1 when it did not exit), with
// stdout and stderr in `out`.
inline int RunCli(const std::string& args, std::string& out) {
  const std::string command = absl::StrCat(TOLLGATE_CLI_PATH, " ", args, " 2>&1");
  FILE* pipe = popen(command.c_str(), "r");
  if (pipe == nullptr) return -1;
  char buffer[4096];
  out.clear();
  for (size_t n; (n = fread(buffer, 1, sizeof(buffer), pipe)) > 0;) out.append(buffer, n);
  const int status = pclose(pipe);
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

}  // namespace tollgate::e2e
