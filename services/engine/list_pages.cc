#include "services/engine/list_pages.h"

#include <string>
#include <vector>

#include "absl/strings/escaping.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "core/status_macros.h"

namespace tollgate::engine {
namespace {

// Bumped if the layout changes, so an old token is refused rather than misread.
constexpr absl::string_view kTokenVersion = "t1";
// Names and keys never contain it (Kubernetes names are DNS labels and subdomains).
constexpr char kSeparator = '\x1f';

absl::Status InvalidToken(absl::string_view why) {
  return absl::InvalidArgumentError(absl::StrCat(
      "continue_token: ", why, "; pass the token from the previous page of the same listing"));
}

}  // namespace

std::string EncodeContinueToken(const ContinueToken& token) {
  const std::string raw =
      absl::StrCat(kTokenVersion, std::string(1, kSeparator), token.listing,
                   std::string(1, kSeparator), token.revision, std::string(1, kSeparator),
                   token.offset, std::string(1, kSeparator), token.last_key);
  return absl::WebSafeBase64Escape(raw);
}

absl::StatusOr<ContinueToken> DecodeContinueToken(absl::string_view text,
                                                  absl::string_view listing) {
  std::string raw;
  if (!absl::WebSafeBase64Unescape(text, &raw)) return InvalidToken("not a continue token");
  std::vector<std::string> parts = absl::StrSplit(raw, absl::MaxSplits(kSeparator, 4));
  ContinueToken token;
  if (parts.size() != 5 || parts[0] != kTokenVersion ||
      !absl::SimpleAtoi(parts[2], &token.revision) || !absl::SimpleAtoi(parts[3], &token.offset) ||
      token.revision < 0 || token.offset < 0) {
    return InvalidToken("not a continue token");
  }
  if (parts[1] != listing) {
    return InvalidToken("the token belongs to a different listing (another call or other filters)");
  }
  token.listing = std::move(parts[1]);
  token.last_key = std::move(parts[4]);
  return token;
}

absl::Status ValidateLimit(int64_t limit) {
  if (limit >= 0) return absl::OkStatus();
  return absl::InvalidArgumentError(
      absl::StrCat("limit: must be greater than or equal to 0, got ", limit));
}

absl::StatusOr<ListPager> ListPager::Start(std::initializer_list<absl::string_view> listing_parts,
                                           int64_t limit, absl::string_view continue_token) {
  TOLLGATE_RETURN_IF_ERROR(ValidateLimit(limit));
  std::string listing = absl::StrJoin(listing_parts, "\x1e");
  std::optional<ContinueToken> token;
  if (!continue_token.empty()) {
    TOLLGATE_ASSIGN_OR_RETURN(token, DecodeContinueToken(continue_token, listing));
  }
  return ListPager(std::move(listing), limit, std::move(token));
}

std::string ListPager::NextToken(int64_t revision, int64_t taken,
                                 absl::string_view last_key) const {
  return EncodeContinueToken(
      ContinueToken{.listing = listing_,
                    .revision = revision,
                    .offset = (token_.has_value() ? token_->offset : 0) + taken,
                    .last_key = std::string(last_key)});
}

absl::Status ContinueExpired(const ContinueToken& token, absl::string_view reason) {
  return absl::OutOfRangeError(
      absl::StrCat("continue token expired: the listing was read at revision ", token.revision,
                   " and ", reason, "; list again without continue_token"));
}

absl::Status CheckUnchangedSince(const storage::Store& store, const ContinueToken& token,
                                 int64_t revision,
                                 const std::function<bool(const v1::WatchEvent&)>& visit) {
  if (revision < token.revision) {
    return ContinueExpired(token,
                           absl::StrCat("the store is now at the older revision ", revision));
  }
  int64_t after = token.revision;
  int64_t records = 0;
  while (after < revision) {
    absl::StatusOr<std::vector<storage::ChangeLogEntry>> entries =
        store.ReadChanges(after, revision - after);
    if (!entries.ok()) {
      if (absl::IsFailedPrecondition(entries.status())) {
        return ContinueExpired(token, "the change log no longer reaches back to it");
      }
      return entries.status();
    }
    if (entries->empty()) break;
    for (const storage::ChangeLogEntry& entry : *entries) {
      if (entry.revision > revision) return absl::OkStatus();
      for (const std::string& record : entry.records) {
        if (++records > kMaxContinueChangeRecords) {
          return ContinueExpired(token, absl::StrCat("more than ", kMaxContinueChangeRecords,
                                                     " workload changes followed"));
        }
        v1::WatchEvent event;
        if (!event.ParseFromString(record)) {
          return absl::DataLossError(
              absl::StrCat("change log entry ", entry.revision, " is not a WatchEvent"));
        }
        if (!visit(event)) {
          return ContinueExpired(token, absl::StrCat("revision ", entry.revision, " changed ",
                                                     event.workload().metadata().namespace_(), "/",
                                                     event.workload().metadata().name(),
                                                     ", which the rest of the listing includes"));
        }
      }
      after = entry.revision;
    }
  }
  return absl::OkStatus();
}

}  // namespace tollgate::engine
