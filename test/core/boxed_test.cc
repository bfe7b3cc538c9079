#include "core/boxed.h"

#include <string>

#include "gtest/gtest.h"

namespace tollgate::core {
namespace {

struct Value {
  int n = 7;
  std::string s;
  bool operator==(const Value&) const = default;
};

TEST(BoxedTest, EmptyReadsDefaultWithoutAllocating) {
  Boxed<Value> box;
  EXPECT_FALSE(box.has_value());
  EXPECT_EQ(box.value_or_default().n, 7);
  EXPECT_FALSE(box.has_value());
  box.mutable_value().n = 3;
  ASSERT_TRUE(box.has_value());
  EXPECT_EQ(box->n, 3);
}

TEST(BoxedTest, CopiesAreDeepAndCompareByValue) {
  Boxed<Value> a = Value{1, "x"};
  Boxed<Value> b = a;
  b->s = "y";
  EXPECT_EQ(a->s, "x");
  EXPECT_FALSE(a == b);
  b->s = "x";
  EXPECT_TRUE(a == b);
  EXPECT_FALSE(a == Boxed<Value>());
  EXPECT_TRUE(Boxed<Value>() == Boxed<Value>(std::nullopt));
  a = std::nullopt;
  EXPECT_FALSE(a.has_value());
  a.emplace(Value{2, "z"});
  EXPECT_EQ(a->n, 2);
  a.reset();
  EXPECT_FALSE(a);
}

}  // namespace
}  // namespace tollgate::core
