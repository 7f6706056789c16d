# The C++ program of the tests of C++ names (tests/e2e/test_cxx_names.py), built when CMake finds
# a C++ compiler (ptt itself is C; the test skips without it), with debug information at -O1 so
# that std::mutex's calls are inlined from libstdc++'s headers, and its stripped copies:
# cxx_names_nodebug (symbols, no debug information), cxx_names_stripped (no symbols but the
# dynamic ones) and cxx_names_split (stripped, its debug information in cxx_names_split.debug,
# found through its .gnu_debuglink).
include(CheckLanguage)
check_language(CXX)
if(NOT CMAKE_CXX_COMPILER)
  message(STATUS "no C++ compiler: the C++ names test will skip")
  return()
endif()
enable_language(CXX)
set(d ${CMAKE_BINARY_DIR}/tests/progs)
add_executable(e2eprog_cxx_names cxx_names.cc)
target_link_libraries(e2eprog_cxx_names PRIVATE pthread)
target_compile_options(e2eprog_cxx_names PRIVATE -g -O1)
set_target_properties(e2eprog_cxx_names PROPERTIES OUTPUT_NAME cxx_names RUNTIME_OUTPUT_DIRECTORY ${d})
add_custom_command(TARGET e2eprog_cxx_names POST_BUILD
  COMMAND ${CMAKE_OBJCOPY} --strip-debug $<TARGET_FILE:e2eprog_cxx_names> ${d}/cxx_names_nodebug
  COMMAND ${CMAKE_STRIP} --strip-all -o ${d}/cxx_names_stripped $<TARGET_FILE:e2eprog_cxx_names>
  COMMAND ${CMAKE_OBJCOPY} --only-keep-debug $<TARGET_FILE:e2eprog_cxx_names> ${d}/cxx_names_split.debug
  COMMAND ${CMAKE_STRIP} --strip-all -o ${d}/cxx_names_split $<TARGET_FILE:e2eprog_cxx_names>
  COMMAND ${CMAKE_OBJCOPY} --add-gnu-debuglink=${d}/cxx_names_split.debug ${d}/cxx_names_split
  COMMENT "Stripped copies of cxx_names")

# The C++ program ptt trace -p attaches to (tests/e2e/test_attach_more.py), built as cxx_names is.
add_executable(e2eprog_attach_cxx attach_cxx.cc)
target_link_libraries(e2eprog_attach_cxx PRIVATE pthread)
target_compile_options(e2eprog_attach_cxx PRIVATE -g -O1)
set_target_properties(e2eprog_attach_cxx PROPERTIES OUTPUT_NAME attach_cxx RUNTIME_OUTPUT_DIRECTORY ${d})
# A C++ thread cancelled in a condvar wait ptt trace -p followed: its destructors run
# (tests/e2e/test_attach_inflight.py).
add_executable(e2eprog_attach_cancel attach_cancel.cc)
target_link_libraries(e2eprog_attach_cancel PRIVATE pthread)
set_target_properties(e2eprog_attach_cancel PROPERTIES OUTPUT_NAME attach_cancel RUNTIME_OUTPUT_DIRECTORY ${d})

# Lock order in C++ threads (tests/e2e/test_check.py): function names with spaces.
add_executable(e2eprog_cxx_order cxx_order.cc)
target_link_libraries(e2eprog_cxx_order PRIVATE pthread)
target_compile_options(e2eprog_cxx_order PRIVATE -g -O1)
set_target_properties(e2eprog_cxx_order PROPERTIES OUTPUT_NAME cxx_order RUNTIME_OUTPUT_DIRECTORY ${d})
