// Shell completion: `completion bash|zsh` prints a script; the script asks `tollgate __complete
// WORDS...` for the candidates of the last word, so the command table stays the only list of
// commands and flags, and object names come from tollgated.
#include <algorithm>
#include <set>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "cmd/tollgate/cli_commands_table.h"
#include "cmd/tollgate/cli_kinds.h"
#include "cmd/tollgate/cli_queries.h"
#include "cmd/tollgate/commands.h"
#include "services/engine/config_objects.h"

namespace tollgate::cli {
namespace {

constexpr char kBashScript[] =
    R"(# bash completion for tollgate; load with: source <(tollgate completion bash)
_tollgate() {
  local IFS=$'\n'
  COMPREPLY=($(tollgate __complete "${COMP_WORDS[@]:1:COMP_CWORD}" 2>/dev/null))
}
complete -o default -F _tollgate tollgate
)";

constexpr char kZshScript[] = R"(#compdef tollgate
# zsh completion for tollgate; load with: source <(tollgate completion zsh)
_tollgate() {
  local -a candidates
  candidates=("${(@f)$(tollgate __complete "${(@)words[2,CURRENT]}" 2>/dev/null)}")
  compadd -a candidates
}
if (( $+functions[compdef] )); then
  compdef _tollgate tollgate
fi
)";

// Commands whose first argument is a kind and second a name.
bool TakesKindAndName(absl::string_view command) {
  return command == "get" || command == "describe" || command == "delete";
}
// Commands whose first argument is a workload name.
bool TakesWorkloadName(absl::string_view command) {
  return command == "admit" || command == "finish" || command == "preempt" ||
         command == "checkpoint";
}

// Names of `kind` in the namespace of the words typed so far; empty when the server cannot be
// reached (completion must never print an error into the command line).
std::vector<std::string> ObjectNames(Session& s, const KindInfo& kind) {
  std::vector<std::string> names;
  if (IsWorkloadKind(&kind)) {
    v1::ListWorkloadsRequest request;
    request.set_namespace_(s.Namespace());
    absl::StatusOr<v1::ListWorkloadsResponse> response = s.client().ListWorkloads(request);
    if (!response.ok()) return names;
    for (const v1::Workload& wl : response->workloads()) names.push_back(wl.metadata().name());
  } else {
    absl::StatusOr<std::vector<v1::ConfigObject>> objects =
        ListConfig(s, kind.object_kind, kind.namespaced ? s.Namespace() : "", "");
    if (!objects.ok()) return names;
    for (const v1::ConfigObject& o : *objects) names.push_back(engine::MetadataOf(o).name());
  }
  std::sort(names.begin(), names.end());
  return names;
}

}  // namespace

int RunCompletion(Session& s, const ParsedFlags& args) {
  if (args.positional.size() != 1) return s.UsageError("name the shell: bash or zsh");
  if (args.positional[0] == "bash") {
    s.out() << kBashScript;
  } else if (args.positional[0] == "zsh") {
    s.out() << kZshScript;
  } else {
    return s.UsageError(
        absl::StrCat("unsupported shell \"", args.positional[0], "\" (supported: bash, zsh)"));
  }
  return kExitOk;
}

// The words after `tollgate`, the last one being completed (possibly empty). Prints one
// candidate per line that starts with it.
int RunComplete(Session& s, const ParsedFlags& args) {
  std::vector<std::string> words = args.positional;
  if (words.empty()) words.push_back("");
  const std::string current = words.back();
  words.pop_back();
  std::vector<std::string> candidates;
  // The previous word may be a flag that wants a value.
  const std::string previous = words.empty() ? "" : words.back();
  const Command* command = nullptr;
  std::vector<std::string> arguments;  // positional words after the command
  for (size_t i = 0; i < words.size(); ++i) {
    if (absl::StartsWith(words[i], "-")) {
      if ((words[i] == "-n" || words[i] == "--namespace" || words[i] == "-o" ||
           words[i] == "--output" || words[i] == "-f" || words[i] == "--filename" ||
           words[i] == "--server") &&
          i + 1 < words.size()) {
        ++i;
      }
      continue;
    }
    if (command == nullptr) {
      command = FindCommand(words[i]);
      if (command == nullptr) return kExitOk;
    } else {
      arguments.push_back(words[i]);
    }
  }
  if (previous == "-n" || previous == "--namespace") {
    candidates = ObjectNames(s, *FindKind("namespace"));
  } else if (previous == "-o" || previous == "--output") {
    candidates = {"wide", "yaml", "json", "name", "jsonpath=", "usage"};
  } else if (previous == "-f" || previous == "--filename") {
    return kExitOk;  // files: the shell's own completion (-o default)
  } else if (command == nullptr) {
    for (const Command& c : Commands()) {
      if (!c.hidden) candidates.emplace_back(c.name);
    }
  } else if (absl::StartsWith(current, "-")) {
    for (const FlagSpec& f : FlagsOf(*command)) candidates.push_back(absl::StrCat("--", f.name));
  } else if (TakesKindAndName(command->name) && arguments.empty()) {
    for (const KindInfo& k : Kinds()) candidates.push_back(std::string(k.aliases.front()));
    // The inventory is not a configuration kind; get and describe take it, delete does not.
    if (command->name != "delete") candidates.push_back("nodes");
  } else if (TakesKindAndName(command->name) && arguments.size() == 1) {
    if (const KindInfo* kind = FindKind(arguments[0])) candidates = ObjectNames(s, *kind);
  } else if (TakesWorkloadName(command->name) && arguments.empty()) {
    candidates = ObjectNames(s, *FindKind("workload"));
  } else if (command->name == "check" && arguments.empty()) {
    candidates = {"set", "activate", "deactivate"};
  } else if (command->name == "check" && arguments.size() == 1) {
    candidates = ObjectNames(s, *FindKind(arguments[0] == "set" ? "workload" : "admissioncheck"));
  } else if (command->name == "completion" && arguments.empty()) {
    candidates = {"bash", "zsh"};
  } else if ((command->name == "watch" || command->name == "usage") && arguments.empty()) {
    candidates = command->name == "watch" ? std::vector<std::string>{"workloads"}
                                          : ObjectNames(s, *FindKind("clusterqueue"));
  }
  for (const std::string& c : candidates) {
    if (absl::StartsWith(c, current)) s.out() << c << "\n";
  }
  return kExitOk;
}

}  // namespace tollgate::cli
