// c_api/event_channel.cpp - zipc_event_channel_*, zipc_notifier_*, zipc_listener_* over zipc::EventChannel.
#include <algorithm>
#include <cstddef>
#include <vector>

#include "c_api/c_api.hpp"
#include "zipc/event_channel.hpp"

struct zipc_event_channel {  // NOLINT(readability-identifier-naming): the C ABI names it
  zipc::EventChannel channel;
};
struct zipc_notifier {  // NOLINT(readability-identifier-naming): the C ABI names it
  zipc::Notifier notifier;
};
struct zipc_listener {  // NOLINT(readability-identifier-naming): the C ABI names it
  zipc::Listener listener;
  std::vector<std::uint32_t> backlog;  // taken by the last call but beyond the caller's capacity
};

using namespace zipc::c_api;

zipc::Listener& zipc::c_api::listener_of(zipc_listener* listener) noexcept {
  return listener->listener;
}

namespace {

constexpr std::size_t kEventOptionsV1 = sizeof(zipc_event_channel_options_t);

zipc::EventChannelOptions to_cpp(const zipc_event_channel_options_t& o) {
  zipc::EventChannelOptions e;
  e.max_event_id = o.max_event_id;
  e.max_listeners = o.max_listeners;
  e.accept_existing = o.accept_existing;
  e.wait = zipc::c_api::to_cpp(o.wait);
  e.segment = zipc::c_api::to_cpp(o.segment);
  return e;
}

bool setup_args(const char* fn, const char* name, const zipc_event_channel_options_t* options,
                zipc_event_channel_t** out, zipc_event_channel_options_t* opt, zipc_status_t* status) {
  if (!valid_name(fn, name, status)) return false;
  if (out == nullptr) {
    *status = invalid(fn, "out is NULL");
    return false;
  }
  if (!options_ok(fn, options, kEventOptionsV1, status)) return false;
  *opt = read_options(options, zipc_event_channel_options_init);
  return true;
}

// Moves up to capacity ids of the backlog out; the rest stay for the next call.
std::size_t hand_out(zipc_listener* l, std::uint32_t* ids, std::size_t capacity) {
  const std::size_t n = std::min(capacity, l->backlog.size());
  std::copy_n(l->backlog.begin(), n, ids);
  l->backlog.erase(l->backlog.begin(), l->backlog.begin() + static_cast<std::ptrdiff_t>(n));
  return n;
}

}  // namespace

extern "C" {

zipc_status_t zipc_event_channel_options_init(zipc_event_channel_options_t* options) {
  if (options == nullptr) return invalid("zipc_event_channel_options_init", "options is NULL");
  const zipc::EventChannelOptions d;
  std::memset(options, 0, sizeof *options);
  options->struct_size = sizeof *options;
  options->max_event_id = d.max_event_id;
  options->max_listeners = d.max_listeners;
  options->accept_existing = false;
  zipc_wait_options_init(&options->wait);
  zipc_segment_options_init(&options->segment);
  return ZIPC_OK;
}

zipc_status_t zipc_event_channel_create(const char* name, const zipc_event_channel_options_t* options,
                                        zipc_event_channel_t** out) {
  return guard("zipc_event_channel_create", [&] {
    zipc_status_t st = ZIPC_OK;
    zipc_event_channel_options_t o;
    if (!setup_args("zipc_event_channel_create", name, options, out, &o, &st)) return st;
    *out = new zipc_event_channel{zipc::EventChannel::create(name, to_cpp(o))};
    return ZIPC_OK;
  });
}

zipc_status_t zipc_event_channel_open(const char* name, const zipc_event_channel_options_t* options,
                                      zipc_event_channel_t** out) {
  return guard("zipc_event_channel_open", [&] {
    zipc_status_t st = ZIPC_OK;
    zipc_event_channel_options_t o;
    if (!setup_args("zipc_event_channel_open", name, options, out, &o, &st)) return st;
    *out = new zipc_event_channel{zipc::EventChannel::open(name, to_cpp(o))};
    return ZIPC_OK;
  });
}

zipc_status_t zipc_event_channel_open_or_create(const char* name, const zipc_event_channel_options_t* options,
                                                zipc_event_channel_t** out, bool* created) {
  return guard("zipc_event_channel_open_or_create", [&] {
    zipc_status_t st = ZIPC_OK;
    zipc_event_channel_options_t o;
    if (!setup_args("zipc_event_channel_open_or_create", name, options, out, &o, &st)) return st;
    bool made = false;
    zipc::EventChannel c = zipc::EventChannel::open_or_create(name, to_cpp(o), &made);
    if (created != nullptr) *created = made;
    *out = new zipc_event_channel{std::move(c)};
    return ZIPC_OK;
  });
}

zipc_status_t zipc_event_channel_remove(const char* name, const zipc_segment_options_t* segment) {
  return guard("zipc_event_channel_remove", [&] {
    zipc_status_t st = ZIPC_OK;
    if (!valid_name("zipc_event_channel_remove", name, &st)) return st;
    zipc_segment_options_t seg;
    zipc_segment_options_init(&seg);
    if (segment != nullptr) seg = *segment;
    if (!zipc::EventChannel::remove(name, zipc::c_api::to_cpp(seg))) {
      return fail(ZIPC_NOT_FOUND, std::string("zipc_event_channel_remove: no event channel named ") + name);
    }
    return ZIPC_OK;
  });
}

zipc_status_t zipc_event_channel_detach(zipc_event_channel_t* channel) {
  delete channel;
  return ZIPC_OK;
}

zipc_status_t zipc_event_channel_listener(zipc_event_channel_t* channel, zipc_listener_t** out) {
  if (channel == nullptr) return invalid("zipc_event_channel_listener", "channel is NULL");
  if (out == nullptr) return invalid("zipc_event_channel_listener", "out is NULL");
  return guard("zipc_event_channel_listener", [&] {
    *out = new zipc_listener{channel->channel.listener(), {}};
    return ZIPC_OK;
  });
}

zipc_status_t zipc_event_channel_notifier(zipc_event_channel_t* channel, zipc_notifier_t** out) {
  if (channel == nullptr) return invalid("zipc_event_channel_notifier", "channel is NULL");
  if (out == nullptr) return invalid("zipc_event_channel_notifier", "out is NULL");
  return guard("zipc_event_channel_notifier", [&] {
    *out = new zipc_notifier{channel->channel.notifier()};
    return ZIPC_OK;
  });
}

zipc_status_t zipc_notifier_notify(zipc_notifier_t* notifier, uint32_t id, uint32_t* reach) {
  if (notifier == nullptr) return invalid("zipc_notifier_notify", "notifier is NULL");
  const zipc::Status s = notifier->notifier.notify(id);
  if (s == zipc::Status::too_large) {
    return fail(ZIPC_TOO_LARGE,
                "zipc_notifier_notify: id " + std::to_string(id) + " is over the channel's max_event_id");
  }
  if (s != zipc::Status::ok) return from(s);
  if (reach != nullptr) *reach = notifier->notifier.last_reach();
  return ZIPC_OK;
}

zipc_status_t zipc_notifier_detach(zipc_notifier_t* notifier) {
  delete notifier;
  return ZIPC_OK;
}

zipc_status_t zipc_listener_wait(zipc_listener_t* listener, int64_t timeout_ns, uint32_t* ids, size_t capacity,
                                 size_t* count) {
  if (listener == nullptr) return invalid("zipc_listener_wait", "listener is NULL");
  if (ids == nullptr || capacity == 0) return invalid("zipc_listener_wait", "ids is NULL or capacity is 0");
  if (count == nullptr) return invalid("zipc_listener_wait", "count is NULL");
  return guard("zipc_listener_wait", [&] {
    *count = 0;
    if (listener->backlog.empty()) {
      auto got = try_once(timeout_ns) ? listener->listener.try_wait() : listener->listener.wait(timeout(timeout_ns));
      listener->backlog.assign(got.begin(), got.end());
    }
    *count = hand_out(listener, ids, capacity);
    if (*count != 0) return ZIPC_OK;
    return try_once(timeout_ns) ? ZIPC_EMPTY : ZIPC_TIMEOUT;
  });
}

zipc_status_t zipc_listener_detach(zipc_listener_t* listener) {
  delete listener;
  return ZIPC_OK;
}

}  // extern "C"
