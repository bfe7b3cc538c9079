#!/usr/bin/env python3
"""A Kubernetes API server test double for tollgate-kube's tests.

It speaks the real REST protocol closely enough for kubectl, the Python kubernetes client and
tollgate-kube's libcurl client: discovery (/api, /apis, /apis/<group>[/<version>], /version),
list with resourceVersion and limit/continue paging, label and field selectors, chunked watch
streams (?watch=1&resourceVersion=N, synthetic ADDED events for RV ""/"0", BOOKMARKs, an ERROR
event with 410 Expired for a compacted RV, timeoutSeconds), get, create (generateName, uid,
creationTimestamp, Job defaults), update (PUT) with resourceVersion preconditions, merge patch,
JSON patch (with `test`), strategic merge patch for built-in kinds (as a merge patch), the
status subresource, delete, 404/409/410/422 as metav1.Status objects, and optional bearer-token
auth and TLS.

It serves the CRDs of every job kind Tollgate admits (JobSet, MPIJob, the Kubeflow training
kinds, TrainJob and its runtimes, KubeRay's RayJob, RayCluster and RayService, SparkApplication,
AppWrapper) besides Jobs and CronJobs; --omit-crds=plural,... leaves some out.

A small controller stands in for each kind's controller: an unsuspended job
"starts its pods" (status.active, then status.ready after --pod-start-delay) and completes
after --job-duration seconds (per object: annotation fake.tollgate.dev/duration-seconds;
fake.tollgate.dev/fail: "true" makes it fail instead; RayClusters and RayServices run until
deleted). Suspending a job "stops its pods". A job whose managedBy names another controller than its
kind's own (kubernetes.io/job-controller for a Job) is left alone, as the real controllers leave it. A CronJob "fires" once when created: it creates a
Job from its jobTemplate, owned by the CronJob. Pods (with the API server's scheduling-gate
rules), a scheduler (binding by node selector, readiness, cordon and taints when Nodes exist), a
kubelet, and the Deployment, StatefulSet and LeaderWorkerSet controllers are stood in
for by pod_controllers.py.

Test-only endpoints (not Kubernetes): POST /fake/compact forgets the event history (so older
resourceVersions get 410), POST /fake/drop-watches ends every open watch, GET /fake/runs lists
every start of a job's pods with the node selectors they had, GET /fake/stats counts requests.

Only the Python standard library; listens on 127.0.0.1 only.
"""

import argparse
import base64
import copy
import datetime
import http.server
import json
import os
import random
import re
import socketserver
import ssl
import string
import sys
import threading
import time
import urllib.parse
import uuid

import pod_controllers

DURATION_ANNOTATION = "fake.tollgate.dev/duration-seconds"
FAIL_ANNOTATION = "fake.tollgate.dev/fail"

# (group, version, plural) -> (kind, namespaced, has status subresource, short names)
RESOURCES = {
    ("", "v1", "namespaces"): ("Namespace", False, True, ["ns"]),
    ("", "v1", "events"): ("Event", True, False, ["ev"]),
    ("", "v1", "configmaps"): ("ConfigMap", True, False, ["cm"]),
    # kubeConfig Secrets of MultiKueueClusters (tollgate-multikueue --secrets-namespace).
    ("", "v1", "secrets"): ("Secret", True, False, []),
    # What tollgate-kube's topology controller reads (nodes, pods) and writes (pod gates).
    ("", "v1", "nodes"): ("Node", False, True, ["no"]),
    ("", "v1", "pods"): ("Pod", True, True, ["po"]),
    ("batch", "v1", "jobs"): ("Job", True, True, []),
    ("ray.io", "v1", "rayjobs"): ("RayJob", True, True, []),
    ("kubeflow.org", "v1", "pytorchjobs"): ("PyTorchJob", True, True, []),
    # What tollgate-kube's ProvisioningRequest check reads and writes.
    ("", "v1", "podtemplates"): ("PodTemplate", True, False, []),
    ("autoscaling.x-k8s.io", "v1", "provisioningrequests"): ("ProvisioningRequest", True, True,
                                                            ["provreq", "provreqs"]),
    ("kueue.x-k8s.io", "v1beta1", "provisioningrequestconfigs"):
        ("ProvisioningRequestConfig", False, False, []),
    ("kubeflow.org", "v1", "tfjobs"): ("TFJob", True, True, []),
    ("kubeflow.org", "v1", "jaxjobs"): ("JAXJob", True, True, []),
    ("kubeflow.org", "v1", "paddlejobs"): ("PaddleJob", True, True, []),
    ("kubeflow.org", "v1", "xgboostjobs"): ("XGBoostJob", True, True, []),
    ("kubeflow.org", "v2beta1", "mpijobs"): ("MPIJob", True, True, []),
    ("batch", "v1", "cronjobs"): ("CronJob", True, True, ["cj"]),
    ("jobset.x-k8s.io", "v1alpha2", "jobsets"): ("JobSet", True, True, []),
    ("trainer.kubeflow.org", "v1alpha1", "trainjobs"): ("TrainJob", True, True, []),
    ("trainer.kubeflow.org", "v1alpha1", "trainingruntimes"): ("TrainingRuntime", True, False, []),
    ("trainer.kubeflow.org", "v1alpha1", "clustertrainingruntimes"):
        ("ClusterTrainingRuntime", False, False, []),
    ("ray.io", "v1", "rayclusters"): ("RayCluster", True, True, []),
    ("ray.io", "v1", "rayservices"): ("RayService", True, True, []),
    ("sparkoperator.k8s.io", "v1beta2", "sparkapplications"): ("SparkApplication", True, True, []),
    ("workload.codeflare.dev", "v1beta2", "appwrappers"): ("AppWrapper", True, True, []),
}
RESOURCES.update(pod_controllers.RESOURCES)
# The CRD kinds; --omit-crds leaves some out, as a cluster without their operator would.
CRD_GROUPS = {"ray.io", "kubeflow.org", "jobset.x-k8s.io", "trainer.kubeflow.org",
              "sparkoperator.k8s.io", "workload.codeflare.dev",
              pod_controllers.LWS_GROUP}
# The Kubeflow v1 kinds and MPIJob: where their replica specs are.
REPLICA_SPECS = {"pytorchjobs": "pytorchReplicaSpecs", "tfjobs": "tfReplicaSpecs",
                 "jaxjobs": "jaxReplicaSpecs", "paddlejobs": "paddleReplicaSpecs",
                 "xgboostjobs": "xgbReplicaSpecs", "mpijobs": "mpiReplicaSpecs"}
# Every kind the stand-in controllers run.
SIMULATED = {"jobs", "rayjobs", "jobsets", "trainjobs", "rayclusters", "rayservices",
             "sparkapplications", "appwrappers", "cronjobs"} | set(REPLICA_SPECS)
# Kinds whose strategic merge patches the real server accepts (built-in types); CRDs get 415.
BUILTIN_GROUPS = {"", "batch"} | pod_controllers.BUILTIN_GROUPS
VERBS = ["create", "delete", "get", "list", "patch", "update", "watch"]


def parse_bool(text):
    """Go's strconv.ParseBool, which the API server uses for query parameters."""
    return text in ("1", "t", "T", "TRUE", "true", "True")


def now_rfc3339():
    return datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


def api_version(group, version):
    return version if group == "" else group + "/" + version


def status_object(code, reason, message, details=None):
    body = {
        "kind": "Status",
        "apiVersion": "v1",
        "metadata": {},
        "status": "Failure",
        "message": message,
        "reason": reason,
        "code": code,
    }
    if details:
        body["details"] = details
    return body


class ApiError(Exception):
    def __init__(self, code, reason, message):
        super().__init__(message)
        self.code = code
        self.reason = reason
        self.message = message


def merge_patch(target, patch):
    """RFC 7386."""
    if not isinstance(patch, dict):
        return copy.deepcopy(patch)
    if not isinstance(target, dict):
        target = {}
    result = dict(target)
    for key, value in patch.items():
        if value is None:
            result.pop(key, None)
        else:
            result[key] = merge_patch(result.get(key), value)
    return result


def _pointer_tokens(path):
    if path == "":
        return []
    if not path.startswith("/"):
        raise ApiError(422, "Invalid", "invalid JSON pointer %r" % path)
    return [t.replace("~1", "/").replace("~0", "~") for t in path[1:].split("/")]


def _walk(doc, tokens, path):
    node = doc
    for token in tokens:
        if isinstance(node, list):
            try:
                node = node[int(token)]
            except (ValueError, IndexError):
                raise ApiError(422, "Invalid", "path %s does not exist" % path)
        elif isinstance(node, dict) and token in node:
            node = node[token]
        else:
            raise ApiError(422, "Invalid", "path %s does not exist" % path)
    return node


def _resolve_parent(doc, tokens, path):
    return _walk(doc, tokens[:-1], path)


def _get_pointer(doc, path):
    return _walk(doc, _pointer_tokens(path), path)


def _remove_pointer(doc, path):
    tokens = _pointer_tokens(path)
    parent = _resolve_parent(doc, tokens, path)
    last = tokens[-1]
    if isinstance(parent, list):
        try:
            return parent.pop(int(last))
        except (ValueError, IndexError):
            raise ApiError(422, "Invalid", "path %s does not exist" % path)
    if not isinstance(parent, dict) or last not in parent:
        raise ApiError(422, "Invalid", "path %s does not exist" % path)
    return parent.pop(last)


def _add_pointer(doc, path, value, replace=False):
    tokens = _pointer_tokens(path)
    if not tokens:
        return value
    parent = _resolve_parent(doc, tokens, path)
    last = tokens[-1]
    if isinstance(parent, list):
        if last == "-" and not replace:
            parent.append(value)
            return doc
        try:
            index = int(last)
        except ValueError:
            raise ApiError(422, "Invalid", "bad array index in %s" % path)
        if replace:
            if index >= len(parent):
                raise ApiError(422, "Invalid", "path %s does not exist" % path)
            parent[index] = value
        else:
            if index > len(parent):
                raise ApiError(422, "Invalid", "path %s out of range" % path)
            parent.insert(index, value)
        return doc
    if not isinstance(parent, dict):
        raise ApiError(422, "Invalid", "path %s does not exist" % path)
    if replace and last not in parent:
        raise ApiError(422, "Invalid", "path %s does not exist" % path)
    parent[last] = value
    return doc


def json_patch(doc, ops):
    """RFC 6902; a failed `test` is a 422 as in the real API server."""
    doc = copy.deepcopy(doc)
    if not isinstance(ops, list):
        raise ApiError(400, "BadRequest", "a JSON patch must be a list of operations")
    for op in ops:
        kind = op.get("op")
        path = op.get("path", "")
        if kind == "add":
            doc = _add_pointer(doc, path, copy.deepcopy(op.get("value")))
        elif kind == "replace":
            doc = _add_pointer(doc, path, copy.deepcopy(op.get("value")), replace=True)
        elif kind == "remove":
            _remove_pointer(doc, path)
        elif kind == "test":
            if _get_pointer(doc, path) != op.get("value"):
                raise ApiError(422, "Invalid", "testing value %s failed" % path)
        elif kind == "move":
            value = _remove_pointer(doc, op["from"])
            doc = _add_pointer(doc, path, value)
        elif kind == "copy":
            doc = _add_pointer(doc, path, copy.deepcopy(_get_pointer(doc, op["from"])))
        else:
            raise ApiError(400, "BadRequest", "unknown JSON patch op %r" % kind)
    return doc


def parse_label_selector(text):
    """Equality, inequality, existence and set-based (in, notin) requirements."""
    reqs = []
    if not text:
        return reqs
    # Split on commas that are not inside parentheses.
    parts, depth, current = [], 0, ""
    for ch in text:
        if ch == "(":
            depth += 1
        elif ch == ")":
            depth -= 1
        if ch == "," and depth == 0:
            parts.append(current)
            current = ""
        else:
            current += ch
    parts.append(current)
    for part in parts:
        part = part.strip()
        m = re.match(r"^([\w./-]+)\s+(in|notin)\s+\((.*)\)$", part)
        if m:
            values = {v.strip() for v in m.group(3).split(",") if v.strip()}
            reqs.append((m.group(1), m.group(2), values))
        elif "!=" in part:
            k, v = part.split("!=", 1)
            reqs.append((k.strip(), "!=", v.strip()))
        elif "==" in part:
            k, v = part.split("==", 1)
            reqs.append((k.strip(), "=", v.strip()))
        elif "=" in part:
            k, v = part.split("=", 1)
            reqs.append((k.strip(), "=", v.strip()))
        elif part.startswith("!"):
            reqs.append((part[1:].strip(), "!exists", None))
        elif part:
            reqs.append((part, "exists", None))
    return reqs


def labels_match(labels, reqs):
    for key, op, value in reqs:
        have = labels.get(key)
        if op == "=" and have != value:
            return False
        if op == "!=" and have == value:
            return False
        if op == "exists" and key not in labels:
            return False
        if op == "!exists" and key in labels:
            return False
        if op == "in" and have not in value:
            return False
        if op == "notin" and have in value:
            return False
    return True


def fields_match(obj, selector):
    if not selector:
        return True
    for part in selector.split(","):
        part = part.strip()
        if not part:
            continue
        negate = "!=" in part
        key, value = re.split(r"!=|==|=", part, maxsplit=1)
        key = key.strip()
        if key == "metadata.name":
            have = obj["metadata"].get("name", "")
        elif key == "metadata.namespace":
            have = obj["metadata"].get("namespace", "")
        else:
            raise ApiError(400, "BadRequest", "field label not supported: %s" % key)
        if (have == value) == negate:
            return False
    return True


class Store:
    """Objects, the resourceVersion counter and the event history, under one condition."""

    def __init__(self, history):
        self.cond = threading.Condition()
        self.objects = {}  # (plural, namespace, name) -> object
        self.rv = 1
        self.events = []  # (rv, plural, type, object)
        self.history = history
        # Watches may start from any RV >= this one.
        self.oldest_rv = 1
        self.watch_generation = 0
        self.runs = []
        self.stats = {}
        self.stopping = False

    def count(self, key):
        self.stats[key] = self.stats.get(key, 0) + 1

    def _record(self, plural, kind, obj):
        self.events.append((self.rv, plural, kind, copy.deepcopy(obj)))
        if len(self.events) > self.history:
            dropped = self.events[: len(self.events) - self.history]
            self.events = self.events[len(self.events) - self.history:]
            self.oldest_rv = dropped[-1][0]
        self.cond.notify_all()

    def put(self, plural, obj, event_type):
        """Stores obj with a new resourceVersion; caller holds cond."""
        self.rv += 1
        obj["metadata"]["resourceVersion"] = str(self.rv)
        key = (plural, obj["metadata"].get("namespace", ""), obj["metadata"]["name"])
        self.objects[key] = obj
        self._record(plural, event_type, obj)
        return obj

    def delete(self, plural, key):
        obj = self.objects.pop(key)
        self.rv += 1
        obj["metadata"]["resourceVersion"] = str(self.rv)
        self._record(plural, "DELETED", obj)
        return obj

    def compact(self):
        with self.cond:
            self.events = []
            self.oldest_rv = self.rv
            self.cond.notify_all()

    def drop_watches(self):
        with self.cond:
            self.watch_generation += 1
            self.cond.notify_all()


OMITTED = set()


def resource_info(group, version, plural):
    info = RESOURCES.get((group, version, plural))
    if info is None or plural in OMITTED:
        raise ApiError(404, "NotFound", "the server could not find the requested resource")
    return info


# The Job controller's own spec.managedBy value (Kubernetes' default).
JOB_CONTROLLER = "kubernetes.io/job-controller"
# Each kind's own controller name for managedBy (spec.managedBy; spec.runPolicy.managedBy for
# the Kubeflow kinds and MPIJob). A job managed by another controller (MultiKueue on a manager
# cluster) is left alone, as the real controllers leave it.
OWN_MANAGER = {"jobs": JOB_CONTROLLER, "jobsets": "jobset.sigs.k8s.io/jobset-controller",
               "trainjobs": "trainer.kubeflow.org/trainjob-controller",
               "rayjobs": "ray.io/kuberay-operator", "rayclusters": "ray.io/kuberay-operator",
               "rayservices": "ray.io/kuberay-operator",
               "appwrappers": "workload.codeflare.dev/appwrapper-controller",
               "mpijobs": "kubeflow.org/mpi-operator"}


def managed_elsewhere(plural, spec):
    """Whether the job's managedBy names another controller than its kind's own."""
    holder = spec.get("runPolicy", {}) if plural in REPLICA_SPECS else spec
    own = OWN_MANAGER.get(plural, "kubeflow.org/training-operator")
    return holder.get("managedBy", own) != own


def apply_job_defaults(plural, obj):
    spec = obj.setdefault("spec", {})
    if plural == "jobs":
        if spec.get("parallelism") is None and spec.get("completions") is None:
            spec["parallelism"] = 1
            spec["completions"] = 1
        elif spec.get("parallelism") is None:
            spec["parallelism"] = 1
        spec.setdefault("suspend", False)
        spec.setdefault("backoffLimit", 6)
        spec.setdefault("completionMode", "NonIndexed")
        template = spec.setdefault("template", {})
        template.setdefault("metadata", {})
        template.setdefault("spec", {}).setdefault("restartPolicy", "Never")


class Api:
    def __init__(self, store, args):
        self.store = store
        self.args = args

    # --- Discovery ----------------------------------------------------------------------------

    def discovery(self, path):
        groups = {}
        for (group, version, plural), info in RESOURCES.items():
            if plural in OMITTED:
                continue
            groups.setdefault(group, {}).setdefault(version, []).append((plural, info))
        if path == "/version":
            return {"major": "1", "minor": "32", "gitVersion": "v1.32.0-tollgate-fake",
                    "platform": "linux/amd64"}
        if path == "/api":
            return {"kind": "APIVersions", "versions": ["v1"],
                    "serverAddressByClientCIDRs": [
                        {"clientCIDR": "0.0.0.0/0", "serverAddress": "127.0.0.1"}]}
        if path == "/apis":
            return {"kind": "APIGroupList", "apiVersion": "v1",
                    "groups": [self.group_object(g, groups[g]) for g in sorted(groups) if g]}
        m = re.match(r"^/apis/([^/]+)$", path)
        if m and m.group(1) in groups:
            return dict(self.group_object(m.group(1), groups[m.group(1)]),
                        kind="APIGroup", apiVersion="v1")
        m = re.match(r"^/api/(v1)$|^/apis/([^/]+)/([^/]+)$", path)
        if m:
            group = m.group(2) or ""
            version = m.group(1) or m.group(3)
            if group in groups and version in groups[group]:
                resources = []
                for plural, (kind, namespaced, has_status, short) in sorted(
                        groups[group][version]):
                    entry = {"name": plural, "singularName": kind.lower(),
                             "namespaced": namespaced, "kind": kind, "verbs": VERBS}
                    if short:
                        entry["shortNames"] = short
                    resources.append(entry)
                    if has_status:
                        resources.append({"name": plural + "/status", "singularName": "",
                                          "namespaced": namespaced, "kind": kind,
                                          "verbs": ["get", "patch", "update"]})
                return {"kind": "APIResourceList", "apiVersion": "v1",
                        "groupVersion": api_version(group, version), "resources": resources}
        return None

    @staticmethod
    def group_object(group, versions):
        entries = [{"groupVersion": api_version(group, v), "version": v} for v in sorted(versions)]
        return {"name": group, "versions": entries, "preferredVersion": entries[0]}

    # --- Routing ------------------------------------------------------------------------------

    def route(self, path):
        """(group, version, plural, namespace, name, subresource) for a resource URL."""
        parts = [p for p in path.split("/") if p]
        if len(parts) >= 2 and parts[0] == "api":
            group, version, rest = "", parts[1], parts[2:]
        elif len(parts) >= 3 and parts[0] == "apis":
            group, version, rest = parts[1], parts[2], parts[3:]
        else:
            raise ApiError(404, "NotFound", "the server could not find the requested resource")
        namespace = ""
        if len(rest) >= 3 and rest[0] == "namespaces":
            namespace, rest = rest[1], rest[2:]
        if not rest or len(rest) > 3:
            raise ApiError(404, "NotFound", "the server could not find the requested resource")
        plural = rest[0]
        name = rest[1] if len(rest) > 1 else ""
        sub = rest[2] if len(rest) > 2 else ""
        kind, namespaced, has_status, _ = resource_info(group, version, plural)
        if sub and (sub != "status" or not has_status):
            raise ApiError(404, "NotFound", "the server could not find the requested resource")
        if not namespaced and namespace:
            raise ApiError(404, "NotFound", "the server could not find the requested resource")
        return group, version, plural, namespace, name, sub

    def not_found(self, group, plural, name):
        qualified = plural if not group else plural + "." + group
        return ApiError(404, "NotFound", '%s "%s" not found' % (qualified, name))

    # --- Verbs --------------------------------------------------------------------------------

    def get(self, group, version, plural, namespace, name):
        with self.store.cond:
            obj = self.store.objects.get((plural, namespace, name))
            if obj is None:
                raise self.not_found(group, plural, name)
            return copy.deepcopy(obj)

    def list(self, group, version, plural, namespace, query):
        kind = resource_info(group, version, plural)[0]
        reqs = parse_label_selector(query.get("labelSelector", ""))
        field_selector = query.get("fieldSelector", "")
        limit = int(query.get("limit", "0") or "0")
        start_after = None
        if query.get("continue"):
            try:
                token = json.loads(base64.b64decode(query["continue"]))
                start_after = tuple(token["after"])
            except Exception:
                raise ApiError(400, "BadRequest", "invalid continue token")
        with self.store.cond:
            items = []
            for (p, ns, n), obj in sorted(self.store.objects.items()):
                if p != plural or (namespace and ns != namespace):
                    continue
                if start_after is not None and (ns, n) <= start_after:
                    continue
                if not labels_match(obj["metadata"].get("labels", {}), reqs):
                    continue
                if not fields_match(obj, field_selector):
                    continue
                items.append(copy.deepcopy(obj))
            rv = str(self.store.rv)
        metadata = {"resourceVersion": rv}
        if limit > 0 and len(items) > limit:
            items = items[:limit]
            last = items[-1]["metadata"]
            after = [last.get("namespace", ""), last["name"]]
            metadata["continue"] = base64.b64encode(
                json.dumps({"after": after}).encode()).decode()
            metadata["remainingItemCount"] = 1
        for item in items:
            # Like the real server, list items carry no apiVersion/kind.
            item.pop("apiVersion", None)
            item.pop("kind", None)
        return {"kind": kind + "List", "apiVersion": api_version(group, version),
                "metadata": metadata, "items": items}

    def create(self, group, version, plural, namespace, body):
        kind, namespaced, has_status, _ = resource_info(group, version, plural)
        if not isinstance(body, dict):
            raise ApiError(400, "BadRequest", "the body must be an object")
        obj = copy.deepcopy(body)
        meta = obj.setdefault("metadata", {})
        if not meta.get("name"):
            if meta.get("generateName"):
                meta["name"] = meta["generateName"] + "".join(
                    random.choice(string.ascii_lowercase + string.digits) for _ in range(5))
            else:
                raise ApiError(422, "Invalid", "metadata.name: Required value: name or "
                               "generateName is required")
        if namespaced:
            if meta.get("namespace") and meta["namespace"] != namespace:
                raise ApiError(400, "BadRequest", "the namespace of the provided object does "
                               "not match the namespace sent on the request")
            meta["namespace"] = namespace
        else:
            meta.pop("namespace", None)
        obj["apiVersion"] = api_version(group, version)
        obj["kind"] = kind
        meta["uid"] = str(uuid.uuid4())
        meta["creationTimestamp"] = now_rfc3339()
        meta["generation"] = 1
        meta.pop("resourceVersion", None)
        if has_status and plural != "namespaces":
            obj["status"] = {}
        if plural == "namespaces":
            obj.setdefault("spec", {"finalizers": ["kubernetes"]})
            obj["status"] = {"phase": "Active"}
        apply_job_defaults(plural, obj)
        if plural in ("pods",) + pod_controllers.PARENT_PLURALS:
            pod_controllers.apply_defaults(plural, obj)
        with self.store.cond:
            if namespaced and ("namespaces", "", namespace) not in self.store.objects:
                raise ApiError(404, "NotFound", 'namespaces "%s" not found' % namespace)
            key = (plural, namespace if namespaced else "", meta["name"])
            if key in self.store.objects:
                qualified = plural if not group else plural + "." + group
                raise ApiError(409, "AlreadyExists",
                               '%s "%s" already exists' % (qualified, meta["name"]))
            return copy.deepcopy(self.store.put(plural, obj, "ADDED"))

    def _write(self, group, plural, namespace, name, sub, new_obj, old):
        """Stores an update of `old`, keeping what the endpoint may not change."""
        if not isinstance(new_obj, dict):
            raise ApiError(422, "Invalid", "the result is not an object")
        new_obj = copy.deepcopy(new_obj)
        meta = new_obj.setdefault("metadata", {})
        for field in ("uid", "creationTimestamp", "name", "namespace", "generation"):
            if field in old["metadata"]:
                meta[field] = old["metadata"][field]
            else:
                meta.pop(field, None)
        new_obj["apiVersion"] = old["apiVersion"]
        new_obj["kind"] = old["kind"]
        has_status = resource_info(group, old["apiVersion"].split("/")[-1], plural)[2]
        if sub == "status":
            # The status endpoint changes status (and metadata), never spec.
            if "spec" in old:
                new_obj["spec"] = copy.deepcopy(old["spec"])
            else:
                new_obj.pop("spec", None)
        elif has_status:
            if "status" in old:
                new_obj["status"] = copy.deepcopy(old["status"])
            else:
                new_obj.pop("status", None)
        meta["resourceVersion"] = old["metadata"]["resourceVersion"]
        try:
            pod_controllers.validate_update(plural, old, new_obj)
        except pod_controllers.Invalid as e:
            raise ApiError(422, "Invalid", 'Pod "%s" is invalid: %s' % (name, e))
        if new_obj == old:
            # A no-op write changes nothing, not even the resourceVersion, and sends no event.
            return copy.deepcopy(old)
        if new_obj.get("spec") != old.get("spec"):
            meta["generation"] = old["metadata"].get("generation", 1) + 1
        return copy.deepcopy(self.store.put(plural, new_obj, "MODIFIED"))

    def update(self, group, version, plural, namespace, name, sub, body):
        with self.store.cond:
            old = self.store.objects.get((plural, namespace, name))
            if old is None:
                raise self.not_found(group, plural, name)
            rv = (body.get("metadata") or {}).get("resourceVersion", "")
            if not rv:
                raise ApiError(422, "Invalid", "metadata.resourceVersion: Invalid value: 0x0: "
                               "must be specified for an update")
            if rv != old["metadata"]["resourceVersion"]:
                raise self.conflict(group, plural, name)
            return self._write(group, plural, namespace, name, sub, body, old)

    def conflict(self, group, plural, name):
        qualified = plural if not group else plural + "." + group
        return ApiError(409, "Conflict",
                        'Operation cannot be fulfilled on %s "%s": the object has been '
                        "modified; please apply your changes to the latest version and try "
                        "again" % (qualified, name))

    def patch(self, group, version, plural, namespace, name, sub, content_type, body):
        content_type = content_type.split(";")[0].strip()
        with self.store.cond:
            old = self.store.objects.get((plural, namespace, name))
            if old is None:
                raise self.not_found(group, plural, name)
            if content_type == "application/merge-patch+json" or (
                    content_type == "application/strategic-merge-patch+json"
                    and group in BUILTIN_GROUPS):
                if not isinstance(body, dict):
                    raise ApiError(400, "BadRequest", "a merge patch must be an object")
                rv = (body.get("metadata") or {}).get("resourceVersion")
                if rv is not None and rv != old["metadata"]["resourceVersion"]:
                    self.store.count("conflicts")
                    raise self.conflict(group, plural, name)
                new_obj = merge_patch(old, body)
            elif content_type == "application/json-patch+json":
                new_obj = json_patch(old, body)
            else:
                raise ApiError(415, "UnsupportedMediaType",
                               "the body of the request was in an unknown format - accepted "
                               "media types include: application/json-patch+json, "
                               "application/merge-patch+json")
            self.store.count("patches")
            return self._write(group, plural, namespace, name, sub, new_obj, old)

    def delete(self, group, version, plural, namespace, name):
        with self.store.cond:
            key = (plural, namespace, name)
            if key not in self.store.objects:
                raise self.not_found(group, plural, name)
            return copy.deepcopy(self.store.delete(plural, key))


class Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server_version = "tollgate-fake-apiserver"

    def log_message(self, fmt, *args):
        if self.server.args.verbose:
            sys.stderr.write("%s %s\n" % (self.address_string(), fmt % args))

    # --- Plumbing -----------------------------------------------------------------------------

    def send_json(self, code, body):
        data = json.dumps(body).encode()
        self.send_response(code)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def send_error_status(self, err):
        self.send_json(err.code, status_object(err.code, err.reason, err.message))

    def read_body(self):
        length = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(length) if length else b""
        if not raw:
            return None
        try:
            return json.loads(raw)
        except ValueError:
            content_type = self.headers.get("Content-Type", "")
            if "yaml" in content_type:
                raise ApiError(415, "UnsupportedMediaType", "YAML bodies are not supported")
            raise ApiError(400, "BadRequest", "the request body is not valid JSON")

    def authorized(self):
        token = self.server.args.token
        if not token:
            return True
        if self.headers.get("Authorization", "") == "Bearer " + token:
            return True
        self.send_json(401, status_object(401, "Unauthorized", "Unauthorized"))
        return False

    def dispatch(self, method):
        store = self.server.store
        url = urllib.parse.urlsplit(self.path)
        query = {k: v[-1] for k, v in urllib.parse.parse_qs(url.query,
                                                             keep_blank_values=True).items()}
        path = url.path.rstrip("/") or "/"
        with store.cond:
            store.count(method)
        # Read every body up front, even one we ignore (kubectl sends DeleteOptions with a
        # DELETE): an unread body would be parsed as the next request on a kept-alive connection.
        try:
            self._body = self.read_body()
        except ApiError as err:
            self._body = None
            self.close_connection = True
            return self.send_error_status(err)
        try:
            if path.startswith("/fake/"):
                return self.fake_endpoint(method, path)
            if not self.authorized():
                return
            api = self.server.api
            if method == "GET":
                found = api.discovery(path)
                if found is not None:
                    return self.send_json(200, found)
                if path.startswith("/openapi"):
                    raise ApiError(404, "NotFound", "OpenAPI is not served by this test double")
            group, version, plural, ns, name, sub = api.route(path)
            if method == "GET":
                if name:
                    return self.send_json(200, api.get(group, version, plural, ns, name))
                if parse_bool(query.get("watch", "")):
                    return self.watch(group, version, plural, ns, query)
                return self.send_json(200, api.list(group, version, plural, ns, query))
            if method == "POST" and not name:
                return self.send_json(201, api.create(group, version, plural, ns, self._body))
            if method == "PUT" and name:
                return self.send_json(200, api.update(group, version, plural, ns, name, sub,
                                                      self._body or {}))
            if method == "PATCH" and name:
                return self.send_json(200, api.patch(group, version, plural, ns, name, sub,
                                                     self.headers.get("Content-Type", ""),
                                                     self._body))
            if method == "DELETE" and name:
                return self.send_json(200, api.delete(group, version, plural, ns, name))
            raise ApiError(405, "MethodNotAllowed", "method %s not allowed here" % method)
        except ApiError as err:
            self.send_error_status(err)
        except (BrokenPipeError, ConnectionResetError):
            pass

    def fake_endpoint(self, method, path):
        store = self.server.store
        if method == "POST" and path == "/fake/compact":
            store.compact()
            return self.send_json(200, {"oldestResourceVersion": str(store.oldest_rv)})
        if method == "POST" and path == "/fake/drop-watches":
            store.drop_watches()
            return self.send_json(200, {})
        if method == "GET" and path == "/fake/runs":
            with store.cond:
                return self.send_json(200, {"runs": list(store.runs)})
        if method == "GET" and path == "/fake/stats":
            with store.cond:
                return self.send_json(200, dict(store.stats))
        raise ApiError(404, "NotFound", "no such test endpoint")

    def write_chunk(self, obj):
        data = (json.dumps(obj) + "\n").encode()
        self.wfile.write(b"%x\r\n%s\r\n" % (len(data), data))
        self.wfile.flush()

    def watch(self, group, version, plural, namespace, query):
        store = self.server.store
        api = self.server.api
        kind = resource_info(group, version, plural)[0]
        reqs = parse_label_selector(query.get("labelSelector", ""))
        field_selector = query.get("fieldSelector", "")
        timeout = float(query.get("timeoutSeconds") or self.server.args.max_watch_seconds)
        timeout = min(timeout, self.server.args.max_watch_seconds)
        bookmarks = parse_bool(query.get("allowWatchBookmarks", ""))
        rv_text = query.get("resourceVersion", "")
        deadline = time.monotonic() + timeout

        def matches(ns, obj):
            if namespace and ns != namespace:
                return False
            return labels_match(obj["metadata"].get("labels", {}), reqs) and fields_match(
                obj, field_selector)

        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Transfer-Encoding", "chunked")
        self.end_headers()
        try:
            with store.cond:
                generation = store.watch_generation
                initial = []
                if rv_text in ("", "0"):
                    for (p, ns, _), obj in sorted(store.objects.items()):
                        if p == plural and matches(ns, obj):
                            initial.append({"type": "ADDED", "object": copy.deepcopy(obj)})
                    since = store.rv
                else:
                    try:
                        since = int(rv_text)
                    except ValueError:
                        since = -1
                    if since < store.oldest_rv:
                        initial = None
            if initial is None:
                self.write_chunk({"type": "ERROR", "object": status_object(
                    410, "Expired", "too old resource version: %s (%d)" % (
                        rv_text, store.oldest_rv))})
                return self.end_chunks()
            for event in initial:
                self.write_chunk(event)
            last_sent = time.monotonic()
            while True:
                with store.cond:
                    pending = [(rv, t, o) for rv, p, t, o in store.events
                               if rv > since and p == plural]
                    if not pending:
                        remaining = deadline - time.monotonic()
                        if (remaining <= 0 or store.stopping
                                or store.watch_generation != generation):
                            break
                        store.cond.wait(min(remaining, 0.5))
                        pending = [(rv, t, o) for rv, p, t, o in store.events
                                   if rv > since and p == plural]
                    current_rv = store.rv
                    dropped = store.watch_generation != generation or store.stopping
                if dropped:
                    break
                for rv, event_type, obj in pending:
                    since = rv
                    ns = obj["metadata"].get("namespace", "")
                    if matches(ns, obj):
                        self.write_chunk({"type": event_type, "object": obj})
                        last_sent = time.monotonic()
                if (bookmarks and not pending and
                        time.monotonic() - last_sent > self.server.args.bookmark_seconds):
                    since = max(since, current_rv)
                    self.write_chunk({"type": "BOOKMARK", "object": {
                        "kind": kind, "apiVersion": api_version(group, version),
                        "metadata": {"resourceVersion": str(since)}}})
                    last_sent = time.monotonic()
                if time.monotonic() >= deadline:
                    break
            self.end_chunks()
        except (BrokenPipeError, ConnectionResetError, ssl.SSLError, OSError):
            self.close_connection = True

    def end_chunks(self):
        self.wfile.write(b"0\r\n\r\n")
        self.wfile.flush()

    def do_GET(self):
        self.dispatch("GET")

    def do_POST(self):
        self.dispatch("POST")

    def do_PUT(self):
        self.dispatch("PUT")

    def do_PATCH(self):
        self.dispatch("PATCH")

    def do_DELETE(self):
        self.dispatch("DELETE")


class Server(socketserver.ThreadingMixIn, http.server.HTTPServer):
    daemon_threads = True
    allow_reuse_address = True


# --- The stand-in job controllers -----------------------------------------------------------


def set_condition(status, ctype, value, reason="", message=""):
    conditions = status.setdefault("conditions", [])
    for c in conditions:
        if c.get("type") == ctype:
            if c.get("status") != value:
                c["status"] = value
                c["lastTransitionTime"] = now_rfc3339()
            c["reason"] = reason
            c["message"] = message
            return
    conditions.append({"type": ctype, "status": value, "reason": reason, "message": message,
                       "lastProbeTime": now_rfc3339(), "lastTransitionTime": now_rfc3339()})


def condition_true(status, ctype):
    return any(c.get("type") == ctype and c.get("status") == "True"
               for c in status.get("conditions", []))


def template_selectors(plural, obj):
    spec = obj.get("spec", {})
    if plural == "jobs":
        return {"main": spec.get("template", {}).get("spec", {}).get("nodeSelector", {})}
    if plural == "rayjobs":
        cluster = spec.get("rayClusterSpec", {})
        out = {"head": cluster.get("headGroupSpec", {}).get("template", {}).get(
            "spec", {}).get("nodeSelector", {})}
        for g in cluster.get("workerGroupSpecs", []):
            out[g.get("groupName", "")] = g.get("template", {}).get("spec", {}).get(
                "nodeSelector", {})
        if "submitterPodTemplate" in spec:
            out["submitter"] = spec["submitterPodTemplate"].get("spec", {}).get(
                "nodeSelector", {})
        return out
    out = {}
    for rtype, rspec in spec.get(REPLICA_SPECS.get(plural, ""), {}).items():
        out[rtype] = (rspec or {}).get("template", {}).get("spec", {}).get("nodeSelector", {})
    return out


class Simulator(threading.Thread):
    """Moves unsuspended jobs through start, ready and completion; stops suspended ones; runs
    pods and their controllers (pod_controllers.py)."""

    def __init__(self, store, args):
        super().__init__(daemon=True)
        self.store = store
        self.args = args
        self.started = {}  # uid -> monotonic start of the current run
        self.pods = pod_controllers.PodWorld(store, args)

    def run(self):
        # Sleep first: with a long --tick, nothing is ever simulated (the client tests' mode).
        while not self.store.stopping:
            time.sleep(self.args.tick)
            try:
                self.tick()
            except Exception as e:  # A bug here must not kill the thread silently.
                sys.stderr.write("simulator: %r\n" % (e,))

    def duration(self, obj):
        text = obj["metadata"].get("annotations", {}).get(DURATION_ANNOTATION)
        try:
            return float(text) if text is not None else self.args.job_duration
        except ValueError:
            return self.args.job_duration

    def tick(self):
        with self.store.cond:
            self.pods.tick()
            for key in sorted(self.store.objects):
                plural = key[0]
                if plural not in SIMULATED or key not in self.store.objects:
                    continue
                obj = self.store.objects[key]
                if plural == "cronjobs":
                    self.fire_cronjob(obj)
                    continue
                new_status = self.next_status(plural, obj)
                if new_status is not None and new_status != obj.get("status"):
                    updated = copy.deepcopy(obj)
                    updated["status"] = new_status
                    self.store.put(plural, updated, "MODIFIED")

    def fire_cronjob(self, cron):
        """Creates the CronJob's first Job (once), as the CronJob controller would at its
        first schedule. Caller holds the store's condition."""
        status = cron.get("status") or {}
        if status.get("lastScheduleTime"):
            return
        template = cron.get("spec", {}).get("jobTemplate", {})
        meta = cron["metadata"]
        name = "%s-%d" % (meta["name"], 29000000 + len(self.store.runs))
        job = {"apiVersion": "batch/v1", "kind": "Job",
               "metadata": {"name": name, "namespace": meta["namespace"],
                            "labels": copy.deepcopy(template.get("metadata", {}).get("labels", {})),
                            "annotations": copy.deepcopy(
                                template.get("metadata", {}).get("annotations", {})),
                            "uid": str(uuid.uuid4()), "creationTimestamp": now_rfc3339(),
                            "generation": 1,
                            "ownerReferences": [{"apiVersion": "batch/v1", "kind": "CronJob",
                                                 "name": meta["name"], "uid": meta["uid"],
                                                 "controller": True,
                                                 "blockOwnerDeletion": True}]},
               "spec": copy.deepcopy(template.get("spec", {})), "status": {}}
        apply_job_defaults("jobs", job)
        if ("jobs", meta["namespace"], name) not in self.store.objects:
            self.store.put("jobs", job, "ADDED")
        updated = copy.deepcopy(cron)
        updated["status"] = {"lastScheduleTime": now_rfc3339(),
                             "active": [{"apiVersion": "batch/v1", "kind": "Job", "name": name,
                                         "namespace": meta["namespace"],
                                         "uid": job["metadata"]["uid"]}]}
        self.store.put("cronjobs", updated, "MODIFIED")

    def begin_run(self, plural, obj, now):
        uid = obj["metadata"]["uid"]
        if uid not in self.started:
            self.started[uid] = now
            self.store.runs.append({
                "resource": plural, "namespace": obj["metadata"]["namespace"],
                "name": obj["metadata"]["name"], "uid": uid, "time": time.time(),
                "nodeSelectors": template_selectors(plural, obj)})
        return now - self.started[uid]

    def next_status(self, plural, obj):
        now = time.monotonic()
        spec = obj.get("spec", {})
        status = copy.deepcopy(obj.get("status") or {})
        uid = obj["metadata"]["uid"]
        annotations = obj["metadata"].get("annotations", {})
        fail = annotations.get(FAIL_ANNOTATION) == "true"
        if plural != "sparkapplications" and plural != "cronjobs" and managed_elsewhere(
                plural, spec):
            return None
        if plural == "jobs":
            if condition_true(status, "Complete") or condition_true(status, "Failed"):
                return None
            if spec.get("suspend"):
                self.started.pop(uid, None)
                if status.get("active") or status.get("ready") or not condition_true(
                        status, "Suspended"):
                    status["active"] = 0
                    status["ready"] = 0
                    status.pop("startTime", None)
                    set_condition(status, "Suspended", "True", "JobSuspended", "Job suspended")
                return status
            parallelism = spec.get("parallelism", 1)
            completions = spec.get("completions")
            count = parallelism if completions is None else min(parallelism, completions)
            elapsed = self.begin_run(plural, obj, now)
            if any(c.get("type") == "Suspended" for c in status.get("conditions", [])):
                set_condition(status, "Suspended", "False", "JobResumed", "Job resumed")
            status.setdefault("startTime", now_rfc3339())
            if elapsed >= self.duration(obj):
                status["active"] = 0
                status["ready"] = 0
                if fail:
                    status["failed"] = 1
                    set_condition(status, "FailureTarget", "True", "BackoffLimitExceeded",
                                  "Job has reached the specified backoff limit")
                    set_condition(status, "Failed", "True", "BackoffLimitExceeded",
                                  "Job has reached the specified backoff limit")
                else:
                    status["succeeded"] = completions if completions is not None else count
                    set_condition(status, "SuccessCriteriaMet", "True", "CompletionsReached",
                                  "Reached expected number of succeeded pods")
                    set_condition(status, "Complete", "True", "CompletionsReached",
                                  "Reached expected number of succeeded pods")
                    status["completionTime"] = now_rfc3339()
                self.started.pop(uid, None)
                return status
            status["active"] = count
            status["ready"] = count if elapsed >= self.args.pod_start_delay else 0
            return status
        if plural == "rayjobs":
            deployment = status.get("jobDeploymentStatus", "")
            if deployment in ("Complete", "Failed"):
                return None
            if spec.get("suspend"):
                self.started.pop(uid, None)
                status["jobDeploymentStatus"] = "Suspended"
                status.pop("jobStatus", None)
                status.pop("rayClusterStatus", None)
                return status
            elapsed = self.begin_run(plural, obj, now)
            if elapsed >= self.duration(obj):
                status["jobStatus"] = "FAILED" if fail else "SUCCEEDED"
                status["jobDeploymentStatus"] = "Failed" if fail else "Complete"
                status["rayClusterStatus"] = {"state": "ready"}
                self.started.pop(uid, None)
                return status
            if elapsed >= self.args.pod_start_delay:
                status["jobDeploymentStatus"] = "Running"
                status["jobStatus"] = "RUNNING"
                status["rayClusterStatus"] = {"state": "ready"}
            else:
                status["jobDeploymentStatus"] = "Initializing"
                status["rayClusterStatus"] = {"state": ""}
            return status
        if plural in REPLICA_SPECS:
            return self.replica_specs_status(plural, obj, status, now, fail)
        if plural in ("jobsets", "trainjobs"):
            return self.jobset_status(plural, obj, status, now, fail)
        if plural == "rayclusters":
            if spec.get("suspend"):
                self.started.pop(uid, None)
                status["state"] = "suspended"
                return status
            elapsed = self.begin_run(plural, obj, now)
            if fail and elapsed >= self.duration(obj):
                status["state"] = "failed"
            else:
                status["state"] = "ready" if elapsed >= self.args.pod_start_delay else ""
            return status
        if plural == "rayservices":
            if spec.get("rayClusterConfig", {}).get("suspend"):
                self.started.pop(uid, None)
                set_condition(status, "Ready", "False", "Suspended", "RayService is suspended")
                return status
            elapsed = self.begin_run(plural, obj, now)
            ready = elapsed >= self.args.pod_start_delay
            set_condition(status, "Ready", "True" if ready else "False",
                          "RunningServeDeploymentHealthy" if ready else "Initializing", "")
            return status
        if plural == "sparkapplications":
            return self.spark_status(obj, status, now, fail)
        if plural == "appwrappers":
            return self.appwrapper_status(obj, status, now, fail)
        return None

    def replica_specs_status(self, plural, obj, status, now, fail):
        """The Kubeflow training kinds and MPIJob: replicaStatuses and the Created, Running,
        Suspended, Succeeded and Failed conditions."""
        spec = obj.get("spec", {})
        uid = obj["metadata"]["uid"]
        kind = obj["kind"]
        if condition_true(status, "Succeeded") or condition_true(status, "Failed"):
            return None
        replicas = {t: (s or {}).get("replicas", 1)
                    for t, s in spec.get(REPLICA_SPECS[plural], {}).items()}
        if spec.get("runPolicy", {}).get("suspend"):
            self.started.pop(uid, None)
            status["replicaStatuses"] = {t: {"active": 0} for t in replicas}
            if condition_true(status, "Running"):
                set_condition(status, "Running", "False", kind + "Suspended", "suspended")
            set_condition(status, "Suspended", "True", kind + "Suspended",
                          kind + " is suspended")
            return status
        elapsed = self.begin_run(plural, obj, now)
        set_condition(status, "Created", "True", kind + "Created", kind + " is created")
        if any(c.get("type") == "Suspended" for c in status.get("conditions", [])):
            set_condition(status, "Suspended", "False", kind + "Resumed", kind + " is resumed")
        if elapsed >= self.duration(obj):
            status["replicaStatuses"] = {t: {"succeeded": n} for t, n in replicas.items()}
            set_condition(status, "Running", "False", kind + "Succeeded", "")
            if fail:
                set_condition(status, "Failed", "True", kind + "Failed", kind + " failed")
            else:
                set_condition(status, "Succeeded", "True", kind + "Succeeded",
                              kind + " is successfully completed")
            self.started.pop(uid, None)
            return status
        status["replicaStatuses"] = {t: {"active": n} for t, n in replicas.items()}
        if elapsed >= self.args.pod_start_delay:
            set_condition(status, "Running", "True", kind + "Running", kind + " is running")
        return status

    def replicated_jobs(self, plural, obj):
        """(name, replicas) of a JobSet's replicated jobs, or of a TrainJob's runtime's."""
        spec = obj.get("spec", {})
        if plural == "jobsets":
            jobs = spec.get("replicatedJobs", [])
        else:
            ref = spec.get("runtimeRef", {})
            if ref.get("kind", "ClusterTrainingRuntime") == "ClusterTrainingRuntime":
                key = ("clustertrainingruntimes", "", ref.get("name", ""))
            else:
                key = ("trainingruntimes", obj["metadata"]["namespace"], ref.get("name", ""))
            runtime = self.store.objects.get(key, {})
            jobs = runtime.get("spec", {}).get("template", {}).get("spec", {}).get(
                "replicatedJobs", [])
        return [(j.get("name", ""), j.get("replicas", 1)) for j in jobs]

    def jobset_status(self, plural, obj, status, now, fail):
        """JobSet (status.replicatedJobsStatus, Completed/Failed) and TrainJob
        (status.jobsStatus, Complete/Failed), counting jobs, not pods."""
        spec = obj.get("spec", {})
        uid = obj["metadata"]["uid"]
        done, field = ("Completed", "replicatedJobsStatus") if plural == "jobsets" else (
            "Complete", "jobsStatus")
        if condition_true(status, done) or condition_true(status, "Failed"):
            return None
        jobs = self.replicated_jobs(plural, obj)

        def statuses(**counts):
            return [dict({"name": n, "ready": 0, "succeeded": 0, "failed": 0, "active": 0,
                          "suspended": 0}, **{k: (r if v else 0) for k, v in counts.items()})
                    for n, r in jobs]
        if spec.get("suspend"):
            self.started.pop(uid, None)
            status[field] = statuses(suspended=True)
            set_condition(status, "Suspended", "True", "JobsSuspended", "suspended")
            return status
        elapsed = self.begin_run(plural, obj, now)
        if any(c.get("type") == "Suspended" for c in status.get("conditions", [])):
            set_condition(status, "Suspended", "False", "JobsResumed", "resumed")
        if elapsed >= self.duration(obj):
            if fail:
                status[field] = statuses(failed=True)
                set_condition(status, "Failed", "True", "FailedJobs", "a job failed")
            else:
                status[field] = statuses(succeeded=True)
                set_condition(status, done, "True", "AllJobsCompleted", "jobs completed")
            self.started.pop(uid, None)
            return status
        status[field] = statuses(active=True, ready=elapsed >= self.args.pod_start_delay)
        return status

    def spark_status(self, obj, status, now, fail):
        spec = obj.get("spec", {})
        uid = obj["metadata"]["uid"]
        state = status.get("applicationState", {}).get("state", "")
        if state in ("COMPLETED", "FAILED", "SUBMISSION_FAILED"):
            return None
        name = obj["metadata"]["name"]
        executors = ["%s-exec-%d" % (name, i + 1)
                     for i in range(spec.get("executor", {}).get("instances", 0))]
        if spec.get("suspend"):
            self.started.pop(uid, None)
            status["applicationState"] = {"state": "SUSPENDED"}
            status.pop("executorState", None)
            return status
        elapsed = self.begin_run("sparkapplications", obj, now)
        if elapsed >= self.duration(obj):
            status["applicationState"] = (
                {"state": "FAILED", "errorMessage": "driver container failed"} if fail
                else {"state": "COMPLETED"})
            status["executorState"] = {e: "COMPLETED" for e in executors}
            self.started.pop(uid, None)
            return status
        if elapsed >= self.args.pod_start_delay:
            status["applicationState"] = {"state": "RUNNING"}
            status["executorState"] = {e: "RUNNING" for e in executors}
        else:
            status["applicationState"] = {"state": "SUBMITTED"}
        return status

    def appwrapper_status(self, obj, status, now, fail):
        spec = obj.get("spec", {})
        uid = obj["metadata"]["uid"]
        if status.get("phase") in ("Succeeded", "Failed"):
            return None
        if spec.get("suspend"):
            self.started.pop(uid, None)
            status["phase"] = "Suspended"
            for c in ("QuotaReserved", "ResourcesDeployed", "PodsReady"):
                set_condition(status, c, "False", "Suspended", "")
            return status
        elapsed = self.begin_run("appwrappers", obj, now)
        if elapsed >= self.duration(obj):
            status["phase"] = "Failed" if fail else "Succeeded"
            for c in ("QuotaReserved", "ResourcesDeployed", "PodsReady"):
                set_condition(status, c, "False", status["phase"], "")
            self.started.pop(uid, None)
            return status
        status["phase"] = "Running"
        set_condition(status, "QuotaReserved", "True", "Admitted", "")
        set_condition(status, "ResourcesDeployed", "True", "Deployed", "")
        ready = elapsed >= self.args.pod_start_delay
        set_condition(status, "PodsReady", "True" if ready else "False",
                      "PodsReady" if ready else "InsufficientPodsReady", "")
        return status


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--port", type=int, default=0)
    parser.add_argument("--port-file", help="write the bound port here once serving")
    parser.add_argument("--token", help="require this bearer token")
    parser.add_argument("--tls-cert", help="serve HTTPS with this PEM certificate chain")
    parser.add_argument("--tls-key", help="... and this PEM key")
    parser.add_argument("--job-duration", type=float, default=2.0,
                        help="seconds an unsuspended job runs before it completes")
    parser.add_argument("--pod-start-delay", type=float, default=0.2,
                        help="seconds from start until the pods count as ready")
    parser.add_argument("--tick", type=float, default=0.05)
    parser.add_argument("--history", type=int, default=10000,
                        help="watch events kept; older resourceVersions get 410")
    parser.add_argument("--max-watch-seconds", type=float, default=300.0)
    parser.add_argument("--bookmark-seconds", type=float, default=2.0)
    parser.add_argument("--namespaces", default="default,kube-system",
                        help="namespaces that exist at start")
    parser.add_argument("--omit-crds", default="",
                        help="plurals of CRD kinds not to serve (their CRD is not installed)")
    parser.add_argument("--verbose", action="store_true")
    args = parser.parse_args()
    for plural in [p for p in args.omit_crds.split(",") if p]:
        if not any(p == plural and g in CRD_GROUPS for g, _, p in RESOURCES):
            parser.error("--omit-crds: %s is not a CRD kind" % plural)
        OMITTED.add(plural)

    store = Store(args.history)
    api = Api(store, args)
    for ns in [n for n in args.namespaces.split(",") if n]:
        api.create("", "v1", "namespaces", "", {"metadata": {"name": ns}})

    server = Server(("127.0.0.1", args.port), Handler)
    server.store = store
    server.api = api
    server.args = args
    if args.tls_cert:
        context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        context.load_cert_chain(args.tls_cert, args.tls_key)
        server.socket = context.wrap_socket(server.socket, server_side=True)
    Simulator(store, args).start()
    port = server.server_address[1]
    if args.port_file:
        tmp = "%s.tmp.%d" % (args.port_file, os.getpid())
        with open(tmp, "w") as f:
            f.write("%d\n" % port)
        os.rename(tmp, args.port_file)
    sys.stderr.write("fake apiserver serving on 127.0.0.1:%d\n" % port)
    sys.stderr.flush()
    try:
        server.serve_forever(poll_interval=0.2)
    except KeyboardInterrupt:
        pass
    finally:
        store.stopping = True
        with store.cond:
            store.cond.notify_all()


if __name__ == "__main__":
    main()
