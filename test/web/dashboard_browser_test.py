#!/usr/bin/env python3
"""The dashboard in a real browser: Debian's headless Chromium, driven by chromedriver through
Selenium, against a real tollgated on loopback. Checks the numbers shown equal the gRPC API's
(through the `tollgate` CLI), that a new submission appears without a reload, that live updates
survive a tollgated restart, and saves screenshots under --out.

Every wait is a condition with a deadline (WebDriverWait or wait_for), never a fixed sleep."""

import argparse
import html
import http.server
import os
import re
import ssl
import threading
import urllib.request
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import unittest

from selenium import webdriver
from selenium.common.exceptions import StaleElementReferenceException
from selenium.webdriver.chrome.service import Service
from selenium.webdriver.common.by import By
from selenium.webdriver.support.ui import WebDriverWait

ARGS = None
DEADLINE = 30


def wait_for(condition, timeout=DEADLINE, what="condition"):
    """Polls `condition` until it returns a truthy value or `timeout` passes."""
    deadline = time.monotonic() + timeout
    last = None
    while True:
        try:
            last = condition()
            if last:
                return last
        except Exception as error:  # The page may be mid-render; try again until the deadline.
            last = error
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what} (last: {last!r})")
        time.sleep(0.05)


class Tollgated:
    """tollgated on loopback with the EvalHub example, its ports read from port files."""

    def __init__(self, scratch, data_dir, metrics_port=0, extra_args=(), cli_args=(),
                 scheme="http"):
        self.scratch = scratch
        self.cli_args = list(cli_args)
        port_file = os.path.join(scratch, "grpc_port")
        metrics_file = os.path.join(scratch, "metrics_port")
        for f in (port_file, metrics_file):
            if os.path.exists(f):
                os.remove(f)
        evalhub = os.path.join(ARGS.source, "deploy", "evalhub")
        manifests = ",".join(os.path.join(evalhub, f) for f in ("queues.yaml", "priorities.yaml"))
        self.log = open(os.path.join(scratch, "tollgated.log"), "ab")
        self.process = subprocess.Popen(
            [ARGS.tollgated, "--listen=127.0.0.1:0", f"--data-dir={data_dir}",
             f"--port-file={port_file}", f"--metrics-listen=127.0.0.1:{metrics_port}",
             f"--metrics-port-file={metrics_file}", f"--manifests={manifests}", *extra_args],
            stdout=self.log, stderr=self.log)
        def read(path):
            if not os.path.exists(path):
                return ""
            with open(path) as f:
                return f.read().strip()

        wait_for(lambda: read(port_file) and read(metrics_file) or self.process.poll() is not None,
                 what="tollgated's port files")
        if self.process.poll() is not None:
            with open(self.log.name) as f:
                raise AssertionError("tollgated exited:\n" + f.read())
        self.grpc = f"127.0.0.1:{read(port_file)}"
        self.metrics_port = int(read(metrics_file))
        self.url = f"{scheme}://127.0.0.1:{self.metrics_port}/"

    def cli(self, *args, stdin=None):
        result = subprocess.run([ARGS.tollgate, f"--server={self.grpc}", *self.cli_args, *args],
                                input=stdin,
                                capture_output=True, text=True, timeout=DEADLINE)
        if result.returncode != 0:
            raise AssertionError(f"tollgate {' '.join(args)}: {result.stderr}")
        return result.stdout

    def table(self, *args):
        """`tollgate get ...` as a list of dicts keyed by column header."""
        lines = [l for l in self.cli("get", *args).splitlines() if l.strip()]
        header = lines[0].split()
        return [dict(zip(header, line.split())) for line in lines[1:]]

    def stop(self):
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
            self.process.wait(timeout=DEADLINE)
        self.log.close()


def workload_yaml(namespace, name, cpu, priority_class="routine"):
    return f"""apiVersion: kueue.x-k8s.io/v1beta1
kind: Workload
metadata:
  name: {name}
  namespace: {namespace}
spec:
  queueName: eval-queue
  priorityClassName: {priority_class}
  podSets:
  - name: main
    count: 1
    template:
      spec:
        containers:
        - name: eval
          resources:
            requests:
              cpu: "{cpu}"
              memory: 8Gi
"""


def new_driver(scratch, *extra_flags):
    options = webdriver.ChromeOptions()
    options.binary_location = ARGS.chromium
    for flag in ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
                 "--window-size=1440,1000", "--hide-scrollbars", "--no-first-run",
                 f"--user-data-dir={os.path.join(scratch, 'chromium')}", *extra_flags):
        options.add_argument(flag)
    driver = webdriver.Chrome(service=Service(ARGS.chromedriver), options=options)
    driver.set_page_load_timeout(DEADLINE)
    return driver


class DashboardBrowserTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.scratch = tempfile.mkdtemp(prefix="tollgate_dashboard_")
        cls.data_dir = os.path.join(cls.scratch, "data")
        os.makedirs(ARGS.out, exist_ok=True)
        cls.server = Tollgated(cls.scratch, cls.data_dir)
        workloads = os.path.join(ARGS.source, "deploy", "evalhub", "workloads.yaml")
        cls.server.cli("submit", "-f", workloads)
        cls.driver = new_driver(cls.scratch)

    @classmethod
    def tearDownClass(cls):
        cls.driver.quit()
        cls.server.stop()
        shutil.rmtree(cls.scratch, ignore_errors=True)

    def text(self, testid):
        # Live updates re-render the page: an element found just before a re-render is stale by
        # the time its text is read, so it is found again in the new page.
        for _ in range(10):
            try:
                return self.driver.find_element(
                    By.CSS_SELECTOR, f'[data-testid="{testid}"]').text.strip()
            except StaleElementReferenceException:
                continue
        raise AssertionError(f"{testid} kept being re-rendered while it was read")

    def exists(self, testid):
        return len(self.driver.find_elements(By.CSS_SELECTOR, f'[data-testid="{testid}"]')) > 0

    def live(self):
        return "on" in self.driver.find_element(By.ID, "live").get_attribute("class").split()

    def screenshot(self, name):
        path = os.path.join(ARGS.out, f"{name}.png")
        self.driver.save_screenshot(path)
        return path

    def test_1_queue_numbers_equal_the_api(self):
        self.driver.get(self.server.url)
        WebDriverWait(self.driver, DEADLINE).until(lambda d: self.live() and self.exists("cq-table"))

        def agree():
            # Admission may still be settling: both views are read again until they agree.
            for row in self.server.table("clusterqueues"):
                name = row["NAME"]
                if self.text(f"cq-pending-{name}") != row["PENDING"]:
                    return False
                if self.text(f"cq-admitted-{name}") != row["ADMITTED"]:
                    return False
            for row in self.server.table("localqueues", "-A"):
                key = f'{row["NAMESPACE"]}-{row["NAME"]}'
                if self.text(f"lq-pending-{key}") != row["PENDING"]:
                    return False
                if self.text(f"lq-admitted-{key}") != row["ADMITTED"]:
                    return False
            return True

        wait_for(agree, what="dashboard numbers to equal `tollgate get`")
        total = sum(int(r["ADMITTED"]) for r in self.server.table("clusterqueues"))
        self.assertEqual(self.text("total-admitted"), str(total))
        self.assertTrue(self.exists("node-cohort-evalhub"))
        self.screenshot("overview")
        # Just the content, for docs/dashboard.png.
        self.driver.find_element(By.TAG_NAME, "main").screenshot(
            os.path.join(ARGS.out, "overview-content.png"))

    def test_2_new_submission_appears_live(self):
        self.driver.get(self.server.url + "#/workloads")
        WebDriverWait(self.driver, DEADLINE).until(lambda d: self.live() and self.exists("workload-table"))
        # A marker that a page reload would lose.
        self.driver.execute_script("window.__noReload = true")
        self.server.cli("submit", "-f", "-", stdin=workload_yaml("team-b", "live-probe", 2))
        WebDriverWait(self.driver, DEADLINE).until(lambda d: self.exists("wl-row-team-b-live-probe"))
        self.assertTrue(self.driver.execute_script("return window.__noReload === true"))
        # Filters: by state and by search.
        self.driver.get(self.server.url + "#/workloads?state=PENDING")
        WebDriverWait(self.driver, DEADLINE).until(lambda d: self.exists("workload-table"))
        pending_api = [r for r in self.server.table("workloads", "-A") if r["STATE"] == "Pending"]
        wait_for(lambda: self.text("workload-count").startswith(f"{len(pending_api)} of"),
                 what="state filter count")
        self.screenshot("workloads")

    def test_3_workload_page_explains_why_pending(self):
        pending = [r for r in self.server.table("workloads", "-A") if r["STATE"] == "Pending"]
        self.assertTrue(pending, "the EvalHub example leaves jobs pending")
        ns, name = pending[0]["NAMESPACE"], pending[0]["NAME"]
        self.driver.get(self.server.url + f"#/workloads/{ns}/{name}")
        WebDriverWait(self.driver, DEADLINE).until(lambda d: self.exists("why-pending"))
        described = self.server.cli("describe", "workload", name, "-n", ns)
        message = self.text("pending-message")
        self.assertTrue(message and message in " ".join(described.split()),
                        f"{message!r} not in tollgate describe:\n{described}")
        self.assertIn("Position", self.text("position"))
        self.assertTrue(self.exists("quota-holders"))
        self.screenshot("workload")

    def test_4_live_updates_survive_a_restart(self):
        cls = type(self)
        self.driver.get(self.server.url + "#/workloads")
        WebDriverWait(self.driver, DEADLINE).until(lambda d: self.live() and self.exists("workload-table"))
        port = cls.server.metrics_port
        cls.server.stop()
        WebDriverWait(self.driver, DEADLINE).until(lambda d: not self.live())
        cls.server = Tollgated(cls.scratch, cls.data_dir, metrics_port=port)
        WebDriverWait(self.driver, DEADLINE).until(lambda d: self.live())
        self.server.cli("submit", "-f", "-", stdin=workload_yaml("team-a", "after-restart", 1))
        WebDriverWait(self.driver, DEADLINE).until(lambda d: self.exists("wl-row-team-a-after-restart"))

    def test_5_timeline_lists_admissions(self):
        self.driver.get(self.server.url + "#/timeline")
        WebDriverWait(self.driver, DEADLINE).until(lambda d: self.exists("timeline"))
        wait_for(lambda: "Admitted" in self.text("timeline") or "QuotaReserved" in self.text("timeline"),
                 what="admissions on the timeline")
        self.screenshot("timeline")

    def test_6_deleted_cohort_and_local_queue(self):
        # The example's cohort has a Cohort object now; deleting it leaves the implicit cohort
        # its ClusterQueues name (Kueue's rule: no finalizer on Cohorts), marked as such.
        self.server.cli("apply", "-f", "-", stdin="""apiVersion: kueue.x-k8s.io/v1beta1
kind: Cohort
metadata:
  name: evalhub
""")
        self.driver.get(self.server.url)
        WebDriverWait(self.driver, DEADLINE).until(
            lambda d: self.live() and self.exists("node-cohort-evalhub"))
        self.assertFalse(self.exists("implicit-evalhub"))
        self.server.cli("delete", "cohort", "evalhub")
        # The live stream carries workload changes, not configuration: a reload shows the delete.
        self.driver.refresh()
        WebDriverWait(self.driver, DEADLINE).until(
            lambda d: self.live() and self.exists("implicit-evalhub"))
        # A deleted LocalQueue: its pending workload says why it waits (Kueue's reason).
        self.server.cli("submit", "-f", "-", stdin=workload_yaml("team-b", "too-big", 4096))
        self.server.cli("delete", "localqueue", "eval-queue", "-n", "team-b")
        self.driver.get(self.server.url + "#/workloads/team-b/too-big")
        WebDriverWait(self.driver, DEADLINE).until(lambda d: self.exists("why-pending"))
        wait_for(lambda: "LocalQueue eval-queue doesn't exist" in self.text("pending-message"),
                 what="the deleted LocalQueue's reason on the workload page")
        wait_for(lambda: "Not queued" in self.text("position"),
                 what="the workload page's position saying it is not queued")
        self.screenshot("deleted-local-queue")


    def test_7_topology_tree_shows_placements(self):
        # The node inventory, fed as a Slurm front-end or tollgate-kube would: through gRPC,
        # here with the Python stubs (clients/python). Racks r1 (h1, h2) and r2 (h3).
        import grpc
        from tollgate.v1 import inventory_pb2, inventory_pb2_grpc
        self.server.cli("apply", "-f", "-", stdin="""apiVersion: kueue.x-k8s.io/v1beta1
kind: Topology
metadata: {name: racks}
spec:
  levels: [{nodeLabel: cloud.com/rack}, {nodeLabel: kubernetes.io/hostname}]
---
apiVersion: kueue.x-k8s.io/v1beta1
kind: ResourceFlavor
metadata: {name: tas}
spec: {nodeLabels: {pool: tas}, topologyName: racks}
---
apiVersion: kueue.x-k8s.io/v1beta1
kind: ClusterQueue
metadata: {name: tas-cq}
spec:
  namespaceSelector: {}
  resourceGroups:
  - coveredResources: [cpu]
    flavors: [{name: tas, resources: [{name: cpu, nominalQuota: 100}]}]
---
apiVersion: kueue.x-k8s.io/v1beta1
kind: LocalQueue
metadata: {name: tas-queue, namespace: team-a}
spec: {clusterQueue: tas-cq}
""")
        request = inventory_pb2.UpsertNodesRequest()
        for name, rack in (("h1", "r1"), ("h2", "r1"), ("h3", "r2")):
            node = request.nodes.add()
            node.metadata.name = name
            node.metadata.labels.update(
                {"pool": "tas", "cloud.com/rack": rack, "kubernetes.io/hostname": name})
            node.status.allocatable.update({"cpu": "4", "pods": "110"})
        with grpc.insecure_channel(self.server.grpc) as channel:
            inventory_pb2_grpc.InventoryServiceStub(channel).UpsertNodes(request, timeout=DEADLINE)
        # Two 3-CPU pods that must share a rack: only r1 has two nodes.
        self.server.cli("submit", "-f", "-", stdin="""apiVersion: kueue.x-k8s.io/v1beta1
kind: Workload
metadata: {name: rack-job, namespace: team-a}
spec:
  queueName: tas-queue
  podSets:
  - name: main
    count: 2
    topologyRequest: {required: cloud.com/rack}
    template:
      spec:
        containers:
        - name: train
          resources: {requests: {cpu: "3"}}
""")
        self.driver.get(self.server.url + "#/topology")
        WebDriverWait(self.driver, DEADLINE).until(lambda d: self.exists("topology-tas"))
        wait_for(lambda: self.text("domain-usage-tas-r1-cpu") == "6 / 8 · 2 free",
                 what="rack r1 to show the placed job")
        self.assertEqual(self.text("domain-usage-tas-r1-h1-cpu"), "3 / 4 · 1 free")
        self.assertEqual(self.text("domain-usage-tas-r2-cpu"), "0 / 4 · 4 free")
        # The same numbers as the CLI's view of the tree.
        usage = self.server.cli("get", "topology", "racks", "-o", "usage")
        self.assertRegex(usage, r"r1\s.*6")
        self.screenshot("topology")

    def test_8_multikueue_workloads_show_their_worker_cluster(self):
        # A MultiKueue manager's workload: the controller's writes (docs/multicluster.md) made
        # here through the Python stubs, as tollgate-multikueue makes them over gRPC.
        import grpc
        from tollgate.v1 import objects_pb2, service_pb2, service_pb2_grpc
        self.server.cli("apply", "-f", "-", stdin="""apiVersion: kueue.x-k8s.io/v1beta1
kind: AdmissionCheck
metadata: {name: mk}
spec: {controllerName: kueue.x-k8s.io/multikueue}
---
apiVersion: kueue.x-k8s.io/v1beta1
kind: ClusterQueue
metadata: {name: mk-cq}
spec:
  namespaceSelector: {}
  admissionChecks: [mk]
  resourceGroups:
  - coveredResources: [cpu, memory]
    flavors: [{name: default-flavor, resources: [{name: cpu, nominalQuota: 8}, {name: memory, nominalQuota: 64Gi}]}]
---
apiVersion: kueue.x-k8s.io/v1beta1
kind: LocalQueue
metadata: {name: mk-queue, namespace: team-a}
spec: {clusterQueue: mk-cq}
""")
        self.server.cli("submit", "-f", "-",
                        stdin=workload_yaml("team-a", "mk-job", 2).replace("eval-queue", "mk-queue"))
        ref = service_pb2.WorkloadRef(namespace="team-a", name="mk-job")
        with grpc.insecure_channel(self.server.grpc) as channel:
            checks = service_pb2_grpc.AdmissionCheckServiceStub(channel)
            admission = service_pb2_grpc.AdmissionServiceStub(channel)
            checks.SetAdmissionCheckActive(
                service_pb2.SetAdmissionCheckActiveRequest(name="mk", active=True),
                timeout=DEADLINE)
            get = lambda: admission.GetWorkload(service_pb2.GetWorkloadRequest(workload=ref),
                                                timeout=DEADLINE)
            wait_for(lambda: get().status.state == objects_pb2.WORKLOAD_STATE_QUOTA_RESERVED,
                     what="mk-job to reserve quota")

            def update(**fields):
                checks.UpdateAdmissionCheckState(service_pb2.UpdateAdmissionCheckStateRequest(
                    workload=ref, check="mk", expected_revision=get().metadata.resource_version,
                    **fields), timeout=DEADLINE)

            update(state="Pending", set_nominated_cluster_names=True,
                   nominated_cluster_names=["w1", "w2"])
            self.driver.get(self.server.url + "#/workloads?namespace=team-a")
            wait_for(lambda: self.text("wl-cluster-team-a-mk-job") == "nominated: w1, w2",
                     what="the nominees in the workload list")
            update(state="Ready", message='The workload was admitted on "w2"', cluster_name="w2",
                   set_multi_kueue_remotes=True, multi_kueue_remotes=[
                       objects_pb2.MultiKueueRemoteState(cluster="w1", state="NoCopy"),
                       objects_pb2.MultiKueueRemoteState(cluster="w2", state="Admitted")])
        wait_for(lambda: self.text("wl-cluster-team-a-mk-job") == "w2",
                 what="the winner in the workload list (live)")
        self.driver.get(self.server.url + "#/workloads/team-a/mk-job")
        wait_for(lambda: self.text("worker-cluster") == "w2", what="the winner on its page")
        # Each worker's copy, as the manager's controller last reported it.
        row = lambda testid: " ".join(self.text(testid).split())
        wait_for(lambda: row("remote-w2") == "w2 (winner) Admitted", what="the winner's copy state")
        self.assertEqual(row("remote-w1"), "w1 NoCopy")
        self.screenshot("multikueue-workload")
        # Kueue's MultiKueue counters on the same port.
        with urllib.request.urlopen(self.server.url + "metrics", timeout=DEADLINE) as response:
            scrape = response.read().decode()
        for name, cluster in (("dispatched", "w1"), ("dispatched", "w2"), ("admitted", "w2")):
            self.assertIn(f'multikueue_workloads_{name}_total{{cluster_queue="mk-cq",'
                          f'cluster="{cluster}",replica_role="standalone"}} 1', scrape)

TOKENS = """admin-token,root,0,"tollgate:admins"
team-a-token,alice,1,team-a
"""
POLICY = """kind: RoleBinding
metadata: {name: team-a}
role: batch-user
subjects: [{kind: Group, name: team-a}]
namespaces: [team-a]
"""


class AuthenticatedDashboardTest(unittest.TestCase):
    """The dashboard over HTTPS (tollgated's gRPC certificate, made here with openssl) with
    bearer tokens: the sign-in form, its cookie, and a team member seeing only their namespace,
    live updates included."""

    @classmethod
    def setUpClass(cls):
        cls.scratch = tempfile.mkdtemp(prefix="tollgate_dashboard_auth_")
        def openssl(*args):
            subprocess.run(["openssl", *args], cwd=cls.scratch, check=True, capture_output=True,
                           timeout=DEADLINE)
        openssl("req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "1", "-subj", "/CN=ca",
                "-keyout", "ca.key", "-out", "ca.pem")
        openssl("req", "-newkey", "rsa:2048", "-nodes", "-subj", "/CN=localhost", "-keyout",
                "server.key", "-out", "server.csr")
        with open(os.path.join(cls.scratch, "san.ext"), "w") as f:
            f.write("subjectAltName=DNS:localhost,IP:127.0.0.1\n")
        openssl("x509", "-req", "-days", "1", "-in", "server.csr", "-CA", "ca.pem", "-CAkey",
                "ca.key", "-CAcreateserial", "-extfile", "san.ext", "-out", "server.pem")
        for name, text in (("tokens.csv", TOKENS), ("policy.yaml", POLICY)):
            with open(os.path.join(cls.scratch, name), "w") as f:
                f.write(text)
        path = lambda name: os.path.join(cls.scratch, name)
        cls.server = Tollgated(
            cls.scratch, path("data"),
            extra_args=[f"--tls-cert={path('server.pem')}", f"--tls-key={path('server.key')}",
                        f"--token-file={path('tokens.csv')}",
                        f"--authz-policy={path('policy.yaml')}"],
            cli_args=[f"--certificate-authority={path('ca.pem')}", "--token=admin-token"],
            scheme="https")
        cls.server.cli("submit", "-f",
                       os.path.join(ARGS.source, "deploy", "evalhub", "workloads.yaml"))
        # The test CA is not in Chromium's trust store; the TLS itself is checked by the C++
        # e2e tests with the CA.
        cls.driver = new_driver(cls.scratch, "--ignore-certificate-errors")

    @classmethod
    def tearDownClass(cls):
        cls.driver.quit()
        cls.server.stop()
        shutil.rmtree(cls.scratch, ignore_errors=True)

    def exists(self, testid):
        return len(self.driver.find_elements(By.CSS_SELECTOR, f'[data-testid="{testid}"]')) > 0

    def sign_in(self, token):
        WebDriverWait(self.driver, DEADLINE).until(lambda d: self.exists("login-form"))
        field = self.driver.find_element(By.CSS_SELECTOR, '[data-testid="login-token"]')
        field.clear()
        field.send_keys(token)
        self.driver.find_element(By.CSS_SELECTOR, '[data-testid="login-submit"]').click()

    def test_sign_in_and_see_only_your_namespace(self):
        d = self.driver
        d.get(self.server.url + "#/workloads")
        # No credentials: the page sends the browser to the sign-in form.
        WebDriverWait(d, DEADLINE).until(lambda d: "/login" in d.current_url)
        self.sign_in("not-a-token")
        WebDriverWait(d, DEADLINE).until(
            lambda d: self.exists("login-failed")
            and d.find_element(By.CSS_SELECTOR, '[data-testid="login-failed"]').is_displayed())
        self.sign_in("team-a-token")
        WebDriverWait(d, DEADLINE).until(lambda d: "/login" not in d.current_url)
        cookies = {c["name"]: c for c in d.get_cookies()}
        self.assertIn(SESSION_COOKIE, cookies)
        self.assertTrue(cookies[SESSION_COOKIE]["httpOnly"])
        self.assertTrue(cookies[SESSION_COOKIE]["secure"])
        self.assertEqual(cookies[SESSION_COOKIE].get("sameSite"), "Strict")
        d.get(self.server.url + "#/workloads")
        live = lambda: "on" in d.find_element(By.ID, "live").get_attribute("class").split()
        WebDriverWait(d, DEADLINE).until(lambda d: live() and self.exists("workload-table"))
        team_a = [r for r in self.server.table("workloads", "-n", "team-a")]
        self.assertTrue(team_a)
        wait_for(lambda: all(self.exists(f'wl-row-team-a-{r["NAME"]}') for r in team_a),
                 what="team-a's workloads on the page")
        rows = d.find_elements(By.CSS_SELECTOR, '[data-testid^="wl-row-"]')
        self.assertTrue(rows)
        for row in rows:
            self.assertTrue(row.get_attribute("data-testid").startswith("wl-row-team-a-"),
                            row.get_attribute("data-testid"))
        # Live updates arrive through the cookie-authenticated event stream, filtered too.
        self.server.cli("submit", "-f", "-", stdin=workload_yaml("team-b", "hidden-probe", 1))
        self.server.cli("submit", "-f", "-", stdin=workload_yaml("team-a", "shown-probe", 1))
        WebDriverWait(d, DEADLINE).until(lambda d: self.exists("wl-row-team-a-shown-probe"))
        self.assertFalse(self.exists("wl-row-team-b-hidden-probe"))
        os.makedirs(ARGS.out, exist_ok=True)
        d.save_screenshot(os.path.join(ARGS.out, "authenticated-workloads.png"))
        # The Queues page shows a team member what their role may see and names what it leaves
        # out, instead of failing on the ClusterQueues they may not list.
        d.get(self.server.url + "#/")
        WebDriverWait(d, DEADLINE).until(
            lambda d: self.exists("denied-kinds") or self.exists("error"))
        self.assertFalse(self.exists("error"))
        notice = d.find_element(By.CSS_SELECTOR, '[data-testid="denied-kinds"]').text
        self.assertIn("ClusterQueues", notice)
        self.assertTrue(self.exists("total-lqs"))
        d.save_screenshot(os.path.join(ARGS.out, "authenticated-queues.png"))
        # Signing out is a POST with the anti-forgery token the page fetched for this session.
        WebDriverWait(d, DEADLINE).until(
            lambda d: d.find_element(By.CSS_SELECTOR, '[data-testid="signout"]').is_displayed())
        self.assertEqual(
            d.find_element(By.CSS_SELECTOR, '[data-testid="signed-in-as"]').text, "alice")
        d.find_element(By.CSS_SELECTOR, '[data-testid="signout-submit"]').click()
        WebDriverWait(d, DEADLINE).until(lambda d: "/login" in d.current_url)
        self.assertNotIn(SESSION_COOKIE, {c["name"] for c in d.get_cookies()})

    def test_a_page_elsewhere_cannot_sign_you_in(self):
        """Login CSRF: a page on another origin auto-posts the sign-in form with the attacker's
        token (and even an anti-forgery token valid for the attacker's own pre-session). The
        browser gets 403 and stays signed out; signing in from the real form still works."""
        d = self.driver
        d.get(self.server.url + "login")
        WebDriverWait(d, DEADLINE).until(lambda d: self.exists("login-form"))
        # The attacker's own pre-session and its valid token, fetched outside the browser.
        context = ssl.create_default_context(cafile=os.path.join(self.scratch, "ca.pem"))
        with urllib.request.urlopen(self.server.url + "login", context=context,
                                    timeout=DEADLINE) as page:
            attacker_csrf = re.search(r'name="csrf" value="([^"]+)"', page.read().decode()).group(1)
        forged = f"""<!doctype html><html><body>
            <form id="f" method="post" action="{html.escape(self.server.url)}login">
            <input type="hidden" name="token" value="admin-token">
            <input type="hidden" name="csrf" value="{html.escape(attacker_csrf)}">
            </form><script>document.getElementById('f').submit();</script></body></html>"""
        attacker = AttackerSite(forged)
        try:
            d.get(attacker.url)
            WebDriverWait(d, DEADLINE).until(lambda d: "403 Forbidden" in d.page_source)
            self.assertIn("cross-site request refused", d.page_source)
            os.makedirs(ARGS.out, exist_ok=True)
            d.save_screenshot(os.path.join(ARGS.out, "login-csrf-refused.png"))
        finally:
            attacker.stop()
        d.get(self.server.url + "login")
        self.assertNotIn(SESSION_COOKIE, {c["name"] for c in d.get_cookies()})


SESSION_COOKIE = "__Host-tollgate_token"


class AttackerSite:
    """A page on another origin (plain HTTP on another loopback port) serving `page`."""

    def __init__(self, page):
        body = page.encode()

        class Handler(http.server.BaseHTTPRequestHandler):
            def do_GET(self):
                self.send_response(200)
                self.send_header("Content-Type", "text/html")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, *args):
                pass

        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/"
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()

    def stop(self):
        self.server.shutdown()
        self.server.server_close()


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--tollgated", required=True)
    parser.add_argument("--tollgate", required=True)
    parser.add_argument("--source", required=True)
    parser.add_argument("--out", required=True)
    parser.add_argument("--chromium", default="/usr/bin/chromium")
    parser.add_argument("--chromedriver", default="/usr/bin/chromedriver")
    ARGS, rest = parser.parse_known_args()
    unittest.main(argv=[sys.argv[0], *rest], verbosity=2)
