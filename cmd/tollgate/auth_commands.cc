#include "cmd/tollgate/auth_commands.h"

#include "absl/strings/ascii.h"
#include "absl/strings/str_join.h"
#include "absl/strings/strip.h"

namespace tollgate::cli {
namespace {

// The kind as policies spell it, from what users type (workloads, wl, clusterqueue, cq, ...).
std::string CanonicalKind(std::string kind) {
  kind = absl::AsciiStrToLower(kind);
  struct Alias {
    const char* name;
    const char* canonical;
  };
  static constexpr Alias kAliases[] = {
      {"workload", "Workload"},
      {"wl", "Workload"},
      {"localqueue", "LocalQueue"},
      {"lq", "LocalQueue"},
      {"clusterqueue", "ClusterQueue"},
      {"cq", "ClusterQueue"},
      {"cohort", "Cohort"},
      {"resourceflavor", "ResourceFlavor"},
      {"flavor", "ResourceFlavor"},
      {"rf", "ResourceFlavor"},
      {"workloadpriorityclass", "WorkloadPriorityClass"},
      {"priorityclass", "PriorityClass"},
      {"namespace", "Namespace"},
      {"ns", "Namespace"},
      {"role", "Role"},
      {"rolebinding", "RoleBinding"},
      {"queuegrant", "QueueGrant"},
      {"metric", "Metrics"},
  };
  for (const Alias& alias : kAliases) {
    if (kind == alias.name) return alias.canonical;
    if (kind == std::string(alias.name) + "s") return alias.canonical;
    if (kind == std::string(alias.name) + "es") return alias.canonical;
  }
  return kind;  // The server names what it does not know.
}

}  // namespace

int RunAuthCommand(const std::vector<std::string>& positional, const std::string& ns,
                   client::TollgateClient& client, std::ostream& out, std::ostream& err) {
  if (positional.empty()) {
    err << "tollgate auth: name a subcommand: whoami or can-i\n";
    return 2;
  }
  if (positional[0] == "whoami") {
    if (positional.size() != 1) {
      err << "tollgate auth whoami: takes no arguments\n";
      return 2;
    }
    absl::StatusOr<v1::WhoAmIResponse> me = client.WhoAmI(v1::WhoAmIRequest());
    if (!me.ok()) {
      err << "tollgate: " << me.status().message() << "\n";
      return 1;
    }
    out << "USER:   " << me->user() << "\n";
    if (!me->uid().empty()) out << "UID:    " << me->uid() << "\n";
    out << "GROUPS: " << absl::StrJoin(me->groups(), ",") << "\n";
    out << "METHOD: " << me->method() << "\n";
    return 0;
  }
  if (positional[0] == "can-i") {
    if (positional.size() < 3 || positional.size() > 4) {
      err << "tollgate auth can-i: want VERB KIND [NAME]\n";
      return 2;
    }
    v1::CanIRequest request;
    request.set_verb(absl::AsciiStrToLower(positional[1]));
    request.set_kind(CanonicalKind(positional[2]));
    request.set_namespace_(ns);
    if (positional.size() == 4) request.set_name(positional[3]);
    absl::StatusOr<v1::CanIResponse> answer = client.CanI(request);
    if (!answer.ok()) {
      err << "tollgate: " << answer.status().message() << "\n";
      return 1;
    }
    if (answer->allowed()) {
      out << "yes\n";
      return 0;
    }
    out << "no - " << answer->reason() << "\n";
    return 1;
  }
  err << "tollgate auth: unknown subcommand \"" << positional[0] << "\" (want whoami or can-i)\n";
  return 2;
}

}  // namespace tollgate::cli
