// c_api/waitset.cpp - zipc_waitset_* over zipc::WaitSet.
#include <algorithm>
#include <vector>

#include "c_api/c_api.hpp"
#include "zipc/rpc.hpp"
#include "zipc/waitset.hpp"

struct zipc_waitset {  // NOLINT(readability-identifier-naming): the C ABI names it
  zipc::WaitSet waitset;
  std::vector<zipc::Ready> backlog;  // reported by the last wait but beyond the caller's capacity
};

using namespace zipc::c_api;

namespace {

#define ZIPC_CHECK_WAITSET(fn) \
  if (waitset == nullptr) return invalid(fn, "waitset is NULL")

zipc_ready_t to_c(const zipc::Ready& r) noexcept {
  return {r.id, static_cast<std::uint32_t>(r.kind), r.revents, r.expirations};
}

// Every zipc_waitset_attach_<endpoint>: the NULL checks, then `add` under the exception guard.
template <class Handle, class Add>
zipc_status_t attach_endpoint(const char* fn, zipc_waitset_t* waitset, Handle* handle, const char* handle_is_null,
                              uint64_t* id, Add add) noexcept {
  ZIPC_CHECK_WAITSET(fn);
  if (handle == nullptr) return invalid(fn, handle_is_null);
  if (id == nullptr) return invalid(fn, "id is NULL");
  return guard(fn, [&] {
    *id = add(waitset->waitset, handle);
    return ZIPC_OK;
  });
}

}  // namespace

extern "C" {

zipc_status_t zipc_waitset_create(zipc_waitset_t** out) {
  if (out == nullptr) return invalid("zipc_waitset_create", "out is NULL");
  *out = nullptr;
  return guard("zipc_waitset_create", [&] {
    *out = new zipc_waitset();
    return ZIPC_OK;
  });
}

void zipc_waitset_destroy(zipc_waitset_t* waitset) {
  delete waitset;
}

zipc_status_t zipc_waitset_attach_queue(zipc_waitset_t* waitset, zipc_queue_t* queue, uint64_t* id) {
  return attach_endpoint("zipc_waitset_attach_queue", waitset, queue, "queue is NULL", id,
                         [](zipc::WaitSet& w, zipc_queue_t* h) { return w.attach(queue_of(h)); });
}

zipc_status_t zipc_waitset_attach_queue_room(zipc_waitset_t* waitset, zipc_queue_t* queue, uint64_t* id) {
  return attach_endpoint("zipc_waitset_attach_queue_room", waitset, queue, "queue is NULL", id,
                         [](zipc::WaitSet& w, zipc_queue_t* h) { return w.attach_room(queue_of(h)); });
}

zipc_status_t zipc_waitset_attach_subscriber(zipc_waitset_t* waitset, zipc_subscriber_t* subscriber, uint64_t* id) {
  return attach_endpoint("zipc_waitset_attach_subscriber", waitset, subscriber, "subscriber is NULL", id,
                         [](zipc::WaitSet& w, zipc_subscriber_t* h) { return w.attach(subscriber_of(h)); });
}

zipc_status_t zipc_waitset_attach_listener(zipc_waitset_t* waitset, zipc_listener_t* listener, uint64_t* id) {
  return attach_endpoint("zipc_waitset_attach_listener", waitset, listener, "listener is NULL", id,
                         [](zipc::WaitSet& w, zipc_listener_t* h) { return w.attach(listener_of(h)); });
}

zipc_status_t zipc_waitset_attach_rpc_server(zipc_waitset_t* waitset, zipc_rpc_server_t* server, uint64_t* id) {
  return attach_endpoint("zipc_waitset_attach_rpc_server", waitset, server, "server is NULL", id,
                         [](zipc::WaitSet& w, zipc_rpc_server_t* h) { return w.attach(rpc_server_of(h)); });
}

zipc_status_t zipc_waitset_attach_rpc_client(zipc_waitset_t* waitset, zipc_rpc_client_t* client, uint64_t* id) {
  return attach_endpoint("zipc_waitset_attach_rpc_client", waitset, client, "client is NULL", id,
                         [](zipc::WaitSet& w, zipc_rpc_client_t* h) { return w.attach(rpc_client_of(h)); });
}

zipc_status_t zipc_waitset_attach_fd(zipc_waitset_t* waitset, int fd, uint32_t events, uint64_t* id) {
  ZIPC_CHECK_WAITSET("zipc_waitset_attach_fd");
  if (id == nullptr) return invalid("zipc_waitset_attach_fd", "id is NULL");
  return guard("zipc_waitset_attach_fd", [&] {
    *id = waitset->waitset.attach_fd(fd, events);
    return ZIPC_OK;
  });
}

zipc_status_t zipc_waitset_attach_interval(zipc_waitset_t* waitset, int64_t period_ns, uint64_t* id) {
  ZIPC_CHECK_WAITSET("zipc_waitset_attach_interval");
  if (id == nullptr) return invalid("zipc_waitset_attach_interval", "id is NULL");
  if (period_ns <= 0) return invalid("zipc_waitset_attach_interval", "period_ns must be positive");
  return guard("zipc_waitset_attach_interval", [&] {
    *id = waitset->waitset.attach_interval(std::chrono::nanoseconds(period_ns));
    return ZIPC_OK;
  });
}

zipc_status_t zipc_waitset_detach(zipc_waitset_t* waitset, uint64_t id) {
  ZIPC_CHECK_WAITSET("zipc_waitset_detach");
  return guard("zipc_waitset_detach", [&] {
    std::erase_if(waitset->backlog, [id](const zipc::Ready& r) { return r.id == id; });
    if (waitset->waitset.detach(id)) return ZIPC_OK;
    return fail(ZIPC_NOT_FOUND, "zipc_waitset_detach: no attachment " + std::to_string(id));
  });
}

zipc_status_t zipc_waitset_wait(zipc_waitset_t* waitset, int64_t timeout_ns, zipc_ready_t* ready, size_t capacity,
                                size_t* count) {
  ZIPC_CHECK_WAITSET("zipc_waitset_wait");
  if (count == nullptr) return invalid("zipc_waitset_wait", "count is NULL");
  *count = 0;
  if (ready == nullptr || capacity == 0) return invalid("zipc_waitset_wait", "no room for results (ready, capacity)");
  return guard("zipc_waitset_wait", [&] {
    if (waitset->backlog.empty()) {
      const auto got = waitset->waitset.wait(timeout(timeout_ns));
      waitset->backlog.assign(got.begin(), got.end());
    }
    const std::size_t n = std::min(capacity, waitset->backlog.size());
    for (std::size_t i = 0; i < n; ++i) ready[i] = to_c(waitset->backlog[i]);
    waitset->backlog.erase(waitset->backlog.begin(), waitset->backlog.begin() + static_cast<std::ptrdiff_t>(n));
    *count = n;
    if (n > 0) return ZIPC_OK;
    return try_once(timeout_ns) ? ZIPC_EMPTY : ZIPC_TIMEOUT;
  });
}

zipc_status_t zipc_waitset_stop(zipc_waitset_t* waitset) {
  ZIPC_CHECK_WAITSET("zipc_waitset_stop");
  waitset->waitset.stop();
  return ZIPC_OK;
}

int zipc_waitset_readiness_fd(const zipc_waitset_t* waitset) {
  return waitset == nullptr ? -1 : waitset->waitset.readiness_fd();
}

}  // extern "C"
