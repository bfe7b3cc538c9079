#!/usr/bin/env python3
"""A non-C++ client: Python gRPC (Debian's python3-grpcio) against the real tollgated,
authenticating with a bearer token from the static token file.

Usage: token_client_test.py TOLLGATED STUBS_DIR SCRATCH_DIR
Starts tollgated on 127.0.0.1 port 0 with --token-file and a policy, then checks that the token's
identity is what WhoAmI reports, that its role lets it submit in its namespace, and that the
server refuses a call without a token (UNAUTHENTICATED) and one outside its namespace
(PERMISSION_DENIED). Every wait is on a condition with a deadline.
"""
import os
import shutil
import subprocess
import sys
import time

TOLLGATED, STUBS, SCRATCH = sys.argv[1], sys.argv[2], sys.argv[3]
sys.path.insert(0, STUBS)

import grpc  # noqa: E402
from tollgate.v1 import auth_pb2, auth_pb2_grpc, objects_pb2, service_pb2, service_pb2_grpc  # noqa: E402

POLICY = """
kind: RoleBinding
metadata: {name: team-a}
role: batch-user
subjects: [{kind: Group, name: team-a}]
namespaces: [team-a]
"""


def wait_for(condition, what, timeout=30.0):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = condition()
        if value:
            return value
        time.sleep(0.02)  # paces the polling; the loop ends on the condition or the deadline
    raise AssertionError(f"timed out waiting for {what}")


def main():
    shutil.rmtree(SCRATCH, ignore_errors=True)
    os.makedirs(SCRATCH)
    with open(os.path.join(SCRATCH, "tokens.csv"), "w") as f:
        f.write('py-admin,root,0,"tollgate:admins"\npy-user,ada,42,"team-a,pythonistas"\n')
    with open(os.path.join(SCRATCH, "policy.yaml"), "w") as f:
        f.write(POLICY)
    port_file = os.path.join(SCRATCH, "port")
    log = open(os.path.join(SCRATCH, "tollgated.log"), "w")
    server = subprocess.Popen(
        [TOLLGATED, "--listen=127.0.0.1:0", f"--data-dir={SCRATCH}/data",
         f"--port-file={port_file}", f"--token-file={SCRATCH}/tokens.csv",
         f"--authz-policy={SCRATCH}/policy.yaml"], stdout=log, stderr=subprocess.STDOUT)
    try:
        port = wait_for(lambda: open(port_file).read().strip() if os.path.exists(port_file) else "",
                        "the port file")
        channel = grpc.insecure_channel(f"127.0.0.1:{port}")
        grpc.channel_ready_future(channel).result(timeout=30)
        auth = auth_pb2_grpc.AuthServiceStub(channel)
        admission = service_pb2_grpc.AdmissionServiceStub(channel)
        config = service_pb2_grpc.ConfigServiceStub(channel)
        user = [("authorization", "Bearer py-user")]
        admin = [("authorization", "Bearer py-admin")]

        me = auth.WhoAmI(auth_pb2.WhoAmIRequest(), metadata=user, timeout=10)
        assert (me.user, me.uid, list(me.groups), me.method) == (
            "ada", "42", ["team-a", "pythonistas"], "token"), me

        apply = service_pb2.ApplyRequest()
        apply.objects.add().resource_flavor.metadata.name = "default-flavor"
        cq = apply.objects.add().cluster_queue
        cq.metadata.name = "cq"
        group = cq.spec.resource_groups.add()
        group.covered_resources.append("cpu")
        flavor = group.flavors.add()
        flavor.name = "default-flavor"
        quota = flavor.resources.add()
        quota.name, quota.nominal_quota = "cpu", "4"
        lq = apply.objects.add().local_queue
        lq.metadata.namespace, lq.metadata.name, lq.spec.cluster_queue = "team-a", "q", "cq"
        config.Apply(apply, metadata=admin, timeout=10)

        def submit(ns, name, metadata):
            w = objects_pb2.Workload()
            w.metadata.namespace, w.metadata.name, w.spec.queue_name = ns, name, "q"
            ps = w.spec.pod_sets.add()
            ps.name, ps.count = "main", 1
            ps.requests["cpu"] = "1"
            return admission.Submit(service_pb2.SubmitRequest(workload=w), metadata=metadata,
                                    timeout=10)

        created = submit("team-a", "from-python", user)
        assert created.created and created.workload.metadata.name == "from-python", created

        for ns, metadata, code in (("team-a", [], grpc.StatusCode.UNAUTHENTICATED),
                                   ("team-b", user, grpc.StatusCode.PERMISSION_DENIED)):
            try:
                submit(ns, "refused", metadata)
                raise AssertionError(f"submit to {ns} with {metadata} was accepted")
            except grpc.RpcError as e:
                assert e.code() == code, (e.code(), e.details())
        print("python token client: OK")
    finally:
        server.terminate()
        server.wait(timeout=30)
        log.close()


if __name__ == "__main__":
    main()
