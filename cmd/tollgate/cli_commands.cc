// The command table of `tollgate` and the dispatch: which command, its flags (parsed by
// common/command_line), its help. The commands themselves live in the files commands.h lists.
#include "cmd/tollgate/cli_commands.h"

#include <unistd.h>

#include <algorithm>
#include <iostream>
#include <iterator>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "cmd/tollgate/auth_commands.h"
#include "cmd/tollgate/cli_commands_table.h"
#include "cmd/tollgate/client_config.h"
#include "cmd/tollgate/commands.h"
#include "cmd/tollgate/simulate_command.h"
#include "common/build_info.h"
#include "services/sim/scenario_runner.h"

namespace tollgate::cli {
namespace {

constexpr FlagSpec kOutputFlag{"output", 'o', "FORMAT",
                               "wide, yaml, json, name, jsonpath=TEMPLATE; or usage (one "
                               "ClusterQueue's or Cohort's quota and usage)"};
constexpr FlagSpec kSelectorFlag{"selector", 'l', "SELECTOR",
                                 "label selector: a=b, a!=b, a in (x,y), a notin (x), a, !a"};
constexpr FlagSpec kSortByFlag{"sort-by", 0, "JSONPATH",
                               "sort by a field of the manifest, e.g. .metadata.creationTimestamp"};
constexpr FlagSpec kNoHeadersFlag{"no-headers", 0, "", "print tables without the header row"};
constexpr FlagSpec kWatchFlag{"watch", 'w', "",
                              "after the list, print workload changes as they happen"};
constexpr FlagSpec kSinceRevisionFlag{
    "since-revision", 0, "REVISION",
    "with -w: resume after this revision (printed when a watch ends) instead of listing first"};
constexpr FlagSpec kQueueFilterFlag{"queue", 0, "LOCALQUEUE", "workloads of this LocalQueue"};
constexpr FlagSpec kClusterQueueFilterFlag{"clusterqueue", 0, "CLUSTERQUEUE",
                                           "workloads admitted by or queued for this ClusterQueue"};
constexpr FlagSpec kStatusFilterFlag{
    "status", 0, "STATE",
    "workloads in this state: pending, quotareserved, admitted, evicting, "
    "finished"};
constexpr FlagSpec kApplyDryRunFlag{"dry-run", 0, "STRATEGY",
                                    "none, client (print only) or server (validated, not stored)",
                                    "client"};
constexpr FlagSpec kAdmitDryRunFlag{"dry-run", 0, "", "only report what would happen"};
constexpr FlagSpec kReasonFlag{"reason", 0, "TEXT", "why, shown in the workload's events"};
constexpr FlagSpec kHoldFlag{"hold", 0, "", "also deactivate it, so it is not requeued"};
constexpr FlagSpec kDrainFlag{"drain", 0, "",
                              "HoldAndDrain: also evict what the queue has admitted"};
constexpr FlagSpec kPriorityFlag{"priority", 0, "N", "the new priority (required)"};
constexpr FlagSpec kOverwriteFlag{"overwrite", 0, "",
                                  "replace the annotation's value if it has one"};
constexpr FlagSpec kMessageFlag{"message", 0, "TEXT",
                                "how it ended, e.g. \"Job succeeded\" (shown in its events)"};

int RunAuth(Session& s, const ParsedFlags& args) {
  return RunAuthCommand(args.positional, args.Has("all-namespaces") ? "" : s.Namespace(),
                        s.client(), s.out(), s.err());
}

int RunScenario(Session& s, const ParsedFlags& args) {
  if (args.positional.empty() || args.positional[0] != "run") {
    return s.UsageError("the only subcommand is: scenario run PATH...");
  }
  std::vector<std::string> paths(args.positional.begin() + 1, args.positional.end());
  if (paths.empty()) return s.UsageError("name at least one file or folder");
  return sim::RunScenarioCommand(paths, s.out());
}

}  // namespace

const std::vector<Command>& Commands() {
  static const auto* commands = new std::vector<Command>{
      {"apply",
       "apply -f FILE [--dry-run=server]",
       "Create or update Kueue objects, submit Workloads and jobs.",
       "Takes multi-document YAML as Kueue users write it (kueue.x-k8s.io v1beta1 or v1beta2,\n"
       "Namespace, scheduling.k8s.io PriorityClass, kind: List), and the jobs `submit` takes.\n"
       "Configuration is applied all or nothing in one request; Workloads are then submitted\n"
       "one by one. Prints one line per object, as kubectl does: created, configured or\n"
       "unchanged. --dry-run=server has the server validate everything, Workloads included,\n"
       "without storing it; --dry-run=client only compares with what the server holds.\n",
       {kFileFlag, kManifestNamespaceFlag, kApplyDryRunFlag},
       RunApply,
       true},
      {"submit",
       "submit -f FILE [--dry-run=server]",
       "Submit Workloads, Jobs, RayJobs and PyTorchJobs.",
       "Takes Kueue Workload manifests, and batch/v1 Job, ray.io RayJob and kubeflow.org\n"
       "PyTorchJob manifests (or a kind: List of them), which become Workloads as tollgate-kube\n"
       "makes them: the queue from the kueue.x-k8s.io/queue-name label, the priority from\n"
       "kueue.x-k8s.io/priority-class, pod sets from the pod templates. Submitting the same\n"
       "workload again is harmless (unchanged); a different spec under an existing name is\n"
       "refused. --dry-run=server has the server check each workload as it would submit it\n"
       "(fields, LocalQueue, priority class, name) and store nothing.\n",
       {kFileFlag, kManifestNamespaceFlag, kApplyDryRunFlag},
       RunSubmit,
       true},
      {"diff",
       "diff -f FILE",
       "Show what apply would change, as a unified diff.",
       "The live objects and the manifests, without status and server-filled metadata, are\n"
       "compared with `diff -u -N`. Exit status 0: no differences; 1: differences; 2 or more:\n"
       "an error (as kubectl diff).\n",
       {kFileFlag, kManifestNamespaceFlag},
       RunDiff,
       true},
      {"admit",
       "admit NAME [--dry-run]",
       "Try to admit a workload now; show the outcome.",
       "Prints the flavors it is (or would be) admitted with, the workloads it would preempt,\n"
       "or why it waits.\n",
       {kNamespaceFlag, kAdmitDryRunFlag},
       RunAdmit,
       true},
      {"finish",
       "finish NAME",
       "Mark a workload finished and release its quota.",
       "",
       {kNamespaceFlag, kMessageFlag},
       RunFinish,
       true},
      {"preempt",
       "preempt NAME [--reason TEXT] [--hold]",
       "Evict an admitted workload.",
       "Prints what happened once the scheduling right after the eviction has run: requeued and\n"
       "waiting, or admitted again (and by preempting whom, into which flavors). --hold evicts\n"
       "and deactivates it in one step (`activate` requeues it).\n",
       {kNamespaceFlag, kReasonFlag, kHoldFlag},
       RunPreempt,
       true},
      {"stop",
       "stop clusterqueue|localqueue NAME [--drain]",
       "Stop a queue admitting (stopPolicy Hold, or HoldAndDrain with --drain).",
       "Changes only spec.stopPolicy, as kueuectl stop does. Hold keeps what is admitted running;\n"
       "--drain also evicts it. `resume` sets stopPolicy None.\n",
       {kNamespaceFlag, kDrainFlag},
       RunStop,
       true},
      {"resume",
       "resume clusterqueue|localqueue NAME",
       "Let a stopped queue admit again (stopPolicy None).",
       "",
       {kNamespaceFlag},
       RunResume,
       true},
      {"deactivate",
       "deactivate [workload] NAME",
       "Set a workload's spec.active to false (Kueue's stop workload).",
       "An admitted workload is evicted; a pending one leaves its queue. It stays Deactivated\n"
       "until `activate`.\n",
       {kNamespaceFlag},
       RunDeactivate,
       true},
      {"activate",
       "activate [workload] NAME",
       "Set a workload's spec.active to true and requeue it.",
       "Also clears a deactivation by waitForPodsReady's backoffLimitCount and its requeue "
       "count.\n",
       {kNamespaceFlag},
       RunActivate,
       true},
      {"reprioritize",
       "reprioritize [workload] NAME --priority N",
       "Change a workload's priority.",
       "A pending workload moves in its queue at once. An admitted one keeps running; the new\n"
       "priority decides whom it may be preempted by from then on.\n",
       {kNamespaceFlag, kPriorityFlag},
       RunReprioritize,
       true},
      {"annotate",
       "annotate [workload] NAME kueue.x-k8s.io/admission-gated-by=GATES|kueue.x-k8s.io/"
       "admission-gated-by-|kueue.x-k8s.io/priority-boost=N|kueue.x-k8s.io/priority-boost-",
       "Remove admission gates from a workload, or set its priority boost (Kueue's\n"
       "AdmissionGatedBy and PriorityBoost).",
       "GATES is the comma-separated list of the gates left; KEY- removes them all and makes\n"
       "the workload admissible. Gates can only be removed, never added (as Kueue's webhook).\n"
       "N is a signed 32-bit integer added to the workload's priority wherever the scheduler\n"
       "orders or compares by priority, with the PriorityBoost gate on (featureGates);\n"
       "priority-boost- removes it. A caller with a priority cap cannot boost a workload\n"
       "above it. Replacing a different value takes --overwrite, as in kubectl. Other\n"
       "annotations cannot be changed.\n",
       {kNamespaceFlag, kOverwriteFlag},
       RunAnnotate,
       true},
      {"check",
       "check set WORKLOAD --check NAME --state STATE | check activate|deactivate NAME",
       "Decide an admission check by hand, or set a check's Active condition.",
       "set: the state of one admission check on a workload that holds quota: Pending, Ready,\n"
       "Retry (evicts it; requeued after --requeue-after at the earliest) or Rejected\n"
       "(deactivates it). Once every check is Ready the workload is Admitted. The update expects\n"
       "the revision read just before (or --revision): a workload changed meanwhile is refused.\n"
       "--label, --annotation, --node-selector (POD_SET:KEY=VALUE) and --toleration\n"
       "(POD_SET:KEY[=VALUE][:EFFECT]) are pod set updates the check adds to the pods.\n"
       "activate, deactivate: the AdmissionCheck's Active condition; a ClusterQueue naming an\n"
       "inactive check admits nothing. Both are audited (docs/admission-checks.md).\n",
       {kNamespaceFlag,
        {"check", 0, "NAME", "the admission check (set)"},
        {"state", 0, "STATE", "Pending, Ready, Retry or Rejected (set)"},
        {"message", 0, "TEXT", "why, shown in describe workload (set); or the condition's message"},
        {"requeue-after", 0, "DURATION", "with Retry: the least delay before it is tried again"},
        {"revision", 0, "N", "the workload revision the decision was made on (default: current)"},
        {"label", 0, "POD_SET:KEY=VALUE", "a label for the pod set's pods (repeatable)"},
        {"annotation", 0, "POD_SET:KEY=VALUE", "an annotation for the pods (repeatable)"},
        {"node-selector", 0, "POD_SET:KEY=VALUE", "a node selector term (repeatable)"},
        {"toleration", 0, "POD_SET:KEY[=VALUE][:EFFECT]", "a toleration (repeatable)"},
        {"reason", 0, "TEXT", "the Active condition's reason (activate, deactivate)"}},
       RunCheck,
       true},
      {"checkpoint",
       "checkpoint NAME",
       "Record that a running workload saved its progress now.",
       "Among equal-priority victims, preemption takes the one that would lose the least work\n"
       "since its last checkpoint (or admission) first.\n",
       {kNamespaceFlag},
       RunCheckpoint,
       true},
      {"delete",
       "delete KIND NAME",
       "Delete a workload or a configuration object.",
       "KIND: workload, clusterqueue, localqueue, cohort, resourceflavor, workloadpriorityclass,\n"
       "priorityclass, namespace, role, rolebinding, queuegrant (plurals and short names such\n"
       "as cq, lq, rf, wl, rb, qg work too).\n"
       "-n applies to workloads and localqueues.\n",
       {kNamespaceFlag},
       RunDelete,
       true},
      {"get",
       "get TYPE [NAME] [-n NS | -A] [-o FORMAT] [-l SELECTOR] [-w]",
       "List objects as a table, or as YAML, JSON, names or JSONPath.",
       "TYPE: flavors, clusterqueues, cohorts, localqueues, workloads (also\n"
       "workloadpriorityclasses, priorityclasses, namespaces, admissionchecks, topologies,\n"
       "nodes, and the authorization policy: roles, rolebindings, queuegrants); TYPE/NAME\n"
       "works too. Namespaced\n"
       "types list the -n namespace (default \"default\"), or every namespace with -A.\n"
       "Workloads show their POSITION in the ClusterQueue and why they wait (REASON); filter\n"
       "them with --queue, --clusterqueue and --status. -o yaml and -o json print Kueue\n"
       "manifests that `apply -f` takes back. -w prints changes after the list; when the watch\n"
       "ends, the last revision goes to stderr for --since-revision.\n"
       "`get clusterqueue NAME -o usage` prints its quota and usage per flavor and resource;\n"
       "`get cohort NAME -o usage` the same for a cohort (implicit ones included);\n"
       "`get topology [NAME] -o usage` each topology flavor's domains with capacity, use and\n"
       "free capacity. `get nodes` lists the node inventory (-o wide: labels and taints).\n"
       "`get config` prints tollgated's effective scheduler configuration (-o yaml: a Kueue\n"
       "Configuration that `tollgated --config` reads back).\n",
       {kNamespaceFlag, kAllNamespacesFlag, kOutputFlag, kSelectorFlag, kSortByFlag, kNoHeadersFlag,
        kWatchFlag, kSinceRevisionFlag, kQueueFilterFlag, kClusterQueueFilterFlag,
        kStatusFilterFlag},
       RunGet,
       true},
      {"usage",
       "usage CLUSTERQUEUE",
       "Show a ClusterQueue's NOMINAL, USED, BORROWED quota.",
       "",
       {},
       RunUsage,
       true},
      {"describe",
       "describe workload|clusterqueue|cohort|localqueue|resourceflavor|node NAME",
       "Show details, queue position and events.",
       "workload: spec, state (and the last eviction of a requeued workload), admission and\n"
       "flavors, pending reason, position in its LocalQueue and ClusterQueue, who holds the\n"
       "cohort quota it waits for and which policy keeps it from reclaiming it, conditions and\n"
       "events.\n"
       "clusterqueue: spec summary, usage per flavor and resource, its cohort's quota holders\n"
       "and borrowers, what blocks its head workload, pending workloads in order.\n"
       "cohort: parent, members, usage, quota holders and borrowers (implicit cohorts too).\n"
       "localqueue: its ClusterQueue, usage, pending workloads. resourceflavor: node labels,\n"
       "taints, and the ClusterQueues and Cohorts with quota in it. node: labels, taints,\n"
       "status, flavors, allocatable and free capacity, the pods Tollgate placed there and\n"
       "the pods it did not place.\n"
       "Also role, rolebinding, queuegrant NAME: the policy object (docs/security.md).\n",
       {kNamespaceFlag},
       RunDescribe,
       true},
      {"watch",
       "watch workloads [-n NS | -A] [--since-revision N]",
       "Print workload changes as they happen.",
       "The current workloads first (ADDED), then one line per change until interrupted; the\n"
       "last revision goes to stderr at the end, for --since-revision. See also get -w.\n",
       {kNamespaceFlag, kAllNamespacesFlag, kSinceRevisionFlag},
       RunWatch,
       true},
      {"version",
       "version [--client]",
       "Print the client's and the server's version and build.",
       "git describe, build type, compiler and dependency versions of this binary, and the same\n"
       "from tollgated (unless --client).\n",
       {{"client", 0, "", "only the client's version"}},
       RunVersion,
       true},
      {"admin",
       "admin backup --to=DIR",
       "Back up the running tollgated's store (admin role).",
       "backup: tollgated writes a consistent checkpoint of its live RocksDB store into DIR, an\n"
       "absolute path on the server's machine that must not exist yet (its parent must). It\n"
       "holds every write acknowledged up to the revision printed. Restore it into a new data\n"
       "dir with `tollgated restore --from=DIR --data-dir=NEW` (docs/operations.md). With the\n"
       "etcd store, use `etcdctl snapshot save` instead.\n",
       {{"to", 0, "DIR", "the directory to create on the server's machine (required)"}},
       RunAdmin,
       true},
      {"auth",
       kAuthSynopsis,
       "Show who tollgated thinks you are, or whether you may do something.",
       kAuthDetails,
       {kNamespaceFlag, kAllNamespacesFlag},
       RunAuth,
       true},
      {"completion",
       "completion bash|zsh",
       "Print a shell completion script.",
       "bash: source <(tollgate completion bash)\n"
       "zsh:  source <(tollgate completion zsh)\n"
       "Commands, kinds and flags complete offline; object names are fetched from tollgated.\n",
       {},
       RunCompletion,
       false},
      {"__complete",
       "__complete WORD...",
       "Candidates for the word being completed (used by the completion scripts).",
       "",
       {kNamespaceFlag},
       RunComplete,
       false,
       /*hidden=*/true},
      {"scenario",
       "scenario run PATH...",
       "Run admission scenarios in process (no server).",
       "PATH: scenario files, or folders searched for *.yaml. Each runs on a temporary store and "
       "a\n"
       "simulated clock.\n",
       {},
       RunScenario,
       false},
  };
  return *commands;
}

const Command* FindCommand(absl::string_view name) {
  for (const Command& c : Commands()) {
    if (c.name == name) return &c;
  }
  return nullptr;
}

std::vector<FlagSpec> FlagsOf(const Command& command) {
  std::vector<FlagSpec> flags = command.flags;
  if (command.talks_to_server) {
    flags.push_back(kServerFlag);
    flags.push_back(kTimeoutFlag);
    flags.insert(flags.end(), std::begin(kConnectionFlags), std::end(kConnectionFlags));
  }
  flags.push_back(kHelpFlag);
  return flags;
}

std::string CommandHelp(const Command& command) {
  std::string text =
      absl::StrCat("usage: tollgate ", command.synopsis, "\n\n", command.summary, "\n");
  if (!command.details.empty()) absl::StrAppend(&text, "\n", command.details);
  absl::StrAppend(&text, "\n", common::FlagHelp(FlagsOf(command)));
  return text;
}

std::string MainUsage() {
  std::string text =
      "usage: tollgate COMMAND [ARGS] [--server HOST:PORT]\n\n"
      "The command-line client of tollgated, Tollgate's Kueue-compatible admission service.\n\n"
      "Commands:\n";
  size_t width = 0;
  for (const Command& c : Commands()) {
    if (!c.hidden) width = std::max(width, c.synopsis.size());
  }
  for (const Command& c : Commands()) {
    if (c.hidden) continue;
    absl::StrAppend(&text, "  ", c.synopsis, std::string(width + 3 - c.synopsis.size(), ' '),
                    c.summary, "\n");
  }
  // simulate parses its own flags (cmd/tollgate/simulate_command.h), so it is not in the table.
  constexpr absl::string_view kSimulateSynopsis = "simulate --trace=CSV --queues=FILE";
  absl::StrAppend(
      &text, "  ", kSimulateSynopsis,
      std::string(width + 3 > kSimulateSynopsis.size() ? width + 3 - kSimulateSynopsis.size() : 1,
                  ' '),
      "Replay a job trace through the scheduler (no server).\n");
  absl::StrAppend(&text,
                  "\nRun 'tollgate COMMAND --help' for a command's flags.\n"
                  "The server is --server, else $TOLLGATE_SERVER, else 127.0.0.1:50051.\n");
  return text;
}

namespace {

// Flags that may precede the command word and take the next argument as their value.
bool IsLeadingValueFlag(absl::string_view arg) {
  for (const FlagSpec& flag : kConnectionFlags) {
    if (arg == absl::StrCat("--", flag.name)) return true;
  }
  return arg == "--server" || arg == "--timeout" || arg == "-n" || arg == "--namespace" ||
         arg == "-f" || arg == "--filename" || arg == "-o" || arg == "--output";
}

}  // namespace

int RunCli(const std::vector<std::string>& args, const CliEnv& env) {
  // Flags may come before the command (`tollgate --server h:p get workloads`); the command is
  // the first word that is not a flag or a flag's value.
  size_t command_index = args.size();
  for (size_t i = 0; i < args.size(); ++i) {
    if (IsLeadingValueFlag(args[i])) {
      ++i;
      continue;
    }
    if (args[i].empty() || args[i][0] != '-') {
      command_index = i;
      break;
    }
    if (args[i] == "--help" || args[i] == "-h") {
      env.out << MainUsage();
      return kExitOk;
    }
    if (args[i] == "--version") {
      // As every binary answers it (help2man reads the program name from it).
      env.out << common::VersionLine("tollgate");
      return kExitOk;
    }
  }
  if (command_index == args.size()) {
    env.err << MainUsage();
    return kExitUsage;
  }
  const std::string& name = args[command_index];
  if (name == "help") {
    const Command* command =
        command_index + 1 < args.size() ? FindCommand(args[command_index + 1]) : nullptr;
    env.out << (command != nullptr ? CommandHelp(*command) : MainUsage());
    return kExitOk;
  }
  if (name == "simulate") {
    // Runs in process with flags of its own; it never talks to a server.
    const bool terminal = env.err.rdbuf() == std::cerr.rdbuf() && isatty(STDERR_FILENO) == 1;
    return RunSimulateCommand({args.begin() + command_index + 1, args.end()}, env.out, env.err,
                              terminal);
  }
  const Command* command = FindCommand(name);
  if (command == nullptr) {
    env.err << "tollgate: unknown command \"" << name << "\"\n\n" << MainUsage();
    return kExitUsage;
  }
  std::vector<std::string> rest(args.begin(), args.begin() + command_index);
  rest.insert(rest.end(), args.begin() + command_index + 1, args.end());
  if (command->run == RunComplete) {
    // The words being completed are data, not this invocation's flags; only the namespace and
    // server they name matter (for fetching object names).
    ParsedFlags raw;
    raw.positional = rest;
    for (size_t i = 0; i + 2 < rest.size(); ++i) {
      if (rest[i] == "-n" || rest[i] == "--namespace") raw.Add("namespace", rest[i + 1]);
      if (rest[i] == "--server") raw.Add("server", rest[i + 1]);
    }
    // Names come from the server the config file or environment name, with their credentials;
    // when they are unusable, completion just offers no names.
    absl::StatusOr<Connection> connection = ResolveConnection(ConnectionInputs{
        raw.Get("server"), env.server_env, "", env.config_env, "", "", "", "", "", env.token_env});
    Session session(env, command->name, command->synopsis, raw, client::kDefaultCallTimeout,
                    connection.ok() ? *std::move(connection) : Connection());
    return command->run(session, raw);
  }
  const std::vector<FlagSpec> specs = FlagsOf(*command);
  absl::StatusOr<ParsedFlags> parsed = common::ParseFlags(rest, specs);
  if (!parsed.ok()) {
    env.err << "tollgate " << command->name << ": " << parsed.status().message() << "\n\n"
            << CommandHelp(*command);
    return kExitUsage;
  }
  if (parsed->Has("help")) {
    env.out << CommandHelp(*command);
    return kExitOk;
  }
  absl::Duration timeout = client::kDefaultCallTimeout;
  if (parsed->Has("timeout")) {
    absl::StatusOr<absl::Duration> d =
        common::FlagArg{"timeout", parsed->Get("timeout"), true}.Duration(/*allow_zero=*/false);
    if (!d.ok()) {
      env.err << "tollgate " << command->name << ": " << d.status().message() << "\n";
      return kExitUsage;
    }
    timeout = *d;
  }
  Connection connection;
  if (command->talks_to_server) {
    absl::StatusOr<Connection> resolved = ResolveConnection(
        ConnectionInputs{parsed->Get("server"), env.server_env, parsed->Get("config"),
                         env.config_env, parsed->Get("context"),
                         parsed->Get("certificate-authority"), parsed->Get("client-certificate"),
                         parsed->Get("client-key"), parsed->Get("token"), env.token_env});
    if (resolved.ok()) {
      // Read the PEM files now so a missing one is reported before any call.
      absl::Status readable = CredentialsFor(*resolved).status();
      if (!readable.ok()) resolved = readable;
    }
    if (!resolved.ok()) {
      env.err << "tollgate: " << resolved.status().message() << "\n";
      return kExitFailure;
    }
    connection = *std::move(resolved);
  }
  Session session(env, command->name, command->synopsis, *parsed, timeout, std::move(connection));
  return command->run(session, *parsed);
}

}  // namespace tollgate::cli
