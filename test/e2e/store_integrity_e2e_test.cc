// End-to-end: a Watch never goes quietly blind, tollgated never starts quietly on a store that
// lost acknowledged writes, and a full disk turns health NOT_SERVING with the cause logged.
// Real tollgated on loopback; every wait has a deadline.

#include <fcntl.h>
#include <stdlib.h>
#include <sys/mount.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <memory>
#include <set>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/strip.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "grpcpp/grpcpp.h"
#include "gtest/gtest.h"
#include "test/e2e/cli_runner.h"
#include "test/e2e/e2e_support.h"
#include "test/e2e/tollgated_process.h"
#include "test/status_matchers.h"
#include "test/support/scratch_dir.h"
#include "tollgate/v1/service.grpc.pb.h"

namespace tollgate::e2e {
namespace {

namespace fs = std::filesystem;

struct Listed {
  int64_t revision = 0;
  int workloads = 0;
  std::string store_id;
  int64_t store_epoch = 0;
};

// The first event of a watch, or the status it ended with.
struct FirstEvent {
  bool got_event = false;
  v1::WatchEvent event;
  grpc::Status status;
};

class StoreIntegrityTest : public testing::Test {
 protected:
  static void SetUpTestSuite() {
    setenv("GRPC_CLIENT_CHANNEL_BACKUP_POLL_INTERVAL_MS", "50", /*overwrite=*/0);
  }
  void SetUp() override {
    ASSERT_OK_AND_ASSIGN(scratch_, test_support::MakeScratchDir("tollgate_store_e2e"));
    data_dir_ = scratch_ + "/data";
  }
  void TearDown() override {
    if (server_ != nullptr && HasFailure()) std::cerr << "tollgated log:\n" << server_->Logs();
    server_.reset();
    test_support::RemoveScratchDir(scratch_);
  }

  void StartServer(std::vector<std::string> extra_args = {}) {
    server_.reset();
    extra_args.push_back("--manifests=" + QueuesManifest());
    ASSERT_OK_AND_ASSIGN(server_, TollgatedProcess::Start(data_dir_, scratch_, extra_args));
    admission_ = v1::AdmissionService::NewStub(server_->channel());
  }

  void SubmitN(int from, int count) {
    for (int i = from; i < from + count; ++i) {
      v1::SubmitRequest request;
      *request.mutable_workload() = CrashQueueWorkload(absl::StrCat("wl-", i));
      v1::SubmitResponse response;
      ASSERT_GRPC_OK(admission_->Submit(Context().get(), request, &response));
    }
  }

  // ListWorkloads and the store identity from its response headers.
  absl::StatusOr<Listed> List() {
    auto context = Context();
    v1::ListWorkloadsResponse response;
    grpc::Status status =
        admission_->ListWorkloads(context.get(), v1::ListWorkloadsRequest(), &response);
    if (!status.ok()) return absl::UnavailableError(Describe(status));
    Listed listed;
    listed.revision = response.revision();
    listed.workloads = response.workloads_size();
    const auto& headers = context->GetServerInitialMetadata();
    auto id = headers.find("tollgate-store-id");
    auto epoch = headers.find("tollgate-store-epoch");
    if (id == headers.end() || epoch == headers.end()) {
      return absl::NotFoundError("ListWorkloads response has no tollgate-store-* headers");
    }
    listed.store_id = std::string(id->second.data(), id->second.size());
    if (!absl::SimpleAtoi(absl::string_view(epoch->second.data(), epoch->second.size()),
                          &listed.store_epoch)) {
      return absl::DataLossError("bad tollgate-store-epoch header");
    }
    return listed;
  }

  FirstEvent WatchFirst(const v1::WatchRequest& request) {
    auto context = Context();
    std::unique_ptr<grpc::ClientReader<v1::WatchEvent>> stream =
        admission_->Watch(context.get(), request);
    FirstEvent first;
    first.got_event = stream->Read(&first.event);
    if (first.got_event) {
      context->TryCancel();
    }
    first.status = stream->Finish();
    return first;
  }

  std::string scratch_;
  std::string data_dir_;
  std::unique_ptr<TollgatedProcess> server_;
  std::unique_ptr<v1::AdmissionService::Stub> admission_;
};

v1::WatchRequest WatchFrom(int64_t revision, const Listed& identity) {
  v1::WatchRequest request;
  request.set_since_revision(revision);
  request.set_store_id(identity.store_id);
  request.set_store_epoch(identity.store_epoch);
  return request;
}

TEST_F(StoreIntegrityTest, WatchRefusesRevisionsItCannotServeAndCarriesTheIdentity) {
  ASSERT_NO_FATAL_FAILURE(StartServer());
  ASSERT_NO_FATAL_FAILURE(SubmitN(0, 3));
  ASSERT_OK_AND_ASSIGN(Listed listed, List());
  EXPECT_EQ(listed.store_id.size(), 32u);
  EXPECT_EQ(listed.store_epoch, 1);

  struct Case {
    std::string name;
    v1::WatchRequest request;
    grpc::StatusCode code;
    std::string message;
  };
  Listed other = listed;
  other.store_id = "0123456789abcdef0123456789abcdef";
  Listed old_epoch = listed;
  old_epoch.store_epoch = 7;
  const std::vector<Case> cases = {
      {"negative", WatchFrom(-1, listed), grpc::StatusCode::INVALID_ARGUMENT, "since_revision"},
      {"ahead", WatchFrom(listed.revision + 1000, listed), grpc::StatusCode::OUT_OF_RANGE,
       "ahead of the store's current revision"},
      {"far ahead", WatchFrom(int64_t{1} << 62, Listed()), grpc::StatusCode::OUT_OF_RANGE,
       "list again"},
      {"other store", WatchFrom(listed.revision, other), grpc::StatusCode::FAILED_PRECONDITION,
       "is not this server's store"},
      {"other epoch", WatchFrom(listed.revision, old_epoch), grpc::StatusCode::FAILED_PRECONDITION,
       "epoch"},
  };
  for (const Case& c : cases) {
    FirstEvent first = WatchFirst(c.request);
    EXPECT_FALSE(first.got_event) << c.name;
    EXPECT_EQ(first.status.error_code(), c.code) << c.name << ": " << Describe(first.status);
    EXPECT_TRUE(absl::StrContains(first.status.error_message(), c.message))
        << c.name << ": " << Describe(first.status);
  }

  // The list's own revision and identity resume fine, and the events carry the identity.
  auto context = Context();
  std::unique_ptr<grpc::ClientReader<v1::WatchEvent>> stream =
      admission_->Watch(context.get(), WatchFrom(listed.revision, listed));
  ASSERT_NO_FATAL_FAILURE(SubmitN(3, 1));
  v1::WatchEvent event;
  ASSERT_TRUE(stream->Read(&event)) << Describe(stream->Finish());
  EXPECT_GT(event.revision(), listed.revision);
  EXPECT_EQ(event.store_id(), listed.store_id);
  EXPECT_EQ(event.store_epoch(), listed.store_epoch);
  context->TryCancel();
  EXPECT_EQ(stream->Finish().error_code(), grpc::StatusCode::CANCELLED);
}

TEST_F(StoreIntegrityTest, WatchFromACompactedRevisionIsOutOfRange) {
  ASSERT_NO_FATAL_FAILURE(StartServer({"--change-log-retention=5"}));
  ASSERT_NO_FATAL_FAILURE(SubmitN(0, 20));
  ASSERT_OK_AND_ASSIGN(Listed listed, List());
  ASSERT_GE(listed.revision, 20);
  FirstEvent first = WatchFirst(WatchFrom(1, listed));
  EXPECT_EQ(first.status.error_code(), grpc::StatusCode::OUT_OF_RANGE) << Describe(first.status);
  EXPECT_TRUE(absl::StrContains(first.status.error_message(), "compacted"))
      << Describe(first.status);
  // Recent revisions are still served.
  FirstEvent recent = WatchFirst(WatchFrom(listed.revision - 2, listed));
  EXPECT_TRUE(recent.got_event) << Describe(recent.status);
}

TEST_F(StoreIntegrityTest, ReplacedDataDirIsAnotherStore) {
  ASSERT_NO_FATAL_FAILURE(StartServer());
  ASSERT_NO_FATAL_FAILURE(SubmitN(0, 5));
  ASSERT_OK_AND_ASSIGN(Listed before, List());
  ASSERT_OK_AND_ASSIGN(int code, server_->Terminate());
  ASSERT_EQ(code, 0);
  fs::remove_all(data_dir_);
  ASSERT_NO_FATAL_FAILURE(StartServer());
  // More revisions than before, so only the identity can tell the histories apart.
  ASSERT_NO_FATAL_FAILURE(SubmitN(0, 10));
  ASSERT_OK_AND_ASSIGN(Listed after, List());
  ASSERT_GE(after.revision, before.revision);
  EXPECT_NE(after.store_id, before.store_id);
  FirstEvent first = WatchFirst(WatchFrom(before.revision, before));
  EXPECT_EQ(first.status.error_code(), grpc::StatusCode::FAILED_PRECONDITION)
      << Describe(first.status);
}

// The largest WAL file in `dir`.
fs::path LargestWal(const std::string& dir) {
  fs::path largest;
  for (const auto& entry : fs::directory_iterator(dir)) {
    if (entry.path().extension() != ".log") continue;
    if (largest.empty() || entry.file_size() > fs::file_size(largest)) largest = entry.path();
  }
  return largest;
}

TEST_F(StoreIntegrityTest, DamagedWalRefusesToStartUntilDataLossIsAccepted) {
  ASSERT_NO_FATAL_FAILURE(StartServer());
  ASSERT_NO_FATAL_FAILURE(SubmitN(0, 60));
  ASSERT_OK_AND_ASSIGN(Listed before, List());
  ASSERT_TRUE(server_->Kill().ok());
  server_.reset();

  const fs::path wal = LargestWal(data_dir_);
  ASSERT_FALSE(wal.empty());
  {
    std::fstream f(wal, std::ios::in | std::ios::out | std::ios::binary);
    const auto middle = static_cast<std::streamoff>(fs::file_size(wal) / 2);
    f.seekg(middle);
    char c = 0;
    f.get(c);
    f.seekp(middle);
    f.put(static_cast<char>(c ^ 0x01));
    ASSERT_TRUE(f);
  }

  const std::string log = scratch_ + "/refused.log";
  ASSERT_OK_AND_ASSIGN(int code, TollgatedProcess::RunToExit(
                                     {"--data-dir=" + data_dir_, "--listen=127.0.0.1:0"}, log));
  EXPECT_NE(code, 0);
  std::ifstream in(log);
  const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  EXPECT_TRUE(absl::StrContains(text, "DATA_LOSS")) << text;
  EXPECT_TRUE(absl::StrContains(text, wal.filename().string())) << text;
  EXPECT_TRUE(absl::StrContains(text, "--accept-data-loss")) << text;

  ASSERT_NO_FATAL_FAILURE(StartServer({"--accept-data-loss"}));
  EXPECT_TRUE(absl::StrContains(server_->Logs(), "lost_revisions")) << server_->Logs();
  ASSERT_OK_AND_ASSIGN(Listed after, List());
  EXPECT_LT(after.workloads, before.workloads);
  EXPECT_EQ(after.store_id, before.store_id);
  EXPECT_EQ(after.store_epoch, before.store_epoch + 1);
  // A watcher of the old history is told to re-list.
  FirstEvent first = WatchFirst(WatchFrom(after.revision, before));
  EXPECT_EQ(first.status.error_code(), grpc::StatusCode::FAILED_PRECONDITION)
      << Describe(first.status);
}

TEST_F(StoreIntegrityTest, BackupAndRestoreSubcommands) {
  ASSERT_NO_FATAL_FAILURE(StartServer());
  ASSERT_NO_FATAL_FAILURE(SubmitN(0, 5));
  ASSERT_OK_AND_ASSIGN(Listed backed_up, List());
  ASSERT_OK_AND_ASSIGN(int code, server_->Terminate());
  ASSERT_EQ(code, 0);
  server_.reset();

  const std::string backup = scratch_ + "/backup";
  ASSERT_OK_AND_ASSIGN(
      code, TollgatedProcess::RunToExit({"backup", "--data-dir=" + data_dir_, "--to=" + backup},
                                        scratch_ + "/backup.log"));
  ASSERT_EQ(code, 0);

  ASSERT_NO_FATAL_FAILURE(StartServer());
  ASSERT_NO_FATAL_FAILURE(SubmitN(5, 5));
  ASSERT_OK_AND_ASSIGN(code, server_->Terminate());
  server_.reset();

  // Restoring over a live data dir is refused.
  ASSERT_OK_AND_ASSIGN(
      code, TollgatedProcess::RunToExit({"restore", "--from=" + backup, "--data-dir=" + data_dir_},
                                        scratch_ + "/restore-refused.log"));
  EXPECT_NE(code, 0);

  data_dir_ = scratch_ + "/restored";
  ASSERT_OK_AND_ASSIGN(
      code, TollgatedProcess::RunToExit({"restore", "--from=" + backup, "--data-dir=" + data_dir_},
                                        scratch_ + "/restore.log"));
  ASSERT_EQ(code, 0);
  ASSERT_NO_FATAL_FAILURE(StartServer());
  ASSERT_OK_AND_ASSIGN(Listed restored, List());
  EXPECT_EQ(restored.workloads, backed_up.workloads);
  EXPECT_EQ(restored.store_id, backed_up.store_id);
  EXPECT_EQ(restored.store_epoch, backed_up.store_epoch + 1);
}

// `tollgate admin backup` while writes keep coming: restored into a new data dir, the backup
// holds every workload acknowledged at or before the revision it reports, and nothing later.
TEST_F(StoreIntegrityTest, OnlineBackupWhileSubmittingRestoresEveryAcknowledgedWrite) {
  ASSERT_NO_FATAL_FAILURE(StartServer());
  absl::Mutex mu;
  std::vector<std::pair<std::string, int64_t>> acked;  // name, revision of its submit
  std::atomic<bool> stop{false};
  std::atomic<bool> failed{false};
  std::thread submitter([&] {
    auto stub = v1::AdmissionService::NewStub(server_->channel());
    for (int i = 0; !stop.load(); ++i) {
      v1::SubmitRequest request;
      *request.mutable_workload() = CrashQueueWorkload(absl::StrCat("online-", i));
      v1::SubmitResponse response;
      if (!stub->Submit(Context().get(), request, &response).ok()) {
        failed.store(true);
        return;
      }
      absl::MutexLock lock(&mu);
      acked.emplace_back(request.workload().metadata().name(),
                         response.workload().metadata().resource_version());
    }
  });
  auto acked_count = [&] {
    absl::MutexLock lock(&mu);
    return acked.size();
  };
  const absl::Time deadline = absl::Now() + absl::Seconds(60);
  while (acked_count() < 20 && !failed.load() && absl::Now() < deadline) {
    absl::SleepFor(absl::Milliseconds(5));
  }
  ASSERT_GE(acked_count(), 20u);

  const std::string backup = scratch_ + "/online-backup";
  std::string out;
  const int code =
      RunCli(absl::StrCat("--server=", server_->address(), " admin backup --to=", backup), out);
  const size_t after_backup = acked_count();
  while (acked_count() < after_backup + 20 && !failed.load() && absl::Now() < deadline) {
    absl::SleepFor(absl::Milliseconds(5));
  }
  stop.store(true);
  submitter.join();
  ASSERT_EQ(code, 0) << out;
  ASSERT_FALSE(failed.load());
  int64_t revision = 0;
  {
    absl::string_view rest = out;
    ASSERT_TRUE(
        absl::ConsumePrefix(&rest, absl::StrCat("backup written to ", backup, " at revision ")))
        << out;
    ASSERT_TRUE(absl::SimpleAtoi(rest.substr(0, rest.find(' ')), &revision)) << out;
  }
  EXPECT_TRUE(absl::StrContains(out, "tollgated restore --from=" + backup)) << out;
  EXPECT_TRUE(absl::StrContains(server_->Logs(), "online backup written")) << server_->Logs();

  // The same target again is refused, and says why.
  EXPECT_NE(
      RunCli(absl::StrCat("--server=", server_->address(), " admin backup --to=", backup), out), 0);
  EXPECT_TRUE(absl::StrContains(out, "already exists")) << out;
  ASSERT_OK_AND_ASSIGN(int exit_code, server_->Terminate());
  EXPECT_EQ(exit_code, 0);
  server_.reset();

  data_dir_ = scratch_ + "/restored-online";
  ASSERT_OK_AND_ASSIGN(exit_code, TollgatedProcess::RunToExit(
                                      {"restore", "--from=" + backup, "--data-dir=" + data_dir_},
                                      scratch_ + "/restore-online.log"));
  ASSERT_EQ(exit_code, 0);
  ASSERT_NO_FATAL_FAILURE(StartServer());
  v1::ListWorkloadsRequest list;
  list.set_namespace_("crash");
  v1::ListWorkloadsResponse listed;
  ASSERT_GRPC_OK(admission_->ListWorkloads(Context().get(), list, &listed));
  std::set<std::string> restored;
  for (const v1::Workload& wl : listed.workloads()) restored.insert(wl.metadata().name());
  int before = 0;
  int later = 0;
  for (const auto& [name, at] : acked) {
    if (at <= revision) {
      ++before;
      EXPECT_TRUE(restored.count(name)) << name << " acknowledged at " << at << " <= " << revision;
    } else {
      ++later;
      EXPECT_FALSE(restored.count(name)) << name << " acknowledged at " << at << " > " << revision;
    }
  }
  EXPECT_GE(before, 20);
  EXPECT_GT(later, 0);
}

// A /proc/PID/status field in its unit (kB for VmRSS), or -1.
int64_t ProcStatus(pid_t pid, absl::string_view field) {
  std::ifstream in(absl::StrCat("/proc/", pid, "/status"));
  std::string line;
  while (std::getline(in, line)) {
    absl::string_view rest = line;
    if (!absl::ConsumePrefix(&rest, field) || !absl::ConsumePrefix(&rest, ":")) continue;
    rest = absl::StripAsciiWhitespace(rest);
    absl::ConsumeSuffix(&rest, " kB");
    int64_t value = 0;
    if (absl::SimpleAtoi(rest, &value)) return value;
  }
  return -1;
}

// The small version of `tollgate-bench watchers`: watchers that never read cost neither a
// thread nor a copy of the state each, and a reading watcher still sees every change.
TEST_F(StoreIntegrityTest, StalledWatchersStayBoundedAndActiveOnesSeeEverything) {
  constexpr int kWorkloads = 3000;
  constexpr int kStalled = 200;
#if defined(__SANITIZE_ADDRESS__)
  // AddressSanitizer keeps freed memory in a quarantine (256 MB by default) to catch use after
  // free: this test's allocation churn fills it, and it shows as ~350 MB of RSS growth that is
  // not Tollgate's. The sanitized tollgated here gets an 8 MB quarantine, so the bound below
  // still measures what the server holds for stalled watchers (~30 MB under ASan).
  const char* inherited = getenv("ASAN_OPTIONS");
  const std::string restore = inherited == nullptr ? "" : inherited;
  setenv("ASAN_OPTIONS",
         absl::StrCat(restore, restore.empty() ? "" : ":", "quarantine_size_mb=8").c_str(),
         /*overwrite=*/1);
  StartServer();
  setenv("ASAN_OPTIONS", restore.c_str(), /*overwrite=*/1);
  ASSERT_FALSE(HasFatalFailure());
#else
  ASSERT_NO_FATAL_FAILURE(StartServer());
#endif
  {
    std::vector<std::thread> threads;
    std::atomic<int> failures{0};
    for (int t = 0; t < 8; ++t) {
      threads.emplace_back([&, t] {
        auto stub = v1::AdmissionService::NewStub(server_->channel());
        for (int i = t; i < kWorkloads; i += 8) {
          v1::SubmitRequest request;
          *request.mutable_workload() = CrashQueueWorkload(absl::StrCat("wl-", i));
          v1::SubmitResponse response;
          if (!stub->Submit(Context().get(), request, &response).ok()) ++failures;
        }
      });
    }
    for (std::thread& thread : threads) thread.join();
    ASSERT_EQ(failures.load(), 0);
  }
  const pid_t pid = server_->pid();
  const int64_t rss_before_kb = ProcStatus(pid, "VmRSS");
  const int64_t threads_before = ProcStatus(pid, "Threads");

  std::vector<std::shared_ptr<grpc::Channel>> channels;
  std::vector<std::unique_ptr<v1::AdmissionService::Stub>> stubs;
  std::vector<std::unique_ptr<grpc::ClientContext>> contexts;
  std::vector<std::unique_ptr<grpc::ClientReader<v1::WatchEvent>>> stalled;
  for (int i = 0; i < kStalled; ++i) {
    if (i % 50 == 0) {
      grpc::ChannelArguments args;
      args.SetInt("tollgate-test-connection", i);  // A distinct channel: its own connection.
      channels.push_back(
          grpc::CreateCustomChannel(server_->address(), grpc::InsecureChannelCredentials(), args));
      stubs.push_back(v1::AdmissionService::NewStub(channels.back()));
    }
    contexts.push_back(std::make_unique<grpc::ClientContext>());
    stalled.push_back(stubs.back()->Watch(contexts.back().get(), v1::WatchRequest()));
  }

  // One reader: the whole listing, then every later submit.
  auto reader_context = std::make_unique<grpc::ClientContext>();
  std::unique_ptr<grpc::ClientReader<v1::WatchEvent>> reader =
      admission_->Watch(reader_context.get(), v1::WatchRequest());
  v1::WatchEvent event;
  int listed = 0;
  int64_t listing_revision = -1;
  while (listed < kWorkloads && reader->Read(&event)) {
    ASSERT_EQ(event.type(), v1::WatchEvent::ADDED);
    if (listing_revision < 0) listing_revision = event.revision();
    EXPECT_EQ(event.revision(), listing_revision);
    ++listed;
  }
  ASSERT_EQ(listed, kWorkloads);
  ASSERT_NO_FATAL_FAILURE(SubmitN(kWorkloads, 20));
  std::set<std::string> later;
  while (later.size() < 20 && reader->Read(&event)) {
    if (event.type() == v1::WatchEvent::ADDED) later.insert(event.workload().metadata().name());
  }
  EXPECT_EQ(later.size(), 20u);

  const int64_t rss_after_kb = ProcStatus(pid, "VmRSS");
  const int64_t threads_after = ProcStatus(pid, "Threads");
  std::cerr << "stalled watchers: RSS " << rss_before_kb / 1024 << " MiB -> " << rss_after_kb / 1024
            << " MiB, threads " << threads_before << " -> " << threads_after << "\n";
  // A copy of the listing per stalled watcher (what the thread-per-stream Watch held) would be
  // about 200 x 3000 x 0.4 KB = 240 MB.
  EXPECT_LT(rss_after_kb - rss_before_kb, 96 * 1024);
  EXPECT_LT(threads_after - threads_before, 40);

  reader_context->TryCancel();
  EXPECT_EQ(reader->Finish().error_code(), grpc::StatusCode::CANCELLED);
  for (auto& context : contexts) context->TryCancel();
}

// Mounts a small tmpfs for the data dir, fills it, and checks that the failed write is loud:
// UNAVAILABLE to the client, NOT_SERVING on health, the cause in the log. Once space is back, a
// restart (what an orchestrator does on NOT_SERVING) serves every acknowledged write again.
TEST_F(StoreIntegrityTest, DiskFullTurnsHealthNotServingAndRestartRecovers) {
  if (geteuid() != 0) GTEST_SKIP() << "needs root to mount a tmpfs";
  const std::string mount_point = scratch_ + "/tmpfs";
  fs::create_directories(mount_point);
  if (mount("tollgate-test", mount_point.c_str(), "tmpfs", 0, "size=8m") != 0) {
    GTEST_SKIP() << "cannot mount a tmpfs: " << std::strerror(errno);
  }
  struct Unmount {
    std::string path;
    ~Unmount() { umount2(path.c_str(), MNT_DETACH); }
  } unmount{mount_point};
  data_dir_ = mount_point + "/data";
  ASSERT_NO_FATAL_FAILURE(StartServer());
  ASSERT_NO_FATAL_FAILURE(SubmitN(0, 5));

  // Fill what is left.
  const std::string filler = mount_point + "/filler";
  {
    const int fd = ::open(filler.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    ASSERT_GE(fd, 0) << std::strerror(errno);
    const std::string chunk(4096, 'x');
    while (::write(fd, chunk.data(), chunk.size()) > 0) {
    }
    ::close(fd);
  }

  int acknowledged = 5;
  grpc::Status failed;
  for (int i = 5; i < 5000 && failed.ok(); ++i) {
    v1::SubmitRequest request;
    *request.mutable_workload() = CrashQueueWorkload(absl::StrCat("wl-", i));
    v1::SubmitResponse response;
    failed = admission_->Submit(Context().get(), request, &response);
    if (failed.ok()) ++acknowledged;
  }
  ASSERT_FALSE(failed.ok()) << "no write failed on a full disk";
  EXPECT_EQ(failed.error_code(), grpc::StatusCode::UNAVAILABLE) << Describe(failed);

  ASSERT_OK_AND_ASSIGN(std::string health, CheckHealth(server_->channel(), kRpcTimeout));
  EXPECT_EQ(health, "NOT_SERVING");
  EXPECT_TRUE(absl::StrContains(server_->Logs(), "store write failed")) << server_->Logs();
  // Reads still work while writes are refused.
  ASSERT_OK_AND_ASSIGN(Listed while_full, List());
  EXPECT_GE(while_full.workloads, acknowledged);

  fs::remove(filler);
  ASSERT_OK_AND_ASSIGN(int code, server_->Terminate());
  (void)code;  // Its last flush may fail on the full disk; nothing acknowledged depends on it.
  ASSERT_NO_FATAL_FAILURE(StartServer());
  ASSERT_OK_AND_ASSIGN(health, CheckHealth(server_->channel(), kRpcTimeout));
  EXPECT_EQ(health, "SERVING");
  ASSERT_OK_AND_ASSIGN(Listed after, List());
  EXPECT_GE(after.workloads, acknowledged);
  ASSERT_NO_FATAL_FAILURE(SubmitN(10000, 3));
}

}  // namespace
}  // namespace tollgate::e2e
