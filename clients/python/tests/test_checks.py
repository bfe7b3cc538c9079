"""The check-controller helper and the approval example against a real tollgated.

Run by ctest (clients/python/CMakeLists.txt) with TOLLGATED, TOLLGATE_CLI and PYTHONPATH (the
package, its generated stubs and the examples) set. tollgated runs on a loopback port with a
ClusterQueue that asks for the "approval" check; the example controller serves it from a thread,
and a platform admin approves with the real CLI.
"""

import os
import shutil
import subprocess
import sys
import tempfile
import threading
import time
import unittest

import grpc

from tollgate.v1 import objects_pb2, service_pb2, service_pb2_grpc

from tollgate_client import PodSet, TollgateClient, TollgateError
from tollgate_client.checks import (
    CheckController,
    Decision,
    mark_multikueue_winner,
    set_active,
    update_check,
)
from tollgated_process import TollgatedProcess

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "examples"))
import approval_check  # noqa: E402  (the example, imported as a module)

WAIT_TIMEOUT = 30.0

MANIFESTS = """
apiVersion: kueue.x-k8s.io/v1beta2
kind: ResourceFlavor
metadata: {name: a100}
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: AdmissionCheck
metadata: {name: approval}
spec: {controllerName: example.com/approval}
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: AdmissionCheck
metadata: {name: budget}
spec: {controllerName: example.com/budget}
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: ClusterQueue
metadata: {name: gpu}
spec:
  admissionChecksStrategy: {admissionChecks: [{name: approval}]}
  resourceGroups:
    - coveredResources: [nvidia.com/gpu]
      flavors: [{name: a100, resources: [{name: nvidia.com/gpu, nominalQuota: 32}]}]
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: ClusterQueue
metadata: {name: budgeted}
spec:
  admissionChecksStrategy: {admissionChecks: [{name: budget}]}
  resourceGroups:
    - coveredResources: [nvidia.com/gpu]
      flavors: [{name: a100, resources: [{name: nvidia.com/gpu, nominalQuota: 32}]}]
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: AdmissionCheck
metadata: {name: mk}
spec: {controllerName: kueue.x-k8s.io/multikueue}
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: ClusterQueue
metadata: {name: dispatched}
spec:
  admissionChecksStrategy: {admissionChecks: [{name: mk}]}
  resourceGroups:
    - coveredResources: [nvidia.com/gpu]
      flavors: [{name: a100, resources: [{name: nvidia.com/gpu, nominalQuota: 32}]}]
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: LocalQueue
metadata: {name: dispatched, namespace: team-a}
spec: {clusterQueue: dispatched}
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: LocalQueue
metadata: {name: train, namespace: team-a}
spec: {clusterQueue: gpu}
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: LocalQueue
metadata: {name: budgeted, namespace: team-a}
spec: {clusterQueue: budgeted}
"""


def check_state(workload: objects_pb2.Workload, name: str) -> objects_pb2.AdmissionCheckState:
    for state in workload.status.admission_checks:
        if state.name == name:
            return state
    raise AssertionError(f"no check {name} on {workload.metadata.name}")


class CheckControllerTest(unittest.TestCase):
    def setUp(self):
        manifests_dir = tempfile.mkdtemp(prefix="tollgate-checks-test-manifests-")
        self.addCleanup(shutil.rmtree, manifests_dir, ignore_errors=True)
        manifests = os.path.join(manifests_dir, "queues.yaml")
        with open(manifests, "w") as f:
            f.write(MANIFESTS)
        self.server = TollgatedProcess([manifests], prefix="tollgate-checks-test-")
        self.addCleanup(self.server.stop)
        self.client = TollgateClient(self.server.address)
        self.addCleanup(self.client.close)

    def serve(self, controller: CheckController) -> None:
        thread = threading.Thread(target=controller.run, daemon=True)
        thread.start()

        def stop():
            controller.close()
            thread.join(timeout=10)

        self.addCleanup(stop)

    def wait_for(self, name: str, predicate, what: str) -> objects_pb2.Workload:
        """Follows the workload's changes until `predicate(proto)` holds, with a deadline."""
        deadline = time.monotonic() + WAIT_TIMEOUT
        stop = threading.Event()
        timer = threading.Timer(WAIT_TIMEOUT, stop.set)
        timer.start()
        last = None
        try:
            for event in self.client.watch(namespace="team-a", stop=stop):
                if event.workload.name != name:
                    continue
                last = event.workload.proto
                if predicate(last):
                    return last
                if time.monotonic() > deadline:
                    break
        finally:
            timer.cancel()
        self.fail(f"{name}: {what} not reached in {WAIT_TIMEOUT}s; last seen: {last}")

    def test_a_platform_admin_approves_from_the_cli(self):
        self.serve(CheckController(self.client, approval_check.CONTROLLER,
                                   approval_check.make_decide(max_gpus=16)))
        self.client.submit("small", namespace="team-a", queue="train",
                           pod_sets=[PodSet("main", count=2, requests={"nvidia.com/gpu": "1"})])
        self.client.submit("huge", namespace="team-a", queue="train",
                           pod_sets=[PodSet("main", count=20, requests={"nvidia.com/gpu": "1"})])

        waiting = self.wait_for(
            "small",
            lambda w: w.status.state == objects_pb2.WORKLOAD_STATE_QUOTA_RESERVED
            and "waiting for a platform admin" in check_state(w, "approval").message,
            "quota reserved and waiting for approval")
        self.assertEqual(check_state(waiting, "approval").state, "Pending")
        huge = self.wait_for("huge", lambda w: w.status.deactivated, "deactivated")
        self.assertIn("20 GPUs is more than the 16", huge.status.pending_message)

        cli = subprocess.run(
            [os.environ["TOLLGATE_CLI"], f"--server={self.server.address}", "check", "set",
             "small", "-n", "team-a", "--check", "approval", "--state", "Ready",
             "--message", "approved by the platform team"],
            capture_output=True, text=True, timeout=30)
        self.assertEqual(cli.returncode, 0, cli.stderr)
        admitted = self.wait_for(
            "small", lambda w: w.status.state == objects_pb2.WORKLOAD_STATE_ADMITTED, "admitted")
        self.assertEqual(check_state(admitted, "approval").message, "approved by the platform team")

    def test_a_decision_on_a_stale_revision_is_refused_and_changes_nothing(self):
        self.client.submit("a", namespace="team-a", queue="budgeted",
                           pod_sets=[PodSet("main", count=1, requests={"nvidia.com/gpu": "1"})])
        # Inactive until its controller reports: nothing is reserved yet.
        self.assertEqual(self.client.get("a", "team-a").state, "Pending")
        controller = CheckController(self.client, "example.com/budget", lambda w, c: None)
        self.assertEqual(controller.activate_checks(), ["budget"])
        seen = self.wait_for("a", lambda w: w.status.state
                             == objects_pb2.WORKLOAD_STATE_QUOTA_RESERVED, "quota reserved")
        update_check(self.client, seen, "budget", Decision.pending("looking at the budget"))
        with self.assertRaises(TollgateError) as refused:
            update_check(self.client, seen, "budget", Decision.ready())
        self.assertEqual(refused.exception.code, grpc.StatusCode.FAILED_PRECONDITION)
        self.assertIn(f"not the expected revision {seen.metadata.resource_version}",
                      refused.exception.message)
        now = self.client.get("a", "team-a").proto
        self.assertEqual(check_state(now, "budget").state, "Pending")
        self.assertEqual(check_state(now, "budget").message, "looking at the budget")

    def test_retry_requeues_and_the_controller_hears_of_the_release(self):
        released = []
        decisions = iter([Decision.retry("no budget this minute", requeue_after_seconds=1),
                          Decision.ready("budget found")])
        controller = CheckController(
            self.client, "example.com/budget", lambda w, c: next(decisions),
            on_release=lambda w: released.append(w.metadata.name))
        self.serve(controller)
        self.client.submit("a", namespace="team-a", queue="budgeted",
                           pod_sets=[PodSet("main", count=1, requests={"nvidia.com/gpu": "1"})])
        admitted = self.wait_for(
            "a", lambda w: w.status.state == objects_pb2.WORKLOAD_STATE_ADMITTED, "admitted")
        budget = check_state(admitted, "budget")
        self.assertEqual(budget.retry_count, 1)
        self.assertEqual(budget.message, "budget found")
        self.assertIn("a", released)
        evicted = [e for e in admitted.status.events if e.reason == "EvictedDueToAdmissionCheck"]
        self.assertEqual(len(evicted), 1)
        self.assertIn('"budget" (no budget this minute)', evicted[0].message)

    def test_mark_multikueue_winner_marks_only_a_copy_of_this_origin_holding_quota(self):
        origin_label = "kueue.x-k8s.io/multikueue-origin"
        gpu = [PodSet("main", count=1, requests={"nvidia.com/gpu": "1"})]
        self.client.submit("copy", namespace="team-a", queue="budgeted", pod_sets=gpu,
                           labels={origin_label: "multikueue"})
        # Pending: it holds no quota yet (the budget check is inactive), so it is refused.
        with self.assertRaises(TollgateError) as no_quota:
            mark_multikueue_winner(self.client, "copy", "team-a")
        self.assertEqual(no_quota.exception.code, grpc.StatusCode.FAILED_PRECONDITION)
        self.assertFalse(self.client.get("copy", "team-a").proto.status.multi_kueue_winner)

        CheckController(self.client, "example.com/budget", lambda w, c: None).activate_checks()
        self.wait_for("copy", lambda w: w.status.state
                      == objects_pb2.WORKLOAD_STATE_QUOTA_RESERVED, "quota reserved")
        marked = mark_multikueue_winner(self.client, "copy", "team-a", origin="multikueue")
        self.assertTrue(marked.status.multi_kueue_winner)
        self.assertIn("MultiKueueWinner", [e.reason for e in marked.status.events])
        # Idempotent.
        again = mark_multikueue_winner(self.client, "copy", "team-a")
        self.assertTrue(again.status.multi_kueue_winner)

        # Another manager's origin is refused; so is a workload without the label.
        with self.assertRaises(TollgateError) as other_origin:
            mark_multikueue_winner(self.client, "copy", "team-a", origin="elsewhere")
        self.assertEqual(other_origin.exception.code, grpc.StatusCode.FAILED_PRECONDITION)
        self.client.submit("local", namespace="team-a", queue="budgeted", pod_sets=gpu)
        self.wait_for("local", lambda w: w.status.state
                      == objects_pb2.WORKLOAD_STATE_QUOTA_RESERVED, "quota reserved")
        with self.assertRaises(TollgateError) as unlabelled:
            mark_multikueue_winner(self.client, "local", "team-a")
        self.assertEqual(unlabelled.exception.code, grpc.StatusCode.FAILED_PRECONDITION)
        self.assertFalse(self.client.get("local", "team-a").proto.status.multi_kueue_winner)
        with self.assertRaises(TollgateError) as missing:
            mark_multikueue_winner(self.client, "nobody", "team-a")
        self.assertEqual(missing.exception.code, grpc.StatusCode.NOT_FOUND)


    def test_a_manager_workload_reports_nominees_winner_and_each_workers_copy(self):
        # What tollgate-multikueue writes on the manager (docs/multicluster.md), read back
        # through the client's Workload.
        self.client.submit("train", namespace="team-a", queue="dispatched",
                           pod_sets=[PodSet("main", count=1, requests={"nvidia.com/gpu": "1"})])
        set_active(self.client, "mk")
        reserved = self.wait_for("train", lambda w: w.status.state
                                 == objects_pb2.WORKLOAD_STATE_QUOTA_RESERVED, "quota reserved")
        checks = service_pb2_grpc.AdmissionCheckServiceStub(self.client._endpoint.channel)

        def update(workload, **fields):
            return checks.UpdateAdmissionCheckState(service_pb2.UpdateAdmissionCheckStateRequest(
                workload=service_pb2.WorkloadRef(namespace="team-a", name="train"), check="mk",
                expected_revision=workload.metadata.resource_version, **fields),
                timeout=WAIT_TIMEOUT).workload

        nominated = update(reserved, state="Pending", set_nominated_cluster_names=True,
                           nominated_cluster_names=["w1", "w2"])
        seen = self.client.get("train", "team-a")
        self.assertEqual(seen.nominated_cluster_names, ["w1", "w2"])
        self.assertEqual(seen.cluster_name, "")
        self.assertEqual(seen.multikueue_remotes, {})

        update(nominated, state="Ready", message='The workload was admitted on "w2"',
               cluster_name="w2", set_multi_kueue_remotes=True, multi_kueue_remotes=[
                   objects_pb2.MultiKueueRemoteState(cluster="w1", state="NoCopy"),
                   objects_pb2.MultiKueueRemoteState(cluster="w2", state="Admitted")])
        won = self.client.get("train", "team-a")
        self.assertEqual(won.cluster_name, "w2")
        self.assertEqual(won.nominated_cluster_names, [])
        self.assertEqual(won.multikueue_remotes, {"w1": "NoCopy", "w2": "Admitted"})


if __name__ == "__main__":
    unittest.main()
