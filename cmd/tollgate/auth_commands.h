#pragma once

// `tollgate auth whoami` and `tollgate auth can-i VERB KIND [NAME] [-n NS]`.

#include <ostream>
#include <string>
#include <vector>

#include "clients/cpp/tollgate_client.h"

namespace tollgate::cli {

inline constexpr char kAuthSynopsis[] = "auth whoami | auth can-i VERB KIND [NAME] [-n NS | -A]";
inline constexpr char kAuthDetails[] =
    "whoami: the user, uid, groups and authentication method tollgated sees.\n"
    "can-i: prints yes (exit 0) or no and why (exit 1), like kubectl auth can-i.\n"
    "VERB: get, list, watch, submit, admit, preempt, finish, report, delete, apply.\n"
    "KIND: Workload, LocalQueue, ClusterQueue, Cohort, ResourceFlavor, WorkloadPriorityClass,\n"
    "PriorityClass, Namespace (lower case and plurals work too).\n";

// `positional` starts after "auth". `ns` is "" for every namespace. Returns the exit code
// (0 ok/yes, 1 failure/no, 2 usage), printing the usage problem to `err`.
int RunAuthCommand(const std::vector<std::string>& positional, const std::string& ns,
                   client::TollgateClient& client, std::ostream& out, std::ostream& err);

}  // namespace tollgate::cli
