#pragma once

// Early-return helpers for absl::Status / absl::StatusOr. Both macros expand to statements, so
// brace the body when using them under an `if` or `else`.

#include <utility>

#include "absl/base/optimization.h"
#include "absl/status/status.h"

#define TOLLGATE_STATUS_MACROS_CONCAT_INNER_(x, y) x##y
#define TOLLGATE_STATUS_MACROS_CONCAT_(x, y) TOLLGATE_STATUS_MACROS_CONCAT_INNER_(x, y)

// Evaluates `expr` (an absl::Status) once and returns it from the enclosing function if it is not
// OK. The enclosing function may return absl::Status or any absl::StatusOr<T>.
#define TOLLGATE_RETURN_IF_ERROR(expr)                                \
  do {                                                                \
    ::absl::Status tollgate_return_if_error_status_ = (expr);         \
    if (ABSL_PREDICT_FALSE(!tollgate_return_if_error_status_.ok())) { \
      return tollgate_return_if_error_status_;                        \
    }                                                                 \
  } while (false)

// Evaluates `rexpr` (an absl::StatusOr<T>); on error returns its status, otherwise move-assigns
// the value to `lhs`. `lhs` may declare a new variable (`auto x`, `const Foo& y`, `Foo z`) or
// name an existing one. A type containing a top-level comma must go through a type alias,
// because the preprocessor would split it into two macro arguments.
//
// The temporary's name includes __COUNTER__ so two uses on one line (e.g. inside another macro)
// do not collide.
#define TOLLGATE_ASSIGN_OR_RETURN(lhs, rexpr)                                                      \
  TOLLGATE_ASSIGN_OR_RETURN_IMPL_(TOLLGATE_STATUS_MACROS_CONCAT_(tollgate_statusor_, __COUNTER__), \
                                  lhs, rexpr)

#define TOLLGATE_ASSIGN_OR_RETURN_IMPL_(statusor, lhs, rexpr) \
  auto statusor = (rexpr);                                    \
  if (ABSL_PREDICT_FALSE(!statusor.ok())) {                   \
    return std::move(statusor).status();                      \
  }                                                           \
  lhs = *std::move(statusor)
