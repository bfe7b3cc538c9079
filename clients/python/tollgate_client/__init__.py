"""Python client for tollgated, Tollgate's Kueue-compatible admission service.

    from tollgate_client import TollgateClient, PodSet

    with TollgateClient("127.0.0.1:50051") as client:
        client.submit("eval-1", namespace="team-a", queue="eval-queue",
                      pod_sets=[PodSet("main", count=1, requests={"cpu": "8", "nvidia.com/gpu": "1"})])
        workload = client.wait_for_admission("eval-1", namespace="team-a", timeout=600)
        print(workload.admitted_by)

The gRPC stubs are generated at build time from proto/tollgate/v1 (see README.md).
"""

from tollgate_client.client import (
    AdmissionTimeout,
    CohortBreakdown,
    Node,
    NodePod,
    NodeSummary,
    PendingWorkload,
    PodSet,
    PreemptResult,
    QuotaHolder,
    ReclaimBlocker,
    TollgateClient,
    TollgateError,
    WatchEvent,
    Workload,
)

__all__ = [
    "AdmissionTimeout",
    "CohortBreakdown",
    "Node",
    "NodePod",
    "NodeSummary",
    "PendingWorkload",
    "PodSet",
    "PreemptResult",
    "QuotaHolder",
    "ReclaimBlocker",
    "TollgateClient",
    "TollgateError",
    "WatchEvent",
    "Workload",
]
