"""From a notebook: submit an evaluation, wait until Tollgate admits it, see the queue.

    TOLLGATE_SERVER=127.0.0.1:50051 python3 notebook_example.py

Needs tollgated with deploy/evalhub/queues.yaml and priorities.yaml loaded (scripts/demo.sh
--keep leaves such a server running) and PYTHONPATH set as in clients/python/README.md.
"""

import os

from tollgate_client import AdmissionTimeout, PodSet, TollgateClient

with TollgateClient(os.environ.get("TOLLGATE_SERVER", "127.0.0.1:50051")) as client:
    client.submit(
        "notebook-mmlu",
        namespace="team-a",
        queue="eval-queue",
        priority_class="routine",
        pod_sets=[PodSet("main", requests={"cpu": "8", "memory": "32Gi", "nvidia.com/gpu": "1"})],
    )
    try:
        wl = client.wait_for_admission("notebook-mmlu", namespace="team-a", timeout=60)
        print(f"admitted by {wl.admitted_by}: start the job now")
    except AdmissionTimeout as waiting:
        print(f"still waiting: {waiting.workload.pending_message}")
    for p in client.list_pending(cluster_queue="team-a-cq"):
        print(f"{p.position_in_cluster_queue:>3}  {p.namespace}/{p.name}  {p.reason}")
