// admin backup: a checkpoint of the live store, written by tollgated (AdminService).
#include <string>

#include "absl/strings/str_cat.h"
#include "cmd/tollgate/commands.h"

namespace tollgate::cli {

int RunAdmin(Session& s, const ParsedFlags& args) {
  if (args.positional.size() != 1 || args.positional[0] != "backup") {
    return s.UsageError(
        args.positional.empty()
            ? "admin: want a subcommand: backup"
            : absl::StrCat("admin: unknown subcommand \"", args.positional[0], "\" (want backup)"));
  }
  v1::BackupRequest request;
  request.set_to(args.Get("to"));
  if (request.to().empty()) return s.UsageError("admin backup: --to=DIR is required");
  absl::StatusOr<v1::BackupResponse> done = s.client().Backup(request);
  if (!done.ok()) return s.Fail(done.status());
  s.out() << "backup written to " << done->to() << " at revision " << done->revision() << " (store "
          << done->store_id() << ", epoch " << done->store_epoch() << ")\n"
          << "restore: tollgated restore --from=" << done->to() << " --data-dir=NEW_DIR\n";
  return kExitOk;
}

}  // namespace tollgate::cli
