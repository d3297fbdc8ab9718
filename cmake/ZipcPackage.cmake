# cpack (from the build directory, after the build): one Debian package,
# zipc_<version>_<arch>.deb, installing under /usr what `cmake --install`
# installs for the components runtime, development and tool: libzipc.so.0,
# libzipc.a, the headers, the CMake and pkg-config files, the zipc tool and
# LICENSE in share/doc/zipc (the NATS bridge stays out: it needs libnats).
# It packs what the build made; it does not build.
set(CPACK_GENERATOR DEB)
set(CPACK_PACKAGE_NAME zipc)
set(CPACK_PACKAGE_VENDOR zipc)
set(CPACK_PACKAGE_CONTACT "The zipc authors")  # as in LICENSE; there is no mailing address
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY "${PROJECT_DESCRIPTION}")
set(CPACK_PACKAGING_INSTALL_PREFIX /usr)
set(CPACK_DEB_COMPONENT_INSTALL ON)
set(CPACK_COMPONENTS_GROUPING ALL_COMPONENTS_IN_ONE)
set(CPACK_COMPONENTS_ALL runtime development tool)
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)
set(CPACK_DEBIAN_PACKAGE_SECTION libdevel)
# dpkg-shlibdeps (Debian dpkg-dev, run by CPack with `file`) names the
# shared libraries' packages (libc6, libstdc++6, liburing2); a static link
# of libzipc.a needs liburing.a as well.
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS ON)
set(CPACK_DEBIAN_PACKAGE_DEPENDS liburing-dev)
include(CPack)
