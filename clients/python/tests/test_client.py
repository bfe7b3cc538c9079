"""The Python client against a real tollgated, started by the test on a loopback port.

Run by ctest (clients/python/CMakeLists.txt) with TOLLGATED, TOLLGATE_DEPLOY_DIR and PYTHONPATH
(the package and its generated stubs) set.
"""

import os
import shutil
import subprocess
import tempfile
import threading
import time
import unittest
from concurrent import futures

import grpc

from tollgate_client import AdmissionTimeout, PodSet, TollgateClient, TollgateError

STARTUP_TIMEOUT = 30.0


class TollgatedProcess:
    """tollgated on 127.0.0.1:0 over a fresh data dir with the EvalHub queues loaded."""

    def __init__(self):
        self.dir = tempfile.mkdtemp(prefix="tollgate-python-test-")
        deploy = os.environ["TOLLGATE_DEPLOY_DIR"]
        port_file = os.path.join(self.dir, "port")
        self.log = open(os.path.join(self.dir, "tollgated.log"), "wb")
        self.process = subprocess.Popen(
            [
                os.environ["TOLLGATED"],
                "--listen=127.0.0.1:0",
                f"--data-dir={self.dir}/data",
                f"--port-file={port_file}",
                f"--manifests={deploy}/evalhub/queues.yaml,{deploy}/evalhub/priorities.yaml",
            ],
            stdout=self.log,
            stderr=subprocess.STDOUT,
        )
        # Wait on the condition (the port file appears once serving), with a deadline.
        deadline = time.monotonic() + STARTUP_TIMEOUT
        while not os.path.exists(port_file):
            if self.process.poll() is not None:
                raise RuntimeError(f"tollgated exited: {self.read_log()}")
            if time.monotonic() > deadline:
                raise RuntimeError(f"tollgated did not start: {self.read_log()}")
            time.sleep(0.02)
        with open(port_file) as f:
            self.address = f"127.0.0.1:{f.read().strip()}"

    def read_log(self) -> str:
        with open(os.path.join(self.dir, "tollgated.log"), "rb") as f:
            return f.read().decode(errors="replace")

    def stop(self):
        self.process.terminate()
        try:
            self.process.wait(timeout=20)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()
        self.log.close()
        shutil.rmtree(self.dir, ignore_errors=True)


GPU_POD = {"cpu": "8", "memory": "32Gi", "nvidia.com/gpu": "1"}


class ClientTest(unittest.TestCase):
    def setUp(self):
        self.server = TollgatedProcess()
        self.addCleanup(self.server.stop)
        self.client = TollgateClient(self.server.address)
        self.addCleanup(self.client.close)

    def test_submit_then_wait_for_admission(self):
        wl = self.client.submit(
            "eval-1",
            namespace="team-a",
            queue="eval-queue",
            priority_class="production",
            pod_sets=[PodSet("main", count=1, requests=GPU_POD)],
            labels={"app": "notebook"},
        )
        self.assertEqual((wl.namespace, wl.name, wl.queue), ("team-a", "eval-1", "eval-queue"))
        admitted = self.client.wait_for_admission("eval-1", namespace="team-a", timeout=20)
        self.assertTrue(admitted.admitted)
        self.assertEqual(admitted.admitted_by, "team-a-cq")
        self.assertEqual(admitted.priority, 1000)
        # Submitting the same spec again is harmless.
        again = self.client.submit(
            "eval-1",
            namespace="team-a",
            queue="eval-queue",
            priority_class="production",
            pod_sets=[PodSet("main", count=1, requests=GPU_POD)],
            labels={"app": "notebook"},
        )
        self.assertEqual(again.state, "Admitted")

    def test_wait_times_out_with_the_reason_and_pending_lists_it(self):
        # team-b's ClusterQueue holds 4 GPUs and the cohort lends team-a's 4: nine 1-GPU pods
        # leave the last one waiting.
        for i in range(9):
            self.client.submit(
                f"sweep-{i}",
                namespace="team-b",
                queue="eval-queue",
                priority_class="experimental",
                pod_sets=[PodSet("main", requests={"nvidia.com/gpu": "1"})],
            )
        deadline = time.monotonic() + 20
        while True:
            pending = self.client.list_pending(cluster_queue="team-b-cq")
            admitted = self.client.list(namespace="team-b", state="Admitted")
            if len(pending) == 1 and len(admitted) == 8:
                break
            self.assertLess(time.monotonic(), deadline, (pending, admitted))
            time.sleep(0.02)
        waiting = pending[0]
        self.assertEqual(waiting.position_in_cluster_queue, 1)
        self.assertEqual(waiting.local_queue, "eval-queue")
        self.assertTrue(waiting.reason, waiting)
        with self.assertRaises(AdmissionTimeout) as raised:
            self.client.wait_for_admission(waiting.name, namespace="team-b", timeout=0.5)
        self.assertEqual(raised.exception.workload.state, "Pending")
        self.assertIn(waiting.reason, str(raised.exception))
        by_local_queue = self.client.list_pending(namespace="team-b", local_queue="eval-queue")
        self.assertEqual([p.name for p in by_local_queue], [waiting.name])

    def test_watch_streams_changes(self):
        stop = threading.Event()
        seen = []
        ready = threading.Event()

        def run():
            for event in self.client.watch(namespace="team-a", stop=stop):
                seen.append((event.type, event.workload.name, event.workload.state))
                ready.set()
                if event.workload.name == "w2" and event.type == "DELETED":
                    return

        self.client.submit(
            "w1", namespace="team-a", queue="eval-queue", pod_sets=[PodSet("main")]
        )
        thread = threading.Thread(target=run)
        thread.start()
        self.assertTrue(ready.wait(20))
        self.client.submit(
            "w2", namespace="team-a", queue="eval-queue", pod_sets=[PodSet("main")]
        )
        self.client.wait_for_admission("w2", namespace="team-a", timeout=20)
        self.client.delete("w2", namespace="team-a")
        thread.join(20)
        stop.set()
        self.assertFalse(thread.is_alive())
        self.assertEqual(seen[0][:2], ("ADDED", "w1"))
        self.assertIn(("ADDED", "w2", "Pending"), seen)
        self.assertIn("DELETED", [t for t, name, _ in seen if name == "w2"])

    def test_server_version(self):
        version = self.client.server_version()
        self.assertTrue(version["version"])
        self.assertRegex(version["gRPC"], r"^[0-9]+\.[0-9]+")
        self.assertIn("RocksDB", version)

    def test_errors_carry_the_code_and_message(self):
        with self.assertRaises(TollgateError) as raised:
            self.client.get("nope", namespace="team-a")
        self.assertEqual(raised.exception.code.name, "NOT_FOUND")
        with self.assertRaises(TollgateError) as raised:
            self.client.submit("bad", namespace="team-a", queue="eval-queue",
                               pod_sets=[PodSet("main", requests={"cpu": "lots"})])
        self.assertEqual(raised.exception.code.name, "INVALID_ARGUMENT")
        self.assertIn("lots", raised.exception.message)
        with self.assertRaises(ValueError):
            self.client.list(state="Sleeping")


class _Follower(grpc.GenericRpcHandler):
    """What a follower replica of a replicated tollgated answers (docs/ha.md): UNAVAILABLE
    naming the leader, in the message and the `tollgate-leader` trailing metadata."""

    def __init__(self, leader: str):
        self.leader = leader
        self.calls = 0

    def service(self, handler_call_details):
        def refuse(request, context):
            self.calls += 1
            context.set_trailing_metadata((("tollgate-leader", self.leader),))
            context.abort(grpc.StatusCode.UNAVAILABLE,
                          f"not the leader; the leader is at {self.leader}")

        return grpc.unary_unary_rpc_method_handler(refuse)


class ReplicasTest(unittest.TestCase):
    """A comma-separated target: unreachable replicas and followers are skipped."""

    def setUp(self):
        self.server = TollgatedProcess()
        self.addCleanup(self.server.stop)
        self.follower = _Follower(self.server.address)
        self.follower_server = grpc.server(futures.ThreadPoolExecutor(max_workers=2))
        self.follower_server.add_generic_rpc_handlers((self.follower,))
        port = self.follower_server.add_insecure_port("127.0.0.1:0")
        self.follower_server.start()
        self.addCleanup(self.follower_server.stop, None)
        self.follower_address = f"127.0.0.1:{port}"

    def test_skips_an_unreachable_replica_and_follows_the_named_leader(self):
        # Port 1 refuses connections; the follower names the leader, which is not listed.
        client = TollgateClient(f"127.0.0.1:1,{self.follower_address}", timeout=10.0)
        self.addCleanup(client.close)
        wl = client.submit("via-follower", namespace="team-a", queue="eval-queue",
                           pod_sets=[PodSet("main", requests={"cpu": "1"})])
        self.assertEqual(wl.name, "via-follower")
        self.assertEqual(self.follower.calls, 1)
        # The leader is remembered: the next call goes straight there.
        self.assertEqual(client.get("via-follower", namespace="team-a").name, "via-follower")
        self.assertEqual(self.follower.calls, 1)

    def test_a_lone_follower_answer_is_an_error_once_time_runs_out(self):
        follower = _Follower("")
        server = grpc.server(futures.ThreadPoolExecutor(max_workers=2))
        server.add_generic_rpc_handlers((follower,))
        port = server.add_insecure_port("127.0.0.1:0")
        server.start()
        self.addCleanup(server.stop, None)
        client = TollgateClient(f"127.0.0.1:{port}", timeout=0.5)
        self.addCleanup(client.close)
        with self.assertRaises(TollgateError) as raised:
            client.get("x", namespace="team-a")
        self.assertEqual(raised.exception.code.name, "UNAVAILABLE")
        self.assertIn("not the leader", raised.exception.message)


if __name__ == "__main__":
    unittest.main()
