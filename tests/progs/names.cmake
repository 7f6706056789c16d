# Programs of the tests of names, call sites, ptt stat, view's filters and JSON outputs
# (tests/e2e: test_names, test_sites, test_stat, test_blame, test_filters, test_json_strict, test_text_names,
# test_rotation; join_reuse: test_stat's joins). Built with debug
# information (struct fields, array elements and source lines come from it) and linked with
# pthread alone: <ptt.h> needs
# nothing else.
foreach(p names_prog contend name_api json_names ctrl_names blame rotate_names join_reuse)
  add_executable(e2eprog_${p} ${p}.c)
  target_link_libraries(e2eprog_${p} PRIVATE pthread)
  target_compile_definitions(e2eprog_${p} PRIVATE _GNU_SOURCE)
  target_compile_options(e2eprog_${p} PRIVATE -g -O1)
  target_include_directories(e2eprog_${p} PRIVATE ${PROJECT_SOURCE_DIR}/include)
  set_target_properties(e2eprog_${p} PROPERTIES OUTPUT_NAME ${p}
    RUNTIME_OUTPUT_DIRECTORY ${CMAKE_BINARY_DIR}/tests/progs)
endforeach()
