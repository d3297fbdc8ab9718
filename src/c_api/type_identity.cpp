// c_api/type_identity.cpp - message type identities in the C API
// (zipc_type_identity_t <-> zipc::TypeIdentity).
#include <algorithm>
#include <optional>

#include "c_api/c_api.hpp"
#include "zipc/queue.hpp"
#include "zipc/type_identity.hpp"

namespace zipc::c_api {

std::optional<TypeIdentity> to_cpp(const zipc_type_identity_t* t) {
  if (t == nullptr) return std::nullopt;
  const void* nul = std::memchr(t->name, '\0', sizeof t->name);
  if (nul == nullptr)
    throw Error(Errc::invalid_argument, "type identity: name is not NUL-terminated within ZIPC_TYPE_NAME_MAX bytes");
  TypeIdentity out;
  out.name.assign(t->name, static_cast<const char*>(nul));
  out.size = t->size;
  out.align = t->align;
  out.fingerprint = t->fingerprint;
  out.version = t->version;
  out.field_count = t->field_count;
  return out;
}

zipc_status_t identity_out(const std::optional<TypeIdentity>& held, std::string_view what, zipc_type_identity_t* out) {
  if (!held) return fail(ZIPC_NOT_FOUND, std::string(what) + ": no message type recorded (created without one)");
  std::memset(out, 0, sizeof *out);
  const std::size_t n = std::min<std::size_t>(held->name.size(), ZIPC_TYPE_NAME_MAX);
  std::memcpy(out->name, held->name.data(), n);
  out->size = held->size;
  out->align = held->align;
  out->fingerprint = held->fingerprint;
  out->version = held->version;
  out->field_count = held->field_count;
  return ZIPC_OK;
}

}  // namespace zipc::c_api

using namespace zipc::c_api;

extern "C" {

zipc_status_t zipc_type_identity_init(zipc_type_identity_t* out, const char* name, uint64_t size, uint64_t align,
                                      uint32_t field_count, uint32_t version) {
  if (out == nullptr) return invalid("zipc_type_identity_init", "out is NULL");
  if (name == nullptr) return invalid("zipc_type_identity_init", "name is NULL");
  const std::size_t n = std::strlen(name);
  if (n > ZIPC_TYPE_NAME_MAX) return invalid("zipc_type_identity_init", "name is longer than ZIPC_TYPE_NAME_MAX bytes");
  std::memset(out, 0, sizeof *out);
  std::memcpy(out->name, name, n);
  out->size = size;
  out->align = align;
  out->field_count = field_count;
  out->version = version;
  out->fingerprint = zipc::type_fingerprint(std::string_view(name, n), size, align, field_count, version);
  return ZIPC_OK;
}

zipc_status_t zipc_queue_type_identity(const zipc_queue_t* queue, zipc_type_identity_t* out) {
  if (queue == nullptr) return invalid("zipc_queue_type_identity", "queue is NULL");
  if (out == nullptr) return invalid("zipc_queue_type_identity", "out is NULL");
  return guard("zipc_queue_type_identity", [&] {
    const zipc::Queue& q = queue_of(const_cast<zipc_queue_t*>(queue));
    return identity_out(q.segment().type_identity(), "queue", out);
  });
}

}  // extern "C"
