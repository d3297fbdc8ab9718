# The harness's reusable pieces, shared by bench/CMakeLists.txt (the programs)
# and tests/bench/CMakeLists.txt (the tests). The top-level CMakeLists.txt
# includes it first, so the targets take the build's own settings (link-time
# optimization above all), not those of tests/, which turns LTO off for its
# test programs:
#   zipc_bench_core        static library: registry, runner, limits, results, suite, extras
#   zipc_bench_transports  object library: bench/transports/*.cpp + peer transports found
# Transports register themselves at static-initialization time, so they are
# linked as objects (never dropped by the linker).
# Package look-ups run in every including directory (imported targets are
# directory-scoped); the targets are defined once.
set(ZIPC_BENCH_DIR ${PROJECT_SOURCE_DIR}/bench)
find_package(nlohmann_json REQUIRED)
find_package(PkgConfig)
find_package(Boost QUIET)
find_package(iceoryx_posh CONFIG QUIET)
set(ZIPC_BENCH_HAVE_ZMQ OFF)
if(PkgConfig_FOUND)
  pkg_check_modules(ZIPC_ZMQ QUIET IMPORTED_TARGET libzmq)
  if(ZIPC_ZMQ_FOUND)
    set(ZIPC_BENCH_HAVE_ZMQ ON)
  endif()
endif()
# Peers from package registries: compiled in when found, otherwise listed as
# skipped (the harness prints the line; nothing fails).
set(ZIPC_BENCH_SKIPPED_PEERS "")
if(NOT Boost_FOUND)
  list(APPEND ZIPC_BENCH_SKIPPED_PEERS "boost-mq: Boost.Interprocess headers not found (apt-get install libboost-dev)")
endif()
if(NOT ZIPC_BENCH_HAVE_ZMQ)
  list(APPEND ZIPC_BENCH_SKIPPED_PEERS "zmq-pair: libzmq not found (apt-get install libzmq3-dev)")
endif()
if(NOT iceoryx_posh_FOUND)
  list(APPEND ZIPC_BENCH_SKIPPED_PEERS "iceoryx: iceoryx_posh not found (apt-get install libiceoryx-posh-dev iceoryx)")
endif()
string(REPLACE ";" "\\;" zipc_bench_skipped_escaped "${ZIPC_BENCH_SKIPPED_PEERS}")
set(ZIPC_BENCH_SKIPPED_DEFINE "ZIPC_BENCH_SKIPPED_PEERS=\"${zipc_bench_skipped_escaped}\"")

# gcc 12 reports false -Wrestrict errors inside libstdc++ for "literal" + std::string
# at -O3 (GCC bug 105329), and false -Wmaybe-uninitialized inside <regex> under
# the sanitizers (GCC bug 105562); the bench code uses both.
function(zipc_bench_warnings target)
  zipc_set_warnings(${target})
  target_compile_options(${target} PRIVATE $<$<CXX_COMPILER_ID:GNU>:-Wno-restrict>)
  if(NOT ZIPC_SANITIZE STREQUAL "")
    target_compile_options(${target} PRIVATE $<$<CXX_COMPILER_ID:GNU>:-Wno-maybe-uninitialized>)
  endif()
endfunction()

if(TARGET zipc_bench_core)
  return()
endif()
foreach(line IN LISTS ZIPC_BENCH_SKIPPED_PEERS)
  message(STATUS "zipc bench: skipped peer ${line}")
endforeach()

# The three libraries are built only for a program that links them (none in
# the tsan preset, which builds neither the benchmarks nor their tests).
# The message pattern every benchmark writes and checks (bench/payload.hpp),
# also used by the extra programs. It runs inside every timed loop, so it is
# built at -O3 and, on x86-64 without sanitizers, also for AVX2 (chosen at run
# time): a slow checker would hide the transports behind its own cost.
add_library(zipc_bench_payload STATIC EXCLUDE_FROM_ALL ${ZIPC_BENCH_DIR}/payload.cpp)
target_include_directories(zipc_bench_payload PUBLIC ${ZIPC_BENCH_DIR})
target_compile_options(zipc_bench_payload PRIVATE $<$<CONFIG:Release,RelWithDebInfo>:-O3>)
if(ZIPC_SANITIZE STREQUAL "" AND CMAKE_SYSTEM_PROCESSOR MATCHES "x86_64|AMD64" AND CMAKE_CXX_COMPILER_ID STREQUAL "GNU")
  target_compile_definitions(zipc_bench_payload PRIVATE ZIPC_BENCH_PAYLOAD_CLONES=1)
endif()
zipc_bench_warnings(zipc_bench_payload)

file(GLOB zipc_bench_core_sources CONFIGURE_DEPENDS ${ZIPC_BENCH_DIR}/*.cpp)
list(REMOVE_ITEM zipc_bench_core_sources ${ZIPC_BENCH_DIR}/main.cpp ${ZIPC_BENCH_DIR}/payload.cpp)
add_library(zipc_bench_core STATIC EXCLUDE_FROM_ALL ${zipc_bench_core_sources})
target_include_directories(zipc_bench_core PUBLIC ${ZIPC_BENCH_DIR})
target_link_libraries(zipc_bench_core PUBLIC zipc_bench_payload zipc::zipc nlohmann_json::nlohmann_json rt)
zipc_bench_warnings(zipc_bench_core)
# The results say how zipc and the harness were built (link-time optimization or not).
if(CMAKE_INTERPROCEDURAL_OPTIMIZATION)
  target_compile_definitions(zipc_bench_core PRIVATE ZIPC_BENCH_LTO=1)
endif()

file(GLOB zipc_bench_transport_sources CONFIGURE_DEPENDS ${ZIPC_BENCH_DIR}/transports/*.cpp)
add_library(zipc_bench_transports OBJECT EXCLUDE_FROM_ALL ${zipc_bench_transport_sources})
target_link_libraries(zipc_bench_transports PUBLIC zipc_bench_core)
# zipc's own transports may use the library's private headers (layouts).
target_include_directories(zipc_bench_transports PRIVATE ${PROJECT_SOURCE_DIR}/src)
zipc_bench_warnings(zipc_bench_transports)
if(Boost_FOUND)
  target_sources(zipc_bench_transports PRIVATE ${ZIPC_BENCH_DIR}/peers/transports/boost_mq.cpp)
  target_link_libraries(zipc_bench_transports PUBLIC Boost::headers)
endif()
if(ZIPC_BENCH_HAVE_ZMQ)
  target_sources(zipc_bench_transports PRIVATE ${ZIPC_BENCH_DIR}/peers/transports/zmq_pair.cpp)
  target_link_libraries(zipc_bench_transports PUBLIC PkgConfig::ZIPC_ZMQ)
endif()
if(iceoryx_posh_FOUND)
  target_sources(zipc_bench_transports PRIVATE ${ZIPC_BENCH_DIR}/peers/transports/iceoryx.cpp)
  target_link_libraries(zipc_bench_transports PUBLIC iceoryx_posh::iceoryx_posh)
endif()
