"""A small, typed client over tollgated's gRPC API (tollgate.v1).

What an ML engineer needs from a notebook or a launcher script: submit a workload, wait until
it is admitted (with a timeout), watch changes, list what is pending and why, and see who holds
the cohort's quota; the operator controls: stop/resume queues, deactivate/activate,
reprioritize and preempt (with hold); and the node inventory of topology-aware scheduling, for
feeders outside Kubernetes (a Slurm front-end, a bare-metal fleet). Every other call is
available on the generated stubs (`client.admission`, `client.config`, `client.visibility`,
`client.info`, `client.inventory`).
"""

from __future__ import annotations

import dataclasses
import threading
import time
from typing import Dict, Iterator, List, Mapping, Optional, Sequence, Tuple

import grpc

from tollgate.v1 import inventory_pb2, inventory_pb2_grpc, objects_pb2, service_pb2, service_pb2_grpc

_STATES = {
    objects_pb2.WORKLOAD_STATE_PENDING: "Pending",
    objects_pb2.WORKLOAD_STATE_QUOTA_RESERVED: "QuotaReserved",
    objects_pb2.WORKLOAD_STATE_ADMITTED: "Admitted",
    objects_pb2.WORKLOAD_STATE_EVICTING: "Evicting",
    objects_pb2.WORKLOAD_STATE_FINISHED: "Finished",
}


class TollgateError(Exception):
    """A call tollgated refused or could not serve; `code` is the gRPC status code."""

    def __init__(self, code: grpc.StatusCode, message: str):
        super().__init__(f"{code.name}: {message}")
        self.code = code
        self.message = message


class AdmissionTimeout(TollgateError):
    """wait_for_admission's timeout passed; `workload` is the last state seen."""

    def __init__(self, workload: "Workload", timeout: float):
        super().__init__(
            grpc.StatusCode.DEADLINE_EXCEEDED,
            f"workload {workload.namespace}/{workload.name} not admitted after {timeout:g}s "
            f"(state {workload.state}: {workload.pending_message or 'no reason given'})",
        )
        self.workload = workload


@dataclasses.dataclass(frozen=True)
class PodSet:
    """`count` pods that each request `requests` (Kubernetes quantities, e.g. {"cpu": "8"})."""

    name: str
    count: int = 1
    requests: Mapping[str, str] = dataclasses.field(default_factory=dict)
    min_count: Optional[int] = None
    # Topology-aware scheduling (docs/topology.md): every pod in one domain of this level (a
    # node label of the flavor's Topology, e.g. "cloud.com/rack"), or preferably so.
    required_topology: Optional[str] = None
    preferred_topology: Optional[str] = None


@dataclasses.dataclass(frozen=True)
class Workload:
    """A workload as tollgated reports it."""

    namespace: str
    name: str
    queue: str
    state: str
    priority: int
    admitted_by: str
    pending_message: str
    revision: int
    proto: objects_pb2.Workload = dataclasses.field(repr=False, compare=False)

    @property
    def admitted(self) -> bool:
        return self.state == "Admitted"

    @property
    def checks(self) -> Dict[str, str]:
        """Each admission check's state by name (Pending, Ready, Retry, Rejected)."""
        return {c.name: c.state for c in self.proto.status.admission_checks}

    @property
    def placement(self) -> Dict[str, List[Tuple[Tuple[str, ...], int]]]:
        """Each placed pod set's domains: (values of the assignment's levels, pod count)."""
        return {
            psa.name: [(tuple(d.values), d.count) for d in psa.topology_assignment.domains]
            for psa in self.proto.status.admission.pod_set_assignments
            if psa.HasField("topology_assignment")
        }

    @property
    def cluster_name(self) -> str:
        """MultiKueue: the worker cluster that admitted it ("" while none has)."""
        return self.proto.status.cluster_name

    @property
    def nominated_cluster_names(self) -> List[str]:
        """MultiKueue: the workers it is dispatched to while none has admitted it."""
        return list(self.proto.status.nominated_cluster_names)

    @property
    def multikueue_remotes(self) -> Dict[str, str]:
        """MultiKueue: the state of its copy on each nominated or winning worker, as the
        manager's controller last saw it: Admitted, Pending, Evicted, Finished, NoCopy or
        Unreachable."""
        return {r.cluster: r.state for r in self.proto.status.multi_kueue_remotes}

    @staticmethod
    def from_proto(wl: objects_pb2.Workload) -> "Workload":
        return Workload(
            namespace=wl.metadata.namespace,
            name=wl.metadata.name,
            queue=wl.spec.queue_name or "default",
            state=_STATES.get(wl.status.state, "Unknown"),
            priority=wl.status.priority,
            admitted_by=wl.status.admission.cluster_queue,
            pending_message=wl.status.pending_message,
            revision=wl.metadata.resource_version,
            proto=wl,
        )


@dataclasses.dataclass(frozen=True)
class PendingWorkload:
    """One entry of a queue's pending list: its 1-based positions and why it waits."""

    namespace: str
    name: str
    local_queue: str
    cluster_queue: str
    priority: int
    position_in_cluster_queue: int
    position_in_local_queue: int
    reason: str


@dataclasses.dataclass(frozen=True)
class WatchEvent:
    """ADDED, MODIFIED or DELETED, the store revision, and the workload after the change."""

    type: str
    revision: int
    workload: Workload


@dataclasses.dataclass(frozen=True)
class PreemptResult:
    """What a preempt did: `evicted` (always, on success), whether the pass that followed
    admitted it again (`readmitted`) and whom it preempted then, in one sentence (`message`)."""

    workload: Workload
    evicted: bool
    readmitted: bool
    preempted: List[str]
    message: str


@dataclasses.dataclass(frozen=True)
class QuotaHolder:
    """One ClusterQueue or Cohort of a cohort tree, for one flavor and resource."""

    name: str
    kind: str
    parent: str
    flavor: str
    resource: str
    nominal: str
    usage: str
    borrowed: str


@dataclasses.dataclass(frozen=True)
class ReclaimBlocker:
    """A policy or limit (reclaimWithinCohort, borrowingLimit, ...) keeping a pending workload
    from quota its cohort holds."""

    policy: str
    object_kind: str
    object: str
    flavor: str
    resource: str
    message: str


@dataclasses.dataclass(frozen=True)
class CohortBreakdown:
    """Who holds a cohort's quota and who borrows it (`holders`, the whole tree depth first),
    and what stops the analysed pending workload (`blockers`)."""

    cohort: str
    implicit: bool
    root: str
    cluster_queue: str
    workload: str
    pending_message: str
    holders: List[QuotaHolder]
    blockers: List[ReclaimBlocker]
    proto: service_pb2.CohortBreakdown = dataclasses.field(repr=False, compare=False)


@dataclasses.dataclass(frozen=True)
class Node:
    """A node of the inventory, shaped like Kubernetes' Node: `labels` carry the topology
    levels and what flavors' nodeLabels match; `allocatable` includes `pods`; taints are
    (key, value, effect) triples."""

    name: str
    labels: Mapping[str, str] = dataclasses.field(default_factory=dict)
    allocatable: Mapping[str, str] = dataclasses.field(default_factory=dict)
    taints: Sequence[Tuple[str, str, str]] = ()
    unschedulable: bool = False
    ready: bool = True

    def to_proto(self) -> inventory_pb2.Node:
        node = inventory_pb2.Node()
        node.metadata.name = self.name
        node.metadata.labels.update(self.labels)
        node.status.allocatable.update(self.allocatable)
        for key, value, effect in self.taints:
            node.spec.taints.add(key=key, value=value, effect=effect)
        node.spec.unschedulable = self.unschedulable
        node.status.ready = self.ready
        return node


@dataclasses.dataclass(frozen=True)
class NodePod:
    """A pod Tollgate does not place (a daemon, another scheduler's job): its requests come off
    its node's capacity. `name` is unique among reported pods."""

    name: str
    node: str
    requests: Mapping[str, str] = dataclasses.field(default_factory=dict)


@dataclasses.dataclass(frozen=True)
class NodeSummary:
    """A node with what sits on it: the topology flavors it serves, reported and placed pods,
    and what is free per resource."""

    name: str
    flavors: List[str]
    reported_pods: int
    placed_pods: int
    free: Mapping[str, str]
    proto: inventory_pb2.NodeSummary = dataclasses.field(repr=False, compare=False)


# The inventory takes at most this many nodes or pods per call.
_INVENTORY_CHUNK = 1000


class _Endpoint:
    """One replica: its channel and a stub per service."""

    def __init__(self, target: str, credentials: Optional[grpc.ChannelCredentials]):
        self.target = target
        self.channel = (
            grpc.secure_channel(target, credentials)
            if credentials is not None
            else grpc.insecure_channel(target)
        )
        self.admission = service_pb2_grpc.AdmissionServiceStub(self.channel)
        self.config = service_pb2_grpc.ConfigServiceStub(self.channel)
        self.visibility = service_pb2_grpc.VisibilityServiceStub(self.channel)
        self.info = service_pb2_grpc.InfoServiceStub(self.channel)
        self.inventory = inventory_pb2_grpc.InventoryServiceStub(self.channel)


# Trailers of a follower's refusal (services/api/metadata_keys.h, docs/ha.md).
_NOT_LEADER_KEY = "tollgate-not-leader"
_LEADER_KEY = "tollgate-leader"


def _follower_answer(e: grpc.RpcError) -> bool:
    """A follower replica's refusal (docs/ha.md): nothing was done, the leader should answer."""
    return e.code() == grpc.StatusCode.UNAVAILABLE and any(
        key == _NOT_LEADER_KEY for key, _ in (e.trailing_metadata() or ())
    )


def _named_leader(e: grpc.RpcError) -> str:
    for key, value in e.trailing_metadata() or ():
        if key == _LEADER_KEY:
            return value
    return ""


class TollgateClient:
    """A connection to tollgated. Thread-safe (gRPC channels and stubs are).

    `target` is HOST:PORT, or several separated by commas for a replicated tollgated
    (docs/ha.md): a call that certainly did nothing (the replica could not be reached, or a
    follower answered "not the leader") is tried again on the leader it names, else on the next
    replica, within `timeout`. `timeout` is the deadline of each unary call in seconds. The
    connection is plaintext: tollgated listens on loopback without TLS unless configured
    otherwise; pass `credentials` (grpc.ssl_channel_credentials(...)) for a TLS server.
    """

    def __init__(
        self,
        target: str = "127.0.0.1:50051",
        timeout: float = 10.0,
        credentials: Optional[grpc.ChannelCredentials] = None,
    ):
        self.target = target
        self.timeout = timeout
        self._credentials = credentials
        self._lock = threading.Lock()
        targets = [t.strip() for t in target.split(",") if t.strip()] or [target]
        self._endpoints = [_Endpoint(t, credentials) for t in targets]
        self._current = 0

    @property
    def _endpoint(self) -> _Endpoint:
        with self._lock:
            return self._endpoints[self._current]

    # The current replica's stubs, for callers that use them directly.
    @property
    def admission(self):
        return self._endpoint.admission

    @property
    def config(self):
        return self._endpoint.config

    @property
    def visibility(self):
        return self._endpoint.visibility

    @property
    def info(self):
        return self._endpoint.info

    @property
    def inventory(self):
        return self._endpoint.inventory

    def close(self) -> None:
        with self._lock:
            for endpoint in self._endpoints:
                endpoint.channel.close()

    def __enter__(self) -> "TollgateClient":
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def _move_on(self, failed: _Endpoint, leader: str) -> None:
        with self._lock:
            if self._endpoints[self._current] is not failed:
                return  # another call moved on already
            if leader:
                for i, endpoint in enumerate(self._endpoints):
                    if endpoint.target == leader:
                        self._current = i
                        return
                self._endpoints.append(_Endpoint(leader, self._credentials))
                self._current = len(self._endpoints) - 1
                return
            self._current = (self._current + 1) % len(self._endpoints)

    def _call(self, method, request):
        """`method` picks the stub method from an endpoint: lambda e: e.admission.Submit."""
        give_up = time.monotonic() + self.timeout
        pause = 0.05
        attempt = 0
        while True:
            attempt += 1
            endpoint = self._endpoint
            try:
                return method(endpoint)(request, timeout=self.timeout)
            except grpc.RpcError as e:  # the one place gRPC errors become ours
                follower = _follower_answer(e)
                # Never reached a server: safe to try elsewhere. A connection lost mid-call has
                # an unknown outcome; it is the caller's to retry.
                unreached = e.code() == grpc.StatusCode.UNAVAILABLE and (
                    "failed to connect" in (e.details() or "").lower()
                    or "connection refused" in (e.details() or "").lower()
                )
                elsewhere = follower or (unreached and len(self._endpoints) > 1)
                if not elsewhere or time.monotonic() >= give_up:
                    raise TollgateError(e.code(), e.details() or "") from None
                leader = _named_leader(e)
                self._move_on(endpoint, leader)
                if not leader and attempt % len(self._endpoints) == 0:
                    time.sleep(min(pause, max(0.0, give_up - time.monotonic())))
                    pause = min(pause * 2, 1.0)

    def server_version(self) -> Mapping[str, str]:
        """tollgated's build: version (git describe), build_type, compiler, and one entry per
        dependency (gRPC, Protobuf, ...)."""
        info = self._call(lambda e: e.info.GetBuildInfo, service_pb2.GetBuildInfoRequest())
        out = {"version": info.version, "build_type": info.build_type, "compiler": info.compiler}
        out.update(info.dependencies)
        return out

    # --- node inventory (topology-aware scheduling) -------------------------------------

    def upsert_nodes(self, nodes: Sequence[Node]) -> int:
        """Creates or replaces nodes (1,000 per call, each call all or nothing); returns the
        store revision of the last call."""
        revision = 0
        for begin in range(0, len(nodes), _INVENTORY_CHUNK):
            request = inventory_pb2.UpsertNodesRequest(
                nodes=[n.to_proto() for n in nodes[begin : begin + _INVENTORY_CHUNK]]
            )
            revision = self._call(lambda e: e.inventory.UpsertNodes, request).revision
        return revision

    def delete_node(self, name: str) -> int:
        """Removes a node; placements on it fail over as for a node that stopped being ready."""
        request = inventory_pb2.DeleteNodeRequest(name=name)
        return self._call(lambda e: e.inventory.DeleteNode, request).revision

    def report_pods(self, pods: Sequence[NodePod] = (), removed: Sequence[str] = ()) -> int:
        """Reports pods Tollgate does not place (again: replaced) and names those that are gone."""
        revision = 0
        for begin in range(0, max(len(pods), len(removed), 1), _INVENTORY_CHUNK):
            request = inventory_pb2.ReportPodsRequest(
                pods=[
                    inventory_pb2.NodePod(name=p.name, node_name=p.node, requests=p.requests)
                    for p in pods[begin : begin + _INVENTORY_CHUNK]
                ],
                removed=list(removed[begin : begin + _INVENTORY_CHUNK]),
            )
            revision = self._call(lambda e: e.inventory.ReportPods, request).revision
        return revision

    def list_nodes(self) -> List[NodeSummary]:
        response = self._call(lambda e: e.inventory.ListNodes, inventory_pb2.ListNodesRequest())
        return [
            NodeSummary(
                name=n.node.metadata.name,
                flavors=list(n.flavors),
                reported_pods=n.reported_pods,
                placed_pods=n.placed_pods,
                free=dict(n.free),
                proto=n,
            )
            for n in response.nodes
        ]

    # --- workloads ------------------------------------------------------------------------

    def submit(
        self,
        name: str,
        pod_sets: Sequence[PodSet],
        namespace: str = "default",
        queue: str = "",
        priority_class: str = "",
        labels: Optional[Mapping[str, str]] = None,
        annotations: Optional[Mapping[str, str]] = None,
    ) -> Workload:
        """Submits a workload; submitting the same spec again returns it unchanged. The
        annotation kueue.x-k8s.io/admission-gated-by gates its admission (set_admission_gates)."""
        wl = objects_pb2.Workload()
        wl.metadata.name = name
        wl.metadata.namespace = namespace
        wl.metadata.labels.update(labels or {})
        wl.metadata.annotations.update(annotations or {})
        wl.spec.queue_name = queue
        wl.spec.priority_class_name = priority_class
        for ps in pod_sets:
            p = wl.spec.pod_sets.add()
            p.name = ps.name
            p.count = ps.count
            p.requests.update(ps.requests)
            if ps.min_count is not None:
                p.min_count = ps.min_count
            if ps.required_topology is not None:
                p.topology_request.required = ps.required_topology
            if ps.preferred_topology is not None:
                p.topology_request.preferred = ps.preferred_topology
        response = self._call(lambda e: e.admission.Submit, service_pb2.SubmitRequest(workload=wl))
        return Workload.from_proto(response.workload)

    def get(self, name: str, namespace: str = "default") -> Workload:
        request = service_pb2.GetWorkloadRequest(
            workload=service_pb2.WorkloadRef(namespace=namespace, name=name)
        )
        return Workload.from_proto(self._call(lambda e: e.admission.GetWorkload, request))

    def list(self, namespace: str = "", state: Optional[str] = None) -> List[Workload]:
        """Workloads of `namespace` ("" for all), optionally in one state ("Pending", ...)."""
        request = service_pb2.ListWorkloadsRequest(namespace=namespace)
        if state is not None:
            request.state = _state_number(state)
        response = self._call(lambda e: e.admission.ListWorkloads, request)
        return sorted(
            (Workload.from_proto(w) for w in response.workloads),
            key=lambda w: (w.namespace, w.name),
        )

    def finish(self, name: str, namespace: str = "default", message: str = "") -> None:
        request = service_pb2.FinishRequest(
            workload=service_pb2.WorkloadRef(namespace=namespace, name=name), message=message
        )
        self._call(lambda e: e.admission.Finish, request)

    def delete(self, name: str, namespace: str = "default") -> None:
        request = service_pb2.DeleteWorkloadRequest(
            workload=service_pb2.WorkloadRef(namespace=namespace, name=name)
        )
        self._call(lambda e: e.admission.DeleteWorkload, request)

    # --- operator controls (kueuectl stop/resume, Armada reprioritize) ---------------------

    def set_active(self, name: str, active: bool, namespace: str = "default") -> Workload:
        """Kueue's spec.active: False evicts an admitted workload and keeps it out of its queue
        until activated again; True requeues it. Setting the current value changes nothing."""
        request = service_pb2.SetWorkloadActiveRequest(
            workload=service_pb2.WorkloadRef(namespace=namespace, name=name), active=active
        )
        response = self._call(lambda e: e.admission.SetWorkloadActive, request)
        return Workload.from_proto(response.workload)

    def deactivate(self, name: str, namespace: str = "default") -> Workload:
        return self.set_active(name, False, namespace)

    def activate(self, name: str, namespace: str = "default") -> Workload:
        return self.set_active(name, True, namespace)

    def reprioritize(self, name: str, priority: int, namespace: str = "default") -> Workload:
        """A new explicit priority for a workload that has not finished: a pending one moves in
        its queue, an admitted one keeps its quota but may now be preempted by others."""
        request = service_pb2.ReprioritizeRequest(
            workload=service_pb2.WorkloadRef(namespace=namespace, name=name), priority=priority
        )
        response = self._call(lambda e: e.admission.Reprioritize, request)
        return Workload.from_proto(response.workload)

    def set_admission_gates(
        self, name: str, gates: Optional[str], namespace: str = "default"
    ) -> Workload:
        """Kueue's kueue.x-k8s.io/admission-gated-by annotation: the gates left (a
        comma-separated list), or None to remove every gate. Gates may only be removed; the
        last one removed makes the workload admissible."""
        request = service_pb2.SetAdmissionGatesRequest(
            workload=service_pb2.WorkloadRef(namespace=namespace, name=name)
        )
        if gates is not None:
            request.admission_gated_by = gates
        response = self._call(lambda e: e.admission.SetAdmissionGates, request)
        return Workload.from_proto(response.workload)

    def set_priority_boost(
        self,
        name: str,
        value: Optional[str],
        namespace: str = "default",
        expected_revision: int = 0,
    ) -> Workload:
        """Kueue's kueue.x-k8s.io/priority-boost annotation, as an external controller patches
        it: a signed 32-bit integer as a decimal string (an int is accepted and converted), or
        None to remove it. With the PriorityBoost gate on it is added to the workload's priority
        wherever the scheduler orders or compares by priority, and a value that is not an int32
        is refused (INVALID_ARGUMENT). A caller with a priority cap cannot boost a workload
        above it. expected_revision (0: unconditional) makes it a compare-and-swap on the
        workload's revision."""
        request = service_pb2.SetPriorityBoostRequest(
            workload=service_pb2.WorkloadRef(namespace=namespace, name=name),
            expected_revision=expected_revision,
        )
        if value is not None:
            request.priority_boost = str(value)
        response = self._call(lambda e: e.admission.SetPriorityBoost, request)
        return Workload.from_proto(response.workload)

    def preempt(
        self, name: str, namespace: str = "default", reason: str = "", hold: bool = False
    ) -> PreemptResult:
        """Evicts an admitted workload. With `hold` it is also deactivated in the same commit, so
        it is not requeued. The result says what happened in the scheduling pass that followed:
        it may already be admitted again (`readmitted`), having preempted `preempted`."""
        request = service_pb2.PreemptRequest(
            workload=service_pb2.WorkloadRef(namespace=namespace, name=name),
            reason=reason,
            hold=hold,
        )
        response = self._call(lambda e: e.admission.Preempt, request)
        return PreemptResult(
            workload=Workload.from_proto(response.workload),
            evicted=response.evicted,
            readmitted=response.readmitted,
            preempted=[f"{r.namespace}/{r.name}" for r in response.preempted],
            message=response.message,
        )

    def _set_stop_policy(self, kind: int, name: str, namespace: str, policy: str):
        request = service_pb2.SetStopPolicyRequest(
            ref=service_pb2.ObjectRef(kind=kind, namespace=namespace, name=name),
            stop_policy=policy,
        )
        return self._call(lambda e: e.config.SetStopPolicy, request).object

    def stop_cluster_queue(self, name: str, drain: bool = False):
        """kueuectl stop clusterqueue: Hold (admit nothing new) or, with `drain`, HoldAndDrain
        (also evict what it admitted). Returns the ClusterQueue's ConfigObject."""
        return self._set_stop_policy(
            service_pb2.CLUSTER_QUEUE, name, "", "HoldAndDrain" if drain else "Hold"
        )

    def resume_cluster_queue(self, name: str):
        return self._set_stop_policy(service_pb2.CLUSTER_QUEUE, name, "", "None")

    def stop_local_queue(self, name: str, namespace: str = "default", drain: bool = False):
        """kueuectl stop localqueue: as stop_cluster_queue, for one namespace's LocalQueue."""
        return self._set_stop_policy(
            service_pb2.LOCAL_QUEUE, name, namespace, "HoldAndDrain" if drain else "Hold"
        )

    def resume_local_queue(self, name: str, namespace: str = "default"):
        return self._set_stop_policy(service_pb2.LOCAL_QUEUE, name, namespace, "None")

    # --- waiting and watching -------------------------------------------------------------

    def watch(
        self,
        namespace: str = "",
        since_revision: int = 0,
        stop: Optional[threading.Event] = None,
    ) -> Iterator[WatchEvent]:
        """Yields changes: with since_revision 0 the current workloads first (ADDED), then every
        change. Ends when the server ends the stream or `stop` is set (checked on each event
        and on the server's periodic bookmarks)."""
        request = service_pb2.WatchRequest(namespace=namespace, since_revision=since_revision)
        endpoint = self._endpoint
        stream = endpoint.admission.Watch(request)
        try:
            for event in stream:
                if stop is not None and stop.is_set():
                    return
                if event.type == service_pb2.WatchEvent.BOOKMARK:
                    continue
                yield WatchEvent(
                    type=service_pb2.WatchEvent.Type.Name(event.type),
                    revision=event.revision,
                    workload=Workload.from_proto(event.workload),
                )
        except grpc.RpcError as e:
            if e.code() == grpc.StatusCode.CANCELLED:
                return
            if e.code() == grpc.StatusCode.UNAVAILABLE:
                # The replica is a follower or went away: the next watch (the caller resumes
                # from the last revision it saw) goes to the leader or the next replica.
                self._move_on(endpoint, _named_leader(e))
            raise TollgateError(e.code(), e.details() or "") from None
        finally:
            stream.cancel()

    def wait_for_admission(
        self, name: str, namespace: str = "default", timeout: float = 300.0
    ) -> Workload:
        """Blocks until the workload is admitted and returns it. Raises AdmissionTimeout after
        `timeout` seconds, TollgateError if it finishes or is deleted without being admitted."""
        deadline = time.monotonic() + timeout
        current = self.get(name, namespace)  # NOT_FOUND early, with the server's message
        # From revision 0 the stream starts with the current state (ADDED), so nothing between
        # the read above and the watch is missed, and no old revision can have been compacted.
        request = service_pb2.WatchRequest(namespace=namespace, since_revision=0)
        stream = self.admission.Watch(request, timeout=max(0.0, deadline - time.monotonic()))
        try:
            for event in stream:
                if event.type == service_pb2.WatchEvent.BOOKMARK:
                    continue
                wl = event.workload
                if wl.metadata.name != name or wl.metadata.namespace != namespace:
                    continue
                if event.type == service_pb2.WatchEvent.DELETED:
                    raise TollgateError(
                        grpc.StatusCode.NOT_FOUND, f"workload {namespace}/{name} was deleted"
                    )
                current = Workload.from_proto(wl)
                if current.admitted:
                    return current
                if current.state == "Finished":
                    raise TollgateError(
                        grpc.StatusCode.FAILED_PRECONDITION,
                        f"workload {namespace}/{name} finished without being admitted",
                    )
        except grpc.RpcError as e:
            if e.code() != grpc.StatusCode.DEADLINE_EXCEEDED:
                raise TollgateError(e.code(), e.details() or "") from None
        finally:
            stream.cancel()
        raise AdmissionTimeout(current, timeout)

    # --- visibility -----------------------------------------------------------------------

    def list_pending(
        self,
        cluster_queue: str = "",
        namespace: str = "",
        local_queue: str = "",
    ) -> List[PendingWorkload]:
        """The pending workloads of one ClusterQueue, or of one LocalQueue (namespace +
        local_queue), head first, each with its position and the reason it waits."""
        request = service_pb2.ListPendingWorkloadsRequest(
            cluster_queue=cluster_queue, namespace=namespace, local_queue=local_queue
        )
        response = self._call(lambda e: e.visibility.ListPendingWorkloads, request)
        return [
            PendingWorkload(
                namespace=p.workload.namespace,
                name=p.workload.name,
                local_queue=p.local_queue,
                cluster_queue=p.cluster_queue,
                priority=p.priority,
                position_in_cluster_queue=p.position_in_cluster_queue + 1,
                position_in_local_queue=p.position_in_local_queue + 1,
                reason=p.message,
            )
            for p in response.items
        ]

    def cohort_breakdown(
        self,
        cohort: str = "",
        cluster_queue: str = "",
        workload: str = "",
        namespace: str = "default",
    ) -> CohortBreakdown:
        """Who holds a cohort's quota, who borrows it, and which policy keeps a pending workload
        from it. Exactly one of `cohort`, `cluster_queue` (its head pending workload) or
        `workload` (a pending workload in `namespace`)."""
        request = service_pb2.GetCohortBreakdownRequest(cohort=cohort, cluster_queue=cluster_queue)
        if workload:
            request.workload.CopyFrom(service_pb2.WorkloadRef(namespace=namespace, name=workload))
        b = self._call(lambda e: e.visibility.GetCohortBreakdown, request)
        return CohortBreakdown(
            cohort=b.cohort,
            implicit=b.implicit,
            root=b.root,
            cluster_queue=b.cluster_queue,
            workload=f"{b.workload.namespace}/{b.workload.name}" if b.workload.name else "",
            pending_message=b.pending_message,
            holders=[
                QuotaHolder(
                    name=h.name,
                    kind="ClusterQueue" if h.kind == service_pb2.CLUSTER_QUEUE else "Cohort",
                    parent=h.parent,
                    flavor=h.flavor,
                    resource=h.resource,
                    nominal=h.nominal,
                    usage=h.usage,
                    borrowed=h.borrowed,
                )
                for h in b.holders
            ],
            blockers=[
                ReclaimBlocker(
                    policy=x.policy,
                    object_kind=x.object_kind,
                    object=x.object,
                    flavor=x.flavor,
                    resource=x.resource,
                    message=x.message,
                )
                for x in b.blockers
            ],
            proto=b,
        )


def _state_number(state: str) -> int:
    for number, name in _STATES.items():
        if name.lower() == state.lower():
            return number
    raise ValueError(f"state {state!r}: want one of {', '.join(_STATES.values())}")

