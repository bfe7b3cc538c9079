// RocksDbStore specifics: persistence across reopen, the on-disk layout checks, and crashes.

#include "storage/rocksdb_store.h"

#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "gtest/gtest.h"
#include "rocksdb/db.h"
#include "rocksdb/write_batch.h"
#include "storage/store.h"
#include "test/status_matchers.h"
#include "test/support/scratch_dir.h"

extern char** environ;

namespace tollgate::storage {
namespace {

// A fresh directory per test, removed afterwards; the database lives in its "db" child.
class RocksDbStoreTest : public testing::Test {
 protected:
  void SetUp() override {
    ASSERT_OK_AND_ASSIGN(dir_, test_support::MakeScratchDir("tollgate_rocksdb_store_test"));
    db_path_ = dir_ + "/db";
  }

  void TearDown() override { test_support::RemoveScratchDir(dir_); }

  // Opens the database with plain RocksDB and all of the store's column families, to inspect
  // or damage the layout behind the store's back. Returns handles in default/changes/meta
  // order; `Close` releases them.
  struct RawDb {
    std::unique_ptr<rocksdb::DB> db;
    std::vector<rocksdb::ColumnFamilyHandle*> handles;
    void Close() {
      for (rocksdb::ColumnFamilyHandle* handle : handles) {
        EXPECT_TRUE(db->DestroyColumnFamilyHandle(handle).ok());
      }
      handles.clear();
      EXPECT_TRUE(db->Close().ok());
      db.reset();
    }
  };
  absl::StatusOr<RawDb> OpenRaw(const std::vector<std::string>& extra_column_families = {}) {
    rocksdb::DBOptions options;
    options.create_if_missing = true;
    options.create_missing_column_families = true;
    std::vector<rocksdb::ColumnFamilyDescriptor> descriptors = {
        {rocksdb::kDefaultColumnFamilyName, {}},
        {std::string(kChangesColumnFamily), {}},
        {std::string(kMetaColumnFamily), {}},
    };
    for (const std::string& name : extra_column_families) descriptors.push_back({name, {}});
    RawDb raw;
    rocksdb::DB* db = nullptr;
    rocksdb::Status s = rocksdb::DB::Open(options, db_path_, descriptors, &raw.handles, &db);
    if (!s.ok()) return absl::InternalError(s.ToString());
    raw.db.reset(db);
    return raw;
  }

  std::string dir_;
  std::string db_path_;
};

absl::StatusOr<int64_t> PutOne(Store& store, absl::string_view key, absl::string_view value) {
  WriteBatch batch;
  batch.Put(key, value);
  batch.AppendChange(key);
  return store.Commit(batch);
}

TEST_F(RocksDbStoreTest, ReopenRecoversStateRevisionAndChangeLog) {
  {
    ASSERT_OK_AND_ASSIGN(std::unique_ptr<RocksDbStore> store, RocksDbStore::Open(db_path_));
    ASSERT_OK(PutOne(*store, "a", "1").status());
    ASSERT_OK(PutOne(*store, "b", "2").status());
    WriteBatch batch;
    batch.Delete("a");
    batch.Put("c", "3");
    batch.AppendChange("third");
    ASSERT_OK(store->Commit(batch).status());
    ASSERT_OK(store->CompactChanges(1));
  }

  ASSERT_OK_AND_ASSIGN(std::unique_ptr<RocksDbStore> store, RocksDbStore::Open(db_path_));
  EXPECT_EQ(store->CurrentRevision(), 3);
  ASSERT_OK_AND_ASSIGN(std::optional<std::string> value, store->Get("a"));
  EXPECT_EQ(value, std::nullopt);
  ASSERT_OK_AND_ASSIGN(value, store->Get("b"));
  EXPECT_EQ(value, "2");
  ASSERT_OK_AND_ASSIGN(value, store->Get("c"));
  EXPECT_EQ(value, "3");

  ASSERT_OK_AND_ASSIGN(std::vector<ChangeLogEntry> changes, store->ReadChanges(1, 10));
  ASSERT_EQ(changes.size(), 2u);
  EXPECT_EQ(changes[0].revision, 2);
  EXPECT_EQ(changes[0].records, std::vector<std::string>{"b"});
  EXPECT_EQ(changes[1].records, std::vector<std::string>{"third"});
  // The compaction point survives too.
  EXPECT_EQ(store->ReadChanges(0, 10).status().message(),
            "revision 1 has been compacted; oldest available is 2");

  ASSERT_OK_AND_ASSIGN(int64_t revision, PutOne(*store, "d", "4"));
  EXPECT_EQ(revision, 4);
}

TEST_F(RocksDbStoreTest, UnsyncedStoreSurvivesCleanReopen) {
  {
    ASSERT_OK_AND_ASSIGN(std::unique_ptr<RocksDbStore> store,
                         RocksDbStore::Open(db_path_, RocksDbStoreOptions{.sync = false}));
    ASSERT_OK(PutOne(*store, "a", "1").status());
  }
  ASSERT_OK_AND_ASSIGN(std::unique_ptr<RocksDbStore> store, RocksDbStore::Open(db_path_));
  EXPECT_EQ(store->CurrentRevision(), 1);
  ASSERT_OK_AND_ASSIGN(std::optional<std::string> value, store->Get("a"));
  EXPECT_EQ(value, "1");
}

// Bytes in the database's write-ahead log files (NNNNNN.log; the info log is "LOG").
int64_t WalBytes(const std::string& db_path) {
  int64_t total = 0;
  for (const auto& entry : std::filesystem::directory_iterator(db_path)) {
    if (entry.path().extension() == ".log") total += static_cast<int64_t>(entry.file_size());
  }
  return total;
}

TEST_F(RocksDbStoreTest, CleanCloseLeavesNoWalToReplay) {
  const std::string value(4096, 'v');
  {
    ASSERT_OK_AND_ASSIGN(std::unique_ptr<RocksDbStore> store, RocksDbStore::Open(db_path_));
    for (int i = 0; i < 256; ++i) ASSERT_OK(PutOne(*store, absl::StrCat("k", i), value).status());
    ASSERT_GT(WalBytes(db_path_), 256 * 4096);
  }
  EXPECT_EQ(WalBytes(db_path_), 0);
  ASSERT_OK_AND_ASSIGN(std::unique_ptr<RocksDbStore> store, RocksDbStore::Open(db_path_));
  EXPECT_EQ(store->CurrentRevision(), 256);
  ASSERT_OK_AND_ASSIGN(std::optional<std::string> got, store->Get("k255"));
  EXPECT_EQ(got, value);
}

// What a crash would replay stays near max_total_wal_bytes however much is written: the
// memtables pinning old WAL files are flushed in the background.
//
// RocksDB checks the bound when a write arrives, and skips the check while the oldest WAL's
// flush is still running. On a slow disk the whole burst can land in one WAL during that flush,
// and with no later write nothing flushes it. So the test goes on writing small records, each of
// which re-checks the bound, as a live service's next writes would. Without the bound (RocksDB's
// default is four times the write buffers) those writes never shrink the WAL and the test fails.
TEST_F(RocksDbStoreTest, LiveWalStaysNearItsBound) {
  constexpr int64_t kBound = 256 << 10;
  ASSERT_OK_AND_ASSIGN(
      std::unique_ptr<RocksDbStore> store,
      RocksDbStore::Open(db_path_, RocksDbStoreOptions{.max_total_wal_bytes = kBound}));
  const std::string value(4096, 'v');
  for (int i = 0; i < 1024; ++i) ASSERT_OK(PutOne(*store, absl::StrCat("k", i), value).status());
  // 4 MiB were written; old WAL files go once their flushes finish.
  const absl::Time deadline = absl::Now() + absl::Seconds(30);
  int64_t later_writes = 0;
  while (WalBytes(db_path_) > 4 * kBound && absl::Now() < deadline) {
    ASSERT_OK(PutOne(*store, "later", absl::StrCat(later_writes++)).status());
  }
  EXPECT_LE(WalBytes(db_path_), 4 * kBound) << "after " << later_writes << " later writes";
}

TEST_F(RocksDbStoreTest, SchemaVersionMismatchIsRefused) {
  {
    ASSERT_OK_AND_ASSIGN(std::unique_ptr<RocksDbStore> store, RocksDbStore::Open(db_path_));
    ASSERT_OK(PutOne(*store, "a", "1").status());
  }
  {
    ASSERT_OK_AND_ASSIGN(RawDb raw, OpenRaw());
    ASSERT_TRUE(
        raw.db
            ->Put(rocksdb::WriteOptions(), raw.handles[2], std::string(kMetaSchemaVersionKey), "3")
            .ok());
    raw.Close();
  }

  absl::Status status = RocksDbStore::Open(db_path_).status();
  EXPECT_EQ(status.code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_TRUE(absl::StrContains(status.message(), "schema version \"3\"")) << status;
  EXPECT_TRUE(absl::StrContains(status.message(), "schema version \"2\"")) << status;
  EXPECT_TRUE(absl::StrContains(status.message(), db_path_)) << status;
}

TEST_F(RocksDbStoreTest, SchemaVersion1IsUpgradedWithANewIdentity) {
  {
    ASSERT_OK_AND_ASSIGN(std::unique_ptr<RocksDbStore> store, RocksDbStore::Open(db_path_));
    ASSERT_OK(PutOne(*store, "a", "1").status());
  }
  {
    // What version 1 wrote: no store_id, no epoch.
    ASSERT_OK_AND_ASSIGN(RawDb raw, OpenRaw());
    rocksdb::WriteBatch v1;
    ASSERT_TRUE(v1.Put(raw.handles[2], std::string(kMetaSchemaVersionKey), "1").ok());
    ASSERT_TRUE(v1.Delete(raw.handles[2], std::string(kMetaStoreIdKey)).ok());
    ASSERT_TRUE(v1.Delete(raw.handles[2], std::string(kMetaEpochKey)).ok());
    ASSERT_TRUE(raw.db->Write(rocksdb::WriteOptions(), &v1).ok());
    raw.Close();
  }
  StoreIdentity first;
  {
    ASSERT_OK_AND_ASSIGN(std::unique_ptr<RocksDbStore> store, RocksDbStore::Open(db_path_));
    EXPECT_EQ(store->CurrentRevision(), 1);
    first = store->Identity();
    EXPECT_EQ(first.store_id.size(), 32u);
    EXPECT_EQ(first.epoch, 1);
  }
  ASSERT_OK_AND_ASSIGN(std::unique_ptr<RocksDbStore> store, RocksDbStore::Open(db_path_));
  EXPECT_EQ(store->Identity(), first);
}

TEST_F(RocksDbStoreTest, DatabaseWithoutSchemaVersionIsRefused) {
  {
    ASSERT_OK_AND_ASSIGN(RawDb raw, OpenRaw());
    ASSERT_TRUE(raw.db->Put(rocksdb::WriteOptions(), raw.handles[0], "someone", "else").ok());
    raw.Close();
  }
  absl::Status status = RocksDbStore::Open(db_path_).status();
  EXPECT_EQ(status.code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_TRUE(absl::StrContains(status.message(), "no schema_version")) << status;
}

TEST_F(RocksDbStoreTest, UnknownColumnFamilyIsRefused) {
  {
    ASSERT_OK_AND_ASSIGN(RawDb raw, OpenRaw({"mystery"}));
    raw.Close();
  }
  absl::Status status = RocksDbStore::Open(db_path_).status();
  EXPECT_EQ(status.code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_TRUE(absl::StrContains(status.message(), "\"mystery\"")) << status;
}

TEST_F(RocksDbStoreTest, ChangeLogNotMatchingRevisionIsDataLoss) {
  {
    ASSERT_OK_AND_ASSIGN(std::unique_ptr<RocksDbStore> store, RocksDbStore::Open(db_path_));
    ASSERT_OK(PutOne(*store, "a", "1").status());
  }
  {
    // An entry past the recorded revision: the log and the revision disagree.
    ASSERT_OK_AND_ASSIGN(RawDb raw, OpenRaw());
    ASSERT_TRUE(
        raw.db
            ->Put(rocksdb::WriteOptions(), raw.handles[1], std::string("\0\0\0\0\0\0\0\x02", 8), "")
            .ok());
    raw.Close();
  }
  absl::Status status = RocksDbStore::Open(db_path_).status();
  EXPECT_EQ(status.code(), absl::StatusCode::kDataLoss) << status;
}

TEST_F(RocksDbStoreTest, CorruptChangeLogEntryIsDataLoss) {
  {
    ASSERT_OK_AND_ASSIGN(std::unique_ptr<RocksDbStore> store, RocksDbStore::Open(db_path_));
    ASSERT_OK(PutOne(*store, "a", "1").status());
  }
  {
    // A record claiming 5 bytes with only 2 behind it.
    ASSERT_OK_AND_ASSIGN(RawDb raw, OpenRaw());
    ASSERT_TRUE(raw.db
                    ->Put(rocksdb::WriteOptions(), raw.handles[1],
                          std::string("\0\0\0\0\0\0\0\x01", 8),
                          "\x05"
                          "ab")
                    .ok());
    raw.Close();
  }
  ASSERT_OK_AND_ASSIGN(std::unique_ptr<RocksDbStore> store, RocksDbStore::Open(db_path_));
  absl::Status status = store->ReadChanges(0, 10).status();
  EXPECT_EQ(status.code(), absl::StatusCode::kDataLoss) << status;
  EXPECT_TRUE(absl::StrContains(status.message(), "revision 1")) << status;
}

TEST_F(RocksDbStoreTest, OpenErrorsNameThePath) {
  // RocksDB holds a file lock, so a second open of a live database fails.
  ASSERT_OK_AND_ASSIGN(std::unique_ptr<RocksDbStore> store, RocksDbStore::Open(db_path_));
  absl::Status status = RocksDbStore::Open(db_path_).status();
  EXPECT_FALSE(status.ok());
  EXPECT_TRUE(absl::StrContains(status.message(), db_path_)) << status;

  const std::string file_path = dir_ + "/not-a-directory";
  std::ofstream(file_path) << "x";
  status = RocksDbStore::Open(file_path).status();
  EXPECT_FALSE(status.ok());
  EXPECT_TRUE(absl::StrContains(status.message(), file_path)) << status;
}

TEST_F(RocksDbStoreTest, ConcurrentCommitsAreConsecutiveAndSurviveReopen) {
  constexpr int kThreads = 8;
  constexpr int kCommitsPerThread = 50;
  constexpr int64_t kTotal = int64_t{kThreads} * kCommitsPerThread;
  // revisions[t][i] is the revision thread t's i-th commit got.
  std::vector<std::vector<int64_t>> revisions(kThreads);
  {
    ASSERT_OK_AND_ASSIGN(std::unique_ptr<RocksDbStore> store, RocksDbStore::Open(db_path_));
    std::vector<std::thread> threads;
    for (int t = 0; t < kThreads; ++t) {
      threads.emplace_back([&, t] {
        for (int i = 0; i < kCommitsPerThread; ++i) {
          absl::StatusOr<int64_t> revision =
              PutOne(*store, absl::StrCat("t", t, "/", i), absl::StrCat(t, ":", i));
          ASSERT_TRUE(revision.ok()) << revision.status();
          revisions[t].push_back(*revision);
        }
      });
    }
    for (std::thread& thread : threads) thread.join();
    EXPECT_EQ(store->CurrentRevision(), kTotal);
  }

  // Which key each revision wrote, to check the change log lines up with the commits.
  std::vector<std::string> key_at(kTotal + 1);
  for (int t = 0; t < kThreads; ++t) {
    ASSERT_EQ(revisions[t].size(), static_cast<size_t>(kCommitsPerThread));
    for (int i = 0; i < kCommitsPerThread; ++i) {
      const int64_t revision = revisions[t][i];
      ASSERT_GE(revision, 1);
      ASSERT_LE(revision, kTotal);
      ASSERT_TRUE(key_at[revision].empty()) << "revision " << revision << " given twice";
      key_at[revision] = absl::StrCat("t", t, "/", i);
    }
  }

  ASSERT_OK_AND_ASSIGN(std::unique_ptr<RocksDbStore> store, RocksDbStore::Open(db_path_));
  EXPECT_EQ(store->CurrentRevision(), kTotal);
  for (int t = 0; t < kThreads; ++t) {
    for (int i = 0; i < kCommitsPerThread; ++i) {
      ASSERT_OK_AND_ASSIGN(std::optional<std::string> value,
                           store->Get(absl::StrCat("t", t, "/", i)));
      EXPECT_EQ(value, absl::StrCat(t, ":", i));
    }
  }
  ASSERT_OK_AND_ASSIGN(std::vector<ChangeLogEntry> changes, store->ReadChanges(0, kTotal + 10));
  ASSERT_EQ(changes.size(), static_cast<size_t>(kTotal));
  for (int64_t r = 1; r <= kTotal; ++r) {
    EXPECT_EQ(changes[r - 1].revision, r);
    EXPECT_EQ(changes[r - 1].records, std::vector<std::string>{key_at[r]});
  }
}

// The crash test re-executes this binary in the forked child so that the child starts with a
// clean process (no threads or locks inherited from earlier tests, e.g. RocksDB's background
// pool). The variable carries "<ack fd>:<db path>".
constexpr char kCrashChildEnv[] = "TOLLGATE_STORAGE_CRASH_CHILD";
constexpr char kCrashTestFilter[] =
    "--gtest_filter=RocksDbStoreCrashTest.AcknowledgedBatchesSurviveSigkill";
// Far more than the parent waits for, so the child is always killed mid-stream.
constexpr int64_t kCrashChildMaxBatches = 1'000'000;
constexpr int64_t kAcksBeforeKill = 200;

std::string CrashKey(absl::string_view side, int64_t batch) {
  return absl::StrFormat("%s/%08d", side, batch);
}

// Commits batch after batch, writing each revision to the pipe only once Commit returned it,
// i.e. once the store promised it is durable. Never returns.
[[noreturn]] void RunCrashChild(absl::string_view spec) {
  const size_t colon = spec.find(':');
  int fd = -1;
  if (colon == absl::string_view::npos || !absl::SimpleAtoi(spec.substr(0, colon), &fd)) _exit(2);
  absl::StatusOr<std::unique_ptr<RocksDbStore>> store =
      RocksDbStore::Open(std::string(spec.substr(colon + 1)));
  if (!store.ok()) {
    fprintf(stderr, "crash child: %s\n", store.status().ToString().c_str());
    _exit(3);
  }
  for (int64_t i = 1; i <= kCrashChildMaxBatches; ++i) {
    // Two keys per batch so that recovery of half a batch would show.
    WriteBatch batch;
    batch.Put(CrashKey("a", i), absl::StrCat(i));
    batch.Put(CrashKey("b", i), absl::StrCat(i));
    batch.AppendChange(absl::StrCat("c", i));
    absl::StatusOr<int64_t> revision = (*store)->Commit(batch);
    if (!revision.ok() || *revision != i) _exit(4);
    const int64_t ack = *revision;
    if (write(fd, &ack, sizeof(ack)) != static_cast<ssize_t>(sizeof(ack))) _exit(5);
  }
  _exit(0);
}

// Reads one acknowledgement; false at end of stream.
bool ReadAck(int fd, int64_t* ack) {
  size_t got = 0;
  auto* bytes = reinterpret_cast<char*>(ack);
  while (got < sizeof(*ack)) {
    const ssize_t n = read(fd, bytes + got, sizeof(*ack) - got);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    got += static_cast<size_t>(n);
  }
  return true;
}

TEST(RocksDbStoreCrashTest, AcknowledgedBatchesSurviveSigkill) {
  if (const char* spec = getenv(kCrashChildEnv)) RunCrashChild(spec);

  ASSERT_OK_AND_ASSIGN(const std::string dir,
                       test_support::MakeScratchDir("tollgate_rocksdb_crash_test"));
  struct RemoveOnExit {
    const std::string& dir;
    ~RemoveOnExit() { test_support::RemoveScratchDir(dir); }
  } remove_on_exit{dir};
  const std::string db_path = dir + "/db";
  int fds[2];
  ASSERT_EQ(pipe(fds), 0) << std::strerror(errno);

  // Everything the child needs is built before fork: between fork and exec only
  // async-signal-safe calls are allowed.
  std::vector<std::string> env_strings;
  for (char** e = environ; *e != nullptr; ++e) {
    // Sharding would make the child's gtest skip the filtered test.
    if (absl::StartsWith(*e, "GTEST_SHARD_") || absl::StartsWith(*e, "GTEST_TOTAL_SHARDS=") ||
        absl::StartsWith(*e, kCrashChildEnv)) {
      continue;
    }
    env_strings.emplace_back(*e);
  }
  env_strings.push_back(absl::StrCat(kCrashChildEnv, "=", fds[1], ":", db_path));
  std::vector<char*> envp;
  for (std::string& s : env_strings) envp.push_back(s.data());
  envp.push_back(nullptr);
  std::string arg0 = "storage_test";
  std::string arg1 = kCrashTestFilter;
  char* argv[] = {arg0.data(), arg1.data(), nullptr};

  const pid_t pid = fork();
  ASSERT_NE(pid, -1) << std::strerror(errno);
  if (pid == 0) {
    close(fds[0]);
    // Keep the child's gtest chatter out of this test's output; stderr stays for diagnostics.
    const int devnull = open("/dev/null", O_WRONLY);
    if (devnull >= 0) dup2(devnull, STDOUT_FILENO);
    execve("/proc/self/exe", argv, envp.data());
    _exit(127);
  }
  close(fds[1]);

  std::vector<int64_t> acks;
  int64_t ack = 0;
  while (static_cast<int64_t>(acks.size()) < kAcksBeforeKill && ReadAck(fds[0], &ack)) {
    acks.push_back(ack);
  }
  ASSERT_EQ(kill(pid, SIGKILL), 0) << std::strerror(errno);
  // Acknowledgements already in the pipe were sent before the kill and count too; the stream
  // ends when the dead child's end of the pipe closes.
  while (ReadAck(fds[0], &ack)) acks.push_back(ack);
  close(fds[0]);
  int wait_status = 0;
  ASSERT_EQ(waitpid(pid, &wait_status, 0), pid);
  ASSERT_TRUE(WIFSIGNALED(wait_status) && WTERMSIG(wait_status) == SIGKILL)
      << "child did not die by SIGKILL mid-stream; wait status " << wait_status;
  ASSERT_GE(static_cast<int64_t>(acks.size()), kAcksBeforeKill);
  for (size_t i = 0; i < acks.size(); ++i) {
    ASSERT_EQ(acks[i], static_cast<int64_t>(i) + 1);
  }
  const int64_t last_ack = acks.back();

  {
    ASSERT_OK_AND_ASSIGN(std::unique_ptr<RocksDbStore> store, RocksDbStore::Open(db_path));
    // Every acknowledged batch is back; at most the one in flight at the kill went further.
    const int64_t recovered = store->CurrentRevision();
    EXPECT_GE(recovered, last_ack);
    EXPECT_LE(recovered, last_ack + 1);
    for (int64_t batch = 1; batch <= recovered; ++batch) {
      for (const char* side : {"a", "b"}) {
        ASSERT_OK_AND_ASSIGN(std::optional<std::string> value, store->Get(CrashKey(side, batch)));
        ASSERT_EQ(value, absl::StrCat(batch)) << CrashKey(side, batch);
      }
    }
    // Nothing past the recovered revision, not even half a batch.
    for (const char* side : {"a", "b"}) {
      ASSERT_OK_AND_ASSIGN(std::optional<std::string> value,
                           store->Get(CrashKey(side, recovered + 1)));
      EXPECT_EQ(value, std::nullopt);
    }
    ASSERT_OK_AND_ASSIGN(std::vector<ChangeLogEntry> changes,
                         store->ReadChanges(0, recovered + 10));
    ASSERT_EQ(static_cast<int64_t>(changes.size()), recovered);
    for (int64_t r = 1; r <= recovered; ++r) {
      EXPECT_EQ(changes[r - 1].records, std::vector<std::string>{absl::StrCat("c", r)});
    }
    ASSERT_OK_AND_ASSIGN(int64_t next, PutOne(*store, "after-crash", "ok"));
    EXPECT_EQ(next, recovered + 1);
  }
}

}  // namespace
}  // namespace tollgate::storage
