# cmake --install: headers, the static and the shared library, CMake package
# (find_package(zipc) -> zipc::zipc static, zipc::zipc_shared), pkg-config
# (zipc.pc: -lzipc, the shared library unless linked -static; zipc-shared.pc
# its former name). Components: runtime (libzipc.so.0), development (the
# rest); tools/ adds "tool". cmake/ZipcPackage.cmake packs these three.
include(CMakePackageConfigHelpers)

install(TARGETS zipc zipc_shared EXPORT zipcTargets
  ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR} COMPONENT development
  LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR} COMPONENT runtime NAMELINK_COMPONENT development
  INCLUDES DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
install(DIRECTORY ${PROJECT_SOURCE_DIR}/include/zipc DESTINATION ${CMAKE_INSTALL_INCLUDEDIR} COMPONENT development)
install(FILES ${PROJECT_SOURCE_DIR}/LICENSE DESTINATION ${CMAKE_INSTALL_DOCDIR} COMPONENT runtime)
install(EXPORT zipcTargets NAMESPACE zipc:: DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/zipc COMPONENT development)

configure_package_config_file(${PROJECT_SOURCE_DIR}/cmake/zipcConfig.cmake.in
  ${PROJECT_BINARY_DIR}/zipcConfig.cmake INSTALL_DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/zipc)
write_basic_package_version_file(${PROJECT_BINARY_DIR}/zipcConfigVersion.cmake COMPATIBILITY SameMinorVersion)
install(FILES ${PROJECT_BINARY_DIR}/zipcConfig.cmake ${PROJECT_BINARY_DIR}/zipcConfigVersion.cmake
  DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/zipc COMPONENT development)

file(RELATIVE_PATH ZIPC_PC_TO_PREFIX "${CMAKE_INSTALL_FULL_LIBDIR}/pkgconfig" "${CMAKE_INSTALL_PREFIX}")
configure_file(${PROJECT_SOURCE_DIR}/cmake/zipc.pc.in ${PROJECT_BINARY_DIR}/zipc.pc @ONLY)
configure_file(${PROJECT_SOURCE_DIR}/cmake/zipc-shared.pc.in ${PROJECT_BINARY_DIR}/zipc-shared.pc @ONLY)
install(FILES ${PROJECT_BINARY_DIR}/zipc.pc ${PROJECT_BINARY_DIR}/zipc-shared.pc
  DESTINATION ${CMAKE_INSTALL_LIBDIR}/pkgconfig COMPONENT development)
