"""The Python client's node inventory calls against a real tollgated: a feeder outside
Kubernetes (a Slurm front-end, a bare-metal fleet) upserts nodes and reports the pods Tollgate
does not place, and a rack-required workload lands where it fits (docs/topology.md).
"""

import os
import tempfile
import unittest

from tollgate_client import Node, NodePod, PodSet, TollgateClient, TollgateError
from tollgated_process import TollgatedProcess

TOPOLOGY = """apiVersion: kueue.x-k8s.io/v1beta1
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
metadata: {name: q, namespace: research}
spec: {clusterQueue: tas-cq}
"""


def host(name, rack, cpu="4"):
    return Node(name, labels={"pool": "tas", "cloud.com/rack": rack,
                              "kubernetes.io/hostname": name},
                allocatable={"cpu": cpu, "pods": "110"})


class InventoryTest(unittest.TestCase):
    def setUp(self):
        manifest = tempfile.NamedTemporaryFile("w", suffix=".yaml", delete=False)
        manifest.write(TOPOLOGY)
        manifest.close()
        self.addCleanup(os.unlink, manifest.name)
        self.server = TollgatedProcess([manifest.name])
        self.addCleanup(self.server.stop)
        self.client = TollgateClient(self.server.address)
        self.addCleanup(self.client.close)

    def test_a_rack_required_workload_lands_on_the_rack_with_room(self):
        # Rack r1 has two 4-CPU hosts, r2 two as well; a daemon takes 2 CPUs of r1's h1.
        self.client.upsert_nodes([host("h1", "r1"), host("h2", "r1"), host("h3", "r2"),
                                  host("h4", "r2")])
        self.client.report_pods([NodePod("kube-system/daemon", "h1", {"cpu": "2"})])
        nodes = {n.name: n for n in self.client.list_nodes()}
        self.assertEqual(sorted(nodes), ["h1", "h2", "h3", "h4"])
        self.assertEqual(nodes["h1"].reported_pods, 1)
        self.assertEqual(nodes["h1"].free["cpu"], "2")
        self.assertEqual(nodes["h1"].flavors, ["tas"])

        # Eight 1-CPU pods in one rack: r1 has 6 free, r2 has 8.
        self.client.submit("train", namespace="research", queue="q",
                           pod_sets=[PodSet("main", count=8, requests={"cpu": "1"},
                                            required_topology="cloud.com/rack")])
        wl = self.client.wait_for_admission("train", namespace="research", timeout=20)
        domains = wl.placement["main"]
        self.assertEqual(sum(count for _, count in domains), 8)
        self.assertEqual({values[-1] for values, _ in domains}, {"h3", "h4"})

        # The daemon goes: r1 has room for a second such job.
        self.client.report_pods(removed=["kube-system/daemon"])
        self.client.submit("train-2", namespace="research", queue="q",
                           pod_sets=[PodSet("main", count=8, requests={"cpu": "1"},
                                            required_topology="cloud.com/rack")])
        wl2 = self.client.wait_for_admission("train-2", namespace="research", timeout=20)
        self.assertEqual({values[-1] for values, _ in wl2.placement["main"]}, {"h1", "h2"})

    def test_bad_nodes_are_refused_and_change_nothing(self):
        self.client.upsert_nodes([host("h1", "r1")])
        with self.assertRaises(TollgateError) as raised:
            self.client.upsert_nodes([host("h2", "r1"), Node("", allocatable={"cpu": "x"})])
        self.assertEqual(raised.exception.code.name, "INVALID_ARGUMENT")
        self.assertEqual([n.name for n in self.client.list_nodes()], ["h1"])
        self.client.delete_node("h1")
        self.assertEqual(self.client.list_nodes(), [])


if __name__ == "__main__":
    unittest.main()
