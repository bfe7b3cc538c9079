#pragma once

#include "absl/strings/string_view.h"

namespace tollgate::web {

// A dashboard file compiled into the binary (web/assets/, embedded by embed_assets.cmake at
// build time), so tollgated serves its UI with nothing installed beside it.
struct WebAsset {
  absl::string_view path;  // "index.html", "app.js", ...
  absl::string_view content_type;
  absl::string_view data;
};

// The asset at `path` (relative to web/assets/), or nullptr.
const WebAsset* FindWebAsset(absl::string_view path);

}  // namespace tollgate::web
