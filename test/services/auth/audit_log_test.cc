#include "services/auth/audit_log.h"

#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "gtest/gtest.h"

namespace tollgate::auth {
namespace {

std::string ReadAll(const std::string& path) {
  std::ifstream in(path);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

std::string TempDir() {
  std::string dir =
      absl::StrCat(std::filesystem::temp_directory_path().string(), "/audit_log_test.", getpid());
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  return dir;
}

AuditEntry Entry(int i) {
  AuditEntry e;
  e.time = absl::FromUnixSeconds(1700000000 + i);
  e.request_id = absl::StrCat("req-", i);
  e.user = "alice";
  e.groups = {"team-a", "dev\"s"};
  e.method = "token";
  e.verb = "submit";
  e.kind = "Workload";
  e.ns = "team-a";
  e.name = absl::StrCat("w", i);
  e.result = "denied";
  e.code = "PERMISSION_DENIED";
  e.reason = "line\nbreak";
  return e;
}

TEST(AuditLogTest, FormatsOneJsonObjectWithEscapes) {
  EXPECT_EQ(FormatAuditEntry(Entry(0)),
            "{\"time\":\"2023-11-14T22:13:20.000000Z\",\"request_id\":\"req-0\",\"user\":\"alice\","
            "\"groups\":[\"team-a\",\"dev\\\"s\"],\"method\":\"token\",\"verb\":\"submit\","
            "\"kind\":\"Workload\",\"namespace\":\"team-a\",\"name\":\"w0\",\"result\":\"denied\","
            "\"code\":\"PERMISSION_DENIED\",\"reason\":\"line\\nbreak\"}");
}

TEST(AuditLogTest, RotatesAtMaxBytesKeepingBackups) {
  const std::string dir = TempDir();
  const std::string path = dir + "/audit.log";
  absl::StatusOr<std::unique_ptr<AuditLog>> log =
      AuditLog::Open({path, /*max_bytes=*/4096, /*max_backups=*/2});
  ASSERT_TRUE(log.ok()) << log.status();
  const size_t line = FormatAuditEntry(Entry(0)).size() + 1;
  const int per_file = static_cast<int>(4096 / line);
  const int total = per_file * 4 + 1;
  for (int i = 0; i < total; ++i) (*log)->Write(Entry(i));
  EXPECT_EQ((*log)->write_failures(), 0);
  EXPECT_TRUE(std::filesystem::exists(path + ".1"));
  EXPECT_TRUE(std::filesystem::exists(path + ".2"));
  EXPECT_FALSE(std::filesystem::exists(path + ".3"));
  for (const std::string& file : {path, path + ".1", path + ".2"}) {
    EXPECT_LE(std::filesystem::file_size(file), 4096u) << file;
  }
  // Nothing lost at a rotation: the newest backup ends with the entry just before the first one
  // of the current file, and the current file ends with the newest entry.
  const std::string current = ReadAll(path);
  EXPECT_NE(current.find(absl::StrCat("\"req-", total - 1, "\"")), std::string::npos);
  const size_t id_at = current.find("\"request_id\":\"req-") + 18;
  const int first = std::atoi(current.c_str() + id_at);
  ASSERT_GT(first, 0);
  const std::string backup = ReadAll(path + ".1");
  const std::vector<std::string> lines = absl::StrSplit(backup, '\n', absl::SkipEmpty());
  ASSERT_FALSE(lines.empty());
  EXPECT_NE(lines.back().find(absl::StrCat("\"req-", first - 1, "\"")), std::string::npos)
      << lines.back();
  std::filesystem::remove_all(dir);
}

TEST(AuditLogTest, RefusesBadOptions) {
  EXPECT_FALSE(AuditLog::Open({"", 4096, 1}).ok());
  absl::StatusOr<std::unique_ptr<AuditLog>> small = AuditLog::Open({"/tmp/x", 10, 1});
  ASSERT_FALSE(small.ok());
  EXPECT_NE(small.status().message().find("--audit-log-max-bytes=10"), std::string::npos);
  EXPECT_FALSE(AuditLog::Open({"/nonexistent-dir/audit.log", 4096, 1}).ok());
}

}  // namespace
}  // namespace tollgate::auth
