// The pending workload's two biggest allocations sit just inside jemalloc size classes
// (docs/performance.md, section 4, session 33): one more field moves a record into the next
// class and costs every pending workload 32 or 64 bytes, silently. These checks make that a
// decision: box a rarely set field (PodSetRareFields, WorkloadHistory) or accept the cost and
// update the memory figures.

#include "core/types.h"
#include "core/workload.h"
#include "gtest/gtest.h"

namespace tollgate::core {
namespace {

TEST(RecordSizeTest, WorkloadStaysInsideJemallocs448ByteClass) {
  EXPECT_LE(sizeof(Workload), 448u);
}

TEST(RecordSizeTest, PodSetSpecStaysInsideJemallocs160ByteClass) {
  EXPECT_LE(sizeof(PodSetSpec), 160u);
}

}  // namespace
}  // namespace tollgate::core
