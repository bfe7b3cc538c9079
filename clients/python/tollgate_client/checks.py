"""Write an admission check controller in a few lines (docs/admission-checks.md).

A check controller decides one kind of Kueue AdmissionCheck (those whose spec.controllerName is
its name) for every workload that holds quota and waits for it. tollgated does the rest: it
admits a workload once all its checks are Ready, evicts and requeues it on Retry, deactivates it
on Rejected.

    from tollgate_client import TollgateClient
    from tollgate_client.checks import CheckController, Decision

    def decide(workload, check):
        if workload.spec.pod_sets[0].count > 64:
            return Decision.rejected("more than 64 pods need a human")
        return Decision.ready("small enough")

    with TollgateClient("127.0.0.1:50051") as client:
        CheckController(client, "example.com/budget", decide).run()

`decide(workload, check)` gets the workload (objects_pb2.Workload) and the state of one of its
checks this controller handles (objects_pb2.AdmissionCheckState, still Pending) and returns a
Decision, or None to leave the check as it is (a human decides, see
examples/approval_check.py). Each decision is posted with the revision it was made on: if the
workload changed meanwhile the update is refused, nothing happens, and the change arrives as the
next event, to be decided anew. So a decision never lands on a workload it was not made for.
"""

from __future__ import annotations

import dataclasses
import threading
import time
from typing import Callable, Dict, List, Mapping, Optional, Sequence

import grpc

from tollgate.v1 import objects_pb2, service_pb2, service_pb2_grpc

from tollgate_client.client import TollgateClient, TollgateError

PENDING = "Pending"
READY = "Ready"
RETRY = "Retry"
REJECTED = "Rejected"


@dataclasses.dataclass(frozen=True)
class PodSetUpdate:
    """What a check adds to one pod set's pods once the workload is admitted (Kueue's
    PodSetUpdate): additive only, a key another check sets differently is refused."""

    name: str
    labels: Mapping[str, str] = dataclasses.field(default_factory=dict)
    annotations: Mapping[str, str] = dataclasses.field(default_factory=dict)
    node_selector: Mapping[str, str] = dataclasses.field(default_factory=dict)
    tolerations: Sequence[objects_pb2.Toleration] = ()

    def to_proto(self) -> objects_pb2.PodSetUpdate:
        out = objects_pb2.PodSetUpdate(name=self.name)
        out.labels.update(self.labels)
        out.annotations.update(self.annotations)
        out.node_selector.update(self.node_selector)
        out.tolerations.extend(self.tolerations)
        return out


@dataclasses.dataclass(frozen=True)
class Decision:
    """A check's new state: Pending (with a message saying what it waits for), Ready, Retry
    (with the least delay before the workload is tried again) or Rejected."""

    state: str
    message: str = ""
    requeue_after_seconds: Optional[int] = None
    pod_set_updates: Sequence[PodSetUpdate] = ()

    @staticmethod
    def pending(message: str) -> "Decision":
        return Decision(PENDING, message)

    @staticmethod
    def ready(message: str = "", pod_set_updates: Sequence[PodSetUpdate] = ()) -> "Decision":
        return Decision(READY, message, pod_set_updates=tuple(pod_set_updates))

    @staticmethod
    def retry(message: str, requeue_after_seconds: Optional[int] = None) -> "Decision":
        return Decision(RETRY, message, requeue_after_seconds)

    @staticmethod
    def rejected(message: str) -> "Decision":
        return Decision(REJECTED, message)


def _stub(client: TollgateClient) -> service_pb2_grpc.AdmissionCheckServiceStub:
    return service_pb2_grpc.AdmissionCheckServiceStub(client._endpoint.channel)


def update_check(
    client: TollgateClient,
    workload: objects_pb2.Workload,
    check: str,
    decision: Decision,
) -> objects_pb2.Workload:
    """Posts `decision` for `check` of `workload`, on the revision `workload` was read at.
    Raises TollgateError; FAILED_PRECONDITION when the workload changed since it was read."""
    request = service_pb2.UpdateAdmissionCheckStateRequest(
        workload=service_pb2.WorkloadRef(
            namespace=workload.metadata.namespace, name=workload.metadata.name
        ),
        check=check,
        state=decision.state,
        message=decision.message,
        expected_revision=workload.metadata.resource_version,
    )
    if decision.requeue_after_seconds is not None:
        request.requeue_after_seconds = decision.requeue_after_seconds
    request.pod_set_updates.extend(u.to_proto() for u in decision.pod_set_updates)
    response = client._call(
        lambda e: service_pb2_grpc.AdmissionCheckServiceStub(e.channel).UpdateAdmissionCheckState,
        request,
    )
    return response.workload


def set_active(
    client: TollgateClient, name: str, active: bool = True, reason: str = "", message: str = ""
) -> objects_pb2.AdmissionCheck:
    """The AdmissionCheck's Active condition: a ClusterQueue naming an inactive check admits
    nothing, so a controller activates its checks when it is ready to decide them."""
    request = service_pb2.SetAdmissionCheckActiveRequest(
        name=name, active=active, reason=reason, message=message
    )
    response = client._call(
        lambda e: service_pb2_grpc.AdmissionCheckServiceStub(e.channel).SetAdmissionCheckActive,
        request,
    )
    return response.admission_check


def mark_multikueue_winner(
    client: TollgateClient, name: str, namespace: str = "default", origin: str = "multikueue"
) -> objects_pb2.Workload:
    """On a MultiKueue worker: marks its copy of a workload as the one the manager recorded as
    the winner (status.multi_kueue_winner), so the worker's job adapter may run it
    (docs/multicluster.md, "The job itself"). `origin` is the manager's multiKueue.origin, which
    the copy's kueue.x-k8s.io/multikueue-origin label must carry. Idempotent. Raises
    TollgateError: NOT_FOUND for a missing workload, FAILED_PRECONDITION (nothing changed) for
    one without that origin or holding no quota."""
    request = service_pb2.MarkMultiKueueWinnerRequest(
        workload=service_pb2.WorkloadRef(namespace=namespace, name=name), origin=origin
    )
    response = client._call(
        lambda e: service_pb2_grpc.AdmissionCheckServiceStub(e.channel).MarkMultiKueueWinner,
        request,
    )
    return response.workload


def checks_of(client: TollgateClient, controller_name: str) -> List[str]:
    """The names of the AdmissionChecks whose controller is `controller_name`."""
    response = client._call(
        lambda e: e.config.List,
        service_pb2.ListObjectsRequest(kind=service_pb2.ADMISSION_CHECK),
    )
    return sorted(
        o.admission_check.metadata.name
        for o in response.objects
        if o.admission_check.spec.controller_name == controller_name
    )


Decide = Callable[[objects_pb2.Workload, objects_pb2.AdmissionCheckState], Optional[Decision]]
Released = Callable[[objects_pb2.Workload], None]


class CheckController:
    """Watches the workloads that hold quota and carry a check of `controller_name` and asks
    `decide` about each of its checks that is Pending. `on_release(workload)` is called when a
    workload stops needing the controller (evicted, finished, deleted, the check dropped), for
    controllers that hold something outside Tollgate for it (a ProvisioningRequest, a remote
    copy). `run` resumes the watch from the last revision after a disconnect, and lists again
    when tollgated can no longer resume (OUT_OF_RANGE, or its store was replaced)."""

    def __init__(
        self,
        client: TollgateClient,
        controller_name: str,
        decide: Decide,
        namespace: str = "",
        on_release: Optional[Released] = None,
        activate: bool = True,
    ):
        self.client = client
        self.controller_name = controller_name
        self.decide = decide
        self.namespace = namespace
        self.on_release = on_release
        self.activate = activate
        # Decisions posted and refused as stale, for tests and logs.
        self.posted = 0
        self.stale = 0
        self._lock = threading.Lock()
        self._stream = None
        self._closed = False

    def close(self) -> None:
        """Ends `run` from another thread at once (without waiting for the next event)."""
        with self._lock:
            self._closed = True
            if self._stream is not None:
                self._stream.cancel()

    def activate_checks(self) -> List[str]:
        """Sets Active on every AdmissionCheck of this controller; returns their names."""
        names = checks_of(self.client, self.controller_name)
        for name in names:
            set_active(self.client, name, True, "ControllerReady", f"{self.controller_name} is up")
        return names

    def handle(self, event: service_pb2.WatchEvent) -> None:
        """One event of the watch: decide the workload's Pending checks, or release it."""
        mine = [c for c in event.check_controllers if c.controller_name == self.controller_name]
        if event.type == service_pb2.WatchEvent.DELETED or not mine or not mine[0].holds_quota:
            if self.on_release is not None:
                self.on_release(event.workload)
            return
        workload = event.workload
        for state in workload.status.admission_checks:
            if state.name not in mine[0].checks or state.state != PENDING:
                continue
            decision = self.decide(workload, state)
            if decision is None:
                continue
            if (
                decision.state == PENDING
                and decision.message == state.message
                and not decision.pod_set_updates
            ):
                continue  # already says so
            try:
                workload = update_check(self.client, workload, state.name, decision)
                self.posted += 1
            except TollgateError as e:
                if e.code != grpc.StatusCode.FAILED_PRECONDITION:
                    raise
                # It changed since this event: the change is the next event; decide on that.
                self.stale += 1
                return
            if decision.state in (RETRY, REJECTED):
                return  # it lost its quota: the other checks start over on the next reservation

    def run(self, stop: Optional[threading.Event] = None) -> None:
        """Serves until `stop` is set (checked on every event and the server's bookmarks)."""
        if self.activate:
            self.activate_checks()
        revision = 0
        store: Dict[str, object] = {"id": "", "epoch": 0}
        pause = 0.1
        while (stop is None or not stop.is_set()) and not self._closed:
            request = service_pb2.WatchAdmissionChecksRequest(
                controller_name=self.controller_name,
                since_revision=revision,
                namespace=self.namespace,
                store_id=store["id"],
                store_epoch=store["epoch"],
            )
            stream = _stub(self.client).WatchAdmissionChecks(request)
            with self._lock:
                if self._closed:
                    stream.cancel()
                    return
                self._stream = stream
            try:
                for event in stream:
                    if stop is not None and stop.is_set():
                        return
                    store["id"], store["epoch"] = event.store_id, event.store_epoch
                    if event.type != service_pb2.WatchEvent.BOOKMARK:
                        self.handle(event)
                    revision = event.revision
                    pause = 0.1
            except grpc.RpcError as e:
                code = e.code()
                if code == grpc.StatusCode.CANCELLED and (
                    self._closed or (stop is not None and stop.is_set())
                ):
                    return
                if code in (grpc.StatusCode.OUT_OF_RANGE, grpc.StatusCode.FAILED_PRECONDITION):
                    # Cannot resume there: list again, and decide everything anew.
                    revision = 0
                    store = {"id": "", "epoch": 0}
                elif code == grpc.StatusCode.PERMISSION_DENIED:
                    raise TollgateError(code, e.details() or "") from None
                # Anything else: the server went away for a moment; resume after a pause.
                time.sleep(pause)
                pause = min(pause * 2, 5.0)
            finally:
                stream.cancel()
