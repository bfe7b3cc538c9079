#pragma once

// Kubernetes-style paging of List calls: `limit` and an opaque continue token.
//
// A token records the listing it belongs to (the RPC and its filters), the revision the first
// page was read at, how many items came before, and the last key returned. The state is not
// versioned (there is no MVCC snapshot to read an old revision from), so a later page is served
// from the current state only when that provably equals the first page's revision for the
// items still to come: the caller checks the change log between the two revisions for changes
// that could touch them. When it cannot prove it (too many changes, a compacted change log, a
// store that moved backwards) the page fails with OUT_OF_RANGE "continue token expired" and
// the client lists again, as Kubernetes answers 410 Gone. docs/api.md has the user's view.

#include <cstdint>
#include <functional>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "storage/store.h"
#include "tollgate/v1/service.pb.h"

namespace tollgate::engine {

// A page stops growing past this many bytes even below `limit` (Kubernetes lets a server return
// fewer items than asked for), so a page always fits gRPC's default 4 MiB message limit.
inline constexpr int64_t kMaxPageBytes = 3 * 1024 * 1024;
// Change-log records a continuation inspects before it gives up and expires the token.
inline constexpr int64_t kMaxContinueChangeRecords = 20000;

struct ContinueToken {
  // Which listing: the RPC and its filters. A token is refused by any other listing.
  std::string listing;
  // The revision every page of the listing reflects.
  int64_t revision = 0;
  // Items returned before the next page.
  int64_t offset = 0;
  // The last item's key in the listing's order.
  std::string last_key;
};

std::string EncodeContinueToken(const ContinueToken& token);

// INVALID_ARGUMENT naming `continue_token` when `text` is not a token of `listing`.
absl::StatusOr<ContinueToken> DecodeContinueToken(absl::string_view text,
                                                  absl::string_view listing);

// INVALID_ARGUMENT for a negative limit.
absl::Status ValidateLimit(int64_t limit);

// OUT_OF_RANGE "continue token expired" with the reason and what to do.
absl::Status ContinueExpired(const ContinueToken& token, absl::string_view reason);

// Calls `visit` for every workload change committed after `token.revision` up to `revision`
// (DELETED events carry only namespace and name) until it returns false, which means the
// change touches the rest of the listing. OK when every change was visited and none did;
// OUT_OF_RANGE (ContinueExpired) when one did, when the change log no longer reaches back to
// the token's revision, when the store is behind it, or past kMaxContinueChangeRecords records.
absl::Status CheckUnchangedSince(const storage::Store& store, const ContinueToken& token,
                                 int64_t revision,
                                 const std::function<bool(const v1::WatchEvent&)>& visit);

}  // namespace tollgate::engine
