#pragma once

// Conversion between Tollgate's protobuf API objects (tollgate.v1) and the scheduling core's
// model (core/types.h, core/workload.h).
//
// The *FromProto functions are the service's only way into the core, so they enforce every rule
// Kueue's CRD schemas and validating webhooks enforce (plus Kubernetes' metadata rules), and
// apply Kueue's defaults. The core may then assume well-formed input and never has to
// re-validate.
//
// Errors are INVALID_ARGUMENT and read `KIND NAME: FIELD.PATH: reason`, with the field path in
// Kueue's JSON naming and the offending value quoted in the reason, e.g.
//   ClusterQueue team-a: spec.resourceGroups[0].flavors[1].resources[0].nominalQuota: invalid
//   quantity "abc": ...
//   Workload ns/x: spec.podSets[0].count: must be greater than or equal to 0, got -3
// Only the first problem found is reported; fields are checked in declaration order.
//
// Deliberate choices, following the API server rather than inventing stricter rules:
//  * a namespace on a cluster-scoped object is ignored (the API server drops it);
//  * metadata the service owns (uid, resourceVersion, generation, creationTimestamp) is not
//    checked on config objects;
//  * fields the core has no use for (toleration seconds, descriptions, a PriorityClass's
//    preemptionPolicy) are validated and then dropped.
//
// The *ToProto functions emit spec with Kueue's defaults spelled out (e.g. queueingStrategy
// BestEffortFIFO), the way `kubectl get` shows a defaulted object, and quantities in canonical
// form (FormatResourceScalar). They fill metadata name/namespace only; the service owns
// resourceVersion, generation and the status of config objects.
//
// Where it lives: config_codec.{h,cc} (the configuration kinds; MultiKueue's in
// multikueue_codec.{h,cc}), workload_codec.{h,cc}
// (workloads), quota_codec (resource groups, fair-sharing weights) and selector_codec (taints,
// tolerations, label selectors) for parts several kinds share, api_validation (error reporting,
// names, labels, metadata, quantities, timestamps) under all of them, api_limits.h (limits).

#include "services/api/api_limits.h"
#include "services/api/config_codec.h"
#include "services/api/multikueue_codec.h"
#include "services/api/topology_codec.h"
#include "services/api/workload_codec.h"
