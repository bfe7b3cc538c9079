// The options the binaries that link jemalloc compile in (common/jemalloc_options.cc), read back
// from jemalloc itself: the object carrying them is linked although nothing refers to it.

#include <gtest/gtest.h>
#include <jemalloc/jemalloc.h>

#include <cstddef>
#include <cstdlib>

namespace {

TEST(JemallocOptionsTest, ThreadCacheGarbageCollectionStepsEverySixteenMebibytes) {
  if (std::getenv("MALLOC_CONF") != nullptr) {
    GTEST_SKIP() << "MALLOC_CONF is set and overrides the compiled-in options";
  }
  size_t step = 0;
  size_t size = sizeof(step);
  ASSERT_EQ(mallctl("opt.tcache_gc_incr_bytes", &step, &size, nullptr, 0), 0);
  EXPECT_EQ(step, size_t{16} << 20);
}

}  // namespace
