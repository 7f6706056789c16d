# Programs of the export tests (tests/e2e: test_report and the other exporters' tests), built like
# those of CMakeLists.txt. One block per test file: append yours, leave the others' lines alone.

# test_report.py: the HTML report.
foreach(p report_mix report_load)
  add_executable(e2eprog_${p} ${p}.c)
  target_link_libraries(e2eprog_${p} PRIVATE pthread)
  target_compile_definitions(e2eprog_${p} PRIVATE _GNU_SOURCE)
  set_target_properties(e2eprog_${p} PROPERTIES OUTPUT_NAME ${p}
    RUNTIME_OUTPUT_DIRECTORY ${CMAKE_BINARY_DIR}/tests/progs)
endforeach()

# test_chrome.py and test_ctf.py: the Chrome JSON and CTF exports.
add_executable(e2eprog_export_mix export_mix.c)
target_link_libraries(e2eprog_export_mix PRIVATE pthread)
target_compile_definitions(e2eprog_export_mix PRIVATE _GNU_SOURCE)
set_target_properties(e2eprog_export_mix PROPERTIES OUTPUT_NAME export_mix
  RUNTIME_OUTPUT_DIRECTORY ${CMAKE_BINARY_DIR}/tests/progs)
