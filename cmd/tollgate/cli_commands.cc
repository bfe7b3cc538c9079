#include "cmd/tollgate/cli_commands.h"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <sstream>
#include <string>
#include <system_error>
#include <utility>
#include <variant>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "cmd/tollgate/scenario_runner.h"
#include "cmd/tollgate/table_printer.h"
#include "core/object_kind.h"
#include "core/quantity.h"
#include "google/protobuf/util/message_differencer.h"
#include "services/config_objects.h"
#include "services/manifest/manifest_parser.h"

namespace tollgate::cli {
namespace {

// ---------------------------------------------------------------------------------------------
// Command-line parsing.

struct FlagDef {
  absl::string_view name;  // long name, without the dashes
  char short_name;         // 0 when there is none
  bool takes_value;
  absl::string_view value_name;
  absl::string_view help;
};

constexpr FlagDef kServerFlag{"server", 0, true, "HOST:PORT",
                              "tollgated to talk to (default $TOLLGATE_SERVER, else "
                              "127.0.0.1:50051)"};
constexpr FlagDef kTimeoutFlag{"timeout", 0, true, "DURATION",
                               "deadline of each call to tollgated, e.g. 30s (default 10s)"};
constexpr FlagDef kHelpFlag{"help", 'h', false, "", "show this help"};
constexpr FlagDef kNamespaceFlag{"namespace", 'n', true, "NAMESPACE",
                                 "namespace of the object (default \"default\")"};
constexpr FlagDef kManifestNamespaceFlag{"namespace", 'n', true, "NAMESPACE",
                                         "namespace for Workloads and LocalQueues that name none"};
constexpr FlagDef kAllNamespacesFlag{"all-namespaces", 'A', false, "", "list every namespace"};
constexpr FlagDef kFileFlag{"filename", 'f', true, "FILE",
                            "YAML manifests: a file, a folder of *.yaml, or - for stdin "
                            "(repeatable)"};
constexpr FlagDef kOutputFlag{"output", 'o', true, "FORMAT",
                              "usage: a ClusterQueue's quota and usage per flavor and resource"};
constexpr FlagDef kReasonFlag{"reason", 0, true, "TEXT", "why, shown in the workload's events"};
constexpr FlagDef kMessageFlag{"message", 0, true, "TEXT",
                               "how it ended, e.g. \"Job succeeded\" (shown in its events)"};
constexpr FlagDef kDryRunFlag{"dry-run", 0, false, "", "only report what would happen"};

class ParsedArgs {
 public:
  std::vector<std::string> positional;

  bool Has(absl::string_view flag) const { return values_.count(std::string(flag)) > 0; }
  // The last value given for `flag`, or `fallback`.
  std::string Get(absl::string_view flag, absl::string_view fallback = "") const {
    auto it = values_.find(std::string(flag));
    return it == values_.end() ? std::string(fallback) : it->second.back();
  }
  std::vector<std::string> All(absl::string_view flag) const {
    auto it = values_.find(std::string(flag));
    return it == values_.end() ? std::vector<std::string>() : it->second;
  }
  void Add(absl::string_view flag, std::string value) {
    values_[std::string(flag)].push_back(std::move(value));
  }

 private:
  std::map<std::string, std::vector<std::string>> values_;
};

const FlagDef* FindFlag(const std::vector<FlagDef>& defs, absl::string_view long_name,
                        char short_name) {
  for (const FlagDef& def : defs) {
    if ((!long_name.empty() && def.name == long_name) ||
        (short_name != 0 && def.short_name == short_name)) {
      return &def;
    }
  }
  return nullptr;
}

// kubectl's (pflag's) conventions: --name value, --name=value, -n value, -nvalue, -A, and `--`
// ending the flags. A lone "-" is an argument (it means stdin to -f).
absl::StatusOr<ParsedArgs> ParseArgs(const std::vector<std::string>& args,
                                     const std::vector<FlagDef>& defs) {
  ParsedArgs parsed;
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string& arg = args[i];
    if (arg == "--") {
      parsed.positional.insert(parsed.positional.end(), args.begin() + i + 1, args.end());
      break;
    }
    if (arg.size() < 2 || arg[0] != '-') {
      parsed.positional.push_back(arg);
      continue;
    }
    const bool is_long = absl::StartsWith(arg, "--");
    std::string name;
    std::optional<std::string> inline_value;
    const FlagDef* def = nullptr;
    if (is_long) {
      name = arg.substr(2);
      if (size_t eq = name.find('='); eq != std::string::npos) {
        inline_value = name.substr(eq + 1);
        name.resize(eq);
      }
      def = FindFlag(defs, name, 0);
    } else {
      def = FindFlag(defs, "", arg[1]);
      if (arg.size() > 2) inline_value = arg.substr(arg[2] == '=' ? 3 : 2);
    }
    if (def == nullptr) return absl::InvalidArgumentError(absl::StrCat("unknown flag ", arg));
    if (!def->takes_value) {
      if (inline_value.has_value() && *inline_value != "true") {
        if (*inline_value == "false") continue;
        return absl::InvalidArgumentError(
            absl::StrCat("flag --", def->name, " takes no value, got ", arg));
      }
      parsed.Add(def->name, "true");
      continue;
    }
    if (inline_value.has_value()) {
      parsed.Add(def->name, *inline_value);
    } else if (i + 1 < args.size()) {
      parsed.Add(def->name, args[++i]);
    } else {
      return absl::InvalidArgumentError(
          absl::StrCat("flag ", arg, " needs a value (", def->value_name, ")"));
    }
  }
  return parsed;
}

// ---------------------------------------------------------------------------------------------
// Kinds, as users name them on the command line and as kubectl prints them.

// Derived from the kinds table (core/object_kind.h).
struct KindInfo {
  std::string name;            // singular, lower case: what `delete KIND` takes
  absl::string_view kind;      // the manifest kind
  std::string resource;        // kubectl's "resource.group" spelling in apply/delete output
  v1::ObjectKind object_kind;  // OBJECT_KIND_UNSPECIFIED for Workload (not a config object)
  bool namespaced;
  std::vector<absl::string_view> aliases;
};

const std::vector<KindInfo>& Kinds() {
  static const auto* kinds = [] {
    auto* out = new std::vector<KindInfo>;
    for (const core::KindTraits& t : core::AllKinds()) {
      KindInfo info{absl::AsciiStrToLower(t.name), t.name,       "",
                    v1::OBJECT_KIND_UNSPECIFIED,   t.namespaced, {t.plural}};
      info.resource = t.group.empty() ? info.name : absl::StrCat(info.name, ".", t.group);
      if (t.config_kind.has_value()) info.object_kind = services::ToProtoKind(*t.config_kind);
      info.aliases.insert(info.aliases.end(), t.short_names.begin(), t.short_names.end());
      out->push_back(std::move(info));
    }
    return out;
  }();
  return *kinds;
}

const KindInfo* FindKind(absl::string_view word) {
  const std::string lower = absl::AsciiStrToLower(word);
  for (const KindInfo& info : Kinds()) {
    if (info.name == lower || absl::AsciiStrToLower(info.kind) == lower ||
        std::find(info.aliases.begin(), info.aliases.end(), lower) != info.aliases.end()) {
      return &info;
    }
  }
  // kubectl also takes the fully qualified spelling, e.g. clusterqueues.kueue.x-k8s.io.
  if (size_t dot = lower.find('.'); dot != std::string::npos) {
    const KindInfo* info = FindKind(lower.substr(0, dot));
    if (info != nullptr && absl::EndsWith(info->resource, lower.substr(dot))) return info;
  }
  return nullptr;
}

const KindInfo& KindByObjectKind(v1::ObjectKind kind) {
  for (const KindInfo& info : Kinds()) {
    if (info.object_kind == kind) return info;
  }
  return Kinds().front();  // unreachable for the kinds ConfigObject can hold
}

v1::ObjectRef RefOf(const v1::ConfigObject& object) {
  v1::ObjectRef ref;
  ref.set_kind(services::KindOf(object));
  if (KindByObjectKind(ref.kind()).namespaced) {
    ref.set_namespace_(services::MetadataOf(object).namespace_().empty()
                           ? "default"
                           : services::MetadataOf(object).namespace_());
  }
  ref.set_name(services::MetadataOf(object).name());
  return ref;
}

// What the user wrote, without what the server fills in, so an unchanged manifest compares equal
// to its stored object.
v1::ConfigObject UserIntent(v1::ConfigObject object) {
  if (object.kind_case() != v1::ConfigObject::KIND_NOT_SET) {
    v1::ObjectMeta* meta = services::MutableMetadataOf(object);
    meta->clear_uid();
    meta->clear_resource_version();
    meta->clear_generation();
    meta->clear_creation_timestamp();
    if (!KindByObjectKind(services::KindOf(object)).namespaced) meta->clear_namespace_();
  }
  services::ClearStatus(object);
  return object;
}

// ---------------------------------------------------------------------------------------------
// The commands.

class Session;
using Handler = int (*)(Session&, const ParsedArgs&);

struct Command {
  absl::string_view name;
  absl::string_view synopsis;  // after "tollgate "
  absl::string_view summary;
  absl::string_view details;
  std::vector<FlagDef> flags;
  Handler run;
};

const std::vector<Command>& Commands();

std::string CommandHelp(const Command& command) {
  std::string text =
      absl::StrCat("usage: tollgate ", command.synopsis, "\n\n", command.summary, "\n");
  if (!command.details.empty()) absl::StrAppend(&text, "\n", command.details);
  absl::StrAppend(&text, "\nFlags:\n");
  std::vector<FlagDef> flags = command.flags;
  flags.push_back(kServerFlag);
  flags.push_back(kTimeoutFlag);
  flags.push_back(kHelpFlag);
  std::vector<std::pair<std::string, std::string>> rows;
  size_t width = 0;
  for (const FlagDef& flag : flags) {
    std::string spelling =
        flag.short_name != 0 ? absl::StrCat("-", std::string(1, flag.short_name), ", --", flag.name)
                             : absl::StrCat("    --", flag.name);
    if (flag.takes_value) absl::StrAppend(&spelling, " ", flag.value_name);
    width = std::max(width, spelling.size());
    rows.emplace_back(std::move(spelling), std::string(flag.help));
  }
  for (const auto& [spelling, help] : rows) {
    absl::StrAppend(&text, "  ", spelling, std::string(width + 3 - spelling.size(), ' '), help,
                    "\n");
  }
  return text;
}

std::string MainUsage() {
  std::string text =
      "usage: tollgate COMMAND [ARGS] [--server HOST:PORT]\n\n"
      "The command-line client of tollgated, Tollgate's Kueue-compatible admission service.\n\n"
      "Commands:\n";
  size_t width = 0;
  for (const Command& c : Commands()) width = std::max(width, c.synopsis.size());
  for (const Command& c : Commands()) {
    absl::StrAppend(&text, "  ", c.synopsis, std::string(width + 3 - c.synopsis.size(), ' '),
                    c.summary, "\n");
  }
  absl::StrAppend(&text,
                  "\nRun 'tollgate COMMAND --help' for a command's flags.\n"
                  "The server is --server, else $TOLLGATE_SERVER, else 127.0.0.1:50051.\n");
  return text;
}

// One command invocation: its streams, parsed flags and (lazily) its connection.
class Session {
 public:
  Session(const CliEnv& env, const Command& command, const ParsedArgs& args, absl::Duration timeout)
      : env_(env), command_(command), args_(args), timeout_(timeout) {}

  std::ostream& out() { return env_.out; }
  std::ostream& err() { return env_.err; }
  std::istream& in() { return env_.in; }
  absl::Time now() const { return env_.clock.Now(); }
  WatchCanceller* watch_canceller() const { return env_.watch_canceller; }

  CliClient& client() {
    if (client_ == nullptr) {
      client_ = std::make_unique<CliClient>(ResolveServer(args_.Get("server"), env_.server_env),
                                            timeout_);
    }
    return *client_;
  }

  // The namespace for namespaced objects: -n, else "default".
  std::string Namespace() const { return args_.Get("namespace", "default"); }

  int Fail(const absl::Status& status) {
    env_.err << "tollgate: " << status.message() << "\n";
    return kExitFailure;
  }
  int UsageError(absl::string_view message) {
    env_.err << "tollgate " << command_.name << ": " << message << "\nusage: tollgate "
             << command_.synopsis << "\nRun 'tollgate " << command_.name << " --help' for more.\n";
    return kExitUsage;
  }

 private:
  const CliEnv& env_;
  const Command& command_;
  const ParsedArgs& args_;
  const absl::Duration timeout_;
  std::unique_ptr<CliClient> client_;
};

// --- Shared formatting ------------------------------------------------------------------------

std::string StateName(v1::WorkloadState state) {
  switch (state) {
    case v1::WORKLOAD_STATE_PENDING:
      return "Pending";
    case v1::WORKLOAD_STATE_ADMITTED:
      return "Admitted";
    case v1::WORKLOAD_STATE_EVICTING:
      return "Evicting";
    case v1::WORKLOAD_STATE_FINISHED:
      return "Finished";
    default:
      return "Unknown";
  }
}

std::string OrNone(absl::string_view s) { return s.empty() ? std::string(kNone) : std::string(s); }

std::string WorkloadKey(const v1::ObjectMeta& meta) {
  return absl::StrCat(meta.namespace_().empty() ? "default" : meta.namespace_(), "/", meta.name());
}

std::string QueueOf(const v1::Workload& wl) {
  // An empty queue name means the namespace's LocalQueue named "default".
  return wl.spec().queue_name().empty() ? "default" : wl.spec().queue_name();
}

// A quantity as the server formats usage, so NOMINAL and USED read alike ("128Gi", "32").
std::string CanonicalQuantity(absl::string_view resource, absl::string_view text) {
  absl::StatusOr<core::Quantity> q = core::Quantity::Parse(text);
  if (!q.ok()) return std::string(text);
  return core::FormatResourceScalar(resource, core::ResourceScalar(resource, *q));
}

std::string FormatRequests(const google::protobuf::Map<std::string, std::string>& requests) {
  std::map<std::string, std::string> sorted(requests.begin(), requests.end());
  for (auto& [resource, amount] : sorted) amount = CanonicalQuantity(resource, amount);
  return JoinKeyValues(sorted, ", ");
}

// "default-flavor (cpu, memory)" per flavor, flavors in name order.
std::string FormatFlavors(const v1::PodSetAssignment& assignment) {
  std::map<std::string, std::vector<std::string>> by_flavor;
  std::map<std::string, std::string> sorted(assignment.flavors().begin(),
                                            assignment.flavors().end());
  for (const auto& [resource, flavor] : sorted) by_flavor[flavor].push_back(resource);
  std::vector<std::string> parts;
  for (const auto& [flavor, resources] : by_flavor) {
    parts.push_back(absl::StrCat(flavor, " (", absl::StrJoin(resources, ", "), ")"));
  }
  return parts.empty() ? std::string(kNone) : absl::StrJoin(parts, "; ");
}

std::string FormatTaints(const v1::ResourceFlavorSpec& spec) {
  std::vector<std::string> taints;
  for (const v1::Taint& t : spec.node_taints()) {
    taints.push_back(
        absl::StrCat(t.key(), t.value().empty() ? "" : "=", t.value(), ":", t.effect()));
  }
  return taints.empty() ? std::string(kNone) : absl::StrJoin(taints, ",");
}

std::string ActiveOf(const v1::ClusterQueue& cq) {
  for (const v1::Condition& c : cq.status().conditions()) {
    if (c.type() == "Active") return c.status();
  }
  return "Unknown";
}

std::string Plural(int64_t n, absl::string_view word) {
  return absl::StrCat(n, " ", word, n == 1 ? "" : "s");
}

// The usage table of a ClusterQueue: one row per flavor and resource it has quota for, then any
// usage left over in flavors or resources the spec no longer names.
TablePrinter UsageTable(const v1::ClusterQueue& cq) {
  std::map<std::pair<std::string, std::string>, const v1::ResourceUsage*> usage;
  for (const v1::FlavorUsage& flavor : cq.status().flavors_usage()) {
    for (const v1::ResourceUsage& r : flavor.resources()) usage[{flavor.name(), r.name()}] = &r;
  }
  TablePrinter table({"FLAVOR", "RESOURCE", "NOMINAL", "USED", "BORROWED"});
  std::set<std::pair<std::string, std::string>> shown;
  for (const v1::ResourceGroup& group : cq.spec().resource_groups()) {
    for (const v1::FlavorQuotas& flavor : group.flavors()) {
      for (const v1::ResourceQuota& quota : flavor.resources()) {
        const std::pair<std::string, std::string> key{flavor.name(), quota.name()};
        shown.insert(key);
        auto it = usage.find(key);
        table.AddRow({flavor.name(), quota.name(),
                      CanonicalQuantity(quota.name(), quota.nominal_quota()),
                      it == usage.end() ? "0" : it->second->total(),
                      it == usage.end() ? "0" : it->second->borrowed()});
      }
    }
  }
  for (const auto& [key, r] : usage) {
    if (shown.count(key) == 0)
      table.AddRow({key.first, key.second, "0", r->total(), r->borrowed()});
  }
  return table;
}

void PrintTableOrNothing(Session& s, const TablePrinter& table, absl::string_view what_none) {
  if (table.row_count() == 0) {
    // kubectl says so on stderr, keeping stdout empty for scripts.
    s.err() << what_none << "\n";
    return;
  }
  table.Print(s.out());
}

std::string NoResources(const ParsedArgs& args, bool namespaced, const Session& s) {
  if (!namespaced || args.Has("all-namespaces")) return "No resources found";
  return absl::StrCat("No resources found in ", s.Namespace(), " namespace.");
}

// --- Reading manifests ------------------------------------------------------------------------

absl::StatusOr<std::string> ReadFileText(const std::string& path) {
  std::ifstream file(path, std::ios::binary);
  if (!file) {
    std::error_code ec(errno, std::generic_category());
    return absl::NotFoundError(absl::StrCat("cannot read ", path, ": ", ec.message()));
  }
  std::ostringstream text;
  text << file.rdbuf();
  return text.str();
}

// Parses every manifest named by -f, in order: "-" is stdin, a folder means its *.yaml, *.yml
// and *.json files in name order (as `kubectl apply -f DIR`).
absl::StatusOr<std::vector<manifest::Manifest>> ReadManifests(
    Session& s, const std::vector<std::string>& paths) {
  std::vector<manifest::Manifest> manifests;
  auto parse = [&](absl::string_view text, absl::string_view source) -> absl::Status {
    absl::StatusOr<std::vector<manifest::Manifest>> parsed = manifest::ParseManifests(text, source);
    if (!parsed.ok()) return parsed.status();
    std::move(parsed->begin(), parsed->end(), std::back_inserter(manifests));
    return absl::OkStatus();
  };
  for (const std::string& path : paths) {
    if (path == "-") {
      std::string text((std::istreambuf_iterator<char>(s.in())), std::istreambuf_iterator<char>());
      if (absl::Status st = parse(text, "<stdin>"); !st.ok()) return st;
      continue;
    }
    std::error_code ec;
    std::vector<std::string> files;
    if (std::filesystem::is_directory(path, ec)) {
      for (const auto& entry : std::filesystem::directory_iterator(path, ec)) {
        const std::string ext = entry.path().extension().string();
        if (entry.is_regular_file() && (ext == ".yaml" || ext == ".yml" || ext == ".json")) {
          files.push_back(entry.path().string());
        }
      }
      if (ec) return absl::NotFoundError(absl::StrCat("cannot read ", path, ": ", ec.message()));
      std::sort(files.begin(), files.end());
    } else {
      files.push_back(path);
    }
    for (const std::string& file : files) {
      absl::StatusOr<std::string> text = ReadFileText(file);
      if (!text.ok()) return text.status();
      if (absl::Status st = parse(*text, file); !st.ok()) return st;
    }
  }
  return manifests;
}

// `-n NS` on apply/submit, as kubectl: the namespace of namespaced manifests that name none. The
// parser already filled in "default" for those, so an explicit "default" is taken over too.
void UseNamespace(const ParsedArgs& args, std::vector<manifest::Manifest>& manifests) {
  if (!args.Has("namespace")) return;
  const std::string ns = args.Get("namespace");
  for (manifest::Manifest& m : manifests) {
    v1::ObjectMeta* meta = nullptr;
    if (auto* wl = std::get_if<v1::Workload>(&m.object)) {
      meta = wl->mutable_metadata();
    } else if (auto* object = std::get_if<v1::ConfigObject>(&m.object); object->has_local_queue()) {
      meta = object->mutable_local_queue()->mutable_metadata();
    }
    if (meta != nullptr && (meta->namespace_().empty() || meta->namespace_() == "default")) {
      meta->set_namespace_(ns);
    }
  }
}

// Submits workloads one by one, as kubectl applies objects: each gets its line, a refusal does
// not stop the rest. Returns false when any was refused.
bool SubmitWorkloads(Session& s, const std::vector<v1::Workload>& workloads) {
  bool ok = true;
  for (const v1::Workload& wl : workloads) {
    v1::SubmitRequest request;
    *request.mutable_workload() = wl;
    absl::StatusOr<v1::SubmitResponse> response = s.client().Submit(request);
    if (!response.ok()) {
      s.Fail(response.status());
      ok = false;
      // Unreachable now means unreachable for the rest too.
      if (absl::IsUnavailable(response.status())) return false;
      continue;
    }
    s.out() << "workload.kueue.x-k8s.io/" << wl.metadata().name() << " "
            << (response->created() ? "created" : "unchanged") << "\n";
  }
  return ok;
}

// --- apply / submit ---------------------------------------------------------------------------

int RunApply(Session& s, const ParsedArgs& args) {
  if (!args.Has("filename")) return s.UsageError("name the manifests with -f FILE (or -f -)");
  if (!args.positional.empty()) {
    return s.UsageError(absl::StrCat("unexpected argument ", args.positional[0]));
  }
  absl::StatusOr<std::vector<manifest::Manifest>> manifests =
      ReadManifests(s, args.All("filename"));
  if (!manifests.ok()) return s.Fail(manifests.status());
  UseNamespace(args, *manifests);

  std::vector<v1::Workload> workloads;
  v1::ApplyRequest request;
  std::vector<std::string> lines;
  for (const manifest::Manifest& m : *manifests) {
    if (const auto* wl = std::get_if<v1::Workload>(&m.object)) {
      workloads.push_back(*wl);
      continue;
    }
    const auto& object = std::get<v1::ConfigObject>(m.object);
    const KindInfo& kind = KindByObjectKind(services::KindOf(object));
    // Like kubectl: created, configured, or unchanged (and then not sent at all).
    v1::GetObjectRequest get;
    *get.mutable_ref() = RefOf(object);
    absl::StatusOr<v1::ConfigObject> existing = s.client().GetObject(get);
    std::string verb;
    if (existing.ok()) {
      verb = google::protobuf::util::MessageDifferencer::Equals(UserIntent(*existing),
                                                                UserIntent(object))
                 ? "unchanged"
                 : "configured";
    } else if (absl::IsNotFound(existing.status())) {
      verb = "created";
    } else {
      return s.Fail(existing.status());
    }
    if (verb != "unchanged") *request.add_objects() = object;
    lines.push_back(
        absl::StrCat(kind.resource, "/", services::MetadataOf(object).name(), " ", verb));
  }
  // One request: the service applies configuration all or nothing, so a bad object in the file
  // leaves the cluster as it was.
  if (request.objects_size() > 0) {
    absl::StatusOr<v1::ApplyResponse> response = s.client().Apply(request);
    if (!response.ok()) return s.Fail(response.status());
  }
  for (const std::string& line : lines) s.out() << line << "\n";
  return SubmitWorkloads(s, workloads) ? kExitOk : kExitFailure;
}

int RunSubmit(Session& s, const ParsedArgs& args) {
  if (!args.Has("filename")) return s.UsageError("name the Workload manifests with -f FILE");
  if (!args.positional.empty()) {
    return s.UsageError(absl::StrCat("unexpected argument ", args.positional[0]));
  }
  absl::StatusOr<std::vector<manifest::Manifest>> manifests =
      ReadManifests(s, args.All("filename"));
  if (!manifests.ok()) return s.Fail(manifests.status());
  UseNamespace(args, *manifests);
  std::vector<v1::Workload> workloads;
  for (const manifest::Manifest& m : *manifests) {
    const auto* wl = std::get_if<v1::Workload>(&m.object);
    if (wl == nullptr) {
      return s.Fail(absl::InvalidArgumentError(absl::StrCat(
          m.kind, " ", services::MetadataOf(std::get<v1::ConfigObject>(m.object)).name(),
          " is not a Workload; load configuration with `tollgate apply -f`")));
    }
    workloads.push_back(*wl);
  }
  if (workloads.empty()) return s.Fail(absl::InvalidArgumentError("no Workload manifests found"));
  return SubmitWorkloads(s, workloads) ? kExitOk : kExitFailure;
}

// --- finish / preempt / delete / admit --------------------------------------------------------

// The single NAME argument of a workload command.
absl::StatusOr<v1::WorkloadRef> WorkloadArg(const Session& s, const ParsedArgs& args) {
  if (args.positional.size() != 1) {
    return absl::InvalidArgumentError(
        args.positional.empty() ? "name the workload"
                                : absl::StrCat("unexpected argument ", args.positional[1]));
  }
  v1::WorkloadRef ref;
  ref.set_namespace_(s.Namespace());
  ref.set_name(args.positional[0]);
  return ref;
}

int RunFinish(Session& s, const ParsedArgs& args) {
  absl::StatusOr<v1::WorkloadRef> ref = WorkloadArg(s, args);
  if (!ref.ok()) return s.UsageError(ref.status().message());
  v1::FinishRequest request;
  *request.mutable_workload() = *ref;
  request.set_message(args.Get("message", "Finished by tollgate finish"));
  absl::StatusOr<v1::FinishResponse> response = s.client().Finish(request);
  if (!response.ok()) return s.Fail(response.status());
  s.out() << "workload.kueue.x-k8s.io/" << ref->name() << " finished\n";
  return kExitOk;
}

int RunPreempt(Session& s, const ParsedArgs& args) {
  absl::StatusOr<v1::WorkloadRef> ref = WorkloadArg(s, args);
  if (!ref.ok()) return s.UsageError(ref.status().message());
  v1::PreemptRequest request;
  *request.mutable_workload() = *ref;
  request.set_reason(args.Get("reason"));
  absl::StatusOr<v1::PreemptResponse> response = s.client().Preempt(request);
  if (!response.ok()) return s.Fail(response.status());
  s.out() << "workload.kueue.x-k8s.io/" << ref->name() << " preempted ("
          << StateName(response->workload().status().state()) << ")\n";
  return kExitOk;
}

int RunCheckpoint(Session& s, const ParsedArgs& args) {
  absl::StatusOr<v1::WorkloadRef> ref = WorkloadArg(s, args);
  if (!ref.ok()) return s.UsageError(ref.status().message());
  v1::ReportCheckpointRequest request;
  *request.mutable_workload() = *ref;
  absl::StatusOr<v1::ReportCheckpointResponse> response = s.client().ReportCheckpoint(request);
  if (!response.ok()) return s.Fail(response.status());
  s.out() << "workload.kueue.x-k8s.io/" << ref->name() << " checkpoint recorded\n";
  return kExitOk;
}

int RunDelete(Session& s, const ParsedArgs& args) {
  if (args.positional.size() != 2) return s.UsageError("name a KIND and a NAME");
  const KindInfo* kind = FindKind(args.positional[0]);
  if (kind == nullptr) {
    std::vector<absl::string_view> names;
    for (const KindInfo& k : Kinds()) names.push_back(k.name);
    return s.UsageError(absl::StrCat("unknown kind \"", args.positional[0],
                                     "\" (one of: ", absl::StrJoin(names, ", "), ")"));
  }
  const std::string& name = args.positional[1];
  absl::Status status;
  if (kind->object_kind == v1::OBJECT_KIND_UNSPECIFIED) {
    v1::DeleteWorkloadRequest request;
    request.mutable_workload()->set_namespace_(s.Namespace());
    request.mutable_workload()->set_name(name);
    status = s.client().DeleteWorkload(request).status();
  } else {
    v1::DeleteObjectRequest request;
    request.mutable_ref()->set_kind(kind->object_kind);
    if (kind->namespaced) request.mutable_ref()->set_namespace_(s.Namespace());
    request.mutable_ref()->set_name(name);
    status = s.client().DeleteObject(request).status();
  }
  if (!status.ok()) return s.Fail(status);
  s.out() << kind->resource << " \"" << name << "\" deleted\n";
  return kExitOk;
}

void PrintAssignments(Session& s, const v1::Admission& admission, absl::string_view indent) {
  TablePrinter table({"POD SET", "COUNT", "FLAVORS", "USAGE"});
  for (const v1::PodSetAssignment& a : admission.pod_set_assignments()) {
    table.AddRow(
        {a.name(), absl::StrCat(a.count()), FormatFlavors(a), FormatRequests(a.resource_usage())});
  }
  table.Print(s.out(), indent);
}

int RunAdmit(Session& s, const ParsedArgs& args) {
  absl::StatusOr<v1::WorkloadRef> ref = WorkloadArg(s, args);
  if (!ref.ok()) return s.UsageError(ref.status().message());
  const bool dry_run = args.Has("dry-run");
  // The service answers ADMITTED for a workload that already holds quota; say which case it is.
  v1::GetWorkloadRequest get;
  *get.mutable_workload() = *ref;
  absl::StatusOr<v1::Workload> before = s.client().GetWorkload(get);
  if (!before.ok()) return s.Fail(before.status());
  const bool was_admitted = before->status().state() == v1::WORKLOAD_STATE_ADMITTED;
  v1::AdmitRequest request;
  *request.mutable_workload() = *ref;
  request.set_dry_run(dry_run);
  absl::StatusOr<v1::AdmitResponse> response = s.client().Admit(request);
  if (!response.ok()) return s.Fail(response.status());
  const std::string who = absl::StrCat("workload ", ref->namespace_(), "/", ref->name());
  const std::string& cq = response->admission().cluster_queue();
  switch (response->outcome()) {
    case v1::AdmitResponse::ADMITTED:
      s.out() << who
              << (was_admitted ? " is already admitted"
                  : dry_run    ? " would be admitted"
                               : " admitted")
              << " to ClusterQueue " << cq << "\n";
      PrintAssignments(s, response->admission(), "  ");
      break;
    case v1::AdmitResponse::PREEMPTING:
      s.out() << who << (dry_run ? " would be admitted" : " will be admitted")
              << " to ClusterQueue " << cq << " after preempting "
              << Plural(response->victims_size(), "workload") << ":\n";
      for (const v1::WorkloadRef& victim : response->victims()) {
        s.out() << "  " << victim.namespace_() << "/" << victim.name() << "\n";
      }
      if (!response->admission().pod_set_assignments().empty()) {
        PrintAssignments(s, response->admission(), "  ");
      }
      break;
    case v1::AdmitResponse::PENDING:
    default:
      s.out() << who << (dry_run ? " would wait" : " waits") << ": "
              << (response->message().empty() ? response->workload().status().pending_message()
                                              : response->message())
              << "\n";
      break;
  }
  if (response->outcome() != v1::AdmitResponse::PENDING && !response->message().empty()) {
    s.out() << "  " << response->message() << "\n";
  }
  return kExitOk;
}

// --- get / usage ------------------------------------------------------------------------------

absl::StatusOr<std::vector<v1::ConfigObject>> ListConfig(Session& s, v1::ObjectKind kind,
                                                         absl::string_view ns,
                                                         absl::string_view name) {
  std::vector<v1::ConfigObject> objects;
  if (!name.empty()) {
    v1::GetObjectRequest request;
    request.mutable_ref()->set_kind(kind);
    request.mutable_ref()->set_namespace_(std::string(ns));
    request.mutable_ref()->set_name(std::string(name));
    absl::StatusOr<v1::ConfigObject> object = s.client().GetObject(request);
    if (!object.ok()) return object.status();
    objects.push_back(*std::move(object));
    return objects;
  }
  v1::ListObjectsRequest request;
  request.set_kind(kind);
  request.set_namespace_(std::string(ns));
  absl::StatusOr<v1::ListObjectsResponse> response = s.client().ListObjects(request);
  if (!response.ok()) return response.status();
  for (v1::ConfigObject& object : *response->mutable_objects()) {
    // The service narrows only some kinds by namespace; the filter is the CLI's promise.
    if (!ns.empty() && services::MetadataOf(object).namespace_() != ns) continue;
    objects.push_back(std::move(object));
  }
  std::sort(
      objects.begin(), objects.end(), [](const v1::ConfigObject& a, const v1::ConfigObject& b) {
        return std::make_pair(services::MetadataOf(a).namespace_(),
                              services::MetadataOf(a).name()) <
               std::make_pair(services::MetadataOf(b).namespace_(), services::MetadataOf(b).name());
      });
  return objects;
}

int PrintUsage(Session& s, absl::string_view cluster_queue) {
  absl::StatusOr<std::vector<v1::ConfigObject>> objects =
      ListConfig(s, v1::CLUSTER_QUEUE, "", cluster_queue);
  if (!objects.ok()) return s.Fail(objects.status());
  const v1::ClusterQueue& cq = objects->front().cluster_queue();
  PrintTableOrNothing(s, UsageTable(cq),
                      absl::StrCat("ClusterQueue ", cluster_queue, " has no resource groups"));
  return kExitOk;
}

int GetWorkloads(Session& s, const ParsedArgs& args, absl::string_view name) {
  std::vector<v1::Workload> workloads;
  if (!name.empty()) {
    v1::GetWorkloadRequest request;
    request.mutable_workload()->set_namespace_(s.Namespace());
    request.mutable_workload()->set_name(std::string(name));
    absl::StatusOr<v1::Workload> wl = s.client().GetWorkload(request);
    if (!wl.ok()) return s.Fail(wl.status());
    workloads.push_back(*std::move(wl));
  } else {
    v1::ListWorkloadsRequest request;
    if (!args.Has("all-namespaces")) request.set_namespace_(s.Namespace());
    absl::StatusOr<v1::ListWorkloadsResponse> response = s.client().ListWorkloads(request);
    if (!response.ok()) return s.Fail(response.status());
    workloads.assign(response->workloads().begin(), response->workloads().end());
  }
  std::sort(workloads.begin(), workloads.end(), [](const v1::Workload& a, const v1::Workload& b) {
    return std::make_pair(a.metadata().namespace_(), a.metadata().name()) <
           std::make_pair(b.metadata().namespace_(), b.metadata().name());
  });
  TablePrinter table({"NAMESPACE", "NAME", "QUEUE", "STATE", "ADMITTED-BY", "PRIORITY", "AGE"});
  const absl::Time now = s.now();
  for (const v1::Workload& wl : workloads) {
    table.AddRow({wl.metadata().namespace_(), wl.metadata().name(), QueueOf(wl),
                  StateName(wl.status().state()), OrNone(wl.status().admission().cluster_queue()),
                  absl::StrCat(wl.status().priority()),
                  FormatAge(wl.metadata().creation_timestamp(), now)});
  }
  PrintTableOrNothing(s, table, NoResources(args, true, s));
  return kExitOk;
}

int GetConfig(Session& s, const ParsedArgs& args, const KindInfo& kind, absl::string_view name) {
  std::string ns;
  if (kind.namespaced && (!name.empty() || !args.Has("all-namespaces"))) ns = s.Namespace();
  absl::StatusOr<std::vector<v1::ConfigObject>> objects = ListConfig(s, kind.object_kind, ns, name);
  if (!objects.ok()) return s.Fail(objects.status());
  const absl::Time now = s.now();
  std::optional<TablePrinter> table;
  switch (kind.object_kind) {
    case v1::CLUSTER_QUEUE:
      table.emplace(
          std::vector<std::string>{"NAME", "COHORT", "STRATEGY", "PENDING", "ADMITTED", "ACTIVE"});
      for (const v1::ConfigObject& o : *objects) {
        const v1::ClusterQueue& cq = o.cluster_queue();
        table->AddRow({cq.metadata().name(), OrNone(cq.spec().cohort()),
                       cq.spec().queueing_strategy().empty() ? "BestEffortFIFO"
                                                             : cq.spec().queueing_strategy(),
                       absl::StrCat(cq.status().pending_workloads()),
                       absl::StrCat(cq.status().admitted_workloads()), ActiveOf(cq)});
      }
      break;
    case v1::LOCAL_QUEUE:
      table.emplace(
          std::vector<std::string>{"NAMESPACE", "NAME", "CLUSTERQUEUE", "PENDING", "ADMITTED"});
      for (const v1::ConfigObject& o : *objects) {
        const v1::LocalQueue& lq = o.local_queue();
        table->AddRow({lq.metadata().namespace_(), lq.metadata().name(),
                       OrNone(lq.spec().cluster_queue()),
                       absl::StrCat(lq.status().pending_workloads()),
                       absl::StrCat(lq.status().admitted_workloads())});
      }
      break;
    case v1::RESOURCE_FLAVOR:
      table.emplace(std::vector<std::string>{"NAME", "NODE-LABELS", "TAINTS"});
      for (const v1::ConfigObject& o : *objects) {
        const v1::ResourceFlavor& rf = o.resource_flavor();
        table->AddRow({rf.metadata().name(), JoinKeyValues(rf.spec().node_labels()),
                       FormatTaints(rf.spec())});
      }
      break;
    case v1::COHORT: {
      // Kueue creates a cohort implicitly when a ClusterQueue (or a Cohort's parent) names it;
      // listing only Cohort objects would hide exactly the common case.
      std::map<std::string, std::string> parents;
      for (const v1::ConfigObject& o : *objects) {
        parents[o.cohort().metadata().name()] = o.cohort().spec().parent();
      }
      if (name.empty()) {
        absl::StatusOr<std::vector<v1::ConfigObject>> queues =
            ListConfig(s, v1::CLUSTER_QUEUE, "", "");
        if (!queues.ok()) return s.Fail(queues.status());
        for (const v1::ConfigObject& o : *queues) {
          if (!o.cluster_queue().spec().cohort().empty()) {
            parents.emplace(o.cluster_queue().spec().cohort(), "");
          }
        }
        for (const v1::ConfigObject& o : *objects) {
          if (!o.cohort().spec().parent().empty()) parents.emplace(o.cohort().spec().parent(), "");
        }
      }
      table.emplace(std::vector<std::string>{"NAME", "PARENT"});
      for (const auto& [cohort, parent] : parents) table->AddRow({cohort, OrNone(parent)});
      break;
    }
    case v1::WORKLOAD_PRIORITY_CLASS:
    case v1::PRIORITY_CLASS:
      table.emplace(std::vector<std::string>{"NAME", "VALUE", "AGE"});
      for (const v1::ConfigObject& o : *objects) {
        const bool wpc = o.has_workload_priority_class();
        const v1::ObjectMeta& meta = services::MetadataOf(o);
        table->AddRow(
            {meta.name(),
             absl::StrCat(wpc ? o.workload_priority_class().value() : o.priority_class().value()),
             FormatAge(meta.creation_timestamp(), now)});
      }
      break;
    case v1::NAMESPACE:
    default:
      table.emplace(std::vector<std::string>{"NAME", "AGE"});
      for (const v1::ConfigObject& o : *objects) {
        table->AddRow({services::MetadataOf(o).name(),
                       FormatAge(services::MetadataOf(o).creation_timestamp(), now)});
      }
      break;
  }
  PrintTableOrNothing(s, *table, NoResources(args, kind.namespaced, s));
  return kExitOk;
}

int RunGet(Session& s, const ParsedArgs& args) {
  if (args.positional.empty() || args.positional.size() > 2) {
    return s.UsageError(
        "name what to get: flavors, clusterqueues, cohorts, localqueues, "
        "workloads (and optionally one NAME)");
  }
  const KindInfo* kind = FindKind(args.positional[0]);
  if (kind == nullptr) {
    return s.UsageError(absl::StrCat("unknown resource type \"", args.positional[0], "\""));
  }
  const std::string name = args.positional.size() == 2 ? args.positional[1] : "";
  if (args.Has("all-namespaces") && !name.empty()) {
    return s.UsageError("a NAME cannot be combined with -A");
  }
  if (args.Has("output")) {
    const std::string format = args.Get("output");
    if (format != "usage") {
      return s.UsageError(
          absl::StrCat("unsupported output format \"", format, "\" (supported: usage)"));
    }
    if (kind->object_kind != v1::CLUSTER_QUEUE || name.empty()) {
      return s.UsageError("-o usage needs one ClusterQueue: get clusterqueue NAME -o usage");
    }
    return PrintUsage(s, name);
  }
  if (kind->object_kind == v1::OBJECT_KIND_UNSPECIFIED) return GetWorkloads(s, args, name);
  return GetConfig(s, args, *kind, name);
}

int RunUsage(Session& s, const ParsedArgs& args) {
  if (args.positional.size() != 1) return s.UsageError("name one ClusterQueue");
  return PrintUsage(s, args.positional[0]);
}

// --- describe ---------------------------------------------------------------------------------

std::string TimeAndAge(const google::protobuf::Timestamp& t, absl::Time now) {
  if (ToAbslTime(t) == absl::InfinitePast()) return "<unknown>";
  return absl::StrCat(FormatTimestamp(t), " (", FormatAge(t, now), " ago)");
}

// "2 of 3 in LocalQueue team-a/eval-queue, 4 of 7 in ClusterQueue team-a-cq", or why unknown.
absl::StatusOr<std::string> QueuePosition(Session& s, const v1::Workload& wl) {
  const std::string& ns = wl.metadata().namespace_();
  v1::ListPendingWorkloadsRequest by_local_queue;
  by_local_queue.set_namespace_(ns);
  by_local_queue.set_local_queue(QueueOf(wl));
  absl::StatusOr<v1::ListPendingWorkloadsResponse> local =
      s.client().ListPendingWorkloads(by_local_queue);
  if (!local.ok()) return local.status();
  const v1::PendingWorkload* item = nullptr;
  for (const v1::PendingWorkload& p : local->items()) {
    if (p.workload().namespace_() == ns && p.workload().name() == wl.metadata().name()) item = &p;
  }
  if (item == nullptr) return std::string("not queued");
  std::string text = absl::StrCat(item->position_in_local_queue() + 1, " of ", local->items_size(),
                                  " in LocalQueue ", ns, "/", QueueOf(wl));
  if (!item->cluster_queue().empty()) {
    v1::ListPendingWorkloadsRequest by_cluster_queue;
    by_cluster_queue.set_cluster_queue(item->cluster_queue());
    absl::StatusOr<v1::ListPendingWorkloadsResponse> cluster =
        s.client().ListPendingWorkloads(by_cluster_queue);
    if (!cluster.ok()) return cluster.status();
    absl::StrAppend(&text, ", ", item->position_in_cluster_queue() + 1, " of ",
                    cluster->items_size(), " in ClusterQueue ", item->cluster_queue());
  }
  return text;
}

int DescribeWorkload(Session& s, absl::string_view name) {
  v1::GetWorkloadRequest request;
  request.mutable_workload()->set_namespace_(s.Namespace());
  request.mutable_workload()->set_name(std::string(name));
  absl::StatusOr<v1::Workload> got = s.client().GetWorkload(request);
  if (!got.ok()) return s.Fail(got.status());
  const v1::Workload& wl = *got;
  const v1::WorkloadSpec& spec = wl.spec();
  const v1::WorkloadStatus& status = wl.status();
  const absl::Time now = s.now();
  std::ostream& out = s.out();

  FieldPrinter top;
  top.Add("Name", wl.metadata().name());
  top.Add("Namespace", wl.metadata().namespace_());
  top.Add("Labels", JoinKeyValues(wl.metadata().labels()));
  top.Add("Created", TimeAndAge(wl.metadata().creation_timestamp(), now));
  top.Add("Queue", QueueOf(wl));
  std::string priority = absl::StrCat(status.priority());
  if (!spec.priority_class_name().empty()) {
    absl::StrAppend(&priority, " (", spec.priority_class_name(), ")");
  }
  top.Add("Priority", priority);
  if (spec.has_active() && !spec.active()) top.Add("Active", "false (deactivated)");
  if (spec.non_preemptible()) top.Add("Non-Preemptible", "true");
  top.Add("State", StateName(status.state()));
  if (status.state() == v1::WORKLOAD_STATE_PENDING) {
    top.Add("Pending Reason", OrNone(status.pending_message()));
    absl::StatusOr<std::string> position = QueuePosition(s, wl);
    if (!position.ok() && absl::IsUnavailable(position.status())) {
      return s.Fail(position.status());
    }
    top.Add("Position", position.ok()
                            ? *position
                            : absl::StrCat("<unknown: ", position.status().message(), ">"));
  }
  if (ToAbslTime(status.admission_time()) != absl::InfinitePast()) {
    top.Add("Admitted", TimeAndAge(status.admission_time(), now));
  }
  if (status.has_last_checkpoint_time()) {
    top.Add("Last Checkpoint", TimeAndAge(status.last_checkpoint_time(), now));
  }
  if (status.state() == v1::WORKLOAD_STATE_EVICTING) {
    std::string eviction = absl::StrCat("since ", TimeAndAge(status.evicted_at(), now));
    if (ToAbslTime(status.eviction_deadline()) != absl::InfinitePast()) {
      absl::StrAppend(&eviction, "; quota released by ",
                      FormatTimestamp(status.eviction_deadline()));
    }
    top.Add("Evicting", eviction);
  }
  if (status.preemption_count() > 0) {
    top.Add("Preemptions", absl::StrCat(status.preemption_count(),
                                        " (last: ", OrNone(status.last_preemption_reason()), ")"));
  }
  if (status.requeue_state().count() > 0) {
    top.Add("Requeues", absl::StrCat(status.requeue_state().count()));
  }
  top.Print(out);

  out << "Pod Sets:\n";
  TablePrinter pod_sets({"NAME", "COUNT", "MIN", "REQUESTS (PER POD)"});
  for (const v1::PodSet& ps : spec.pod_sets()) {
    pod_sets.AddRow({ps.name(), absl::StrCat(ps.count()),
                     ps.has_min_count() ? absl::StrCat(ps.min_count()) : "-",
                     FormatRequests(ps.requests())});
  }
  pod_sets.Print(out, "  ");

  if (status.has_admission() && !status.admission().cluster_queue().empty()) {
    out << "Admission:\n";
    FieldPrinter admission;
    admission.Add("ClusterQueue", status.admission().cluster_queue());
    admission.Print(out, "  ");
    PrintAssignments(s, status.admission(), "  ");
  } else {
    out << "Admission:  " << kNone << "\n";
  }

  if (status.conditions_size() > 0) {
    out << "Conditions:\n";
    TablePrinter conditions({"TYPE", "STATUS", "REASON", "LAST TRANSITION", "MESSAGE"});
    for (const v1::Condition& c : status.conditions()) {
      conditions.AddRow({c.type(), c.status(), c.reason(),
                         FormatTimestamp(c.last_transition_time()), c.message()});
    }
    conditions.Print(out, "  ");
  } else {
    out << "Conditions:  " << kNone << "\n";
  }

  if (status.events_size() > 0) {
    out << "Events:\n";
    TablePrinter events({"TIME", "AGE", "REASON", "MESSAGE"});
    for (const v1::WorkloadEvent& e : status.events()) {
      events.AddRow({FormatTimestamp(e.time()), FormatAge(e.time(), now), e.reason(), e.message()});
    }
    events.Print(out, "  ");
  } else {
    out << "Events:  " << kNone << "\n";
  }
  return kExitOk;
}

// How many pending workloads `describe clusterqueue` lists before summarizing the rest.
constexpr int kDescribePendingLimit = 20;

int DescribeClusterQueue(Session& s, absl::string_view name) {
  absl::StatusOr<std::vector<v1::ConfigObject>> objects =
      ListConfig(s, v1::CLUSTER_QUEUE, "", name);
  if (!objects.ok()) return s.Fail(objects.status());
  const v1::ClusterQueue& cq = objects->front().cluster_queue();
  const v1::ClusterQueueSpec& spec = cq.spec();
  const absl::Time now = s.now();
  std::ostream& out = s.out();

  auto or_default = [](absl::string_view value, absl::string_view fallback) {
    return std::string(value.empty() ? fallback : value);
  };
  FieldPrinter top;
  top.Add("Name", cq.metadata().name());
  top.Add("Created", TimeAndAge(cq.metadata().creation_timestamp(), now));
  top.Add("Cohort", OrNone(spec.cohort()));
  top.Add("Queueing Strategy", or_default(spec.queueing_strategy(), "BestEffortFIFO"));
  std::string selector = "<all namespaces>";
  if (spec.has_namespace_selector() && (!spec.namespace_selector().match_labels().empty() ||
                                        !spec.namespace_selector().match_expressions().empty())) {
    selector = JoinKeyValues(spec.namespace_selector().match_labels());
    for (const v1::LabelSelectorRequirement& r : spec.namespace_selector().match_expressions()) {
      absl::StrAppend(&selector, selector.empty() || selector == kNone ? "" : ",", r.key(), " ",
                      r.operator_(), " (", absl::StrJoin(r.values(), ","), ")");
    }
  }
  top.Add("Namespace Selector", selector);
  const v1::ClusterQueuePreemption& p = spec.preemption();
  top.Add("Preemption",
          absl::StrCat(
              "withinClusterQueue=", or_default(p.within_cluster_queue(), "Never"),
              ", reclaimWithinCohort=", or_default(p.reclaim_within_cohort(), "Never"),
              ", borrowWithinCohort=", or_default(p.borrow_within_cohort().policy(), "Never")));
  top.Add("Flavor Fungibility",
          absl::StrCat(
              "whenCanBorrow=", or_default(spec.flavor_fungibility().when_can_borrow(), "Borrow"),
              ", whenCanPreempt=",
              or_default(spec.flavor_fungibility().when_can_preempt(), "TryNextFlavor")));
  top.Add("Stop Policy", or_default(spec.stop_policy(), "None"));
  std::string active = ActiveOf(cq);
  for (const v1::Condition& c : cq.status().conditions()) {
    if (c.type() == "Active") absl::StrAppend(&active, " (", c.reason(), ": ", c.message(), ")");
  }
  top.Add("Active", active);
  top.Add("Workloads", absl::StrCat(cq.status().pending_workloads(), " pending, ",
                                    cq.status().admitted_workloads(), " admitted"));
  top.Print(out);

  out << "Usage:\n";
  UsageTable(cq).Print(out, "  ");

  v1::ListPendingWorkloadsRequest request;
  request.set_cluster_queue(std::string(name));
  absl::StatusOr<v1::ListPendingWorkloadsResponse> pending =
      s.client().ListPendingWorkloads(request);
  if (!pending.ok()) return s.Fail(pending.status());
  if (pending->items_size() == 0) {
    out << "Pending Workloads:  " << kNone << "\n";
  } else {
    out << "Pending Workloads (" << pending->items_size() << "):\n";
    TablePrinter table({"POSITION", "WORKLOAD", "LOCALQUEUE", "PRIORITY", "MESSAGE"});
    for (int i = 0; i < pending->items_size() && i < kDescribePendingLimit; ++i) {
      const v1::PendingWorkload& item = pending->items(i);
      table.AddRow({absl::StrCat(item.position_in_cluster_queue() + 1),
                    absl::StrCat(item.workload().namespace_(), "/", item.workload().name()),
                    item.local_queue(), absl::StrCat(item.priority()), item.message()});
    }
    table.Print(out, "  ");
    if (pending->items_size() > kDescribePendingLimit) {
      out << "  ... and " << pending->items_size() - kDescribePendingLimit << " more\n";
    }
  }
  return kExitOk;
}

int RunDescribe(Session& s, const ParsedArgs& args) {
  if (args.positional.size() != 2)
    return s.UsageError("name a KIND (workload, clusterqueue) and a NAME");
  const KindInfo* kind = FindKind(args.positional[0]);
  if (kind != nullptr && kind->object_kind == v1::OBJECT_KIND_UNSPECIFIED) {
    return DescribeWorkload(s, args.positional[1]);
  }
  if (kind != nullptr && kind->object_kind == v1::CLUSTER_QUEUE) {
    return DescribeClusterQueue(s, args.positional[1]);
  }
  return s.UsageError(absl::StrCat("cannot describe \"", args.positional[0],
                                   "\" (supported: workload, clusterqueue)"));
}

// --- watch ------------------------------------------------------------------------------------

std::string WatchLine(const v1::WatchEvent& event) {
  const v1::Workload& wl = event.workload();
  std::string type;
  switch (event.type()) {
    case v1::WatchEvent::ADDED:
      type = "ADDED";
      break;
    case v1::WatchEvent::MODIFIED:
      type = "MODIFIED";
      break;
    case v1::WatchEvent::DELETED:
      type = "DELETED";
      break;
    default:
      type = "UNKNOWN";
      break;
  }
  std::string detail;
  if (event.type() == v1::WatchEvent::DELETED) {
    detail = "deleted";
  } else if (wl.status().events_size() > 0) {
    const v1::WorkloadEvent& last = *wl.status().events().rbegin();
    detail = absl::StrCat(last.reason(), ": ", last.message());
  } else {
    detail = wl.status().pending_message();
  }
  // A stream cannot be aligned after the fact; minimum widths keep typical names in columns.
  return absl::StrFormat("%-9s %-36s %-9s %-14s %s", type, WorkloadKey(wl.metadata()),
                         StateName(wl.status().state()),
                         OrNone(wl.status().admission().cluster_queue()), detail);
}

int RunWatch(Session& s, const ParsedArgs& args) {
  if (args.positional.size() != 1 || FindKind(args.positional[0]) == nullptr ||
      FindKind(args.positional[0])->object_kind != v1::OBJECT_KIND_UNSPECIFIED) {
    return s.UsageError("only workloads can be watched: watch workloads [-n NAMESPACE | -A]");
  }
  v1::WatchRequest request;
  if (!args.Has("all-namespaces")) request.set_namespace_(s.Namespace());
  absl::Status status = s.client().Watch(
      request,
      [&s](const v1::WatchEvent& event) {
        if (event.type() == v1::WatchEvent::BOOKMARK) return true;
        s.out() << WatchLine(event) << std::endl;  // flushed: someone is watching
        return true;
      },
      s.watch_canceller());
  if (!status.ok()) return s.Fail(status);
  return kExitOk;
}

// --- scenario ---------------------------------------------------------------------------------

int RunScenario(Session& s, const ParsedArgs& args) {
  if (args.positional.empty() || args.positional[0] != "run") {
    return s.UsageError("the only subcommand is: scenario run PATH...");
  }
  std::vector<std::string> paths(args.positional.begin() + 1, args.positional.end());
  if (paths.empty()) return s.UsageError("name at least one file or folder");
  return scenario::RunScenarioCommand(paths, s.out());
}

const std::vector<Command>& Commands() {
  static const auto* commands = new std::vector<Command>{
      {"apply",
       "apply -f FILE",
       "Create or update Kueue objects, submit Workloads.",
       "Takes multi-document YAML as Kueue users write it (kueue.x-k8s.io v1beta1 or v1beta2,\n"
       "Namespace, scheduling.k8s.io PriorityClass). Configuration is applied all or nothing in\n"
       "one request; Workload manifests are then submitted one by one. Prints one line per "
       "object,\n"
       "as kubectl does: created, configured or unchanged.\n",
       {kFileFlag, kManifestNamespaceFlag},
       RunApply},
      {"submit",
       "submit -f FILE",
       "Submit Workload manifests.",
       "Submitting the same workload again is harmless (unchanged); a different spec under an\n"
       "existing name is refused.\n",
       {kFileFlag, kManifestNamespaceFlag},
       RunSubmit},
      {"admit",
       "admit NAME [--dry-run]",
       "Try to admit a workload now; show the outcome.",
       "Prints the flavors it is (or would be) admitted with, the workloads it would preempt,\n"
       "or why it waits.\n",
       {kNamespaceFlag, kDryRunFlag},
       RunAdmit},
      {"finish",
       "finish NAME",
       "Mark a workload finished and release its quota.",
       "",
       {kNamespaceFlag, kMessageFlag},
       RunFinish},
      {"preempt",
       "preempt NAME [--reason TEXT]",
       "Evict an admitted workload.",
       "",
       {kNamespaceFlag, kReasonFlag},
       RunPreempt},
      {"checkpoint",
       "checkpoint NAME",
       "Record that a running workload saved its progress now.",
       "Among equal-priority victims, preemption takes the one that would lose the least work\n"
       "since its last checkpoint (or admission) first.\n",
       {kNamespaceFlag},
       RunCheckpoint},
      {"delete",
       "delete KIND NAME",
       "Delete a workload or a configuration object.",
       "KIND: workload, clusterqueue, localqueue, cohort, resourceflavor, workloadpriorityclass,\n"
       "priorityclass, namespace (plurals and short names such as cq, lq, rf, wl work too).\n"
       "-n applies to workloads and localqueues.\n",
       {kNamespaceFlag},
       RunDelete},
      {"get",
       "get TYPE [NAME] [-n NS | -A] [-o usage]",
       "List objects as a table.",
       "TYPE: flavors, clusterqueues, cohorts, localqueues, workloads (also\n"
       "workloadpriorityclasses, priorityclasses, namespaces). Namespaced types list the -n\n"
       "namespace (default \"default\"), or every namespace with -A.\n"
       "`get clusterqueue NAME -o usage` prints its quota and usage per flavor and resource.\n",
       {kNamespaceFlag, kAllNamespacesFlag, kOutputFlag},
       RunGet},
      {"usage",
       "usage CLUSTERQUEUE",
       "Show a ClusterQueue's NOMINAL, USED, BORROWED quota.",
       "",
       {},
       RunUsage},
      {"describe",
       "describe workload|clusterqueue NAME",
       "Show details, queue position and events.",
       "workload: spec, state, admission and flavors, pending reason, position in its LocalQueue\n"
       "and ClusterQueue, conditions and events.\n"
       "clusterqueue: spec summary, usage per flavor and resource, pending workloads in order.\n",
       {kNamespaceFlag},
       RunDescribe},
      {"watch",
       "watch workloads [-n NS | -A]",
       "Print workload changes as they happen.",
       "The current workloads first (ADDED), then one line per change until interrupted.\n",
       {kNamespaceFlag, kAllNamespacesFlag},
       RunWatch},
      {"scenario",
       "scenario run PATH...",
       "Run admission scenarios in process (no server).",
       "PATH: scenario files, or folders searched for *.yaml. Each runs on a temporary store and "
       "a\n"
       "simulated clock.\n",
       {},
       RunScenario},
  };
  return *commands;
}

const Command* FindCommand(absl::string_view name) {
  for (const Command& c : Commands()) {
    if (c.name == name) return &c;
  }
  return nullptr;
}

// Flags that may precede the command word and take the next argument as their value.
bool IsLeadingValueFlag(absl::string_view arg) {
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
  const Command* command = FindCommand(name);
  if (command == nullptr) {
    env.err << "tollgate: unknown command \"" << name << "\"\n\n" << MainUsage();
    return kExitUsage;
  }
  std::vector<std::string> rest(args.begin(), args.begin() + command_index);
  rest.insert(rest.end(), args.begin() + command_index + 1, args.end());
  std::vector<FlagDef> defs = command->flags;
  defs.push_back(kServerFlag);
  defs.push_back(kTimeoutFlag);
  defs.push_back(kHelpFlag);
  absl::StatusOr<ParsedArgs> parsed = ParseArgs(rest, defs);
  if (!parsed.ok()) {
    env.err << "tollgate " << command->name << ": " << parsed.status().message() << "\n\n"
            << CommandHelp(*command);
    return kExitUsage;
  }
  if (parsed->Has("help")) {
    env.out << CommandHelp(*command);
    return kExitOk;
  }
  absl::Duration timeout = kDefaultCallTimeout;
  if (parsed->Has("timeout") &&
      (!absl::ParseDuration(parsed->Get("timeout"), &timeout) || timeout <= absl::ZeroDuration())) {
    env.err << "tollgate " << command->name << ": --timeout wants a positive duration such as 30s"
            << ", got \"" << parsed->Get("timeout") << "\"\n";
    return kExitUsage;
  }
  Session session(env, *command, *parsed, timeout);
  return command->run(session, *parsed);
}

}  // namespace tollgate::cli
