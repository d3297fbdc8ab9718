// zipc._zipc: message type identities (zipc.TypeIdentity <-> zipc::TypeIdentity).
#include <nanobind/stl/string.h>

#include "common.hpp"
#include "zipc/type_identity.hpp"

namespace zipc::py {

std::optional<zipc::TypeIdentity> type_arg(nb::handle t) {
  if (t.is_none()) return std::nullopt;
  zipc::TypeIdentity out;
  bool ok = true;
  try {
    out.name = nb::cast<std::string>(t.attr("name"));
    out.size = nb::cast<std::uint64_t>(t.attr("size"));
    out.align = nb::cast<std::uint64_t>(t.attr("align"));
    out.fingerprint = nb::cast<std::uint64_t>(t.attr("fingerprint"));
    out.version = nb::cast<std::uint32_t>(t.attr("version"));
    out.field_count = nb::cast<std::uint32_t>(t.attr("field_count"));
  } catch (const nb::python_error&) {
    ok = false;  // a missing attribute (the Python error is replaced below)
  } catch (const std::exception&) {
    ok = false;  // an attribute of the wrong type
  }
  if (!ok) raise_kind("invalid_argument", "type: expected a zipc.TypeIdentity (or None)");
  if (out.name.size() > zipc::kMaxTypeName)
    raise_kind("invalid_argument", "type: name is longer than " + std::to_string(zipc::kMaxTypeName) + " bytes");
  return out;
}

nb::object identity_obj(const std::optional<zipc::TypeIdentity>& t) {
  if (!t) return nb::none();
  return nb::module_::import_("zipc").attr("TypeIdentity")(
      nb::arg("name") = t->name, nb::arg("size") = t->size, nb::arg("align") = t->align,
      nb::arg("fingerprint") = t->fingerprint, nb::arg("version") = t->version,
      nb::arg("field_count") = t->field_count);
}

void init_type_identity(nb::module_& m) {
  m.def(
      "_type_fingerprint",
      [](const std::string& name, std::uint64_t size, std::uint64_t align, std::uint32_t field_count,
         std::uint32_t version) { return zipc::type_fingerprint(name, size, align, field_count, version); },
      nb::arg("name"), nb::arg("size"), nb::arg("align"), nb::arg("field_count"), nb::arg("version"));
}

}  // namespace zipc::py
