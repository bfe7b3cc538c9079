#!/usr/bin/env python3
"""Proves the fake API server speaks Kubernetes' protocol: real clients drive it.

kubectl (when installed) creates, gets, patches (merge, JSON with a failing `test`, strategic)
and watches with a timeout; the Python kubernetes client (python3-kubernetes, when installed)
lists, watches from a resourceVersion, patches with a stale resourceVersion (409), patches
without one (never a conflict) and patches the status subresource. Each client's tests are
skipped, not failed, when it is missing.

Run: python3 protocol_test.py --server-script fake_apiserver.py
"""

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import threading
import time
import unittest
import warnings
import urllib.request

SERVER_SCRIPT = None

JOB = {
    "apiVersion": "batch/v1",
    "kind": "Job",
    "metadata": {"name": "hello", "labels": {"kueue.x-k8s.io/queue-name": "q"}},
    "spec": {
        "suspend": True,
        "template": {"spec": {"containers": [
            {"name": "c", "image": "busybox",
             "resources": {"requests": {"cpu": "1"}}}]}},
    },
}


def wait_for(condition, timeout=20.0, interval=0.05):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if condition():
            return True
        time.sleep(interval)
    return condition()


class FakeServer:
    def __init__(self, extra_args=()):
        self.dir = tempfile.mkdtemp(prefix="fake-apiserver-")
        port_file = os.path.join(self.dir, "port")
        self.log = open(os.path.join(self.dir, "log"), "w")
        self.proc = subprocess.Popen(
            [sys.executable, SERVER_SCRIPT, "--port-file", port_file, "--job-duration", "1",
             "--namespaces", "default,team-a", *extra_args],
            stdout=self.log, stderr=subprocess.STDOUT)
        if not wait_for(lambda: os.path.exists(port_file), timeout=30):
            raise RuntimeError("fake apiserver did not start")
        with open(port_file) as f:
            self.port = int(f.read().strip())
        self.url = "http://127.0.0.1:%d" % self.port

    def stop(self):
        self.proc.terminate()
        try:
            self.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        self.log.close()
        shutil.rmtree(self.dir, ignore_errors=True)


@unittest.skipUnless(shutil.which("kubectl"), "kubectl is not installed")
class KubectlTest(unittest.TestCase):
    def setUp(self):
        self.server = FakeServer()
        self.kubeconfig = os.path.join(self.server.dir, "kubeconfig")
        with open(self.kubeconfig, "w") as f:
            f.write("apiVersion: v1\nkind: Config\ncurrent-context: fake\n"
                    "contexts: [{name: fake, context: {cluster: fake, namespace: team-a}}]\n"
                    "clusters: [{name: fake, cluster: {server: \"%s\"}}]\n" % self.server.url)

    def tearDown(self):
        self.server.stop()

    def kubectl(self, *args, check=True, timeout=60, stdin=None):
        env = dict(os.environ, KUBECONFIG=self.kubeconfig, HOME=self.server.dir)
        result = subprocess.run(["kubectl", *args], input=stdin, capture_output=True, text=True,
                                env=env, timeout=timeout)
        if check and result.returncode != 0:
            self.fail("kubectl %s failed (%d): %s" % (" ".join(args), result.returncode,
                                                       result.stderr))
        return result

    def test_create_get_patch_watch(self):
        # The double serves no OpenAPI document, so client-side validation is off.
        self.kubectl("create", "--validate=false", "-f", "-", stdin=json.dumps(JOB))
        job = json.loads(self.kubectl("get", "job", "hello", "-o", "json").stdout)
        self.assertEqual(job["metadata"]["namespace"], "team-a")
        self.assertTrue(job["spec"]["suspend"])
        self.assertEqual(job["spec"]["completions"], 1)  # defaulted, as the real server does

        names = self.kubectl("get", "jobs", "-o", "name").stdout.split()
        self.assertEqual(names, ["job.batch/hello"])
        again = self.kubectl("create", "--validate=false", "-f", "-", stdin=json.dumps(JOB),
                             check=False)
        self.assertNotEqual(again.returncode, 0)
        self.assertIn("AlreadyExists", again.stderr + again.stdout)

        failed = self.kubectl("patch", "job", "hello", "--type=json", "-p",
                              '[{"op": "test", "path": "/spec/suspend", "value": false}]',
                              check=False)
        self.assertNotEqual(failed.returncode, 0)
        self.kubectl("patch", "job", "hello", "-p", '{"metadata": {"labels": {"a": "b"}}}')
        stale = self.kubectl("patch", "job", "hello", "--type=merge", "-p",
                             '{"metadata": {"resourceVersion": "1"}, "spec": {"suspend": false}}',
                             check=False)
        self.assertNotEqual(stale.returncode, 0)
        self.assertIn("the object has been modified", stale.stderr)

        # Watch while the job is unsuspended: the stand-in Job controller runs and completes it.
        watcher = subprocess.Popen(
            ["kubectl", "get", "job", "hello", "--watch", "-o", "json",
             "--request-timeout=15s"],
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
            env=dict(os.environ, KUBECONFIG=self.kubeconfig, HOME=self.server.dir))
        try:
            self.kubectl("patch", "job", "hello", "--type=merge", "-p",
                         '{"spec": {"suspend": false}}')
            self.assertTrue(wait_for(lambda: any(
                c.get("type") == "Complete" for c in json.loads(self.kubectl(
                    "get", "job", "hello", "-o", "json").stdout)["status"].get(
                        "conditions", [])), timeout=30))
        finally:
            try:
                out, _ = watcher.communicate(timeout=30)
            except subprocess.TimeoutExpired:
                watcher.kill()
                out, _ = watcher.communicate()
        decoder = json.JSONDecoder()
        seen, index = [], 0
        out = out.strip()
        while index < len(out):
            obj, end = decoder.raw_decode(out, index)
            seen.append(obj)
            index = end
            while index < len(out) and out[index].isspace():
                index += 1
        self.assertTrue(any(o["status"].get("active") for o in seen), seen)
        self.assertTrue(any(o["status"].get("succeeded") for o in seen), seen)

        self.kubectl("delete", "job", "hello")
        gone = self.kubectl("get", "job", "hello", check=False)
        self.assertNotEqual(gone.returncode, 0)
        self.assertIn("NotFound", gone.stderr)

    def test_custom_resources_and_discovery(self):
        resources = self.kubectl("api-resources", "-o", "name").stdout.split()
        for name in ("jobs.batch", "rayjobs.ray.io", "pytorchjobs.kubeflow.org", "namespaces"):
            self.assertIn(name, resources)
        rayjob = {"apiVersion": "ray.io/v1", "kind": "RayJob",
                  "metadata": {"name": "r"}, "spec": {"suspend": True}}
        self.kubectl("create", "--validate=false", "-f", "-", stdin=json.dumps(rayjob))
        # CRDs do not take strategic merge patches, as on a real server.
        strategic = self.kubectl("patch", "rayjob", "r", "-p", '{"spec": {"suspend": false}}',
                                 check=False)
        self.assertNotEqual(strategic.returncode, 0)
        self.kubectl("patch", "rayjob", "r", "--type=merge", "-p", '{"spec": {"suspend": false}}')
        self.assertTrue(wait_for(lambda: json.loads(self.kubectl(
            "get", "rayjob", "r", "-o", "json").stdout).get("status", {}).get(
                "jobDeploymentStatus") == "Complete", timeout=30))


try:
    import kubernetes  # noqa: F401
    HAVE_PYTHON_CLIENT = True
except ImportError:
    HAVE_PYTHON_CLIENT = False


@unittest.skipUnless(HAVE_PYTHON_CLIENT, "python3-kubernetes is not installed")
class PythonClientTest(unittest.TestCase):
    def setUp(self):
        from kubernetes import client
        # The client leaves pooled sockets for the garbage collector; that is not our bug.
        warnings.simplefilter("ignore", ResourceWarning)
        self.server = FakeServer(["--token", "py-token"])
        config = client.Configuration()
        config.host = self.server.url
        config.api_key = {"authorization": "py-token"}
        config.api_key_prefix = {"authorization": "Bearer"}
        self.api_client = client.ApiClient(config)
        self.batch = client.BatchV1Api(self.api_client)
        self.custom = client.CustomObjectsApi(self.api_client)
        self.core = client.CoreV1Api(self.api_client)

    def tearDown(self):
        self.api_client.close()
        self.server.stop()

    def test_list_watch_conflict_and_status(self):
        from kubernetes import watch
        from kubernetes.client.rest import ApiException
        self.batch.create_namespaced_job("team-a", JOB)
        jobs = self.batch.list_namespaced_job("team-a")
        self.assertEqual([j.metadata.name for j in jobs.items], ["hello"])
        rv = jobs.metadata.resource_version

        events = []

        def follow():
            w = watch.Watch()
            for event in w.stream(self.batch.list_namespaced_job, "team-a",
                                  resource_version=rv, timeout_seconds=20):
                events.append((event["type"], event["object"].status.active))
                if event["object"].status.succeeded:
                    w.stop()

        thread = threading.Thread(target=follow)
        thread.start()
        # A resourceVersion in a patch is a precondition: a stale one is refused with 409.
        with self.assertRaises(ApiException) as conflict:
            self.batch.patch_namespaced_job(
                "hello", "team-a",
                {"metadata": {"resourceVersion": "1"}, "spec": {"suspend": False}})
        self.assertEqual(conflict.exception.status, 409)
        # Without one, a merge patch applies to whatever is stored and never conflicts, as on
        # Kubernetes. (Sending the resourceVersion just read would race the stand-in Job
        # controller, which may write the Job's status in between: a real 409, not a bug.)
        self.batch.patch_namespaced_job("hello", "team-a", {"spec": {"suspend": False}})
        thread.join(timeout=30)
        self.assertFalse(thread.is_alive())
        self.assertIn(("MODIFIED", 1), events)

        # The status subresource changes status only.
        self.batch.patch_namespaced_job_status(
            "hello", "team-a", {"status": {"failed": 3}, "spec": {"parallelism": 9}})
        job = self.batch.read_namespaced_job("hello", "team-a")
        self.assertEqual(job.status.failed, 3)
        self.assertEqual(job.spec.parallelism, 1)

        with self.assertRaises(ApiException) as missing:
            self.batch.read_namespaced_job("nope", "team-a")
        self.assertEqual(missing.exception.status, 404)

    def test_custom_objects_and_expired_watch(self):
        from kubernetes import watch
        from kubernetes.client.rest import ApiException
        body = {"apiVersion": "kubeflow.org/v1", "kind": "PyTorchJob",
                "metadata": {"name": "ft"},
                "spec": {"runPolicy": {"suspend": True}, "pytorchReplicaSpecs": {
                    "Worker": {"replicas": 2, "template": {"spec": {"containers": []}}}}}}
        self.custom.create_namespaced_custom_object("kubeflow.org", "v1", "team-a",
                                                    "pytorchjobs", body)
        listed = self.custom.list_namespaced_custom_object("kubeflow.org", "v1", "team-a",
                                                           "pytorchjobs")
        old_rv = listed["metadata"]["resourceVersion"]
        self.custom.patch_namespaced_custom_object(
            "kubeflow.org", "v1", "team-a", "pytorchjobs", "ft",
            {"metadata": {"labels": {"x": "y"}}})
        urllib.request.urlopen(urllib.request.Request(
            self.server.url + "/fake/compact", data=b"", method="POST"), timeout=10).close()
        # An expired resourceVersion ends the watch with 410 Gone.
        with self.assertRaises(ApiException) as gone:
            for _ in watch.Watch().stream(self.custom.list_namespaced_custom_object,
                                          "kubeflow.org", "v1", "team-a", "pytorchjobs",
                                          resource_version=old_rv, timeout_seconds=5):
                pass
        self.assertEqual(gone.exception.status, 410)
        with self.assertRaises(ApiException) as unauthorized:
            from kubernetes import client
            config = client.Configuration()
            config.host = self.server.url
            with client.ApiClient(config) as anonymous:
                client.CoreV1Api(anonymous).list_namespace()
        self.assertEqual(unauthorized.exception.status, 401)


def main():
    global SERVER_SCRIPT
    parser = argparse.ArgumentParser()
    parser.add_argument("--server-script", required=True)
    args, rest = parser.parse_known_args()
    SERVER_SCRIPT = os.path.abspath(args.server_script)
    unittest.main(argv=[sys.argv[0], "-v", *rest])


if __name__ == "__main__":
    main()
