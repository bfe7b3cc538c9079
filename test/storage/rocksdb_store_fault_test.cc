// Fault injection on RocksDbStore's files: what a damaged WAL, a deleted WAL or a corrupt table
// file does to Open. The contract (storage/README.md, "Corruption"): a torn tail after the
// last acknowledged revision is dropped and reported; anything that loses an acknowledged
// revision refuses with DATA_LOSS naming the file and the way out, unless accept_data_loss,
// which starts, reports the loss and bumps the epoch.

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
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "storage/acked_revision_file.h"
#include "storage/rocksdb_store.h"
#include "storage/store.h"
#include "test/status_matchers.h"
#include "test/support/scratch_dir.h"

namespace tollgate::storage {
namespace {

namespace fs = std::filesystem;

constexpr int kCommits = 100;

class RocksDbStoreFaultTest : public testing::Test {
 protected:
  void SetUp() override {
    ASSERT_OK_AND_ASSIGN(dir_, test_support::MakeScratchDir("tollgate_rocksdb_fault_test"));
    live_ = dir_ + "/live";
    crashed_ = dir_ + "/crashed";
  }
  void TearDown() override { test_support::RemoveScratchDir(dir_); }

  // Commits kCommits batches of 1 KiB each and copies the directory while the store is still
  // open: `crashed_` is then exactly what a kill -9 leaves (every batch is only in the synced
  // WAL, nothing flushed, the acked-revision record at kCommits).
  void MakeCrashImage() {
    ASSERT_OK_AND_ASSIGN(std::unique_ptr<RocksDbStore> store, RocksDbStore::Open(live_));
    identity_ = store->Identity();
    for (int i = 1; i <= kCommits; ++i) {
      WriteBatch batch;
      batch.Put(absl::StrCat("key", i), std::string(1024, 'a' + i % 26));
      batch.AppendChange(absl::StrCat("change", i));
      ASSERT_OK(store->Commit(batch).status());
    }
    fs::create_directory(crashed_);
    for (const auto& entry : fs::directory_iterator(live_)) {
      if (entry.path().filename() == "LOCK") continue;
      fs::copy(entry.path(), crashed_ / entry.path().filename());
    }
    ASSERT_EQ(Tables(crashed_).size(), 0u) << "the crash image must hold its data in the WAL";
  }

  static std::vector<fs::path> FilesEndingIn(const fs::path& dir, absl::string_view suffix) {
    std::vector<fs::path> out;
    for (const auto& entry : fs::directory_iterator(dir)) {
      if (absl::EndsWith(entry.path().filename().string(), suffix)) out.push_back(entry.path());
    }
    std::sort(out.begin(), out.end());
    return out;
  }
  static std::vector<fs::path> Tables(const fs::path& dir) { return FilesEndingIn(dir, ".sst"); }
  // The one WAL file holding the crash image's data (the largest).
  static fs::path Wal(const fs::path& dir) {
    fs::path largest;
    for (const fs::path& wal : FilesEndingIn(dir, ".log")) {
      if (largest.empty() || fs::file_size(wal) > fs::file_size(largest)) largest = wal;
    }
    return largest;
  }

  static void FlipByte(const fs::path& file, uintmax_t offset) {
    std::fstream f(file, std::ios::in | std::ios::out | std::ios::binary);
    ASSERT_TRUE(f) << file;
    f.seekg(static_cast<std::streamoff>(offset));
    char c = 0;
    f.get(c);
    f.seekp(static_cast<std::streamoff>(offset));
    f.put(static_cast<char>(c ^ 0x10));
    ASSERT_TRUE(f) << file;
  }

  static void ExpectRefusedNaming(const absl::Status& status, absl::string_view file) {
    EXPECT_EQ(status.code(), absl::StatusCode::kDataLoss) << status;
    EXPECT_TRUE(absl::StrContains(status.message(), file)) << status;
    EXPECT_TRUE(absl::StrContains(status.message(), "--accept-data-loss")) << status;
    EXPECT_TRUE(absl::StrContains(status.message(), "tollgated restore")) << status;
  }

  std::string dir_;
  std::string live_;
  std::string crashed_;
  StoreIdentity identity_;
};

TEST_F(RocksDbStoreFaultTest, CleanCrashImageRecoversEveryRevision) {
  MakeCrashImage();
  ASSERT_OK_AND_ASSIGN(std::unique_ptr<RocksDbStore> store, RocksDbStore::Open(crashed_));
  EXPECT_EQ(store->CurrentRevision(), kCommits);
  EXPECT_EQ(store->Identity(), identity_);
  EXPECT_EQ(store->recovery().wal_error, "");
  EXPECT_FALSE(store->recovery().dropped_torn_tail);
  EXPECT_EQ(store->recovery().acknowledged_revision, std::optional<int64_t>(kCommits));
}

// A write that never returned OK tore the end of the WAL: the record says the revision before
// it was the last acknowledged one. That tail, and only it, is dropped.
TEST_F(RocksDbStoreFaultTest, TornTailOfUnacknowledgedWriteIsDroppedAndReported) {
  MakeCrashImage();
  const fs::path wal = Wal(crashed_);
  fs::resize_file(wal, fs::file_size(wal) - 100);
  ASSERT_OK(AckedRevisionFile::Open(crashed_, kCommits - 1).status());

  ASSERT_OK_AND_ASSIGN(std::unique_ptr<RocksDbStore> store, RocksDbStore::Open(crashed_));
  EXPECT_EQ(store->CurrentRevision(), kCommits - 1);
  EXPECT_TRUE(store->recovery().dropped_torn_tail);
  EXPECT_TRUE(absl::StrContains(store->recovery().wal_error, wal.filename().string()))
      << store->recovery().wal_error;
  EXPECT_EQ(store->recovery().lost_revisions, 0);
  EXPECT_EQ(store->Identity(), identity_);
  ASSERT_OK_AND_ASSIGN(std::optional<std::string> value,
                       store->Get(absl::StrCat("key", kCommits - 1)));
  EXPECT_TRUE(value.has_value());
}

// The same cut when the cut write had been acknowledged is a loss.
TEST_F(RocksDbStoreFaultTest, TornAcknowledgedTailIsRefused) {
  MakeCrashImage();
  const fs::path wal = Wal(crashed_);
  fs::resize_file(wal, fs::file_size(wal) - 100);
  ExpectRefusedNaming(RocksDbStore::Open(crashed_).status(), wal.filename().string());
}

TEST_F(RocksDbStoreFaultTest, BitFlipMidWalIsRefused) {
  MakeCrashImage();
  const fs::path wal = Wal(crashed_);
  FlipByte(wal, fs::file_size(wal) / 2);
  const absl::Status status = RocksDbStore::Open(crashed_).status();
  ExpectRefusedNaming(status, wal.filename().string());
  // It keeps refusing: the failed attempt changed nothing.
  ExpectRefusedNaming(RocksDbStore::Open(crashed_).status(), wal.filename().string());
}

TEST_F(RocksDbStoreFaultTest, WalTruncatedToHalfIsRefused) {
  MakeCrashImage();
  const fs::path wal = Wal(crashed_);
  fs::resize_file(wal, fs::file_size(wal) / 2);
  ExpectRefusedNaming(RocksDbStore::Open(crashed_).status(), wal.filename().string());
}

TEST_F(RocksDbStoreFaultTest, DeletedWalIsRefused) {
  MakeCrashImage();
  const fs::path wal = Wal(crashed_);
  fs::remove(wal);
  const absl::Status status = RocksDbStore::Open(crashed_).status();
  EXPECT_EQ(status.code(), absl::StatusCode::kDataLoss) << status;
  EXPECT_TRUE(absl::StrContains(status.message(), "deleted or truncated")) << status;
  EXPECT_TRUE(absl::StrContains(status.message(), "--accept-data-loss")) << status;
  // Still refused on the next attempt (the first one must not have "repaired" it).
  EXPECT_EQ(RocksDbStore::Open(crashed_).status().code(), absl::StatusCode::kDataLoss);
}

TEST_F(RocksDbStoreFaultTest, AcceptDataLossStartsReportsTheLossAndBumpsTheEpoch) {
  MakeCrashImage();
  const fs::path wal = Wal(crashed_);
  FlipByte(wal, fs::file_size(wal) / 2);
  int64_t recovered = 0;
  {
    ASSERT_OK_AND_ASSIGN(
        std::unique_ptr<RocksDbStore> store,
        RocksDbStore::Open(crashed_, RocksDbStoreOptions{.accept_data_loss = true}));
    recovered = store->CurrentRevision();
    EXPECT_LT(recovered, kCommits);
    EXPECT_EQ(store->recovery().lost_revisions, kCommits - recovered);
    EXPECT_TRUE(store->recovery().epoch_bumped);
    // The damaged WAL was kept for a closer look.
    ASSERT_FALSE(store->recovery().saved_wal_dir.empty());
    EXPECT_TRUE(fs::exists(fs::path(store->recovery().saved_wal_dir) / wal.filename()));
    EXPECT_EQ(store->Identity().store_id, identity_.store_id);
    EXPECT_EQ(store->Identity().epoch, identity_.epoch + 1);
    // Writable, and the change log continues from the recovered revision.
    WriteBatch batch;
    batch.Put("after", "loss");
    ASSERT_OK_AND_ASSIGN(int64_t revision, store->Commit(batch));
    EXPECT_EQ(revision, recovered + 1);
  }
  // The loss was accepted once; the next start is clean and keeps the new epoch.
  ASSERT_OK_AND_ASSIGN(std::unique_ptr<RocksDbStore> store, RocksDbStore::Open(crashed_));
  EXPECT_EQ(store->CurrentRevision(), recovered + 1);
  EXPECT_EQ(store->Identity().epoch, identity_.epoch + 1);
  EXPECT_FALSE(store->recovery().epoch_bumped);
}

// Table files are checksummed per block; a damaged one is found when read. tollgated reads
// every key at start, so it refuses to start.
TEST_F(RocksDbStoreFaultTest, CorruptTableFileIsDataLossOnRead) {
  {
    ASSERT_OK_AND_ASSIGN(std::unique_ptr<RocksDbStore> store, RocksDbStore::Open(live_));
    for (int i = 1; i <= kCommits; ++i) {
      WriteBatch batch;
      batch.Put(absl::StrCat("key", i), std::string(1024, 'a' + i % 26));
      batch.AppendChange(absl::StrCat("change", i));
      ASSERT_OK(store->Commit(batch).status());
    }
  }  // Closing flushes everything into table files.
  std::vector<fs::path> tables = Tables(live_);
  ASSERT_FALSE(tables.empty());
  for (const fs::path& table : tables) FlipByte(table, fs::file_size(table) / 3);

  absl::StatusOr<std::unique_ptr<RocksDbStore>> store = RocksDbStore::Open(live_);
  absl::Status status = store.status();
  if (store.ok()) {
    status = (*store)->Scan("", [](absl::string_view, absl::string_view) { return true; });
  }
  EXPECT_EQ(status.code(), absl::StatusCode::kDataLoss) << status;
  EXPECT_TRUE(absl::StrContains(status.message(), ".sst")) << status;
}

TEST_F(RocksDbStoreFaultTest, BackupRestoresAConsistentCopyUnderANewEpoch) {
  const std::string backup = dir_ + "/backup";
  const std::string restored = dir_ + "/restored";
  int64_t backed_up = 0;
  {
    ASSERT_OK_AND_ASSIGN(std::unique_ptr<RocksDbStore> store, RocksDbStore::Open(live_));
    identity_ = store->Identity();
    for (int i = 1; i <= 20; ++i) {
      WriteBatch batch;
      batch.Put(absl::StrCat("key", i), "v");
      batch.AppendChange(absl::StrCat("change", i));
      ASSERT_OK(store->Commit(batch).status());
    }
    ASSERT_OK_AND_ASSIGN(backed_up, store->Backup(backup));
    EXPECT_EQ(backed_up, 20);
    WriteBatch later;
    later.Put("later", "v");
    ASSERT_OK(store->Commit(later).status());
    EXPECT_EQ(store->Backup(backup).status().code(), absl::StatusCode::kInvalidArgument)
        << "a backup never overwrites another";
  }
  ASSERT_OK_AND_ASSIGN(RocksDbStore::Restored result, RocksDbStore::Restore(backup, restored));
  EXPECT_EQ(result.revision, backed_up);
  EXPECT_EQ(result.identity.store_id, identity_.store_id);
  EXPECT_EQ(result.identity.epoch, identity_.epoch + 1);

  ASSERT_OK_AND_ASSIGN(std::unique_ptr<RocksDbStore> store, RocksDbStore::Open(restored));
  EXPECT_EQ(store->CurrentRevision(), backed_up);
  EXPECT_EQ(store->Identity(), result.identity);
  ASSERT_OK_AND_ASSIGN(std::optional<std::string> value, store->Get("later"));
  EXPECT_EQ(value, std::nullopt);
  ASSERT_OK_AND_ASSIGN(std::vector<ChangeLogEntry> changes, store->ReadChanges(0, 100));
  EXPECT_EQ(changes.size(), 20u);

  // Restoring over a store is refused and leaves it alone.
  const absl::Status over = RocksDbStore::Restore(backup, live_).status();
  EXPECT_EQ(over.code(), absl::StatusCode::kFailedPrecondition) << over;
  EXPECT_TRUE(absl::StrContains(over.message(), "not empty")) << over;
}

TEST_F(RocksDbStoreFaultTest, NewStoresGetDistinctIdentities) {
  ASSERT_OK_AND_ASSIGN(std::unique_ptr<RocksDbStore> a, RocksDbStore::Open(dir_ + "/a"));
  ASSERT_OK_AND_ASSIGN(std::unique_ptr<RocksDbStore> b, RocksDbStore::Open(dir_ + "/b"));
  EXPECT_NE(a->Identity().store_id, b->Identity().store_id);
  EXPECT_EQ(a->Identity().epoch, 1);
}

}  // namespace
}  // namespace tollgate::storage
