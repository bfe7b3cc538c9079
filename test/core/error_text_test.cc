// Echoed values in error messages: escaped, quoted, and cut so a huge value cannot push a status
// past gRPC's message limit.

#include "core/error_text.h"

#include <string>

#include "gtest/gtest.h"

namespace tollgate::core {
namespace {

TEST(ErrorTextTest, ShortValuesAreQuotedWhole) {
  EXPECT_EQ(QuoteValue("abc"), "\"abc\"");
  EXPECT_EQ(QuoteValue("a\"b\n"), "\"a\\\"b\\n\"");
  EXPECT_EQ(EchoedText("ns"), "ns");
  EXPECT_EQ(QuoteValue(std::string(kMaxEchoedValueBytes, 'x')),
            "\"" + std::string(kMaxEchoedValueBytes, 'x') + "\"");
}

TEST(ErrorTextTest, LongValuesAreCutWithTheirSize) {
  EXPECT_EQ(QuoteValue(std::string(5000, 'n')),
            "\"" + std::string(kMaxEchoedValueBytes, 'n') + "\"... (5000 bytes)");
  EXPECT_EQ(EchoedText(std::string(300, 'k')),
            std::string(kMaxEchoedValueBytes, 'k') + "... (300 bytes)");
}

TEST(ErrorTextTest, CutsBetweenUtf8Characters) {
  // 'é' is two bytes; the cut must not leave half of one.
  std::string value(kMaxEchoedValueBytes - 1, 'a');
  value += "\xc3\xa9\xc3\xa9\xc3\xa9";
  const std::string quoted = QuoteValue(value);
  EXPECT_EQ(quoted, "\"" + std::string(kMaxEchoedValueBytes - 1, 'a') + "\"... (" +
                        std::to_string(value.size()) + " bytes)");
}

}  // namespace
}  // namespace tollgate::core
