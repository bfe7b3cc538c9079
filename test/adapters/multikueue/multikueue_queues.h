#pragma once

// The queues the MultiKueue end-to-end tests start from: each worker has one flavor, a
// ClusterQueue `cq` with 4 cpu and the LocalQueue team/q; the manager has the same queue names
// with 8 cpu behind the MultiKueue check `mk`, whose config `fleet` lists the workers w1 and w2
// (spec.endpoint, plaintext on loopback).

#include <string>

#include "absl/strings/str_cat.h"

namespace tollgate::multikueue_test {

inline constexpr char kWorkerQueues[] = R"(apiVersion: kueue.x-k8s.io/v1beta2
kind: ResourceFlavor
metadata: {name: default-flavor}
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: ClusterQueue
metadata: {name: cq}
spec:
  namespaceSelector: {}
  resourceGroups:
  - coveredResources: [cpu]
    flavors:
    - name: default-flavor
      resources: [{name: cpu, nominalQuota: 4}]
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: LocalQueue
metadata: {name: q, namespace: team}
spec: {clusterQueue: cq}
)";

inline std::string ManagerQueues(const std::string& w1, const std::string& w2) {
  return absl::StrCat(R"(apiVersion: kueue.x-k8s.io/v1beta2
kind: ResourceFlavor
metadata: {name: default-flavor}
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: MultiKueueCluster
metadata: {name: w1}
spec:
  endpoint: {address: ")",
                      w1, R"(", insecure: true}
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: MultiKueueCluster
metadata: {name: w2}
spec:
  endpoint: {address: ")",
                      w2, R"(", insecure: true}
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: MultiKueueConfig
metadata: {name: fleet}
spec:
  clusters: [w1, w2]
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: AdmissionCheck
metadata: {name: mk}
spec:
  controllerName: kueue.x-k8s.io/multikueue
  parameters: {apiGroup: kueue.x-k8s.io, kind: MultiKueueConfig, name: fleet}
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: ClusterQueue
metadata: {name: cq}
spec:
  namespaceSelector: {}
  admissionChecks: [mk]
  resourceGroups:
  - coveredResources: [cpu]
    flavors:
    - name: default-flavor
      resources: [{name: cpu, nominalQuota: 8}]
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: LocalQueue
metadata: {name: q, namespace: team}
spec: {clusterQueue: cq}
)");
}

}  // namespace tollgate::multikueue_test
