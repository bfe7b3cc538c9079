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
#include <initializer_list>
#include <optional>
#include <string>
#include <utility>

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

// One List call's paging: its limit, its continue token and the fields every page ends with.
// The List calls differ in how they find and order their items, not in how they page.
class ListPager {
 public:
  // Validates `limit` (INVALID_ARGUMENT naming it) and decodes `continue_token`, if set, as a
  // token of the listing named by `listing_parts` (the call and its filters).
  static absl::StatusOr<ListPager> Start(std::initializer_list<absl::string_view> listing_parts,
                                         int64_t limit, absl::string_view continue_token);

  // The previous page's token; nullopt on a first page.
  const std::optional<ContinueToken>& token() const { return token_; }
  int64_t limit() const { return limit_; }

  // Whether a page holding `items` takes another under the limit.
  bool HasRoom(int64_t items) const { return limit_ <= 0 || items < limit_; }
  // Whether a page that grew to `bytes` with its `items`-th item must give that item back, so it
  // fits a gRPC message: past kMaxPageBytes, never the first item (Kubernetes lets a server
  // return fewer items than asked for). An unlimited listing asked for everything.
  bool Overflows(int64_t items, int64_t bytes) const {
    return limit_ > 0 && items > 1 && bytes > kMaxPageBytes;
  }

  // Ends a page of `taken` items read at `revision`: sets the response's revision and
  // remaining_item_count and, when items remain, the token of the page after `last_key`.
  template <typename ListResponse>
  void Finish(ListResponse& response, int64_t revision, int64_t taken, int64_t remaining,
              absl::string_view last_key) const {
    response.set_revision(revision);
    response.set_remaining_item_count(remaining);
    if (remaining > 0 && taken > 0) {
      response.set_continue_token(NextToken(revision, taken, last_key));
    }
  }

 private:
  ListPager(std::string listing, int64_t limit, std::optional<ContinueToken> token)
      : listing_(std::move(listing)), limit_(limit), token_(std::move(token)) {}

  std::string NextToken(int64_t revision, int64_t taken, absl::string_view last_key) const;

  std::string listing_;
  int64_t limit_;
  std::optional<ContinueToken> token_;
};

// Calls `visit` for every workload change committed after `token.revision` up to `revision`
// (DELETED events carry only namespace and name) until it returns false, which means the
// change touches the rest of the listing. OK when every change was visited and none did;
// OUT_OF_RANGE (ContinueExpired) when one did, when the change log no longer reaches back to
// the token's revision, when the store is behind it, or past kMaxContinueChangeRecords records.
absl::Status CheckUnchangedSince(const storage::Store& store, const ContinueToken& token,
                                 int64_t revision,
                                 const std::function<bool(const v1::WatchEvent&)>& visit);

}  // namespace tollgate::engine
