// Shapes and strides. DimVector keeps up to 6 dims inline so that creating a
// view or an op's output does not allocate for its sizes and strides.
#pragma once

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <initializer_list>
#include <iosfwd>
#include <iterator>
#include <new>
#include <span>
#include <string>
#include <type_traits>
#include <vector>

namespace stride {

// A vector of trivially copyable T with N elements of inline storage.
template <class T, size_t N>
class SmallVector {
  static_assert(std::is_trivially_copyable_v<T>);

 public:
  SmallVector() = default;
  explicit SmallVector(size_t n, T value = T()) { assign(n, value); }
  SmallVector(std::initializer_list<T> il) { assign(il.begin(), il.end()); }
  SmallVector(std::span<const T> s) { assign(s.begin(), s.end()); }  // NOLINT
  template <class It>
  SmallVector(It first, It last) {
    assign(first, last);
  }
  SmallVector(const SmallVector& o) { assign(o.begin(), o.end()); }
  SmallVector(SmallVector&& o) noexcept { move_from(o); }
  SmallVector& operator=(const SmallVector& o) {
    if (this != &o) assign(o.begin(), o.end());
    return *this;
  }
  SmallVector& operator=(SmallVector&& o) noexcept {
    if (this != &o) {
      release();
      move_from(o);
    }
    return *this;
  }
  ~SmallVector() { release(); }

  template <class It>
  void assign(It first, It last) {
    size_ = 0;
    reserve(size_t(std::distance(first, last)));
    for (; first != last; ++first) data_[size_++] = T(*first);
  }
  void assign(size_t n, T value) {
    size_ = 0;
    reserve(n);
    for (size_t i = 0; i < n; ++i) data_[i] = value;
    size_ = n;
  }

  T* data() { return data_; }
  const T* data() const { return data_; }
  size_t size() const { return size_; }
  bool empty() const { return size_ == 0; }
  T& operator[](size_t i) { return data_[i]; }
  const T& operator[](size_t i) const { return data_[i]; }
  T* begin() { return data_; }
  T* end() { return data_ + size_; }
  const T* begin() const { return data_; }
  const T* end() const { return data_ + size_; }
  std::reverse_iterator<T*> rbegin() { return std::reverse_iterator<T*>(end()); }
  std::reverse_iterator<T*> rend() { return std::reverse_iterator<T*>(begin()); }
  std::reverse_iterator<const T*> rbegin() const { return std::reverse_iterator<const T*>(end()); }
  std::reverse_iterator<const T*> rend() const { return std::reverse_iterator<const T*>(begin()); }
  T& back() { return data_[size_ - 1]; }
  const T& back() const { return data_[size_ - 1]; }
  T& front() { return data_[0]; }
  const T& front() const { return data_[0]; }

  void reserve(size_t n) {
    if (n <= capacity_) return;
    size_t cap = std::max(n, 2 * capacity_);
    T* mem = static_cast<T*>(std::malloc(cap * sizeof(T)));
    if (!mem) throw std::bad_alloc();
    if (size_) std::memcpy(mem, data_, size_ * sizeof(T));
    release();
    data_ = mem;
    capacity_ = cap;
  }
  void resize(size_t n, T value = T()) {
    reserve(n);
    for (size_t i = size_; i < n; ++i) data_[i] = value;
    size_ = n;
  }
  void push_back(T v) {
    reserve(size_ + 1);
    data_[size_++] = v;
  }
  void pop_back() { --size_; }
  void clear() { size_ = 0; }
  void insert(T* pos, T v) {
    size_t i = size_t(pos - data_);
    reserve(size_ + 1);
    std::memmove(data_ + i + 1, data_ + i, (size_ - i) * sizeof(T));
    data_[i] = v;
    ++size_;
  }
  void erase(T* pos) {
    size_t i = size_t(pos - data_);
    std::memmove(data_ + i, data_ + i + 1, (size_ - i - 1) * sizeof(T));
    --size_;
  }

  operator std::span<const T>() const { return {data_, size_}; }  // NOLINT
  std::vector<T> vec() const { return std::vector<T>(begin(), end()); }

  friend bool operator==(const SmallVector& a, const SmallVector& b) {
    return std::equal(a.begin(), a.end(), b.begin(), b.end());
  }

 private:
  void release() {
    if (data_ != inline_) std::free(data_);
    data_ = inline_;
    capacity_ = N;
  }
  void move_from(SmallVector& o) {
    if (o.data_ == o.inline_) {
      data_ = inline_;
      capacity_ = N;
      std::memcpy(inline_, o.inline_, o.size_ * sizeof(T));
    } else {
      data_ = o.data_;
      capacity_ = o.capacity_;
      o.data_ = o.inline_;
      o.capacity_ = N;
    }
    size_ = o.size_;
    o.size_ = 0;
  }

  T inline_[N];
  T* data_ = inline_;
  size_t size_ = 0;
  size_t capacity_ = N;
};

using DimVector = SmallVector<int64_t, 6>;

// A non-owning view of a list of dims: accepts {2, 3}, std::vector and DimVector.
class IntArrayRef {
 public:
  IntArrayRef() = default;
  // Like c10::ArrayRef: valid for the full-expression that creates the list,
  // which is how IntArrayRef parameters are used.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Winit-list-lifetime"
  IntArrayRef(std::initializer_list<int64_t> il) : data_(il.begin()), size_(il.size()) {}
#pragma GCC diagnostic pop
  IntArrayRef(const std::vector<int64_t>& v) : data_(v.data()), size_(v.size()) {}  // NOLINT
  IntArrayRef(const DimVector& v) : data_(v.data()), size_(v.size()) {}             // NOLINT
  IntArrayRef(std::span<const int64_t> s) : data_(s.data()), size_(s.size()) {}     // NOLINT
  IntArrayRef(const int64_t* data, size_t size) : data_(data), size_(size) {}
  explicit IntArrayRef(const int64_t& single) : data_(&single), size_(1) {}

  const int64_t* data() const {
    return data_;
  }
  size_t size() const {
    return size_;
  }
  bool empty() const {
    return size_ == 0;
  }
  int64_t operator[](size_t i) const {
    return data_[i];
  }
  const int64_t* begin() const {
    return data_;
  }
  const int64_t* end() const {
    return data_ + size_;
  }
  int64_t back() const {
    return data_[size_ - 1];
  }
  DimVector dims() const {
    return DimVector(begin(), end());
  }
  std::vector<int64_t> vec() const {
    return std::vector<int64_t>(begin(), end());
  }

  friend bool operator==(IntArrayRef a, IntArrayRef b) {
    return std::equal(a.begin(), a.end(), b.begin(), b.end());
  }

 private:
  const int64_t* data_ = nullptr;
  size_t size_ = 0;
};

// "(2, 3)": how shapes appear in every error message.
std::string shape_str(IntArrayRef shape);
std::ostream& operator<<(std::ostream& os, IntArrayRef shape);

int64_t numel_of(IntArrayRef shape);
// numel_of(shape) for a shape of non-negative sizes, or ShapeError naming
// `op` when the count of elements, of their bytes at `element_size`, or a
// contiguous stride does not fit in int64 (a product that would wrap around).
int64_t checked_numel(IntArrayRef shape, const char* op, size_t element_size = 1);
DimVector contiguous_strides(IntArrayRef shape);
// The broadcast of two shapes (numpy rules); throws ShapeError naming `op`.
DimVector broadcast_shapes(IntArrayRef a, IntArrayRef b, const char* op = "broadcast");
// Wraps a possibly negative dim into [0, ndim); throws IndexError naming `op`.
int64_t wrap_dim(int64_t dim, int64_t ndim, const char* op);

}  // namespace stride
