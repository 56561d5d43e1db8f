// Early returns on errors for functions that return absl::Status or
// absl::StatusOr, as Abseil-based code elsewhere spells them.
#pragma once

#include <utility>

#include "absl/status/status.h"
#include "absl/status/statusor.h"

// Returns the status of `expr` from the enclosing function unless it is OK.
#define KF_RETURN_IF_ERROR(expr)                                               \
  do {                                                                         \
    if (absl::Status kfStatus = (expr); !kfStatus.ok())                        \
      return kfStatus;                                                         \
  } while (false)

// `lhs = value of expr` when the StatusOr `expr` holds one; otherwise returns
// its status from the enclosing function. `lhs` may declare a variable. It
// expands to several statements: brace it as the body of an if.
#define KF_ASSIGN_OR_RETURN(lhs, expr)                                         \
  KF_ASSIGN_OR_RETURN_IMPL_(KF_STATUS_CONCAT_(kfStatusOr, __LINE__), lhs, expr)

#define KF_ASSIGN_OR_RETURN_IMPL_(statusor, lhs, expr)                         \
  auto statusor = (expr);                                                      \
  if (!statusor.ok())                                                          \
    return std::move(statusor).status();                                       \
  lhs = *std::move(statusor)

#define KF_STATUS_CONCAT_(a, b) KF_STATUS_CONCAT_INNER_(a, b)
#define KF_STATUS_CONCAT_INNER_(a, b) a##b
