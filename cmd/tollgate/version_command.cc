// version: this binary's build, then tollgated's (InfoService).
#include <string>

#include "absl/strings/str_cat.h"
#include "cmd/tollgate/commands.h"
#include "common/build_info.h"

namespace tollgate::cli {

int RunVersion(Session& s, const ParsedFlags& args) {
  if (!args.positional.empty()) {
    return s.UsageError(absl::StrCat("unexpected argument ", args.positional[0]));
  }
  s.out() << "Client Version: " << common::Describe(common::Current()) << "\n";
  if (args.Has("client")) return kExitOk;
  absl::StatusOr<v1::BuildInfo> server = s.client().GetBuildInfo();
  if (!server.ok()) return s.Fail(server.status());
  common::BuildInfo info{server->version(), server->build_type(), server->compiler(), {}};
  // The server's map has no order; show the libraries in the client's order, then any other.
  for (const auto& [name, version] : common::Current().dependencies) {
    auto it = server->dependencies().find(name);
    if (it != server->dependencies().end()) info.dependencies.emplace_back(name, it->second);
  }
  for (const auto& [name, version] : server->dependencies()) {
    bool known = false;
    for (const auto& dep : info.dependencies) known = known || dep.first == name;
    if (!known) info.dependencies.emplace_back(name, version);
  }
  s.out() << "Server Version: " << common::Describe(info) << "\n";
  return kExitOk;
}

}  // namespace tollgate::cli
