#pragma once

#include <cassert>
#include <optional>
#include <type_traits>
#include <utility>
#include <variant>

#include "common/error.h"

namespace chsync {

/// Either a value or an Error. Operational failures travel as Result; bugs are asserts.
template <typename T>
class [[nodiscard]] Result {
 public:
  Result(T value) : v_(std::in_place_index<0>, std::move(value)) {}  // NOLINT(google-explicit-constructor)
  Result(Error error)
      : v_(std::in_place_index<1>, std::move(error)) {}  // NOLINT(google-explicit-constructor)

  bool ok() const { return v_.index() == 0; }
  explicit operator bool() const { return ok(); }

  /// REQUIRES: ok()
  T& value() & {
    assert(ok());
    return std::get<0>(v_);
  }
  const T& value() const& {
    assert(ok());
    return std::get<0>(v_);
  }
  T&& value() && {
    assert(ok());
    return std::get<0>(std::move(v_));
  }
  T& operator*() & { return value(); }
  const T& operator*() const& { return value(); }
  T* operator->() { return &value(); }
  const T* operator->() const { return &value(); }

  /// REQUIRES: !ok()
  Error& error() & {
    assert(!ok());
    return std::get<1>(v_);
  }
  const Error& error() const& {
    assert(!ok());
    return std::get<1>(v_);
  }
  Error&& error() && {
    assert(!ok());
    return std::get<1>(std::move(v_));
  }

 private:
  std::variant<T, Error> v_;
};

/// Success or an Error.
class [[nodiscard]] Status {
 public:
  Status() = default;
  Status(Error error) : error_(std::move(error)) {}  // NOLINT(google-explicit-constructor)
  static Status Ok() { return Status(); }

  bool ok() const { return !error_.has_value(); }
  explicit operator bool() const { return ok(); }
  /// REQUIRES: !ok()
  const Error& error() const& {
    assert(!ok());
    return *error_;
  }
  Error&& error() && {
    assert(!ok());
    return std::move(*error_);
  }
  Error& error() & {
    assert(!ok());
    return *error_;
  }

 private:
  std::optional<Error> error_;
};

}  // namespace chsync

/// Evaluates a Status or Result expression and returns its error from the enclosing function.
#define CHSYNC_RETURN_IF_ERROR(expr)            \
  do {                                          \
    auto chsync_status_ = (expr);               \
    if (!chsync_status_.ok()) {                 \
      return std::move(chsync_status_).error(); \
    }                                           \
  } while (false)

#define CHSYNC_CONCAT_INNER_(a, b) a##b
#define CHSYNC_CONCAT_(a, b) CHSYNC_CONCAT_INNER_(a, b)

/// `CHSYNC_ASSIGN_OR_RETURN(auto x, Foo());` binds the value of a Result or returns its error.
#define CHSYNC_ASSIGN_OR_RETURN(lhs, expr) \
  CHSYNC_ASSIGN_OR_RETURN_IMPL_(CHSYNC_CONCAT_(chsync_result_, __LINE__), lhs, expr)
// NOLINTBEGIN(bugprone-macro-parentheses): `lhs` is a declaration and `tmp` a name.
#define CHSYNC_ASSIGN_OR_RETURN_IMPL_(tmp, lhs, expr) \
  auto tmp = (expr);                                  \
  if (!tmp.ok()) {                                    \
    return std::move(tmp).error();                    \
  }                                                   \
  lhs = std::move(tmp).value()
// NOLINTEND(bugprone-macro-parentheses)
