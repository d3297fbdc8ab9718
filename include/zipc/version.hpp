/// \file
/// zipc/version.hpp - the library's version, at compile time and at run time.
///
/// \code
///   #include <cstring>
///   static_assert(ZIPC_VERSION_MAJOR == 0);
///   const bool same = std::strcmp(zipc::version(), ZIPC_VERSION_STRING) == 0;  // header and library agree
///   (void)same;
/// \endcode
///
/// The macros describe the headers you compiled against; zipc::version() the
/// library you linked. Shared-memory layouts carry their own layout versions
/// (checked by every open, Errc::version_mismatch naming both); they change
/// only when a layout does, not with every release.
#pragma once

/// Major version of the headers compiled against.
#define ZIPC_VERSION_MAJOR 0
/// Minor version of the headers compiled against.
#define ZIPC_VERSION_MINOR 1
/// Patch version of the headers compiled against.
#define ZIPC_VERSION_PATCH 0
/// "MAJOR.MINOR.PATCH" of the headers compiled against (zipc::version() gives the library's).
#define ZIPC_VERSION_STRING "0.1.0"
/// One number that orders versions: major * 10000 + minor * 100 + patch.
#define ZIPC_VERSION (ZIPC_VERSION_MAJOR * 10000 + ZIPC_VERSION_MINOR * 100 + ZIPC_VERSION_PATCH)

namespace zipc {

/// The version of the library linked in ("MAJOR.MINOR.PATCH").
const char* version() noexcept;

}  // namespace zipc
