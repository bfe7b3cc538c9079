"""The Python client against a real tollgated, started by the test on a loopback port.

Run by ctest (clients/python/CMakeLists.txt) with TOLLGATED, TOLLGATE_DEPLOY_DIR and PYTHONPATH
(the package and its generated stubs) set.
"""

import os
import threading
import time
import unittest
from concurrent import futures

import grpc

from tollgate_client import AdmissionTimeout, PodSet, TollgateClient, TollgateError
from tollgated_process import TollgatedProcess

EVALHUB_MANIFESTS = [
    os.path.join(os.environ["TOLLGATE_DEPLOY_DIR"], "evalhub", name)
    for name in ("queues.yaml", "priorities.yaml")
]

GPU_POD = {"cpu": "8", "memory": "32Gi", "nvidia.com/gpu": "1"}


class ClientTest(unittest.TestCase):
    def setUp(self):
        self.server = TollgatedProcess(EVALHUB_MANIFESTS)
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


def _wait(condition, what, timeout=20.0):
    """Waits for `condition()` to be truthy, with a deadline (never a fixed sleep)."""
    deadline = time.monotonic() + timeout
    while True:
        value = condition()
        if value:
            return value
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        time.sleep(0.02)


class OperatorControlsTest(unittest.TestCase):
    """Issue 14's operator calls: stop/resume queues, deactivate/activate, reprioritize,
    preempt (with hold) and the cohort breakdown, against a real tollgated."""

    def setUp(self):
        self.server = TollgatedProcess(EVALHUB_MANIFESTS)
        self.addCleanup(self.server.stop)
        self.client = TollgateClient(self.server.address)
        self.addCleanup(self.client.close)

    def submit(self, name, namespace="team-a", gpus="1", priority_class="experimental"):
        return self.client.submit(
            name,
            namespace=namespace,
            queue="eval-queue",
            priority_class=priority_class,
            pod_sets=[PodSet("main", requests={"nvidia.com/gpu": gpus})],
        )

    def test_stop_and_resume_cluster_queue(self):
        stopped = self.client.stop_cluster_queue("team-a-cq")
        self.assertEqual(stopped.cluster_queue.spec.stop_policy, "Hold")
        self.submit("held")
        # Held: it waits, and says why; a workload of team-b is admitted meanwhile.
        self.submit("other", namespace="team-b")
        self.client.wait_for_admission("other", namespace="team-b", timeout=20)
        held = self.client.get("held", namespace="team-a")
        self.assertEqual(held.state, "Pending")
        resumed = self.client.resume_cluster_queue("team-a-cq")
        self.assertEqual(resumed.cluster_queue.spec.stop_policy, "None")
        self.assertTrue(self.client.wait_for_admission("held", namespace="team-a", timeout=20).admitted)

    def test_stop_local_queue_with_drain_evicts_and_resume_readmits(self):
        self.submit("running")
        self.client.wait_for_admission("running", namespace="team-a", timeout=20)
        stopped = self.client.stop_local_queue("eval-queue", namespace="team-a", drain=True)
        self.assertEqual(stopped.local_queue.spec.stop_policy, "HoldAndDrain")
        _wait(lambda: self.client.get("running", namespace="team-a").state == "Pending",
              "the drained workload to be pending")
        self.client.resume_local_queue("eval-queue", namespace="team-a")
        self.assertTrue(
            self.client.wait_for_admission("running", namespace="team-a", timeout=20).admitted)
        with self.assertRaises(TollgateError) as raised:
            self.client.stop_local_queue("nope", namespace="team-a")
        self.assertEqual(raised.exception.code.name, "NOT_FOUND")

    def test_deactivate_then_activate(self):
        self.submit("job")
        self.client.wait_for_admission("job", namespace="team-a", timeout=20)
        deactivated = self.client.deactivate("job", namespace="team-a")
        self.assertFalse(deactivated.proto.spec.active)
        _wait(lambda: self.client.get("job", namespace="team-a").state == "Pending",
              "the deactivated workload to be evicted")
        self.assertFalse(self.client.get("job", namespace="team-a").proto.spec.active)
        # Resubmitting the original spec (an adapter restarting) is not an error and does not
        # undo the deactivation.
        again = self.submit("job")
        self.assertFalse(again.proto.spec.active)
        activated = self.client.activate("job", namespace="team-a")
        self.assertTrue(activated.proto.spec.active)
        self.assertTrue(self.client.wait_for_admission("job", namespace="team-a", timeout=20).admitted)

    def test_reprioritize(self):
        self.submit("job")
        changed = self.client.reprioritize("job", 700, namespace="team-a")
        self.assertEqual(changed.priority, 700)
        self.assertEqual(self.client.get("job", namespace="team-a").priority, 700)
        self.assertEqual(self.submit("job").priority, 700)  # the original spec still matches
        with self.assertRaises(TollgateError) as raised:
            self.client.reprioritize("nope", 1, namespace="team-a")
        self.assertEqual(raised.exception.code.name, "NOT_FOUND")

    def test_admission_gates_are_removed_until_none_is_left(self):
        gated_by = "kueue.x-k8s.io/admission-gated-by"
        self.client.submit(
            "gated",
            namespace="team-a",
            queue="eval-queue",
            priority_class="experimental",
            pod_sets=[PodSet("main", requests={"nvidia.com/gpu": "1"})],
            annotations={gated_by: "example.com/a,example.com/b"},
        )
        one_left = self.client.set_admission_gates("gated", "example.com/b", namespace="team-a")
        self.assertEqual(one_left.proto.metadata.annotations[gated_by], "example.com/b")
        self.assertEqual(self.client.get("gated", namespace="team-a").state, "Pending")
        with self.assertRaises(TollgateError) as raised:
            self.client.set_admission_gates("gated", "example.com/c", namespace="team-a")
        self.assertEqual(raised.exception.code.name, "INVALID_ARGUMENT")
        self.assertIn("metadata.annotations[kueue.x-k8s.io/admission-gated-by]",
                      str(raised.exception))
        cleared = self.client.set_admission_gates("gated", None, namespace="team-a")
        self.assertNotIn(gated_by, cleared.proto.metadata.annotations)
        self.assertTrue(
            self.client.wait_for_admission("gated", namespace="team-a", timeout=20).admitted)

    def test_priority_boost_is_set_replaced_and_removed(self):
        boost = "kueue.x-k8s.io/priority-boost"
        self.submit("job")
        boosted = self.client.set_priority_boost("job", "10", namespace="team-a")
        self.assertEqual(boosted.proto.metadata.annotations[boost], "10")
        self.assertEqual(
            self.client.get("job", namespace="team-a").proto.metadata.annotations[boost], "10")
        # A stale expected_revision changes nothing; the current one replaces the value.
        revision = boosted.proto.metadata.resource_version
        with self.assertRaises(TollgateError):
            self.client.set_priority_boost(
                "job", -5, namespace="team-a", expected_revision=revision - 1)
        self.assertEqual(
            self.client.get("job", namespace="team-a").proto.metadata.annotations[boost], "10")
        lowered = self.client.set_priority_boost(
            "job", -5, namespace="team-a", expected_revision=revision)
        self.assertEqual(lowered.proto.metadata.annotations[boost], "-5")
        cleared = self.client.set_priority_boost("job", None, namespace="team-a")
        self.assertNotIn(boost, cleared.proto.metadata.annotations)
        with self.assertRaises(TollgateError) as raised:
            self.client.set_priority_boost("nope", "1", namespace="team-a")
        self.assertEqual(raised.exception.code.name, "NOT_FOUND")

    def test_preempt_says_what_happened_and_hold_deactivates(self):
        self.submit("job")
        self.client.wait_for_admission("job", namespace="team-a", timeout=20)
        # Room to spare: evicted, then admitted again in the same pass, and the answer says so.
        result = self.client.preempt("job", namespace="team-a", reason="test")
        self.assertTrue(result.evicted)
        self.assertTrue(result.readmitted, result)
        self.assertEqual(result.workload.state, "Admitted")
        self.assertIn("re-admitted", result.message)
        held = self.client.preempt("job", namespace="team-a", hold=True)
        self.assertTrue(held.evicted)
        self.assertFalse(held.readmitted)
        self.assertFalse(held.workload.proto.spec.active)
        self.assertIn("deactivated", held.message)

    def test_cohort_breakdown_names_the_borrower_and_the_policy(self):
        # team-a takes its 4 GPUs and borrows team-b's 4; team-b's workload then waits, and
        # reclaimWithinCohort (Never by default) keeps it from taking them back.
        for i in range(8):
            self.submit(f"a-{i}")
        _wait(lambda: len(self.client.list(namespace="team-a", state="Admitted")) == 8,
              "team-a to borrow the cohort's GPUs")
        self.submit("b-0", namespace="team-b", priority_class="production")
        _wait(lambda: self.client.list_pending(cluster_queue="team-b-cq"), "b-0 to wait")
        b = self.client.cohort_breakdown(workload="b-0", namespace="team-b")
        self.assertEqual(b.cohort, "evalhub")
        self.assertEqual(b.cluster_queue, "team-b-cq")
        self.assertEqual(b.workload, "team-b/b-0")
        self.assertTrue(b.pending_message)
        borrowers = [h for h in b.holders
                     if h.name == "team-a-cq" and h.resource == "nvidia.com/gpu"]
        self.assertEqual(len(borrowers), 1, b.holders)
        self.assertEqual(borrowers[0].borrowed, "4")
        self.assertIn("reclaimWithinCohort", [x.policy for x in b.blockers], b.blockers)
        by_cohort = self.client.cohort_breakdown(cohort="evalhub")
        self.assertEqual(by_cohort.root, "evalhub")
        with self.assertRaises(TollgateError) as raised:
            self.client.cohort_breakdown(cohort="nope")
        self.assertEqual(raised.exception.code.name, "NOT_FOUND")


class _Follower(grpc.GenericRpcHandler):
    """What a follower replica of a replicated tollgated answers (docs/ha.md): UNAVAILABLE
    marked by the `tollgate-not-leader` trailer, naming the leader in the `tollgate-leader`
    trailer (and in the message, for people)."""

    def __init__(self, leader: str):
        self.leader = leader
        self.calls = 0

    def service(self, handler_call_details):
        def refuse(request, context):
            self.calls += 1
            context.set_trailing_metadata(
                (("tollgate-not-leader", "true"), ("tollgate-leader", self.leader)))
            context.abort(grpc.StatusCode.UNAVAILABLE,
                          f"not the leader; the leader is at {self.leader}")

        return grpc.unary_unary_rpc_method_handler(refuse)


class ReplicasTest(unittest.TestCase):
    """A comma-separated target: unreachable replicas and followers are skipped."""

    def setUp(self):
        self.server = TollgatedProcess(EVALHUB_MANIFESTS)
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
