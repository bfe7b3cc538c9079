#pragma once

#include <memory>
#include <optional>
#include <utility>

namespace tollgate::core {

// An optional value kept on the heap: 8 bytes while empty instead of sizeof(T). For fields that
// most of a million pending workloads never set (an admission, a preemption history). Copies
// deep-copy the value, comparisons compare it, and the interface is std::optional's, plus a
// read that sees a default-constructed T while empty and a write that creates it on demand.
template <typename T>
class Boxed {
 public:
  Boxed() = default;
  Boxed(std::nullopt_t) {}  // NOLINT(google-explicit-constructor): as std::optional
  Boxed(T value) : ptr_(std::make_unique<T>(std::move(value))) {}  // NOLINT: as std::optional
  Boxed(const Boxed& other) : ptr_(other.ptr_ ? std::make_unique<T>(*other.ptr_) : nullptr) {}
  Boxed(Boxed&&) noexcept = default;
  Boxed& operator=(const Boxed& other) {
    if (this != &other) ptr_ = other.ptr_ ? std::make_unique<T>(*other.ptr_) : nullptr;
    return *this;
  }
  Boxed& operator=(Boxed&&) noexcept = default;
  Boxed& operator=(T value) {
    if (ptr_) {
      *ptr_ = std::move(value);
    } else {
      ptr_ = std::make_unique<T>(std::move(value));
    }
    return *this;
  }
  Boxed& operator=(std::nullopt_t) {
    ptr_.reset();
    return *this;
  }

  bool has_value() const { return ptr_ != nullptr; }
  explicit operator bool() const { return has_value(); }
  T& operator*() { return *ptr_; }
  const T& operator*() const { return *ptr_; }
  T* operator->() { return ptr_.get(); }
  const T* operator->() const { return ptr_.get(); }
  template <typename... Args>
  T& emplace(Args&&... args) {
    ptr_ = std::make_unique<T>(std::forward<Args>(args)...);
    return *ptr_;
  }
  void reset() { ptr_.reset(); }

  // The value, or a default-constructed T while empty.
  const T& value_or_default() const {
    static const T kDefault{};
    return ptr_ ? *ptr_ : kDefault;
  }
  // The value, created default-constructed first if empty.
  T& mutable_value() {
    if (!ptr_) ptr_ = std::make_unique<T>();
    return *ptr_;
  }

  friend bool operator==(const Boxed& a, const Boxed& b) {
    if (!a.ptr_ || !b.ptr_) return !a.ptr_ && !b.ptr_;
    return *a.ptr_ == *b.ptr_;
  }

 private:
  std::unique_ptr<T> ptr_;
};

}  // namespace tollgate::core
