# Warnings and sanitizers for every zipc target.
function(zipc_set_warnings target)
  target_compile_options(${target} PRIVATE -Wall -Wextra -Wpedantic -Werror)
endfunction()

if(ZIPC_SANITIZE STREQUAL "address")
  add_compile_options(-fsanitize=address,undefined -fno-sanitize-recover=undefined -fno-omit-frame-pointer)
  add_link_options(-fsanitize=address,undefined)
elseif(ZIPC_SANITIZE STREQUAL "thread")
  add_compile_options(-fsanitize=thread -fno-omit-frame-pointer)
  add_link_options(-fsanitize=thread)
elseif(NOT ZIPC_SANITIZE STREQUAL "")
  message(FATAL_ERROR "ZIPC_SANITIZE must be '', 'address' or 'thread' (got '${ZIPC_SANITIZE}')")
endif()
