"""Pods and their controllers for the fake API server: what a kubelet, the Deployment, the
StatefulSet and the LeaderWorkerSet controllers do, reduced to what tollgate-kube can observe.

- Pods: the API server's rules for scheduling gates (a gate can be removed, never added after
  creation; a gated pod's node selector and tolerations may be added to, an ungated pod's node
  selector may not change; other spec fields are immutable). The scheduler stand-in binds a pod
  once it has no scheduling gates: when the store holds no Node, to "fake-node" (a cluster the
  test does not model); otherwise, after the pod's annotation fake.tollgate.dev/bind-delay-seconds
  (default 0) from its release, to the first node by name that matches its node selector, is
  Ready, not cordoned, and whose NoSchedule/NoExecute taints it tolerates; with none it stays
  Pending with PodScheduled False, reason Unschedulable, and is tried again every tick. The
  kubelet stand-in starts a bound pod: phase Running, then Ready after --pod-start-delay; a pod that
  no controller owns and whose restartPolicy is Never or OnFailure succeeds after
  --job-duration (annotation fake.tollgate.dev/duration-seconds), or fails with
  fake.tollgate.dev/fail: "true". Every start is recorded in /fake/runs with the pod's node
  selector and tolerations. Deleting a pod removes it at once (no grace period).
- Deployment (apps/v1): `replicas` pods from the template, named <deployment>-<template
  hash>-<random>, owned by the Deployment (the real one puts a ReplicaSet in between); a changed
  template replaces every pod (a rollout, simplified); deleted pods are replaced.
- StatefulSet (apps/v1): pods <name>-<ordinal> with the labels controller-revision-hash,
  apps.kubernetes.io/pod-index and statefulset.kubernetes.io/pod-name; with podManagementPolicy
  OrderedReady (the default) pod i is created once pods 0..i-1 are Running and Ready; scaling
  down deletes the highest ordinals first; a changed template replaces the pods.
- LeaderWorkerSet (leaderworkerset.x-k8s.io/v1): for each group g < replicas a leader
  <name>-<g> (leaderTemplate, else workerTemplate) and workers <name>-<g>-<w> (w = 1..size-1),
  labelled leaderworkerset.sigs.k8s.io/name, group-index, worker-index, group-key, workers
  annotated leaderworkerset.sigs.k8s.io/leader-name; owned by the LeaderWorkerSet (the real
  controller creates a StatefulSet per group in between).
"""

import copy
import datetime
import hashlib
import json
import random
import string
import time
import uuid

DURATION_ANNOTATION = "fake.tollgate.dev/duration-seconds"
FAIL_ANNOTATION = "fake.tollgate.dev/fail"
BIND_DELAY_ANNOTATION = "fake.tollgate.dev/bind-delay-seconds"
LWS_GROUP = "leaderworkerset.x-k8s.io"

# (group, version, plural) -> (kind, namespaced, has status subresource, short names)
RESOURCES = {
    ("", "v1", "pods"): ("Pod", True, True, ["po"]),
    ("apps", "v1", "deployments"): ("Deployment", True, True, ["deploy"]),
    ("apps", "v1", "statefulsets"): ("StatefulSet", True, True, ["sts"]),
    (LWS_GROUP, "v1", "leaderworkersets"): ("LeaderWorkerSet", True, True, ["lws"]),
}
BUILTIN_GROUPS = {"apps"}
PARENT_PLURALS = ("deployments", "statefulsets", "leaderworkersets")


class Invalid(Exception):
    """A write the API server refuses with 422."""


def now_rfc3339():
    return datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


def apply_defaults(plural, obj):
    """What the API server's defaulting sets on create."""
    spec = obj.setdefault("spec", {})
    if plural == "pods":
        spec.setdefault("restartPolicy", "Always")
        obj["status"] = {"phase": "Pending"}
    elif plural in ("deployments", "statefulsets"):
        spec.setdefault("replicas", 1)
        if plural == "statefulsets":
            spec.setdefault("podManagementPolicy", "OrderedReady")
    elif plural == "leaderworkersets":
        spec.setdefault("replicas", 1)
        spec.setdefault("leaderWorkerTemplate", {}).setdefault("size", 1)


def gate_names(spec):
    return [g.get("name") for g in spec.get("schedulingGates") or []]


def validate_update(plural, old, new):
    """The API server's pod update validation for the fields that matter here."""
    if plural != "pods" or "spec" not in new:
        return
    old_spec, new_spec = old.get("spec", {}), new.get("spec", {})
    old_gates, new_gates = gate_names(old_spec), gate_names(new_spec)
    for gate in new_gates:
        if gate not in old_gates:
            raise Invalid("spec.schedulingGates: Forbidden: only deletion is allowed, but found "
                          "new scheduling gate '%s'" % gate)
    gated = bool(old_gates)
    old_selector = old_spec.get("nodeSelector") or {}
    new_selector = new_spec.get("nodeSelector") or {}
    if old_selector != new_selector:
        if not gated or any(new_selector.get(k) != v for k, v in old_selector.items()):
            raise Invalid("spec.nodeSelector: Invalid value: only additions to a gated pod's "
                          "nodeSelector are allowed")
    old_tol = old_spec.get("tolerations") or []
    new_tol = new_spec.get("tolerations") or []
    if new_tol[:len(old_tol)] != old_tol:
        raise Invalid("spec.tolerations: Forbidden: existing toleration can not be modified "
                      "except its tolerationSeconds")
    mutable = ("schedulingGates", "nodeSelector", "tolerations", "nodeName",
               "activeDeadlineSeconds", "terminationGracePeriodSeconds")
    strip = lambda s: {k: v for k, v in s.items() if k not in mutable}
    if strip(old_spec) != strip(new_spec):
        raise Invalid("spec: Forbidden: pod updates may not change fields other than "
                      "`spec.containers[*].image`, `spec.activeDeadlineSeconds`, "
                      "`spec.tolerations` (only additions to existing tolerations), "
                      "`spec.schedulingGates` (only removals) and a gated pod's node selector")


def tolerates(tolerations, taint):
    for t in tolerations:
        if t.get("effect") and t.get("effect") != taint.get("effect"):
            continue
        if not t.get("key"):
            if t.get("operator") == "Exists":
                return True
            continue
        if t.get("key") != taint.get("key"):
            continue
        if t.get("operator") == "Exists" or t.get("value", "") == taint.get("value", ""):
            return True
    return False


def fits(pod, node):
    """The scheduler's filters that matter here: node selector, readiness, cordon, taints."""
    spec = pod.get("spec", {})
    labels = node["metadata"].get("labels") or {}
    if any(labels.get(k) != v for k, v in (spec.get("nodeSelector") or {}).items()):
        return False
    conditions = (node.get("status") or {}).get("conditions") or []
    if not any(c.get("type") == "Ready" and c.get("status") == "True" for c in conditions):
        return False
    if (node.get("spec") or {}).get("unschedulable"):
        return False
    for taint in (node.get("spec") or {}).get("taints") or []:
        if taint.get("effect") in ("NoSchedule", "NoExecute") and not tolerates(
                spec.get("tolerations") or [], taint):
            return False
    return True


def set_pod_condition(status, ctype, value, reason, message):
    conditions = status.setdefault("conditions", [])
    for c in conditions:
        if c.get("type") == ctype:
            c.update({"status": value, "reason": reason, "message": message})
            return
    conditions.append({"type": ctype, "status": value, "reason": reason, "message": message})


def template_hash(template):
    return hashlib.sha256(json.dumps(template, sort_keys=True).encode()).hexdigest()[:10]


def random_suffix():
    return "".join(random.choice(string.ascii_lowercase + string.digits) for _ in range(5))


def owner_ref(obj):
    return {"apiVersion": obj["apiVersion"], "kind": obj["kind"],
            "name": obj["metadata"]["name"], "uid": obj["metadata"]["uid"],
            "controller": True, "blockOwnerDeletion": True}


def controller_uid(pod):
    for ref in pod["metadata"].get("ownerReferences", []):
        if ref.get("controller"):
            return ref.get("uid")
    return None


def running_and_ready(pod):
    status = pod.get("status", {})
    return status.get("phase") == "Running" and any(
        c.get("type") == "Ready" and c.get("status") == "True"
        for c in status.get("conditions", []))


class PodWorld:
    """Runs pods and creates them for their controllers; called on every tick of the fake
    server's simulator with the store locked."""

    def __init__(self, store, args):
        self.store = store
        self.args = args
        self.started = {}  # pod uid -> monotonic start
        self.released = {}  # pod uid -> monotonic time the scheduler first saw it ungated

    # --- helpers on the store -----------------------------------------------------------------

    def create_pod(self, namespace, name, template, labels, annotations, owner):
        meta = copy.deepcopy(template.get("metadata", {}))
        meta.pop("name", None)
        meta["name"] = name
        meta["namespace"] = namespace
        meta.setdefault("labels", {}).update(labels)
        meta.setdefault("annotations", {}).update(annotations)
        if not meta["annotations"]:
            del meta["annotations"]
        meta["ownerReferences"] = [owner_ref(owner)]
        meta["uid"] = str(uuid.uuid4())
        meta["creationTimestamp"] = now_rfc3339()
        meta["generation"] = 1
        pod = {"apiVersion": "v1", "kind": "Pod", "metadata": meta,
               "spec": copy.deepcopy(template.get("spec", {}))}
        apply_defaults("pods", pod)
        self.store.put("pods", pod, "ADDED")

    def pods_of(self, owner):
        uid = owner["metadata"]["uid"]
        ns = owner["metadata"]["namespace"]
        return [obj for (plural, pns, _), obj in sorted(self.store.objects.items())
                if plural == "pods" and pns == ns and controller_uid(obj) == uid]

    def delete_pod(self, pod):
        key = ("pods", pod["metadata"]["namespace"], pod["metadata"]["name"])
        if key in self.store.objects:
            self.store.delete("pods", key)

    def set_status(self, plural, obj, status):
        if obj.get("status") != status:
            updated = copy.deepcopy(obj)
            updated["status"] = status
            self.store.put(plural, updated, "MODIFIED")

    # --- the tick -------------------------------------------------------------------------------

    def tick(self):
        # Orphans first: a parent deleted takes its pods (garbage collection).
        parents = {obj["metadata"]["uid"] for (plural, _, _), obj in self.store.objects.items()
                   if plural in PARENT_PLURALS}
        for (plural, _, _), obj in sorted(self.store.objects.items()):
            if plural == "pods":
                uid = controller_uid(obj)
                ref = (obj["metadata"].get("ownerReferences") or [{}])[0]
                if uid and ref.get("kind") in ("Deployment", "StatefulSet", "LeaderWorkerSet") \
                        and uid not in parents:
                    self.delete_pod(obj)
        for key in sorted(self.store.objects):
            obj = self.store.objects.get(key)
            if obj is None:
                continue
            plural = key[0]
            if plural == "deployments":
                self.deployment(obj)
            elif plural == "statefulsets":
                self.statefulset(obj)
            elif plural == "leaderworkersets":
                self.leaderworkerset(obj)
        for key in sorted(self.store.objects):
            obj = self.store.objects.get(key)
            if obj is not None and key[0] == "pods":
                self.kubelet(obj)

    def kubelet(self, pod):
        now = time.monotonic()
        spec, status = pod.get("spec", {}), copy.deepcopy(pod.get("status") or {})
        uid = pod["metadata"]["uid"]
        if spec.get("schedulingGates") or status.get("phase") in ("Succeeded", "Failed"):
            return
        if not spec.get("nodeName"):
            node = self.schedule(pod, now)
            if node is None:
                return
            updated = copy.deepcopy(pod)
            updated["spec"]["nodeName"] = node
            self.store.put("pods", updated, "MODIFIED")
            pod = updated
        if uid not in self.started:
            self.started[uid] = now
            self.store.runs.append({
                "resource": "pods", "namespace": pod["metadata"]["namespace"],
                "name": pod["metadata"]["name"], "uid": uid, "time": time.time(),
                "nodeSelectors": {"main": spec.get("nodeSelector", {})},
                "tolerations": spec.get("tolerations", [])})
        elapsed = now - self.started[uid]
        annotations = pod["metadata"].get("annotations", {})
        finishes = controller_uid(pod) is None and spec.get("restartPolicy") in ("Never",
                                                                                  "OnFailure")
        try:
            duration = float(annotations.get(DURATION_ANNOTATION, self.args.job_duration))
        except ValueError:
            duration = self.args.job_duration
        ready = elapsed >= self.args.pod_start_delay
        if finishes and elapsed >= duration:
            failed = annotations.get(FAIL_ANNOTATION) == "true"
            status["phase"] = "Failed" if failed else "Succeeded"
            status["message"] = "fake pod failed" if failed else ""
            ready = False
        else:
            status["phase"] = "Running"
        status["conditions"] = [{"type": "Ready", "status": "True" if ready else "False"}]
        self.set_status("pods", pod, status)

    def schedule(self, pod, now):
        """The node the scheduler binds `pod` to now, or None (it stays Pending)."""
        nodes = [obj for (plural, _, _), obj in sorted(self.store.objects.items())
                 if plural == "nodes"]
        if not nodes:
            return "fake-node"
        uid = pod["metadata"]["uid"]
        released = self.released.setdefault(uid, now)
        annotations = pod["metadata"].get("annotations", {})
        try:
            delay = float(annotations.get(BIND_DELAY_ANNOTATION, 0))
        except ValueError:
            delay = 0
        if now - released < delay:
            return None
        for node in nodes:
            if fits(pod, node):
                return node["metadata"]["name"]
        status = copy.deepcopy(pod.get("status") or {})
        set_pod_condition(status, "PodScheduled", "False", "Unschedulable",
                          "0/%d nodes are available" % len(nodes))
        self.set_status("pods", pod, status)
        return None

    def deployment(self, obj):
        spec = obj.get("spec", {})
        template = spec.get("template", {})
        h = template_hash(template)
        ns, name = obj["metadata"]["namespace"], obj["metadata"]["name"]
        current = []
        for pod in self.pods_of(obj):
            if pod["metadata"].get("labels", {}).get("pod-template-hash") != h:
                self.delete_pod(pod)
            else:
                current.append(pod)
        replicas = spec.get("replicas", 1)
        for pod in sorted(current, key=lambda p: p["metadata"]["creationTimestamp"])[replicas:]:
            self.delete_pod(pod)
        for _ in range(replicas - len(current)):
            self.create_pod(ns, "%s-%s-%s" % (name, h, random_suffix()), template,
                            {"pod-template-hash": h}, {}, obj)
        pods = self.pods_of(obj)
        self.set_status("deployments", obj, {
            "replicas": len(pods),
            "readyReplicas": sum(1 for p in pods if running_and_ready(p)),
            "observedGeneration": obj["metadata"].get("generation", 1)})

    def statefulset(self, obj):
        spec = obj.get("spec", {})
        template = spec.get("template", {})
        ns, name = obj["metadata"]["namespace"], obj["metadata"]["name"]
        revision = "%s-%s" % (name, template_hash(template))
        replicas = spec.get("replicas", 1)
        by_ordinal = {}
        for pod in self.pods_of(obj):
            ordinal = int(pod["metadata"]["name"].rsplit("-", 1)[1])
            labels = pod["metadata"].get("labels", {})
            if ordinal >= replicas or labels.get("controller-revision-hash") != revision:
                self.delete_pod(pod)
            else:
                by_ordinal[ordinal] = pod
        ordered = spec.get("podManagementPolicy", "OrderedReady") == "OrderedReady"
        for i in range(replicas):
            if i in by_ordinal:
                continue
            if ordered and not all(i2 in by_ordinal and running_and_ready(by_ordinal[i2])
                                   for i2 in range(i)):
                break
            pod_name = "%s-%d" % (name, i)
            self.create_pod(ns, pod_name, template, {
                "controller-revision-hash": revision, "apps.kubernetes.io/pod-index": str(i),
                "statefulset.kubernetes.io/pod-name": pod_name}, {}, obj)
            if ordered:
                break
        pods = self.pods_of(obj)
        self.set_status("statefulsets", obj, {
            "replicas": len(pods),
            "readyReplicas": sum(1 for p in pods if running_and_ready(p)),
            "currentRevision": revision, "updateRevision": revision,
            "observedGeneration": obj["metadata"].get("generation", 1)})

    def leaderworkerset(self, obj):
        spec = obj.get("spec", {})
        lwt = spec.get("leaderWorkerTemplate", {})
        size = lwt.get("size", 1)
        worker = lwt.get("workerTemplate", {})
        leader = lwt.get("leaderTemplate") or worker
        ns, name = obj["metadata"]["namespace"], obj["metadata"]["name"]
        h = template_hash(lwt)
        replicas = spec.get("replicas", 1)
        existing = {}
        for pod in self.pods_of(obj):
            labels = pod["metadata"].get("labels", {})
            group = int(labels.get("leaderworkerset.sigs.k8s.io/group-index", "0"))
            if group >= replicas or labels.get("leaderworkerset.sigs.k8s.io/template-revision-hash") != h:
                self.delete_pod(pod)
            else:
                existing[pod["metadata"]["name"]] = pod
        for g in range(replicas):
            leader_name = "%s-%d" % (name, g)
            base = {"leaderworkerset.sigs.k8s.io/name": name,
                    "leaderworkerset.sigs.k8s.io/group-index": str(g),
                    "leaderworkerset.sigs.k8s.io/group-key": hashlib.sha1(
                        ("%s/%s" % (ns, leader_name)).encode()).hexdigest(),
                    "leaderworkerset.sigs.k8s.io/template-revision-hash": h}
            if leader_name not in existing:
                self.create_pod(ns, leader_name, leader, dict(
                    base, **{"leaderworkerset.sigs.k8s.io/worker-index": "0"}),
                    {"leaderworkerset.sigs.k8s.io/size": str(size)}, obj)
            for w in range(1, size):
                worker_name = "%s-%d-%d" % (name, g, w)
                if worker_name not in existing:
                    self.create_pod(ns, worker_name, worker, dict(
                        base, **{"leaderworkerset.sigs.k8s.io/worker-index": str(w)}),
                        {"leaderworkerset.sigs.k8s.io/size": str(size),
                         "leaderworkerset.sigs.k8s.io/leader-name": leader_name}, obj)
        pods = self.pods_of(obj)
        ready_groups = 0
        for g in range(replicas):
            members = [p for p in pods if p["metadata"]["labels"].get(
                "leaderworkerset.sigs.k8s.io/group-index") == str(g)]
            if len(members) == size and all(running_and_ready(p) for p in members):
                ready_groups += 1
        self.set_status("leaderworkersets", obj, {
            "replicas": replicas, "readyReplicas": ready_groups,
            "observedGeneration": obj["metadata"].get("generation", 1)})
