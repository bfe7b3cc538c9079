#include "services/engine/config_objects.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <set>
#include <string>

#include "core/object_kind.h"
#include "google/protobuf/descriptor.h"

namespace tollgate::engine {
namespace {

// The API's kinds are derived from the core table by naming convention; these tests fail when a
// kind is added on one side only, or named off the convention.
TEST(ConfigObjectKindsTest, EveryCoreConfigKindHasAProtoKindAndMember) {
  std::set<v1::ObjectKind> proto_kinds;
  for (const core::KindTraits& t : core::AllKinds()) {
    if (!t.config_kind.has_value()) continue;
    const v1::ObjectKind proto = ToProtoKind(*t.config_kind);
    EXPECT_NE(proto, v1::OBJECT_KIND_UNSPECIFIED) << t.name;
    EXPECT_TRUE(proto_kinds.insert(proto).second) << t.name;
    absl::StatusOr<core::ObjectKind> back = ToCoreKind(proto);
    ASSERT_TRUE(back.ok()) << back.status();
    EXPECT_EQ(*back, *t.config_kind);
    EXPECT_EQ(KindName(proto), t.name);
    EXPECT_EQ(IsNamespaced(proto), t.namespaced) << t.name;
    EXPECT_EQ(ConfigKindNamed(t.name), proto);
  }
  // ... and every proto kind is one of them.
  const google::protobuf::EnumDescriptor* kinds = v1::ObjectKind_descriptor();
  for (int i = 0; i < kinds->value_count(); ++i) {
    const auto value = static_cast<v1::ObjectKind>(kinds->value(i)->number());
    if (value == v1::OBJECT_KIND_UNSPECIFIED) continue;
    EXPECT_TRUE(proto_kinds.count(value) > 0) << kinds->value(i)->name();
  }
  EXPECT_EQ(ConfigKindNamed("Workload"), std::nullopt);
  EXPECT_EQ(ConfigKindNamed("Pod"), std::nullopt);
}

TEST(ConfigObjectKindsTest, EveryOneofMemberIsAKindWithMetadata) {
  const google::protobuf::OneofDescriptor* oneof =
      v1::ConfigObject::descriptor()->FindOneofByName("kind");
  ASSERT_NE(oneof, nullptr);
  for (int i = 0; i < oneof->field_count(); ++i) {
    const google::protobuf::FieldDescriptor* member = oneof->field(i);
    v1::ConfigObject object;
    object.GetReflection()->MutableMessage(&object, member);  // selects the member
    EXPECT_NE(KindOf(object), v1::OBJECT_KIND_UNSPECIFIED) << member->name();
    MutableMetadataOf(object)->set_name("x");
    EXPECT_EQ(MetadataOf(object).name(), "x") << member->name();
  }
}

TEST(ConfigObjectKindsTest, StoreKeysKeepTheNamespaceOfNamespacedKindsOnly) {
  EXPECT_NE(ConfigObjectKey(v1::LOCAL_QUEUE, "team-a", "q"),
            ConfigObjectKey(v1::LOCAL_QUEUE, "team-b", "q"));
  EXPECT_EQ(ConfigObjectKey(v1::CLUSTER_QUEUE, "team-a", "cq"),
            ConfigObjectKey(v1::CLUSTER_QUEUE, "", "cq"));
}

TEST(ConfigObjectKindsTest, ClearStatusClearsOnlyTheStatus) {
  v1::ConfigObject object;
  object.mutable_cluster_queue()->mutable_metadata()->set_name("cq");
  object.mutable_cluster_queue()->mutable_status()->set_pending_workloads(3);
  ClearStatus(object);
  EXPECT_FALSE(object.cluster_queue().has_status());
  EXPECT_EQ(object.cluster_queue().metadata().name(), "cq");

  v1::ConfigObject flavor;  // no status field: nothing to do, and the oneof stays put
  flavor.mutable_resource_flavor()->mutable_metadata()->set_name("f");
  ClearStatus(flavor);
  EXPECT_TRUE(flavor.has_resource_flavor());
}

TEST(ValidateConfigObjectTest, NamespaceOnlyForNamespacedKinds) {
  v1::ConfigObject lq;
  lq.mutable_local_queue()->mutable_metadata()->set_name("q");
  lq.mutable_local_queue()->mutable_metadata()->set_namespace_("team-a");
  lq.mutable_local_queue()->mutable_spec()->set_cluster_queue("cq");
  absl::StatusOr<ValidatedObject> v = ValidateConfigObject(lq);
  ASSERT_TRUE(v.ok()) << v.status();
  EXPECT_EQ(v->kind, core::ObjectKind::kLocalQueue);
  EXPECT_EQ(v->namespace_name, "team-a");

  v1::ConfigObject none;
  EXPECT_EQ(ValidateConfigObject(none).status().message(), "objects[]: no object kind set");
}

TEST(ConfigObjectKindsTest, PolicyKindsValidateOnTheirOwnAndAreNotSchedulingState) {
  v1::ConfigObject object;
  v1::RoleBinding* binding = object.mutable_role_binding();
  binding->mutable_metadata()->set_name("b");
  binding->set_role("viewer");
  v1::PolicySubject* subject = binding->add_subjects();
  subject->set_kind("User");
  subject->set_name("alice");
  EXPECT_EQ(KindOf(object), v1::ROLE_BINDING);
  EXPECT_TRUE(IsPolicyKind(v1::ROLE_BINDING));
  EXPECT_FALSE(IsPolicyKind(v1::CLUSTER_QUEUE));
  EXPECT_EQ(ConfigObjectKey(v1::ROLE_BINDING, "ignored", "b"), "o/RoleBinding/b");
  absl::StatusOr<ValidatedObject> validated = ValidateConfigObject(object);
  ASSERT_TRUE(validated.ok()) << validated.status();
  EXPECT_TRUE(std::holds_alternative<auth::RoleBinding>(validated->spec));

  subject->set_kind("Robot");
  validated = ValidateConfigObject(object);
  EXPECT_TRUE(absl::IsInvalidArgument(validated.status()));
  EXPECT_THAT(std::string(validated.status().message()),
              ::testing::HasSubstr("RoleBinding b: subjects[0].kind: want User or Group, got "
                                   "\"Robot\""));
  binding->mutable_metadata()->set_name("Bad/Name");
  EXPECT_TRUE(absl::IsInvalidArgument(ValidateConfigObject(object).status()));

  v1::ConfigObject grant;
  grant.mutable_queue_grant()->mutable_metadata()->set_name("g");
  grant.mutable_queue_grant()->set_cohort("c");
  grant.mutable_queue_grant()->set_cluster_queue("q");
  grant.mutable_queue_grant()->add_verbs("submit");
  EXPECT_THAT(std::string(ValidateConfigObject(grant).status().message()),
              ::testing::HasSubstr("name exactly one of clusterQueue, localQueue or cohort"));
}

}  // namespace
}  // namespace tollgate::engine
