#pragma once

#include "absl/strings/string_view.h"

namespace tollgate::manifest {

// One of Kueue's feature gates (pkg/features/kube_features.go) as Tollgate answers a
// Configuration that sets it.
struct KueueFeatureGate {
  absl::string_view name;
  // Kueue's default at the version Tollgate follows (its main branch of August 2026).
  bool default_value;
  // Tollgate behaves as Kueue does with the gate either on or off: the gate only switches a
  // cache in Kueue, or changes nothing a settled outcome shows (docs/configuration.md).
  bool either_value_honoured;
};

// The gate of that name, or null when Kueue has no such gate (Kueue refuses those too).
const KueueFeatureGate* FindKueueFeatureGate(absl::string_view name);

}  // namespace tollgate::manifest
