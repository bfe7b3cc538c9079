#pragma once

// The handlers of `tollgate`'s commands, one file per responsibility:
//   get_command.cc        get (tables, -o, selectors, filters, -w), usage, watch
//   describe_command.cc   describe workload|clusterqueue, and the dispatch of describe
//   describe_config_command.cc  describe cohort|localqueue|resourceflavor
//   apply_command.cc      apply, submit, diff
//   workload_commands.cc  admit, finish, preempt, checkpoint, delete
//   check_commands.cc     check set|activate|deactivate
//   node_commands.cc      get nodes, describe node, get topology -o usage (InventoryService)
//   version_command.cc    version
//   admin_command.cc      admin backup
//   config_command.cc     get config
//   completion_command.cc completion, __complete
// cli_commands.cc holds the command table and the dispatch.

#include "cmd/tollgate/cli_session.h"

namespace tollgate::cli {

int RunGet(Session& s, const ParsedFlags& args);
int RunUsage(Session& s, const ParsedFlags& args);
int RunWatch(Session& s, const ParsedFlags& args);
int RunDescribe(Session& s, const ParsedFlags& args);
int RunApply(Session& s, const ParsedFlags& args);
int RunSubmit(Session& s, const ParsedFlags& args);
int RunDiff(Session& s, const ParsedFlags& args);
int RunAdmit(Session& s, const ParsedFlags& args);
int RunFinish(Session& s, const ParsedFlags& args);
int RunPreempt(Session& s, const ParsedFlags& args);
int RunCheckpoint(Session& s, const ParsedFlags& args);
int RunDelete(Session& s, const ParsedFlags& args);
// control_commands.cc: stop/resume of queues, deactivate/activate, reprioritize and annotate
// (admission gates) of workloads.
int RunStop(Session& s, const ParsedFlags& args);
int RunResume(Session& s, const ParsedFlags& args);
int RunDeactivate(Session& s, const ParsedFlags& args);
int RunActivate(Session& s, const ParsedFlags& args);
int RunReprioritize(Session& s, const ParsedFlags& args);
int RunAnnotate(Session& s, const ParsedFlags& args);
// check_commands.cc: check set|activate|deactivate (AdmissionCheckService).
int RunCheck(Session& s, const ParsedFlags& args);
int RunVersion(Session& s, const ParsedFlags& args);
int RunAdmin(Session& s, const ParsedFlags& args);
// `get config`: called by RunGet.
int RunGetConfig(Session& s, const ParsedFlags& args);
// node_commands.cc, called by RunGet and RunDescribe: the node inventory. `name` empty: every
// node; `topology` empty: every topology flavor.
int RunGetNodes(Session& s, const ParsedFlags& args, absl::string_view name);
int DescribeNode(Session& s, absl::string_view name);
int PrintTopologyUsage(Session& s, absl::string_view topology);
int RunCompletion(Session& s, const ParsedFlags& args);
int RunComplete(Session& s, const ParsedFlags& args);

}  // namespace tollgate::cli
