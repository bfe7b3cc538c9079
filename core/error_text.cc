#include "core/error_text.h"

#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"

namespace tollgate::core {
namespace {

// Cut on a byte boundary that does not split a UTF-8 sequence, so the escaped prefix stays
// readable.
absl::string_view Prefix(absl::string_view value) {
  if (value.size() <= kMaxEchoedValueBytes) return value;
  size_t end = kMaxEchoedValueBytes;
  while (end > 0 && (static_cast<unsigned char>(value[end]) & 0xC0) == 0x80) --end;
  return value.substr(0, end);
}

}  // namespace

std::string EchoedText(absl::string_view value) {
  if (value.size() <= kMaxEchoedValueBytes) return absl::CHexEscape(value);
  return absl::StrCat(absl::CHexEscape(Prefix(value)), "... (", value.size(), " bytes)");
}

std::string QuoteValue(absl::string_view value) {
  if (value.size() <= kMaxEchoedValueBytes)
    return absl::StrCat("\"", absl::CHexEscape(value), "\"");
  return absl::StrCat("\"", absl::CHexEscape(Prefix(value)), "\"... (", value.size(), " bytes)");
}

}  // namespace tollgate::core
