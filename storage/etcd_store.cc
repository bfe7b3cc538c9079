#include "storage/etcd_store.h"

#include <algorithm>
#include <limits>
#include <utility>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_split.h"
#include "absl/time/clock.h"
#include "storage/record_encoding.h"

namespace tollgate::storage {
namespace {

using etcdserverpb::Compare;
using etcdserverpb::RequestOp;
using etcdserverpb::ResponseOp;
using etcdserverpb::TxnRequest;
using etcdserverpb::TxnResponse;

// Room left in every request for compares, framing and the revision put.
constexpr int64_t kTxnOverheadBytes = 16 * 1024;
// Per-op framing in a Txn request, counted on top of key and value sizes.
constexpr int64_t kOpOverheadBytes = 32;
// Keys per Range page: pages bound memory, and a page's values stay far below gRPC's limits.
constexpr int64_t kRangePage = 256;
constexpr absl::string_view kNotLeader = "not leader: ";

// ---- Encodings ----

std::string RevisionKeyPart(int64_t revision) { return absl::StrFormat("%020d", revision); }

absl::StatusOr<int64_t> ParseInt(absl::string_view text, absl::string_view what) {
  int64_t value = 0;
  if (!absl::SimpleAtoi(text, &value) || value < 0) {
    return absl::DataLossError(
        absl::StrCat("etcd store: ", what, " is \"", text, "\", not a non-negative integer"));
  }
  return value;
}

RequestOp RangeOp(std::string key, std::string range_end = "", bool count_only = false) {
  RequestOp op;
  auto* range = op.mutable_request_range();
  range->set_key(std::move(key));
  if (!range_end.empty()) range->set_range_end(std::move(range_end));
  if (count_only) range->set_count_only(true);
  return op;
}

RequestOp PutOp(std::string key, std::string value) {
  RequestOp op;
  op.mutable_request_put()->set_key(std::move(key));
  op.mutable_request_put()->set_value(std::move(value));
  return op;
}

RequestOp DeleteOp(std::string key, std::string range_end = "") {
  RequestOp op;
  op.mutable_request_delete_range()->set_key(std::move(key));
  if (!range_end.empty()) op.mutable_request_delete_range()->set_range_end(std::move(range_end));
  return op;
}

int64_t OpBytes(const RequestOp& op) {
  if (op.has_request_put()) {
    return static_cast<int64_t>(op.request_put().key().size() + op.request_put().value().size()) +
           kOpOverheadBytes;
  }
  if (op.has_request_delete_range()) {
    return static_cast<int64_t>(op.request_delete_range().key().size() +
                                op.request_delete_range().range_end().size()) +
           kOpOverheadBytes;
  }
  return kOpOverheadBytes;
}

}  // namespace

bool IsNotLeaderError(const absl::Status& status) {
  return status.code() == absl::StatusCode::kFailedPrecondition &&
         absl::StartsWith(status.message(), kNotLeader);
}

// A large commit's content: the final value of every key it touches (nullopt: deleted) and the
// change-log entries of its revisions. Staged as chunks under stage/ before the commit point,
// read back by readers that find the marker.
struct EtcdStore::Staged {
  int64_t first = 0;
  int64_t last = 0;
  std::map<std::string, std::optional<std::string>, std::less<>> ops;
  std::vector<ChangeLogEntry> entries;

  std::string Encode() const {
    std::string out;
    PutVarint(out, first);
    PutVarint(out, last);
    PutVarint(out, ops.size());
    for (const auto& [key, value] : ops) {
      out.push_back(value.has_value() ? 'p' : 'd');
      PutBytes(out, key);
      if (value.has_value()) PutBytes(out, *value);
    }
    PutVarint(out, entries.size());
    for (const ChangeLogEntry& entry : entries) {
      PutVarint(out, entry.revision);
      PutBytes(out, EncodeRecords(entry.records));
    }
    return out;
  }

  static absl::StatusOr<Staged> Decode(absl::string_view in) {
    Staged staged;
    uint64_t first = 0, last = 0, count = 0;
    const absl::Status bad = absl::DataLossError("etcd store: a staged commit is malformed");
    if (!GetVarint(in, first) || !GetVarint(in, last) || !GetVarint(in, count)) return bad;
    staged.first = static_cast<int64_t>(first);
    staged.last = static_cast<int64_t>(last);
    for (uint64_t i = 0; i < count; ++i) {
      if (in.empty()) return bad;
      const char kind = in.front();
      in.remove_prefix(1);
      std::string key;
      if (!GetBytes(in, key)) return bad;
      if (kind == 'p') {
        std::string value;
        if (!GetBytes(in, value)) return bad;
        staged.ops.emplace(std::move(key), std::move(value));
      } else if (kind == 'd') {
        staged.ops.emplace(std::move(key), std::nullopt);
      } else {
        return bad;
      }
    }
    if (!GetVarint(in, count)) return bad;
    for (uint64_t i = 0; i < count; ++i) {
      uint64_t revision = 0;
      std::string records;
      ChangeLogEntry entry;
      if (!GetVarint(in, revision) || !GetBytes(in, records) ||
          !DecodeRecords(records, entry.records)) {
        return bad;
      }
      entry.revision = static_cast<int64_t>(revision);
      staged.entries.push_back(std::move(entry));
    }
    return staged;
  }
};

class EtcdStore::Snapshot : public StoreSnapshot {
 public:
  Snapshot(const EtcdStore& store, ReadPoint point) : store_(store), point_(std::move(point)) {
    store_.Pin(point_.etcd_revision);
  }
  ~Snapshot() override { store_.Unpin(point_.etcd_revision); }
  int64_t revision() const override { return point_.revision; }
  absl::StatusOr<int64_t> ScanPage(
      absl::string_view prefix, absl::string_view start_after, int64_t limit,
      const std::function<void(absl::string_view key, absl::string_view value)>& visit)
      const override {
    return store_.ScanAt(point_, prefix, start_after, limit,
                         [&](absl::string_view key, absl::string_view value) {
                           visit(key, value);
                           return true;
                         });
  }

 private:
  const EtcdStore& store_;
  const ReadPoint point_;
};

std::string EtcdStore::Key(absl::string_view suffix) const {
  return absl::StrCat(options_.key_prefix, suffix);
}

absl::StatusOr<std::unique_ptr<EtcdStore>> EtcdStore::Open(const EtcdStoreOptions& options) {
  if (options.key_prefix.empty()) {
    return absl::InvalidArgumentError("etcd store: key_prefix must not be empty");
  }
  if (options.max_txn_ops < 8) {
    return absl::InvalidArgumentError(
        absl::StrCat("etcd store: max_txn_ops must be >= 8, got ", options.max_txn_ops));
  }
  if (options.max_request_bytes < 4 * kTxnOverheadBytes) {
    return absl::InvalidArgumentError(
        absl::StrCat("etcd store: max_request_bytes must be >= ", 4 * kTxnOverheadBytes, ", got ",
                     options.max_request_bytes));
  }
  absl::StatusOr<std::unique_ptr<EtcdClient>> client = EtcdClient::Connect(options.connection);
  if (!client.ok()) return client.status();
  std::unique_ptr<EtcdStore> store(new EtcdStore(options, *std::move(client)));

  // Creates the identity with the revision and compaction keys, once: conditional on the
  // identity key not existing, so it is safe to repeat (and to retry on another member).
  const std::string identity_key = store->Key("meta/identity");
  TxnRequest init;
  Compare* absent = init.add_compare();
  absent->set_key(identity_key);
  absent->set_target(Compare::CREATE);
  absent->set_result(Compare::EQUAL);
  absent->set_create_revision(0);
  const std::string new_identity = absl::StrCat(NewStoreId(), " 1");
  *init.add_success() = PutOp(identity_key, new_identity);
  *init.add_success() = PutOp(store->Key("meta/revision"), "0");
  *init.add_success() = PutOp(store->Key("meta/compacted"), "0");
  *init.add_failure() = RangeOp(identity_key);
  absl::StatusOr<TxnResponse> created = store->client_->ReadTxn(init);
  if (!created.ok()) return created.status();
  std::string identity_text = new_identity;
  if (!created->succeeded()) {
    const auto& kvs = created->responses(0).response_range().kvs();
    if (kvs.empty()) return absl::DataLossError("etcd store: identity key vanished");
    identity_text = kvs[0].value();
  }
  const std::vector<std::string> parts = absl::StrSplit(identity_text, ' ');
  int64_t epoch = 0;
  if (parts.size() != 2 || parts[0].size() != 32 || !absl::SimpleAtoi(parts[1], &epoch) ||
      epoch < 1) {
    return absl::DataLossError(absl::StrCat("etcd store: ", identity_key, " is \"", identity_text,
                                            "\", not \"<32 hex digits> <epoch>\""));
  }
  store->identity_ = StoreIdentity{.store_id = parts[0], .epoch = epoch};

  absl::StatusOr<ReadPoint> point = store->ReadMeta({}, nullptr);
  if (!point.ok()) return point.status();
  return store;
}

EtcdStore::~EtcdStore() = default;

void EtcdStore::NoteRevision(int64_t revision) const {
  int64_t seen = revision_.load();
  while (revision > seen && !revision_.compare_exchange_weak(seen, revision)) {
  }
}

absl::StatusOr<EtcdStore::ReadPoint> EtcdStore::ReadMeta(const std::vector<RequestOp>& extra,
                                                         std::vector<ResponseOp>* extra_out) const {
  // One read-only Txn: every range in it sees the same etcd revision.
  TxnRequest txn;
  *txn.add_success() = RangeOp(Key("meta/revision"));
  *txn.add_success() = RangeOp(Key("meta/compacted"));
  *txn.add_success() = RangeOp(Key("meta/staged"));
  *txn.add_success() = RangeOp(Key("stage/"), EtcdPrefixEnd(Key("stage/")), /*count_only=*/true);
  for (const RequestOp& op : extra) *txn.add_success() = op;
  absl::StatusOr<TxnResponse> response = client_->ReadTxn(txn);
  if (!response.ok()) return response.status();
  ReadPoint point;
  point.etcd_revision = response->header().revision();
  const auto& revision_kvs = response->responses(0).response_range().kvs();
  if (revision_kvs.empty()) {
    return absl::DataLossError(absl::StrCat("etcd store: ", Key("meta/revision"), " is missing"));
  }
  absl::StatusOr<int64_t> revision = ParseInt(revision_kvs[0].value(), "the revision key");
  if (!revision.ok()) return revision.status();
  point.revision = *revision;
  point.revision_mod = revision_kvs[0].mod_revision();
  const auto& compacted_kvs = response->responses(1).response_range().kvs();
  if (!compacted_kvs.empty()) {
    absl::StatusOr<int64_t> compacted = ParseInt(compacted_kvs[0].value(), "the compacted key");
    if (!compacted.ok()) return compacted.status();
    point.compacted = *compacted;
  }
  const auto& marker_kvs = response->responses(2).response_range().kvs();
  if (!marker_kvs.empty()) {
    point.marker_mod = marker_kvs[0].mod_revision();
    absl::StatusOr<std::shared_ptr<const Staged>> staged =
        LoadStaged(point.etcd_revision, marker_kvs[0].value());
    if (!staged.ok()) return staged.status();
    point.staged = *std::move(staged);
  }
  point.stray_chunks = marker_kvs.empty() && response->responses(3).response_range().count() > 0;
  if (extra_out != nullptr) {
    extra_out->assign(response->responses().begin() + 4, response->responses().end());
  }
  NoteRevision(point.revision);
  int64_t compacted_seen = compacted_.load();
  while (point.compacted > compacted_seen &&
         !compacted_.compare_exchange_weak(compacted_seen, point.compacted)) {
  }
  return point;
}

absl::StatusOr<std::shared_ptr<const EtcdStore::Staged>> EtcdStore::LoadStaged(
    int64_t etcd_revision, absl::string_view marker) const {
  const std::vector<std::string> parts = absl::StrSplit(marker, ' ');
  int64_t first = 0, last = 0, chunks = 0;
  if (parts.size() != 3 || !absl::SimpleAtoi(parts[0], &first) ||
      !absl::SimpleAtoi(parts[1], &last) || !absl::SimpleAtoi(parts[2], &chunks) || chunks < 1) {
    return absl::DataLossError(
        absl::StrCat("etcd store: the staged-commit marker is \"", marker, "\""));
  }
  const std::string chunk_prefix = Key(absl::StrCat("stage/", RevisionKeyPart(last), "/"));
  std::string payload;
  int64_t next = 0;
  std::string from = chunk_prefix;
  // Chunks are near the request limit each: read them a few at a time.
  while (next < chunks) {
    etcdserverpb::RangeRequest range;
    range.set_key(from);
    range.set_range_end(EtcdPrefixEnd(chunk_prefix));
    range.set_revision(etcd_revision);
    range.set_limit(4);
    absl::StatusOr<etcdserverpb::RangeResponse> page = client_->Range(range);
    if (!page.ok()) return page.status();
    for (const mvccpb::KeyValue& kv : page->kvs()) {
      if (kv.key() != chunk_prefix + absl::StrFormat("%06d", next)) {
        return absl::DataLossError(absl::StrCat("etcd store: staged commit ", last,
                                                " is missing chunk ", next, " (found ", kv.key(),
                                                ")"));
      }
      payload += kv.value();
      if (++next == chunks) break;
    }
    if (next < chunks && (!page->more() || page->kvs().empty())) {
      return absl::DataLossError(absl::StrCat("etcd store: staged commit ", last, " has ", next,
                                              " of its ", chunks, " chunks"));
    }
    if (!page->kvs().empty()) from = page->kvs().rbegin()->key() + std::string(1, '\0');
  }
  absl::StatusOr<Staged> staged = Staged::Decode(payload);
  if (!staged.ok()) return staged.status();
  if (staged->first != first || staged->last != last) {
    return absl::DataLossError(absl::StrCat("etcd store: staged commit ", first, "..", last,
                                            " holds revisions ", staged->first, "..",
                                            staged->last));
  }
  return std::make_shared<const Staged>(*std::move(staged));
}

absl::StatusOr<int64_t> EtcdStore::ScanAt(
    const ReadPoint& point, absl::string_view prefix, absl::string_view start_after, int64_t limit,
    const std::function<bool(absl::string_view key, absl::string_view value)>& visit) const {
  if (limit < 1) {
    return absl::InvalidArgumentError(absl::StrCat("ScanPage: limit must be >= 1, got ", limit));
  }
  const std::string data_prefix = Key("data/");
  std::string from = data_prefix + std::string(prefix);
  if (!start_after.empty() && start_after >= prefix) {
    from = std::max(from, absl::StrCat(data_prefix, start_after, std::string(1, '\0')));
  }
  const std::string end = EtcdPrefixEnd(data_prefix + std::string(prefix));

  // The staged commit's keys win over etcd's (which may be half applied at this point).
  using OverlayIt = std::map<std::string, std::optional<std::string>, std::less<>>::const_iterator;
  OverlayIt overlay{};
  OverlayIt overlay_end{};
  if (point.staged != nullptr) {
    overlay = point.staged->ops.lower_bound(absl::string_view(from).substr(data_prefix.size()));
    overlay_end = point.staged->ops.end();
  }
  const auto overlay_in_prefix = [&] {
    return point.staged != nullptr && overlay != overlay_end &&
           absl::StartsWith(overlay->first, prefix);
  };

  int64_t visited = 0;
  bool stopped = false;
  const auto emit = [&](absl::string_view key, absl::string_view value) {
    ++visited;
    if (!visit(key, value) || visited >= limit) stopped = true;
  };
  bool more = true;
  while (more && !stopped) {
    etcdserverpb::RangeRequest range;
    range.set_key(from);
    range.set_range_end(end);
    range.set_revision(point.etcd_revision);
    range.set_limit(std::min<int64_t>(kRangePage, limit - visited));
    absl::StatusOr<etcdserverpb::RangeResponse> page = client_->Range(range);
    if (!page.ok()) return page.status();
    for (const mvccpb::KeyValue& kv : page->kvs()) {
      if (stopped) break;
      const absl::string_view key = absl::string_view(kv.key()).substr(data_prefix.size());
      while (!stopped && overlay_in_prefix() && overlay->first < key) {
        if (overlay->second.has_value()) emit(overlay->first, *overlay->second);
        ++overlay;
      }
      if (stopped) break;
      if (overlay_in_prefix() && overlay->first == key) {
        if (overlay->second.has_value()) emit(overlay->first, *overlay->second);
        ++overlay;
        continue;
      }
      emit(key, kv.value());
    }
    more = page->more() && !page->kvs().empty();
    if (more) from = page->kvs().rbegin()->key() + std::string(1, '\0');
  }
  while (!stopped && overlay_in_prefix()) {
    if (overlay->second.has_value()) emit(overlay->first, *overlay->second);
    ++overlay;
  }
  return visited;
}

absl::StatusOr<std::optional<std::string>> EtcdStore::Get(absl::string_view key) const {
  std::vector<ResponseOp> out;
  absl::StatusOr<ReadPoint> point = ReadMeta({RangeOp(Key(absl::StrCat("data/", key)))}, &out);
  if (!point.ok()) return point.status();
  if (point->staged != nullptr) {
    auto it = point->staged->ops.find(key);
    if (it != point->staged->ops.end()) return it->second;
  }
  const auto& kvs = out.at(0).response_range().kvs();
  if (kvs.empty()) return std::nullopt;
  return kvs[0].value();
}

absl::Status EtcdStore::Scan(
    absl::string_view prefix,
    const std::function<bool(absl::string_view key, absl::string_view value)>& visit) const {
  absl::StatusOr<ReadPoint> point = ReadMeta({}, nullptr);
  if (!point.ok()) return point.status();
  // Pinned like a snapshot: a compaction meanwhile must not remove the revision read at.
  Pin(point->etcd_revision);
  absl::Status status =
      ScanAt(*point, prefix, "", std::numeric_limits<int64_t>::max(), visit).status();
  Unpin(point->etcd_revision);
  return status;
}

absl::StatusOr<std::unique_ptr<StoreSnapshot>> EtcdStore::TakeSnapshot() const {
  absl::StatusOr<ReadPoint> point = ReadMeta({}, nullptr);
  if (!point.ok()) return point.status();
  return std::unique_ptr<StoreSnapshot>(new Snapshot(*this, *std::move(point)));
}

absl::StatusOr<EtcdStore::ReadAllPoint> EtcdStore::ReadAll(
    const std::function<void(absl::string_view key, absl::string_view value)>& visit) const {
  absl::StatusOr<ReadPoint> point = ReadMeta({}, nullptr);
  if (!point.ok()) return point.status();
  // Pinned like a snapshot: this process's own compaction must not pass the point mid-read.
  Pin(point->etcd_revision);
  absl::StatusOr<int64_t> visited = ScanAt(*point, "", "", std::numeric_limits<int64_t>::max(),
                                           [&](absl::string_view key, absl::string_view value) {
                                             visit(key, value);
                                             return true;
                                           });
  Unpin(point->etcd_revision);
  if (!visited.ok()) return visited.status();
  return ReadAllPoint{point->etcd_revision, point->revision, point->compacted,
                      point->staged != nullptr};
}

void EtcdStore::Pin(int64_t etcd_revision) const {
  absl::MutexLock lock(&pins_mu_);
  pins_.insert(etcd_revision);
}

void EtcdStore::Unpin(int64_t etcd_revision) const {
  absl::MutexLock lock(&pins_mu_);
  auto it = pins_.find(etcd_revision);
  if (it != pins_.end()) pins_.erase(it);
}

absl::StatusOr<std::vector<ChangeLogEntry>> EtcdStore::ReadChanges(int64_t after_revision,
                                                                   int64_t limit) const {
  if (after_revision < 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("ReadChanges: after_revision must be >= 0, got ", after_revision));
  }
  if (limit < 1) {
    return absl::InvalidArgumentError(absl::StrCat("ReadChanges: limit must be >= 1, got ", limit));
  }
  absl::StatusOr<ReadPoint> point = ReadMeta({}, nullptr);
  if (!point.ok()) return point.status();
  if (after_revision < point->compacted) {
    return absl::FailedPreconditionError(absl::StrCat("revision ", after_revision + 1,
                                                      " has been compacted; oldest available is ",
                                                      point->compacted + 1));
  }
  std::vector<ChangeLogEntry> entries;
  if (after_revision >= point->revision) return entries;
  Pin(point->etcd_revision);
  struct Unpinner {
    const EtcdStore& store;
    int64_t revision;
    ~Unpinner() { store.Unpin(revision); }
  } unpin{*this, point->etcd_revision};
  // Entries of a staged commit come from its payload, not from the (maybe half written) log.
  const int64_t applied_last =
      point->staged != nullptr ? point->staged->first - 1 : point->revision;
  const std::string log_prefix = Key("log/");
  if (after_revision < applied_last) {
    std::string from = log_prefix + RevisionKeyPart(after_revision + 1);
    const std::string end = log_prefix + RevisionKeyPart(applied_last + 1);
    int64_t current = -1;
    std::string encoded;
    bool more = true;
    const auto finish_entry = [&]() -> absl::Status {
      if (current < 0) return absl::OkStatus();
      ChangeLogEntry entry;
      entry.revision = current;
      if (!DecodeRecords(encoded, entry.records)) {
        return absl::DataLossError(
            absl::StrCat("etcd store: change-log entry ", current, " is malformed"));
      }
      entries.push_back(std::move(entry));
      return absl::OkStatus();
    };
    while (more) {
      etcdserverpb::RangeRequest range;
      range.set_key(from);
      range.set_range_end(end);
      range.set_revision(point->etcd_revision);
      range.set_limit(kRangePage);
      absl::StatusOr<etcdserverpb::RangeResponse> page = client_->Range(range);
      if (!page.ok()) return page.status();
      for (const mvccpb::KeyValue& kv : page->kvs()) {
        // log/<20-digit revision>/<6-digit part>
        const absl::string_view rest = absl::string_view(kv.key()).substr(log_prefix.size());
        int64_t revision = 0;
        if (rest.size() != 27 || !absl::SimpleAtoi(rest.substr(0, 20), &revision)) {
          return absl::DataLossError(absl::StrCat("etcd store: bad change-log key ", kv.key()));
        }
        if (revision != current) {
          if (absl::Status s = finish_entry(); !s.ok()) return s;
          encoded.clear();
          current = revision;
          if (static_cast<int64_t>(entries.size()) >= limit) {
            more = false;
            current = -1;
            break;
          }
        }
        encoded += kv.value();
      }
      if (more) {
        more = page->more() && !page->kvs().empty();
        if (more) from = page->kvs().rbegin()->key() + std::string(1, '\0');
      }
    }
    if (absl::Status s = finish_entry(); !s.ok()) return s;
  }
  if (point->staged != nullptr) {
    for (const ChangeLogEntry& entry : point->staged->entries) {
      if (static_cast<int64_t>(entries.size()) >= limit) break;
      if (entry.revision > after_revision) entries.push_back(entry);
    }
  }
  if (static_cast<int64_t>(entries.size()) > limit) entries.resize(limit);
  // The log has no gaps: a missing entry is damage, not an empty batch.
  for (size_t i = 0; i < entries.size(); ++i) {
    if (entries[i].revision != after_revision + 1 + static_cast<int64_t>(i)) {
      return absl::DataLossError(absl::StrCat("etcd store: change-log entry ",
                                              after_revision + 1 + static_cast<int64_t>(i),
                                              " is missing (found ", entries[i].revision, ")"));
    }
  }
  return entries;
}

absl::StatusOr<int64_t> EtcdStore::FetchRevision() const {
  absl::StatusOr<ReadPoint> point = ReadMeta({}, nullptr);
  if (!point.ok()) return point.status();
  return point->revision;
}

absl::StatusOr<int64_t> EtcdStore::WaitForCommit(int64_t after_revision,
                                                 absl::Duration timeout) const {
  const absl::Time deadline = absl::Now() + timeout;
  while (true) {
    etcdserverpb::RangeRequest range;
    range.set_key(Key("meta/revision"));
    absl::StatusOr<etcdserverpb::RangeResponse> current = client_->Range(range);
    if (!current.ok()) return current.status();
    if (current->kvs().empty()) return absl::DataLossError("etcd store: revision key is missing");
    absl::StatusOr<int64_t> revision = ParseInt(current->kvs(0).value(), "the revision key");
    if (!revision.ok()) return revision.status();
    NoteRevision(*revision);
    if (*revision > after_revision) return *revision;
    const absl::Duration left = deadline - absl::Now();
    if (left <= absl::ZeroDuration()) {
      return absl::DeadlineExceededError(absl::StrCat("no commit after revision ", after_revision,
                                                      " within ", absl::FormatDuration(timeout)));
    }
    absl::StatusOr<std::vector<mvccpb::Event>> events =
        client_->WatchOnce(Key("meta/revision"), current->kvs(0).mod_revision() + 1, left);
    if (!events.ok() && events.status().code() != absl::StatusCode::kDeadlineExceeded &&
        events.status().code() != absl::StatusCode::kUnavailable) {
      return events.status();
    }
    if (!events.ok() && events.status().code() == absl::StatusCode::kUnavailable) {
      // The member went away; the next read moves to another one. Pace the retry.
      absl::SleepFor(std::min(absl::Milliseconds(100), deadline - absl::Now()));
    }
    // Either way, re-read: the revision key's value is the truth, events only wake us up.
  }
}

void EtcdStore::SetFence(std::optional<EtcdFence> fence) {
  absl::MutexLock lock(&mu_);
  fence_ = std::move(fence);
}

void EtcdStore::AddGuardsLocked(TxnRequest& txn, bool expect_no_marker) {
  Compare* revision = txn.add_compare();
  revision->set_key(Key("meta/revision"));
  revision->set_target(Compare::MOD);
  revision->set_result(Compare::EQUAL);
  revision->set_mod_revision(revision_mod_);
  if (expect_no_marker) {
    Compare* marker = txn.add_compare();
    marker->set_key(Key("meta/staged"));
    marker->set_target(Compare::CREATE);
    marker->set_result(Compare::EQUAL);
    marker->set_create_revision(0);
  }
  if (fence_.has_value()) {
    Compare* fence = txn.add_compare();
    fence->set_key(fence_->key);
    fence->set_target(Compare::CREATE);
    fence->set_result(Compare::EQUAL);
    fence->set_create_revision(fence_->create_revision);
  }
  // Read on failure, to say which guard failed.
  *txn.add_failure() = RangeOp(Key("meta/revision"));
  if (fence_.has_value()) *txn.add_failure() = RangeOp(fence_->key);
}

absl::Status EtcdStore::ExplainFailureLocked(const TxnResponse& response, absl::string_view what) {
  if (fence_.has_value() && response.responses_size() >= 2) {
    const auto& kvs = response.responses(1).response_range().kvs();
    const int64_t now = kvs.empty() ? 0 : kvs[0].create_revision();
    if (now != fence_->create_revision) {
      return absl::FailedPreconditionError(
          absl::StrCat(kNotLeader, "the leadership key ", fence_->key, " ",
                       kvs.empty() ? std::string("is gone")
                                   : absl::StrCat("was recreated at etcd revision ", now),
                       " (this process held it from etcd revision ", fence_->create_revision, "); ",
                       what, " was not written"));
    }
  }
  // Another writer moved the revision key, or a staged commit is pending: re-read before the
  // next write.
  needs_sync_ = true;
  std::string revision = "?";
  if (response.responses_size() >= 1 && !response.responses(0).response_range().kvs().empty()) {
    revision = response.responses(0).response_range().kvs(0).value();
  }
  return absl::AbortedError(absl::StrCat(
      "etcd store: ", what, " was not written: the store moved under this writer (revision now ",
      revision, ", this writer expected ", written_revision_,
      "); another process is writing the same key prefix"));
}

absl::StatusOr<TxnResponse> EtcdStore::WriteTxnLocked(TxnRequest& txn, absl::string_view what,
                                                      bool* unknown) {
  absl::StatusOr<TxnResponse> response = client_->Txn(txn);
  if (!response.ok()) {
    // etcd's refusals of the request itself (too many ops, too large, bad request) applied
    // nothing; anything else may still be applied by etcd: fence it off before the next write.
    const absl::StatusCode code = response.status().code();
    if (code == absl::StatusCode::kInvalidArgument ||
        code == absl::StatusCode::kResourceExhausted ||
        code == absl::StatusCode::kPermissionDenied || code == absl::StatusCode::kUnauthenticated) {
      return response.status();
    }
    needs_sync_ = true;
    outcome_unknown_ = true;
    *unknown = true;
    return absl::Status(response.status().code(),
                        absl::StrCat(what, ": outcome unknown: ", response.status().message()));
  }
  if (!response->succeeded()) return ExplainFailureLocked(*response, what);
  return response;
}

absl::Status EtcdStore::SyncLocked() {
  if (outcome_unknown_) {
    // Rewrite the revision key with the value this writer knows, conditional on its
    // mod_revision: if that succeeds, the failed write (conditional on the same mod_revision)
    // can never apply any more; if it fails, the failed write (or another writer) moved it.
    TxnRequest bump;
    AddGuardsLocked(bump, /*expect_no_marker=*/false);
    *bump.add_success() = PutOp(Key("meta/revision"), absl::StrCat(written_revision_));
    absl::StatusOr<TxnResponse> response = client_->Txn(bump);
    if (!response.ok()) return response.status();
    if (!response->succeeded()) {
      absl::Status explained = ExplainFailureLocked(*response, "resync");
      if (IsNotLeaderError(explained)) return explained;
    }
    outcome_unknown_ = false;
  }
  absl::StatusOr<ReadPoint> point = ReadMeta({}, nullptr);
  if (!point.ok()) return point.status();
  written_revision_ = point->revision;
  revision_mod_ = point->revision_mod;
  if (point->staged != nullptr) {
    if (absl::Status s = RollForwardLocked(*point->staged, point->marker_mod); !s.ok()) return s;
  } else if (point->stray_chunks) {
    // Chunks of a large commit that failed before its commit point: never visible, drop them.
    TxnRequest cleanup;
    AddGuardsLocked(cleanup, /*expect_no_marker=*/true);
    *cleanup.add_success() = DeleteOp(Key("stage/"), EtcdPrefixEnd(Key("stage/")));
    bool unknown = false;
    absl::StatusOr<TxnResponse> response =
        WriteTxnLocked(cleanup, "dropping stray staged chunks", &unknown);
    if (!response.ok()) return response.status();
  }
  needs_sync_ = false;
  return absl::OkStatus();
}

absl::Status EtcdStore::RollForwardLocked(const Staged& staged, int64_t marker_mod) {
  const int64_t budget = options_.max_request_bytes - kTxnOverheadBytes;
  const int64_t log_part_bytes = std::min<int64_t>(256 * 1024, budget / 2);
  std::vector<RequestOp> ops;
  for (const auto& [key, value] : staged.ops) {
    ops.push_back(value.has_value() ? PutOp(Key(absl::StrCat("data/", key)), *value)
                                    : DeleteOp(Key(absl::StrCat("data/", key))));
  }
  for (const ChangeLogEntry& entry : staged.entries) {
    const std::string encoded = EncodeRecords(entry.records);
    int part = 0;
    size_t offset = 0;
    do {
      const size_t size = std::min<size_t>(log_part_bytes, encoded.size() - offset);
      ops.push_back(PutOp(Key(absl::StrCat("log/", RevisionKeyPart(entry.revision), "/",
                                           absl::StrFormat("%06d", part++))),
                          encoded.substr(offset, size)));
      offset += size;
    } while (offset < encoded.size());
  }
  // Every apply Txn is conditional on the marker this roll-forward started from: once the
  // marker is gone (applied by this or another writer), a late duplicate changes nothing.
  const auto guarded = [&](TxnRequest& txn) {
    Compare* marker = txn.add_compare();
    marker->set_key(Key("meta/staged"));
    marker->set_target(Compare::MOD);
    marker->set_result(Compare::EQUAL);
    marker->set_mod_revision(marker_mod);
    if (fence_.has_value()) {
      Compare* fence = txn.add_compare();
      fence->set_key(fence_->key);
      fence->set_target(Compare::CREATE);
      fence->set_result(Compare::EQUAL);
      fence->set_create_revision(fence_->create_revision);
    }
    *txn.add_failure() = RangeOp(Key("meta/revision"));
    if (fence_.has_value()) *txn.add_failure() = RangeOp(fence_->key);
  };
  size_t next = 0;
  while (true) {
    TxnRequest txn;
    guarded(txn);
    int64_t bytes = 0;
    while (next < ops.size() && txn.success_size() < options_.max_txn_ops &&
           bytes + OpBytes(ops[next]) <= budget) {
      bytes += OpBytes(ops[next]);
      *txn.add_success() = ops[next++];
    }
    if (next < ops.size() && txn.success_size() == 0) {
      return absl::InternalError("etcd store: a staged op does not fit in one Txn");
    }
    const bool final_txn = next == ops.size() && txn.success_size() + 2 <= options_.max_txn_ops;
    if (final_txn) {
      *txn.add_success() = DeleteOp(Key("meta/staged"));
      *txn.add_success() = DeleteOp(Key("stage/"), EtcdPrefixEnd(Key("stage/")));
    }
    bool unknown = false;
    absl::StatusOr<TxnResponse> response =
        WriteTxnLocked(txn, absl::StrCat("applying staged commit ", staged.last), &unknown);
    if (!response.ok()) return response.status();
    if (final_txn) return absl::OkStatus();
  }
}

absl::StatusOr<int64_t> EtcdStore::CommitSequence(const std::vector<const WriteBatch*>& batches) {
  if (batches.empty()) return absl::InvalidArgumentError("CommitSequence: no batch to commit");
  absl::MutexLock lock(&mu_);
  // A failed call leaves an unknown outcome; resync tells applied from fenced off, and only in
  // the second case is the same commit sent again (to the next member), until commit_timeout.
  const absl::Time deadline = absl::Now() + options_.commit_timeout;
  absl::Duration backoff = absl::Milliseconds(20);
  absl::Status last_error;
  int64_t base = -1;
  while (true) {
    absl::Status attempt = absl::OkStatus();
    if (needs_sync_) attempt = SyncLocked();
    if (attempt.ok()) {
      if (base < 0) {
        base = written_revision_;
      } else if (written_revision_ == base + static_cast<int64_t>(batches.size())) {
        return written_revision_;  // The failed try was applied after all.
      } else if (written_revision_ != base) {
        return absl::AbortedError(absl::StrCat(
            "etcd store: the store moved from revision ", base, " to ", written_revision_,
            " while this commit's outcome was unknown; another process is writing"));
      }
      bool unknown = false;
      absl::StatusOr<int64_t> revision = CommitOnceLocked(batches, &unknown);
      if (revision.ok() || !unknown) return revision;
      attempt = revision.status();
    } else if (attempt.code() != absl::StatusCode::kUnavailable) {
      return attempt;
    }
    last_error = attempt;
    if (absl::Now() + backoff >= deadline) break;
    absl::SleepFor(backoff);
    backoff = std::min(backoff * 2, absl::Milliseconds(250));
  }
  return absl::UnavailableError(absl::StrCat("etcd store: commit not confirmed within ",
                                             absl::FormatDuration(options_.commit_timeout),
                                             "; last error: ", last_error.message()));
}

absl::StatusOr<int64_t> EtcdStore::CommitOnceLocked(const std::vector<const WriteBatch*>& batches,
                                                    bool* unknown) {
  const int64_t budget = options_.max_request_bytes - kTxnOverheadBytes;
  const int64_t log_part_bytes = std::min<int64_t>(256 * 1024, budget / 2);
  Staged staged;
  staged.first = written_revision_ + 1;
  staged.last = written_revision_ + static_cast<int64_t>(batches.size());
  int64_t revision = written_revision_;
  for (const WriteBatch* batch : batches) {
    ++revision;
    for (const WriteBatch::Op& op : batch->ops()) {
      if (!op.is_delete &&
          static_cast<int64_t>(Key("data/").size() + op.key.size() + op.value.size()) +
                  kOpOverheadBytes >
              budget) {
        return absl::InvalidArgumentError(absl::StrCat(
            "etcd store: key \"", absl::string_view(op.key).substr(0, 64), "\" with a ",
            op.value.size(), "-byte value exceeds etcd's request limit (max_request_bytes ",
            options_.max_request_bytes, ")"));
      }
      // Later writes win: etcd refuses a Txn that names one key twice, so only the final
      // value of each key is written.
      if (op.is_delete) {
        staged.ops.insert_or_assign(op.key, std::nullopt);
      } else {
        staged.ops.insert_or_assign(op.key, op.value);
      }
    }
    staged.entries.push_back(ChangeLogEntry{.revision = revision, .records = batch->changes()});
  }

  // Small commit: everything in one Txn.
  std::vector<RequestOp> ops;
  int64_t bytes = 0;
  for (const auto& [key, value] : staged.ops) {
    ops.push_back(value.has_value() ? PutOp(Key(absl::StrCat("data/", key)), *value)
                                    : DeleteOp(Key(absl::StrCat("data/", key))));
    bytes += OpBytes(ops.back());
  }
  for (const ChangeLogEntry& entry : staged.entries) {
    const std::string encoded = EncodeRecords(entry.records);
    int part = 0;
    size_t offset = 0;
    do {
      const size_t size = std::min<size_t>(log_part_bytes, encoded.size() - offset);
      ops.push_back(PutOp(Key(absl::StrCat("log/", RevisionKeyPart(entry.revision), "/",
                                           absl::StrFormat("%06d", part++))),
                          encoded.substr(offset, size)));
      bytes += OpBytes(ops.back());
      offset += size;
    } while (offset < encoded.size());
  }
  if (static_cast<int64_t>(ops.size()) + 1 <= options_.max_txn_ops && bytes <= budget) {
    TxnRequest txn;
    AddGuardsLocked(txn, /*expect_no_marker=*/true);
    for (RequestOp& op : ops) *txn.add_success() = std::move(op);
    *txn.add_success() = PutOp(Key("meta/revision"), absl::StrCat(staged.last));
    absl::StatusOr<TxnResponse> response =
        WriteTxnLocked(txn, absl::StrCat("commit of revision ", staged.last), unknown);
    if (!response.ok()) return response.status();
    revision_mod_ = response->header().revision();
    written_revision_ = staged.last;
    NoteRevision(staged.last);
    return staged.last;
  }

  // Large commit: stage the whole content in chunks (invisible), then one Txn moves the
  // revision key and writes the marker naming the chunks (the commit point: from then on every
  // reader overlays the staged content), then apply it in Txns that fit and drop the marker.
  const std::string payload = staged.Encode();
  const int64_t chunk_bytes = budget - 1024;
  const int64_t chunks = (static_cast<int64_t>(payload.size()) + chunk_bytes - 1) / chunk_bytes;
  for (int64_t i = 0; i < chunks; ++i) {
    TxnRequest txn;
    AddGuardsLocked(txn, /*expect_no_marker=*/true);
    *txn.add_success() = PutOp(
        Key(absl::StrCat("stage/", RevisionKeyPart(staged.last), "/", absl::StrFormat("%06d", i))),
        payload.substr(i * chunk_bytes, chunk_bytes));
    absl::StatusOr<TxnResponse> response = WriteTxnLocked(
        txn, absl::StrCat("staging chunk ", i, " of revision ", staged.last), unknown);
    if (!response.ok()) {
      needs_sync_ = true;  // Drops the chunks written so far.
      return response.status();
    }
  }
  TxnRequest commit;
  AddGuardsLocked(commit, /*expect_no_marker=*/true);
  *commit.add_success() = PutOp(Key("meta/revision"), absl::StrCat(staged.last));
  *commit.add_success() =
      PutOp(Key("meta/staged"), absl::StrCat(staged.first, " ", staged.last, " ", chunks));
  absl::StatusOr<TxnResponse> response =
      WriteTxnLocked(commit, absl::StrCat("commit of revision ", staged.last), unknown);
  if (!response.ok()) {
    needs_sync_ = true;
    return response.status();
  }
  revision_mod_ = response->header().revision();
  written_revision_ = staged.last;
  NoteRevision(staged.last);
  if (options_.testing_skip_roll_forward) {
    needs_sync_ = true;
    return staged.last;
  }
  // Committed: a failure from here on only delays the apply to the next write's resync.
  if (absl::Status applied = RollForwardLocked(staged, response->header().revision());
      !applied.ok()) {
    needs_sync_ = true;
  }
  return staged.last;
}

absl::Status EtcdStore::CompactChanges(int64_t revision) {
  absl::MutexLock lock(&mu_);
  if (needs_sync_) {
    if (absl::Status s = SyncLocked(); !s.ok()) return s;
  }
  if (revision < 0 || revision > written_revision_) {
    return absl::InvalidArgumentError(absl::StrCat("CompactChanges: revision ", revision,
                                                   " is outside [0, ", written_revision_, "]"));
  }
  absl::StatusOr<ReadPoint> point = ReadMeta({}, nullptr);
  if (!point.ok()) return point.status();
  if (revision <= point->compacted) return absl::OkStatus();
  // Reads the etcd revision that committed `revision` (its log key's create_revision) before
  // deleting: etcd's own history is compacted to there, never past what a change-log reader
  // may still ask for.
  const std::string log_prefix = Key("log/");
  TxnRequest txn;
  AddGuardsLocked(txn, /*expect_no_marker=*/false);
  *txn.add_success() = RangeOp(log_prefix + RevisionKeyPart(revision) + "/000000");
  *txn.add_success() = DeleteOp(log_prefix, log_prefix + RevisionKeyPart(revision + 1));
  *txn.add_success() = PutOp(Key("meta/compacted"), absl::StrCat(revision));
  bool unknown = false;
  absl::StatusOr<TxnResponse> response =
      WriteTxnLocked(txn, absl::StrCat("compaction to revision ", revision), &unknown);
  if (!response.ok()) return response.status();
  int64_t seen = compacted_.load();
  while (revision > seen && !compacted_.compare_exchange_weak(seen, revision)) {
  }
  if (!options_.compact_etcd_history) return absl::OkStatus();
  const auto& kvs = response->responses(0).response_range().kvs();
  if (kvs.empty()) return absl::OkStatus();
  int64_t target = kvs[0].create_revision();
  {
    absl::MutexLock pins(&pins_mu_);
    if (!pins_.empty()) target = std::min(target, *pins_.begin());
  }
  // etcd's history is maintenance, not part of the change log: a failure here (for example an
  // etcd compacted further by its own --auto-compaction) leaves it for the next compaction.
  client_->Compact(target).IgnoreError();
  return absl::OkStatus();
}

}  // namespace tollgate::storage
