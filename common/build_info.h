#pragma once

// The build a binary came from, for `version` and tollgated's InfoService.

#include <string>
#include <utility>
#include <vector>

#include "absl/strings/string_view.h"

namespace tollgate::common {

struct BuildInfo {
  // The one version string: PROJECT_VERSION plus `git describe` as build metadata
  // ("0.1.0+11f9803-dirty"); see write_build_info.cmake.
  std::string version;
  // CMAKE_BUILD_TYPE, e.g. RelWithDebInfo.
  std::string build_type;
  // e.g. "GNU 12.2.0".
  std::string compiler;
  // Library name and version, in a fixed order.
  std::vector<std::pair<std::string, std::string>> dependencies;
};

// This binary's build (generated at build time).
const BuildInfo& Current();

// "VERSION (BUILD_TYPE, COMPILER; gRPC 1.51.1, Protobuf 3.21.12, ...)".
std::string Describe(const BuildInfo& info);

// What `PROGRAM version` and `PROGRAM --version` print: "PROGRAM " + Describe(Current()).
std::string VersionLine(absl::string_view program);

// True when the command line asks only for the version: `PROGRAM version` or `--version`.
bool AsksForVersion(int argc, char** argv);

}  // namespace tollgate::common
