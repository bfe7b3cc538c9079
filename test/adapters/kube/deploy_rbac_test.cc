// deploy/kubernetes/tollgate-kube.yaml grants what tollgate-kube reads and writes: every kind of
// the kinds table, the objects the controllers touch. A kind added to the table without its
// rule would fail with 403 only in a real cluster; this catches it here.
#include <gtest/gtest.h>
#include <yaml-cpp/yaml.h>

#include <set>
#include <string>

#include "adapters/kube/pod_controller.h"
#include "services/manifest/job_kinds.h"
#include "services/manifest/kube_resource.h"
#include "services/manifest/multikueue_job.h"

namespace tollgate::kube {
namespace {

class DeployRbacTest : public ::testing::Test {
 protected:
  void SetUp() override {
    for (const YAML::Node& doc : YAML::LoadAllFromFile(std::string(TOLLGATE_DEPLOY_DIR) +
                                                       "/kubernetes/tollgate-kube.yaml")) {
      if (doc["kind"].as<std::string>("") != "ClusterRole") continue;
      for (const YAML::Node& rule : doc["rules"]) {
        for (const YAML::Node& group : rule["apiGroups"]) {
          for (const YAML::Node& resource : rule["resources"]) {
            for (const YAML::Node& verb : rule["verbs"]) {
              granted_.insert(group.as<std::string>() + "/" + resource.as<std::string>() + ":" +
                              verb.as<std::string>());
            }
          }
        }
      }
    }
    ASSERT_FALSE(granted_.empty()) << "no ClusterRole rules found";
  }

  bool Grants(const manifest::ResourceKind& kind, const std::string& verb) const {
    return granted_.count(kind.group + "/" + kind.plural + ":" + verb) > 0;
  }

  std::set<std::string> granted_;
};

TEST_F(DeployRbacTest, EveryJobKindCanBeWatchedAndPatched) {
  for (const manifest::JobKindTranslator* kind : manifest::AllJobKinds()) {
    // A CronJob is not watched: the Jobs it creates are.
    if (!kind->traits().creates_workload) continue;
    for (const char* verb : {"get", "list", "watch", "patch", "update"}) {
      EXPECT_TRUE(Grants(kind->resource(), verb))
          << kind->resource().group << "/" << kind->resource().plural << " lacks " << verb;
    }
  }
}

TEST_F(DeployRbacTest, TheTopologyFeedCanReadNodesAndReleasePods) {
  for (const char* verb : {"get", "list", "watch"}) {
    EXPECT_TRUE(Grants(manifest::NodeResource(), verb)) << verb;
    EXPECT_TRUE(Grants(manifest::PodResource(), verb)) << verb;
  }
  EXPECT_TRUE(Grants(manifest::PodResource(), "patch"));
  // Pods released onto a node they cannot reach are failed through the status subresource.
  EXPECT_TRUE(granted_.count("/pods/status:patch") > 0);
  EXPECT_TRUE(Grants(manifest::NamespaceResource(), "watch"));
  EXPECT_TRUE(Grants(manifest::EventResource(), "create"));
}

TEST_F(DeployRbacTest, TheGatedKindsCanBeWatchedPatchedAndTheirPodsDeleted) {
  for (const manifest::ResourceKind* kind :
       {&DeploymentResource(), &StatefulSetResource(), &LeaderWorkerSetResource()}) {
    for (const char* verb : {"get", "list", "watch", "patch"}) {
      EXPECT_TRUE(Grants(*kind, verb)) << kind->group << "/" << kind->plural << " lacks " << verb;
    }
  }
  // A preempted or excess pod is deleted (docs/pod-integrations.md).
  EXPECT_TRUE(Grants(manifest::PodResource(), "delete"));
}

// MultiKueue (docs/multicluster.md): a worker creates the object a winning copy carries and
// deletes it with its copy; the manager projects the winner's status onto its original.
TEST_F(DeployRbacTest, MultiKueuesObjectsCanBeCreatedDeletedAndTheirStatusPatched) {
  for (const manifest::JobKindTranslator* kind : manifest::AllJobKinds()) {
    if (!manifest::ProjectsThroughMultiKueue(*kind)) continue;
    const manifest::ResourceKind& r = kind->resource();
    EXPECT_TRUE(Grants(r, "create")) << r.group << "/" << r.plural;
    EXPECT_TRUE(Grants(r, "delete")) << r.group << "/" << r.plural;
    EXPECT_TRUE(granted_.count(r.group + "/" + r.plural + "/status:patch") > 0)
        << r.group << "/" << r.plural << "/status";
  }
  EXPECT_TRUE(Grants(manifest::PodResource(), "create"));
  EXPECT_TRUE(granted_.count("/pods/status:patch") > 0);
  EXPECT_TRUE(Grants(StatefulSetResource(), "create"));
  EXPECT_TRUE(Grants(StatefulSetResource(), "delete"));
  EXPECT_TRUE(Grants(LeaderWorkerSetResource(), "create"));
  EXPECT_TRUE(Grants(LeaderWorkerSetResource(), "delete"));
}

}  // namespace
}  // namespace tollgate::kube
