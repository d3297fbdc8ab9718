// A Segment handle's life: move, detach (unmap and close), read-only reopen, sync.
#include "zipc/segment.hpp"

#include <fcntl.h>

#include <utility>

#include "core/fail.hpp"
#include "platform/file.hpp"

namespace zipc {

Segment::Segment(Segment&& o) noexcept
    : base_(std::exchange(o.base_, nullptr)),
      size_(std::exchange(o.size_, 0)),
      payload_offset_(o.payload_offset_),
      payload_size_(o.payload_size_),
      fd_(std::exchange(o.fd_, -1)),
      name_(std::move(o.name_)),
      path_(std::move(o.path_)),
      kind_(o.kind_),
      params_(o.params_),
      creator_(o.creator_),
      created_here_(o.created_here_),
      read_only_(o.read_only_),
      notes_(std::move(o.notes_)) {}

int Segment::read_only_fd() const {
  if (base_ == nullptr) fail(Errc::invalid_argument, "segment", name_, "read_only_fd: the segment is not attached");
  const int r = fd_ >= 0 ? platform::reopen_read_only(fd_) : platform::open_file(path_, O_RDONLY, 0);
  if (r < 0) fail_errno(r, "segment", name_, "reopen read-only");
  return r;
}

Segment& Segment::operator=(Segment&& o) noexcept {
  if (this != &o) {
    detach();
    base_ = std::exchange(o.base_, nullptr);
    size_ = std::exchange(o.size_, 0);
    payload_offset_ = o.payload_offset_;
    payload_size_ = o.payload_size_;
    fd_ = std::exchange(o.fd_, -1);
    name_ = std::move(o.name_);
    path_ = std::move(o.path_);
    kind_ = o.kind_;
    params_ = o.params_;
    creator_ = o.creator_;
    created_here_ = o.created_here_;
    read_only_ = o.read_only_;
    notes_ = std::move(o.notes_);
  }
  return *this;
}

Segment::~Segment() {
  detach();
}

void Segment::detach() noexcept {
  if (base_ != nullptr) platform::unmap(base_, size_);
  base_ = nullptr;
  size_ = 0;
  if (fd_ >= 0) platform::close_fd(fd_);
  fd_ = -1;
}

void Segment::sync() const {
  if (base_ == nullptr) return;
  if (int r = platform::sync_pages(base_, size_); r < 0) fail_errno(r, "segment", name_, "msync");
  if (fd_ >= 0) {
    if (int r = platform::sync_fd(fd_); r < 0) fail_errno(r, "segment", name_, "fsync");
  }
}

}  // namespace zipc
