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


class ManifestCheck(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.docs = render(os.path.join(DEPLOY, "kubernetes"))

    def test_every_pod_meets_restricted(self):
        pods = workloads(self.docs)
        self.assertEqual(sorted(p["metadata"]["name"] for p in pods),
                         ["tollgate-kube", "tollgated"])
        for w in pods:
            spec = w["spec"]["template"]["spec"]
            name = w["metadata"]["name"]
            pod_sc = spec.get("securityContext", {})
            self.assertTrue(pod_sc.get("runAsNonRoot"), name)
            self.assertNotEqual(pod_sc.get("runAsUser"), 0, name)
            self.assertFalse(spec.get("hostNetwork") or spec.get("hostPID") or spec.get("hostIPC"))
            for c in spec.get("initContainers", []) + spec["containers"]:
                sc = c.get("securityContext", {})
                where = f"{name}/{c['name']}"
                seccomp = sc.get("seccompProfile") or pod_sc.get("seccompProfile") or {}
                self.assertIn(seccomp.get("type"), ("RuntimeDefault", "Localhost"), where)
                self.assertIs(sc.get("allowPrivilegeEscalation"), False, where)
                self.assertEqual(sc.get("capabilities", {}).get("drop"), ["ALL"], where)
                self.assertFalse(sc.get("capabilities", {}).get("add"), where)
                self.assertTrue(sc.get("readOnlyRootFilesystem"), where)
                self.assertFalse(sc.get("privileged"), where)

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


if __name__ == "__main__":
    if shutil.which(KUBECTL) is None:
        print(f"skipped: {KUBECTL} not found (Debian: kubernetes-client)")
        sys.exit(77)
    unittest.main(argv=sys.argv[:1])
