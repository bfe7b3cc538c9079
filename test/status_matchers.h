#pragma once

// absl::Status assertions for GoogleTest, one definition for every test.
//
//   ASSERT_OK(store->Write(batch));                 // fails the test (and returns) on an error
//   EXPECT_OK(api.Apply(request).status());         // records the error and goes on
//   ASSERT_OK_AND_ASSIGN(auto store, Open(dir));    // unwraps a StatusOr or fails the test
//
// A failure prints the status, code and message included.

#include <utility>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "gtest/gtest.h"

#define TOLLGATE_TEST_CONCAT_INNER(a, b) a##b
#define TOLLGATE_TEST_CONCAT(a, b) TOLLGATE_TEST_CONCAT_INNER(a, b)

#define ASSERT_OK(expr)                                     \
  do {                                                      \
    const ::absl::Status _tollgate_status = (expr);         \
    ASSERT_TRUE(_tollgate_status.ok()) << _tollgate_status; \
  } while (0)

#define EXPECT_OK(expr)                                     \
  do {                                                      \
    const ::absl::Status _tollgate_status = (expr);         \
    EXPECT_TRUE(_tollgate_status.ok()) << _tollgate_status; \
  } while (0)

#define ASSERT_OK_AND_ASSIGN(lhs, expr)                                                         \
  TOLLGATE_ASSERT_OK_AND_ASSIGN_IMPL(TOLLGATE_TEST_CONCAT(_tollgate_status_or_, __LINE__), lhs, \
                                     expr)
#define TOLLGATE_ASSERT_OK_AND_ASSIGN_IMPL(var, lhs, expr) \
  auto var = (expr);                                       \
  ASSERT_TRUE(var.ok()) << var.status();                   \
  lhs = *std::move(var)
