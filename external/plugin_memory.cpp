#include "external/plugin_memory.h"

#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <stdexcept>
#include <string>

namespace oplab {

namespace {

constexpr size_t kAlign = 64;

size_t page_size() {
  static const size_t page = size_t(sysconf(_SC_PAGESIZE));
  return page;
}

size_t round_up(size_t n, size_t to) { return (n + to - 1) / to * to; }

bool holds_fill(const unsigned char* p, size_t n, uint64_t fill, size_t fill_size) {
  for (size_t at = 0; at < n; at += fill_size)
    if (std::memcmp(p + at, &fill, fill_size) != 0) return false;
  return true;
}

}  // namespace

GuardedBytes::GuardedBytes(size_t size, uint64_t fill, size_t fill_size)
    : size_(size), fill_(fill), fill_size_(fill_size) {
  const size_t page = page_size();
  pages_size_ = round_up(std::max<size_t>(round_up(size, kAlign), 1), page);
  map_size_ = pages_size_ + 2 * page;
  // Shared, so that a forked child's writes are seen here (external/plugin_call.h).
  void* m = mmap(nullptr, map_size_, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
  if (m == MAP_FAILED)
    throw std::runtime_error("cannot map " + std::to_string(map_size_) + " bytes for a plugin's tensor: " +
                             std::strerror(errno));
  map_ = static_cast<unsigned char*>(m);
  pages_ = map_ + page;
  if (mprotect(map_, page, PROT_NONE) != 0 || mprotect(pages_ + pages_size_, page, PROT_NONE) != 0) {
    const int e = errno;
    munmap(map_, map_size_);
    throw std::runtime_error(std::string("cannot protect a plugin tensor's guard pages: ") + std::strerror(e));
  }
  data_ = pages_ + pages_size_ - round_up(size, kAlign);
  for (size_t at = 0; at < pages_size_; at += fill_size_) std::memcpy(pages_ + at, &fill_, fill_size_);
}

GuardedBytes::~GuardedBytes() {
  if (map_) munmap(map_, map_size_);
}

GuardedBytes::GuardedBytes(GuardedBytes&& o) noexcept
    : map_(o.map_), map_size_(o.map_size_), pages_(o.pages_), pages_size_(o.pages_size_), data_(o.data_),
      size_(o.size_), fill_(o.fill_), fill_size_(o.fill_size_) {
  o.map_ = nullptr;
}

bool GuardedBytes::fill_intact() const {
  const unsigned char* end = data_ + size_;
  return holds_fill(pages_, size_t(data_ - pages_), fill_, fill_size_) &&
         holds_fill(end, size_t(pages_ + pages_size_ - end), fill_, fill_size_);
}

}  // namespace oplab
