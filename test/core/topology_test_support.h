#pragma once

// What the topology placement tests share: Kueue's test label keys and a one-line form of an
// assignment that a failed expectation prints.

#include <string>
#include <vector>

#include "core/topology.h"
#include "core/types.h"

namespace tollgate::core::topology_test {

// The level labels of Kueue's TAS tests (tas_cache_test.go).
inline constexpr char kBlock[] = "cloud.com/topology-block";
inline constexpr char kSubBlock[] = "cloud.com/topology-subblock";
inline constexpr char kRack[] = "cloud.com/topology-rack";

// "b1/r1/x1/:2 b1/r2/x3/:1 ": each domain's values, then its count.
inline std::string Describe(const TopologyAssignment& a) {
  std::string out;
  for (const TopologyDomainAssignment& d : a.domains) {
    for (const std::string& v : d.values) out += v + "/";
    out += ":" + std::to_string(d.count) + " ";
  }
  return out;
}

}  // namespace tollgate::core::topology_test
