#!/usr/bin/python3
"""Renders deploy/kubernetes with `kubectl kustomize` (offline) and checks every pod against
the "restricted" Pod Security Standard's rules, the probes, and that an overlay can set the
image with kubectl alone.

usage: manifest_check.py KUBECTL DEPLOY_DIR
"""

import os
import shutil
import subprocess
import sys
import tempfile
import unittest

import yaml

KUBECTL = sys.argv[1] if len(sys.argv) > 1 else "kubectl"
DEPLOY = sys.argv[2] if len(sys.argv) > 2 else "deploy"


def render(path):
    out = subprocess.run(
        [KUBECTL, "kustomize", path], check=True, capture_output=True, text=True, timeout=120
    ).stdout
    return [d for d in yaml.safe_load_all(out) if d]


def workloads(docs):
    return [d for d in docs if d["kind"] in ("Deployment", "StatefulSet", "DaemonSet", "Job")]


def check_restricted(test, pods):
    for w in pods:
        spec = w["spec"]["template"]["spec"]
        name = w["metadata"]["name"]
        pod_sc = spec.get("securityContext", {})
        test.assertTrue(pod_sc.get("runAsNonRoot"), name)
        test.assertNotEqual(pod_sc.get("runAsUser"), 0, name)
        test.assertFalse(spec.get("hostNetwork") or spec.get("hostPID") or spec.get("hostIPC"))
        for c in spec.get("initContainers", []) + spec["containers"]:
            sc = c.get("securityContext", {})
            where = f"{name}/{c['name']}"
            seccomp = sc.get("seccompProfile") or pod_sc.get("seccompProfile") or {}
            test.assertIn(seccomp.get("type"), ("RuntimeDefault", "Localhost"), where)
            test.assertIs(sc.get("allowPrivilegeEscalation"), False, where)
            test.assertEqual(sc.get("capabilities", {}).get("drop"), ["ALL"], where)
            test.assertFalse(sc.get("capabilities", {}).get("add"), where)
            test.assertTrue(sc.get("readOnlyRootFilesystem"), where)
            test.assertFalse(sc.get("privileged"), where)


class ManifestCheck(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.docs = render(os.path.join(DEPLOY, "kubernetes"))

    def test_every_pod_meets_restricted(self):
        pods = workloads(self.docs)
        self.assertEqual(sorted(p["metadata"]["name"] for p in pods),
                         ["tollgate-kube", "tollgated"])
        check_restricted(self, pods)

    def test_containers_have_probes(self):
        for w in workloads(self.docs):
            for c in w["spec"]["template"]["spec"]["containers"]:
                self.assertIn("livenessProbe", c, c["name"])
                self.assertIn("readinessProbe", c, c["name"])

    def test_namespace_enforces_restricted(self):
        ns = [d for d in self.docs if d["kind"] == "Namespace"][0]
        self.assertEqual(ns["metadata"]["labels"]["pod-security.kubernetes.io/enforce"],
                         "restricted")

    def test_an_overlay_sets_the_image_with_kubectl_alone(self):
        with tempfile.TemporaryDirectory() as overlay:
            base = os.path.relpath(os.path.join(DEPLOY, "kubernetes"), overlay)
            with open(os.path.join(overlay, "kustomization.yaml"), "w") as f:
                f.write(f"resources:\n- {base}\nimages:\n- name: tollgate\n"
                        f"  newName: registry.example.com/tollgate\n  newTag: v1.2.3\n")
            for w in workloads(render(overlay)):
                for c in w["spec"]["template"]["spec"]["containers"]:
                    self.assertEqual(c["image"], "registry.example.com/tollgate:v1.2.3")


class HaManifestCheck(unittest.TestCase):
    """deploy/kubernetes-ha: three tollgated replicas on a three-member etcd (docs/ha.md)."""

    @classmethod
    def setUpClass(cls):
        cls.docs = render(os.path.join(DEPLOY, "kubernetes-ha"))
        cls.by_name = {w["metadata"]["name"]: w for w in workloads(cls.docs)}

    def test_every_pod_meets_restricted_and_has_probes(self):
        self.assertEqual(sorted(self.by_name), ["etcd", "tollgate-kube", "tollgated"])
        check_restricted(self, self.by_name.values())
        for w in self.by_name.values():
            for c in w["spec"]["template"]["spec"]["containers"]:
                self.assertIn("livenessProbe", c, c["name"])
                self.assertIn("readinessProbe", c, c["name"])

    def test_tollgated_replicas_run_on_etcd_and_advertise_their_pod_name(self):
        tollgated = self.by_name["tollgated"]
        self.assertEqual(tollgated["spec"]["replicas"], 3)
        args = tollgated["spec"]["template"]["spec"]["containers"][0]["args"]
        self.assertIn("--store=etcd", args)
        self.assertFalse([a for a in args if a.startswith("--data-dir")], args)
        # Flags tollgated refuses with --store=etcd must not be there.
        self.assertFalse([a for a in args if a.startswith("--metrics-listen")], args)
        endpoints = [a for a in args if a.startswith("--etcd-endpoints=")]
        self.assertEqual(len(endpoints), 1, args)
        self.assertEqual(endpoints[0].split("=", 1)[1].split(","),
                         [f"etcd-{i}.etcd.tollgate-system.svc:2379" for i in range(3)])
        service = tollgated["spec"]["serviceName"]
        peers = [d for d in self.docs if d["kind"] == "Service" and d["metadata"]["name"] == service]
        self.assertEqual(len(peers), 1)
        self.assertEqual(peers[0]["spec"].get("clusterIP"), "None")  # per-pod DNS names
        self.assertIn(f"--advertise=$(POD_NAME).{service}.tollgate-system.svc:50051", args)

    def test_etcd_is_three_members_that_name_each_other(self):
        etcd = self.by_name["etcd"]
        self.assertEqual(etcd["spec"]["replicas"], 3)
        args = etcd["spec"]["template"]["spec"]["containers"][0]["args"]
        cluster = [a for a in args if a.startswith("--initial-cluster=")][0]
        members = cluster.split("=", 1)[1].split(",")
        self.assertEqual([m.split("=")[0] for m in members], ["etcd-0", "etcd-1", "etcd-2"])
        self.assertTrue(etcd["spec"]["volumeClaimTemplates"], "etcd needs persistent volumes")

    def test_adapter_lists_every_replica(self):
        args = self.by_name["tollgate-kube"]["spec"]["template"]["spec"]["containers"][0]["args"]
        target = [a for a in args if a.startswith("--tollgate=")][0].split("=", 1)[1]
        self.assertEqual(len(target.split(",")), 3)

    def test_only_tollgated_and_members_reach_etcd(self):
        policy = [d for d in self.docs
                  if d["kind"] == "NetworkPolicy" and d["metadata"]["name"] == "etcd-ingress"][0]
        sources = [p["podSelector"]["matchLabels"]["app.kubernetes.io/name"]
                   for rule in policy["spec"]["ingress"] for p in rule["from"]]
        self.assertEqual(sorted(sources), ["etcd", "tollgated"])


if __name__ == "__main__":
    if shutil.which(KUBECTL) is None:
        print(f"skipped: {KUBECTL} not found (Debian: kubernetes-client)")
        sys.exit(77)
    unittest.main(argv=sys.argv[:1])
