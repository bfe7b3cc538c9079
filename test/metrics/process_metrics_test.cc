#include "metrics/process_metrics.h"

#include <fcntl.h>
#include <unistd.h>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace tollgate::metrics {
namespace {

TEST(ProcessMetricsTest, ReadsThisProcess) {
  absl::StatusOr<ProcessStats> before = ReadProcessStats();
  ASSERT_TRUE(before.ok()) << before.status();
  EXPECT_GT(before->resident_bytes, 1 << 20);
  EXPECT_GT(before->virtual_bytes, before->resident_bytes);
  EXPECT_GT(before->max_fds, 0);
  EXPECT_GE(before->threads, 1);
  // Started within the last day, not at the epoch.
  EXPECT_GT(before->start_time_seconds, 1.6e9);

  const int fd = open("/dev/null", O_RDONLY);
  ASSERT_GE(fd, 0);
  absl::StatusOr<ProcessStats> after = ReadProcessStats();
  close(fd);
  ASSERT_TRUE(after.ok());
  EXPECT_EQ(after->open_fds, before->open_fds + 1);
}

TEST(ProcessMetricsTest, WritesEveryFamily) {
  TextWriter writer;
  WriteProcessMetrics(writer);
  for (const char* name :
       {"process_cpu_seconds_total", "process_resident_memory_bytes", "process_open_fds",
        "process_max_fds", "process_start_time_seconds", "process_virtual_memory_bytes"}) {
    EXPECT_THAT(writer.text(), ::testing::HasSubstr(std::string("\n") + name + " ")) << name;
  }
}

}  // namespace
}  // namespace tollgate::metrics
