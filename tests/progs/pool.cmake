# Programs of the pool's tests (tests/e2e: test_leftovers, test_security, test_pool_reserve),
# built like those of CMakeLists.txt; test_readahead's allocation shim, test_attach's slow
# library.
set(PTT_POOL_PROGS gap_flood pool_tamper burst_hold)
foreach(p ${PTT_POOL_PROGS})
  add_executable(e2eprog_${p} ${p}.c)
  target_link_libraries(e2eprog_${p} PRIVATE pthread)
  target_compile_definitions(e2eprog_${p} PRIVATE _GNU_SOURCE)
  set_target_properties(e2eprog_${p} PROPERTIES OUTPUT_NAME ${p}
    RUNTIME_OUTPUT_DIRECTORY ${CMAKE_BINARY_DIR}/tests/progs)
endforeach()

# A shim that makes a ptt command's second thread run out of memory (test_readahead).
add_library(e2eprog_failalloc SHARED failalloc.c)
set_target_properties(e2eprog_failalloc PROPERTIES OUTPUT_NAME failalloc
  LIBRARY_OUTPUT_DIRECTORY ${CMAKE_BINARY_DIR}/tests/progs)

# A library whose constructor holds the dynamic linker's lock a while (test_attach).
add_library(e2eprog_slowinit SHARED slowinit.c)
set_target_properties(e2eprog_slowinit PROPERTIES OUTPUT_NAME slowinit
  LIBRARY_OUTPUT_DIRECTORY ${CMAKE_BINARY_DIR}/tests/progs)
