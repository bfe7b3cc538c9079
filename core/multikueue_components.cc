#include "core/multikueue_components.h"

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"

namespace tollgate::core {

int ComponentIndexOf(absl::string_view value) {
  int index = -1;
  if (!absl::SimpleAtoi(value, &index) || index < 0) return -1;
  return index;
}

ComponentDecision DecideComponentDispatch(const ComponentWorkload& self,
                                          const std::vector<ComponentWorkload>& others,
                                          int expected) {
  ComponentDecision out;
  const int present = static_cast<int>(others.size()) + 1;
  if (expected > 0 && present < expected) {
    out.step = ComponentStep::kWaitForComponents;
    out.message =
        absl::StrCat("waiting for all component workloads to exist (", present, "/", expected, ")");
    return out;
  }
  // Where the others run: the one cluster they all follow.
  std::string assigned;
  for (const ComponentWorkload& other : others) {
    if (other.cluster_name.empty()) continue;
    if (!assigned.empty() && assigned != other.cluster_name) {
      out.step = ComponentStep::kConflict;
      out.message = absl::StrCat("component workloads assigned to different clusters: \"", assigned,
                                 "\" and \"", other.cluster_name, "\"");
      return out;
    }
    assigned = other.cluster_name;
  }
  if (!assigned.empty()) {
    out.step = ComponentStep::kFollow;
    out.cluster = assigned;
    return out;
  }
  // The primary: an index, and no other component with a lower one.
  bool primary = self.index >= 0;
  for (const ComponentWorkload& other : others) {
    if (primary && other.index >= 0 && other.index < self.index) primary = false;
  }
  if (!primary) {
    out.step = ComponentStep::kWaitForPrimary;
    out.message = "waiting for the primary component workload to be admitted on a worker";
    return out;
  }
  out.step = ComponentStep::kNominate;
  return out;
}

}  // namespace tollgate::core
