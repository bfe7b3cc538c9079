#include "storage/record_encoding.h"

#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace tollgate::storage {
namespace {

using ::testing::ElementsAre;
using ::testing::IsEmpty;

TEST(RecordEncodingTest, VarintsRoundTripAtEveryLengthBoundary) {
  for (uint64_t value : {uint64_t{0}, uint64_t{1}, uint64_t{127}, uint64_t{128}, uint64_t{16383},
                         uint64_t{16384}, std::numeric_limits<uint64_t>::max()}) {
    std::string out;
    PutVarint(out, value);
    absl::string_view in = out;
    uint64_t read = 7;
    ASSERT_TRUE(GetVarint(in, read)) << value;
    EXPECT_EQ(read, value);
    EXPECT_THAT(in, IsEmpty()) << value;
  }
}

TEST(RecordEncodingTest, VarintsAreProtobufsEncoding) {
  std::string out;
  PutVarint(out, 300);
  EXPECT_EQ(out, std::string("\xac\x02", 2));
}

TEST(RecordEncodingTest, TruncatedOrOverlongVarintsAreRejected) {
  absl::string_view truncated("\x80\x80", 2);
  uint64_t value = 0;
  EXPECT_FALSE(GetVarint(truncated, value));
  const std::string overlong(11, '\xff');
  absl::string_view in = overlong;
  EXPECT_FALSE(GetVarint(in, value));
}

TEST(RecordEncodingTest, RecordsRoundTripIncludingEmptyAndBinaryOnes) {
  const std::vector<std::string> records = {"", "a", std::string(300, 'x'),
                                            std::string("\0\xff", 2)};
  std::vector<std::string> decoded = {"stale"};
  ASSERT_TRUE(DecodeRecords(EncodeRecords(records), decoded));
  EXPECT_EQ(decoded, records);
  ASSERT_TRUE(DecodeRecords("", decoded));
  EXPECT_THAT(decoded, IsEmpty());
}

TEST(RecordEncodingTest, ATruncatedEntryKeepsTheRecordsBeforeTheDamage) {
  std::string encoded = EncodeRecords({"first", "second"});
  encoded.pop_back();
  std::vector<std::string> decoded;
  EXPECT_FALSE(DecodeRecords(encoded, decoded));
  EXPECT_THAT(decoded, ElementsAre("first"));
}

}  // namespace
}  // namespace tollgate::storage
