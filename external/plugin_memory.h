#pragma once
// Memory handed to a plugin (external/plugin_backend.cpp): each tensor in a mapping of its own,
// shared with the child a plugin call may run in (external/plugin_call.h), laid out so that the
// usual ways a kernel strays outside its buffers are seen:
//
//   [inaccessible page][ fill ... | the tensor's bytes | fill ][inaccessible page]
//                                 ^ 64-byte aligned             ^ at most 63 bytes to the page
//
// An access a page or more before the start or past the end faults (the call crashes, and is
// reported as the plugin's failure of the case); one that lands nearer reads the fill — a
// signalling NaN of the tensor's dtype, so a kernel that reads past an input turns its answer
// NaN — and a write there changes the fill, which fill_intact() sees.
#include <cstddef>
#include <cstdint>

namespace oplab {

class GuardedBytes {
 public:
  // `size` bytes (0 allowed) starting 64-byte aligned; everything around them in their pages,
  // and the bytes themselves, hold `fill` (the low `fill_size` bytes of it, repeated; fill_size
  // divides 64). Throws std::runtime_error when the mapping cannot be made.
  GuardedBytes(size_t size, uint64_t fill, size_t fill_size);
  ~GuardedBytes();
  GuardedBytes(GuardedBytes&& o) noexcept;
  GuardedBytes& operator=(GuardedBytes&&) = delete;
  GuardedBytes(const GuardedBytes&) = delete;
  GuardedBytes& operator=(const GuardedBytes&) = delete;

  unsigned char* data() { return data_; }
  const unsigned char* data() const { return data_; }
  size_t size() const { return size_; }
  // Whether the bytes before and after the tensor in its pages still hold the fill.
  bool fill_intact() const;

 private:
  unsigned char* map_ = nullptr;  // the whole mapping, guard pages included
  size_t map_size_ = 0;
  unsigned char* pages_ = nullptr;  // the accessible pages
  size_t pages_size_ = 0;
  unsigned char* data_ = nullptr;
  size_t size_ = 0;
  uint64_t fill_ = 0;
  size_t fill_size_ = 1;
};

}  // namespace oplab
