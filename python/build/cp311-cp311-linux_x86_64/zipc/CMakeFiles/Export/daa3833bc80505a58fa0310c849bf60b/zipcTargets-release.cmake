#----------------------------------------------------------------
# Generated CMake target import file for configuration "Release".
#----------------------------------------------------------------

# Commands may need to know the format version.
set(CMAKE_IMPORT_FILE_VERSION 1)

# Import target "zipc::zipc" for configuration "Release"
set_property(TARGET zipc::zipc APPEND PROPERTY IMPORTED_CONFIGURATIONS RELEASE)
set_target_properties(zipc::zipc PROPERTIES
  IMPORTED_LINK_INTERFACE_LANGUAGES_RELEASE "CXX"
  IMPORTED_LOCATION_RELEASE "${_IMPORT_PREFIX}/lib/libzipc.a"
  )

list(APPEND _cmake_import_check_targets zipc::zipc )
list(APPEND _cmake_import_check_files_for_zipc::zipc "${_IMPORT_PREFIX}/lib/libzipc.a" )

# Commands beyond this point should not need to know the version.
set(CMAKE_IMPORT_FILE_VERSION)
