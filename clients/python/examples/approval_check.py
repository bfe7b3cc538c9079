"""A manual approval check: workloads wait, quota reserved, until a platform admin approves them.

An AdmissionCheck whose controller is this script, named by a ClusterQueue:

    kind: AdmissionCheck
    metadata: {name: approval}
    spec: {controllerName: example.com/approval}
    ---
    kind: ClusterQueue ... spec: {admissionChecksStrategy: {admissionChecks: [{name: approval}]}}

The script activates the check, then tells every workload that reaches it who may approve it
and how; it decides nothing itself. A platform admin approves (or rejects) from the CLI:

    tollgate check set train-1 -n team-a --check approval --state Ready --message "go ahead"
    tollgate check set train-2 -n team-a --check approval --state Rejected --message "too big"

Workloads asking for more than --max-gpus GPUs in total are rejected without asking anyone.

    PYTHONPATH=clients/python:build/clients/python/gen \\
        python3 clients/python/examples/approval_check.py --server 127.0.0.1:50051
"""

import argparse
import sys

from tollgate_client import TollgateClient
from tollgate_client.checks import CheckController, Decision

CONTROLLER = "example.com/approval"


def gpus_of(workload) -> int:
    total = 0
    for ps in workload.spec.pod_sets:
        quantity = ps.requests.get("nvidia.com/gpu", "0")
        total += ps.count * int(quantity) if quantity.isdigit() else 0
    return total


def make_decide(max_gpus: int):
    def decide(workload, check):
        gpus = gpus_of(workload)
        if max_gpus >= 0 and gpus > max_gpus:
            return Decision.rejected(f"{gpus} GPUs is more than the {max_gpus} this queue allows")
        ref = f"{workload.metadata.name} -n {workload.metadata.namespace}"
        print(f"waiting for approval: {workload.metadata.namespace}/{workload.metadata.name} "
              f"({gpus} GPUs)", flush=True)
        return Decision.pending(
            f"waiting for a platform admin: tollgate check set {ref} --check {check.name} "
            "--state Ready")

    return decide


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--server", default="127.0.0.1:50051")
    parser.add_argument("--controller", default=CONTROLLER)
    parser.add_argument("--max-gpus", type=int, default=-1,
                        help="reject workloads asking for more GPUs (default: no limit)")
    args = parser.parse_args(argv)
    with TollgateClient(args.server) as client:
        controller = CheckController(client, args.controller, make_decide(args.max_gpus))
        print(f"serving {args.controller}", flush=True)
        try:
            controller.run()
        except KeyboardInterrupt:
            pass
    return 0


if __name__ == "__main__":
    sys.exit(main())
