// apply, submit and diff: manifests in, kubectl's one line per object out.
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>

#include <array>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <string>
#include <system_error>
#include <variant>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "cmd/tollgate/cli_kinds.h"
#include "cmd/tollgate/commands.h"
#include "cmd/tollgate/object_printer.h"
#include "cmd/tollgate/start_estimate_view.h"
#include "google/protobuf/util/message_differencer.h"
#include "services/engine/config_objects.h"
#include "services/manifest/job_kind.h"
#include "services/manifest/manifest_input.h"

namespace tollgate::cli {
namespace {

// kubectl's --dry-run: none (write), client (print, send nothing), server (the server validates
// configuration without storing it).
enum class DryRun { kNone, kClient, kServer };

absl::StatusOr<DryRun> ParseDryRun(const ParsedFlags& args) {
  const std::string value = args.Get("dry-run", "none");
  if (value == "none") return DryRun::kNone;
  if (value == "client") return DryRun::kClient;
  if (value == "server") return DryRun::kServer;
  return absl::InvalidArgumentError(
      absl::StrCat("--dry-run: want none, client or server, got \"", value, "\""));
}

absl::string_view DryRunSuffix(DryRun dry_run) {
  switch (dry_run) {
    case DryRun::kClient:
      return " (dry run)";
    case DryRun::kServer:
      return " (server dry run)";
    case DryRun::kNone:
      break;
  }
  return "";
}

// `skipped`, when given, counts the documents skipped with a note.
absl::StatusOr<std::vector<manifest::Manifest>> ReadArgs(Session& s, const ParsedFlags& args,
                                                         size_t* skipped = nullptr) {
  std::vector<std::string> notes;
  absl::StatusOr<std::vector<manifest::Manifest>> manifests =
      manifest::ReadManifests(s.in(), args.All("filename"), notes);
  // Objects that carry no work (a RayJob's ConfigMap), and CronJobs, are skipped, not refused.
  for (const std::string& note : notes) s.err() << "note: " << note << "\n";
  if (skipped != nullptr) *skipped = notes.size();
  if (manifests.ok() && args.Has("namespace"))
    manifest::UseNamespace(args.Get("namespace"), *manifests);
  return manifests;
}

// A cohort the server reports although no Cohort object is stored (ClusterQueues name it).
bool IsImplicitCohort(const v1::ConfigObject& object) {
  if (!object.has_cohort()) return false;
  for (const v1::Condition& c : object.cohort().status().conditions()) {
    if (c.type() == "Implicit" && c.status() == "True") return true;
  }
  return false;
}

// The live workload, or NOT_FOUND.
absl::StatusOr<v1::Workload> LiveWorkload(Session& s, const v1::Workload& wl) {
  v1::GetWorkloadRequest get;
  get.mutable_workload()->set_namespace_(wl.metadata().namespace_());
  get.mutable_workload()->set_name(wl.metadata().name());
  return s.client().GetWorkload(get);
}

// What a user's Workload manifest says, without what the server fills in.
v1::Workload WorkloadIntent(v1::Workload wl, const v1::Workload& intent) {
  v1::ObjectMeta* meta = wl.mutable_metadata();
  meta->clear_uid();
  meta->clear_resource_version();
  meta->clear_generation();
  meta->clear_creation_timestamp();
  wl.clear_status();
  // The server resolves the priority from the class; a manifest that gave none did not ask.
  if (!intent.spec().has_priority()) wl.mutable_spec()->clear_priority();
  return wl;
}

// Submits workloads one by one, as kubectl applies objects: each gets its line, a refusal does
// not stop the rest. Returns false when any was refused. A server dry run has the server check
// each as it would submit it (validation, queue, priority class, an existing name) and store
// nothing; a client dry run only compares with what the server holds under that name.
bool SubmitWorkloads(Session& s, const std::vector<v1::Workload>& workloads, DryRun dry_run) {
  bool ok = true;
  for (const v1::Workload& wl : workloads) {
    std::string verb;
    std::string note;
    if (dry_run == DryRun::kClient) {
      absl::StatusOr<v1::Workload> live = LiveWorkload(s, wl);
      if (live.ok()) {
        verb = google::protobuf::util::MessageDifferencer::Equals(WorkloadIntent(*live, wl),
                                                                  WorkloadIntent(wl, wl))
                   ? "unchanged"
                   : "refused: exists with a different spec";
      } else if (absl::IsNotFound(live.status())) {
        verb = "created";
      } else {
        s.Fail(live.status());
        return false;
      }
    } else {
      v1::SubmitRequest request;
      *request.mutable_workload() = wl;
      request.set_dry_run(dry_run == DryRun::kServer);
      absl::StatusOr<v1::SubmitResponse> response = s.client().Submit(request);
      if (!response.ok()) {
        s.Fail(response.status());
        ok = false;
        // Unreachable now means unreachable for the rest too.
        if (absl::IsUnavailable(response.status())) return false;
        continue;
      }
      verb = response->created() ? "created" : "unchanged";
      // A server dry run also says when the workload would start if submitted now.
      if (dry_run == DryRun::kServer && response->created() && response->has_start_estimate()) {
        note =
            absl::StrCat("; would start ", StartEstimateText(response->start_estimate(), s.now()));
      }
    }
    // A job manifest's workload says which job it is for.
    std::string from;
    if (auto kind = wl.metadata().labels().find(std::string(manifest::kJobKindLabel));
        kind != wl.metadata().labels().end()) {
      auto job = wl.metadata().annotations().find(std::string(manifest::kJobNameAnnotation));
      from = absl::StrCat(" (", kind->second, " ",
                          job == wl.metadata().annotations().end() ? "" : job->second, ")");
    }
    s.out() << "workload.kueue.x-k8s.io/" << wl.metadata().name() << from << " " << verb
            << DryRunSuffix(dry_run) << note << "\n";
  }
  return ok;
}

// --- diff -------------------------------------------------------------------------------------

// A folder under $TMPDIR removed when this goes out of scope.
class TempDir {
 public:
  static absl::StatusOr<TempDir> Make(absl::string_view prefix) {
    std::string path =
        (std::filesystem::temp_directory_path() / absl::StrCat(prefix, "-XXXXXX")).string();
    if (mkdtemp(path.data()) == nullptr) {
      return absl::InternalError(absl::StrCat("mkdtemp: ", std::strerror(errno)));
    }
    return TempDir(path);
  }
  TempDir(TempDir&& other) noexcept : path_(std::move(other.path_)) { other.path_.clear(); }
  TempDir(const TempDir&) = delete;
  ~TempDir() {
    std::error_code ignored;
    if (!path_.empty()) std::filesystem::remove_all(path_, ignored);
  }
  const std::string& path() const { return path_; }

 private:
  explicit TempDir(std::string path) : path_(std::move(path)) {}
  std::string path_;
};

absl::Status WriteText(const std::string& path, const std::string& text) {
  std::ofstream out(path, std::ios::binary);
  out << text;
  out.close();
  if (!out) return absl::InternalError(absl::StrCat("cannot write ", path));
  return absl::OkStatus();
}

// The manifest without status and server-filled metadata: what diff compares.
Json Comparable(Json m) {
  m.erase("status");
  if (m.contains("metadata")) {
    for (const char* key :
         {"uid", "resourceVersion", "generation", "creationTimestamp", "deletionTimestamp"}) {
      m["metadata"].erase(key);
    }
  }
  return m;
}

// kubectl's file name for an object in a diff: group.version.Kind.namespace.name.
std::string DiffFileName(const Json& m) {
  std::string api = m.value("apiVersion", "");
  for (char& c : api) c = c == '/' ? '.' : c;
  return absl::StrCat(api, ".", m.value("kind", ""), ".", m["metadata"].value("namespace", ""), ".",
                      m["metadata"].value("name", ""));
}

}  // namespace

int RunApply(Session& s, const ParsedFlags& args) {
  if (!args.Has("filename")) return s.UsageError("name the manifests with -f FILE (or -f -)");
  if (!args.positional.empty()) {
    return s.UsageError(absl::StrCat("unexpected argument ", args.positional[0]));
  }
  absl::StatusOr<DryRun> dry_run = ParseDryRun(args);
  if (!dry_run.ok()) return s.UsageError(dry_run.status().message());
  absl::StatusOr<std::vector<manifest::Manifest>> manifests = ReadArgs(s, args);
  if (!manifests.ok()) return s.Fail(manifests.status());

  std::vector<v1::Workload> workloads;
  v1::ApplyRequest request;
  request.set_dry_run(*dry_run == DryRun::kServer);
  std::vector<std::string> lines;
  for (const manifest::Manifest& m : *manifests) {
    if (const auto* wl = std::get_if<v1::Workload>(&m.object)) {
      workloads.push_back(*wl);
      continue;
    }
    const auto& object = std::get<v1::ConfigObject>(m.object);
    const KindInfo& kind = KindByObjectKind(engine::KindOf(object));
    // Like kubectl: created, configured, or unchanged (and then not sent at all).
    v1::GetObjectRequest get;
    *get.mutable_ref() = RefOf(object);
    absl::StatusOr<v1::ConfigObject> existing = s.client().GetObject(get);
    std::string verb;
    if (existing.ok() && IsImplicitCohort(*existing)) {
      verb = "created";  // it existed only because ClusterQueues named it
    } else if (existing.ok()) {
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
    lines.push_back(absl::StrCat(kind.resource, "/", engine::MetadataOf(object).name(), " ", verb,
                                 DryRunSuffix(*dry_run)));
  }
  // One request: the service applies configuration all or nothing, so a bad object in the file
  // leaves the cluster as it was. A server dry run validates the same way and stores nothing.
  if (request.objects_size() > 0 && *dry_run != DryRun::kClient) {
    absl::StatusOr<v1::ApplyResponse> response = s.client().Apply(request);
    if (!response.ok()) return s.Fail(response.status());
  }
  for (const std::string& line : lines) s.out() << line << "\n";
  return SubmitWorkloads(s, workloads, *dry_run) ? kExitOk : kExitFailure;
}

int RunSubmit(Session& s, const ParsedFlags& args) {
  if (!args.Has("filename")) return s.UsageError("name the Workload or job manifests with -f FILE");
  if (!args.positional.empty()) {
    return s.UsageError(absl::StrCat("unexpected argument ", args.positional[0]));
  }
  absl::StatusOr<DryRun> dry_run = ParseDryRun(args);
  if (!dry_run.ok()) return s.UsageError(dry_run.status().message());
  size_t skipped = 0;
  absl::StatusOr<std::vector<manifest::Manifest>> manifests = ReadArgs(s, args, &skipped);
  if (!manifests.ok()) return s.Fail(manifests.status());
  std::vector<v1::Workload> workloads;
  for (const manifest::Manifest& m : *manifests) {
    const auto* wl = std::get_if<v1::Workload>(&m.object);
    if (wl == nullptr) {
      return s.Fail(absl::InvalidArgumentError(
          absl::StrCat(m.kind, " ", engine::MetadataOf(std::get<v1::ConfigObject>(m.object)).name(),
                       " is not a Workload or job; load configuration with `tollgate apply -f`")));
    }
    workloads.push_back(*wl);
  }
  // Only skipped documents (a CronJob, whose Jobs are queued when it creates them): the notes
  // said why, and there is nothing to submit.
  if (workloads.empty() && skipped > 0) return kExitOk;
  if (workloads.empty()) return s.Fail(absl::InvalidArgumentError("no Workload manifests found"));
  return SubmitWorkloads(s, workloads, *dry_run) ? kExitOk : kExitFailure;
}

// kubectl diff: the live objects and the manifests as YAML in two folders, compared by
// `diff -u -N` (exit 0: no differences, 1: differences, more: an error).
int RunDiff(Session& s, const ParsedFlags& args) {
  if (!args.Has("filename")) return s.UsageError("name the manifests with -f FILE (or -f -)");
  absl::StatusOr<std::vector<manifest::Manifest>> manifests = ReadArgs(s, args);
  if (!manifests.ok()) return s.Fail(manifests.status());
  absl::StatusOr<TempDir> live_dir = TempDir::Make("LIVE");
  if (!live_dir.ok()) return s.Fail(live_dir.status());
  absl::StatusOr<TempDir> merged_dir = TempDir::Make("MERGED");
  if (!merged_dir.ok()) return s.Fail(merged_dir.status());
  for (const manifest::Manifest& m : *manifests) {
    Json live;
    Json merged;
    if (const auto* wl = std::get_if<v1::Workload>(&m.object)) {
      absl::StatusOr<v1::Workload> got = LiveWorkload(s, *wl);
      if (!got.ok() && !absl::IsNotFound(got.status())) return s.Fail(got.status());
      if (got.ok()) live = Comparable(ManifestOf(WorkloadIntent(*got, *wl)));
      merged = Comparable(ManifestOf(WorkloadIntent(*wl, *wl)));
    } else {
      const auto& object = std::get<v1::ConfigObject>(m.object);
      v1::GetObjectRequest get;
      *get.mutable_ref() = RefOf(object);
      absl::StatusOr<v1::ConfigObject> got = s.client().GetObject(get);
      if (!got.ok() && !absl::IsNotFound(got.status())) return s.Fail(got.status());
      if (got.ok() && !IsImplicitCohort(*got)) live = Comparable(ManifestOf(UserIntent(*got)));
      merged = Comparable(ManifestOf(UserIntent(object)));
    }
    const std::string file = DiffFileName(merged);
    // An object that does not exist yet has no live file: `diff -N` shows it all as added.
    if (!live.is_null()) {
      if (absl::Status st = WriteText(live_dir->path() + "/" + file, ToYaml(live)); !st.ok()) {
        return s.Fail(st);
      }
    }
    if (absl::Status st = WriteText(merged_dir->path() + "/" + file, ToYaml(merged)); !st.ok()) {
      return s.Fail(st);
    }
  }
  const std::string command =
      absl::StrCat("diff -u -N '", live_dir->path(), "' '", merged_dir->path(), "' 2>&1");
  FILE* pipe = popen(command.c_str(), "r");
  if (pipe == nullptr) {
    return s.Fail(absl::InternalError(absl::StrCat("cannot run diff: ", std::strerror(errno))));
  }
  std::array<char, 4096> buffer;
  size_t n = 0;
  while ((n = fread(buffer.data(), 1, buffer.size(), pipe)) > 0) s.out().write(buffer.data(), n);
  const int status = pclose(pipe);
  if (status == -1 || !WIFEXITED(status) || WEXITSTATUS(status) > 1) {
    return s.Fail(absl::InternalError("diff failed (is diffutils installed?)"));
  }
  return WEXITSTATUS(status);
}

}  // namespace tollgate::cli
