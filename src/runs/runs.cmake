# ptt runs (docs/runs.md): test runs in an SQLite database. Included by CMakeLists.txt after the
# ptt program. SQLite (Debian: libsqlite3-dev) is optional, as libdw is: without it ptt builds
# and 'ptt runs' says in one line that it was built without SQLite. expat (Debian:
# libexpat1-dev) reads JUnit XML; without it that format says so. PTT_SQLITE=OFF builds without
# SQLite even when it is there.
option(PTT_SQLITE "use SQLite for ptt runs when it is found" ON)
target_sources(ptt PRIVATE src/cmd/runs.c)
if(PTT_SQLITE)
  find_path(SQLITE3_INCLUDE sqlite3.h)
  find_library(SQLITE3_LIBRARY sqlite3)
endif()
if(PTT_SQLITE AND SQLITE3_INCLUDE AND SQLITE3_LIBRARY)
  add_custom_command(OUTPUT ${CMAKE_CURRENT_BINARY_DIR}/runs_assets.c
    COMMAND ${CMAKE_COMMAND} -DSRC=${CMAKE_CURRENT_SOURCE_DIR}/src
      -DPAIRS=ptt_runs_js:runs/runs_report.js,ptt_runs_css:export/report_base.css+runs/runs_report.css
      -DOUT=${CMAKE_CURRENT_BINARY_DIR}/runs_assets.c
      -P ${CMAKE_CURRENT_SOURCE_DIR}/src/export/report_embed.cmake
    DEPENDS src/runs/runs_report.js src/runs/runs_report.css src/export/report_base.css
      src/export/report_embed.cmake
    COMMENT "Embedding the script and style sheet of ptt runs report")
  add_library(pttruns STATIC src/runs/log.c src/runs/opts.c src/runs/tap.c src/runs/junit.c
    src/runs/db.c src/runs/import.c src/runs/show.c src/runs/compare.c src/runs/report.c
    ${CMAKE_CURRENT_BINARY_DIR}/runs_assets.c)
  # Both loaded when first used, not linked (src/util/dynlib.h).
  ptt_soname(${SQLITE3_LIBRARY} PTT_SQLITE_SONAME)
  target_include_directories(pttruns PRIVATE ${SQLITE3_INCLUDE})
  target_link_libraries(pttruns PUBLIC pttcore)
  target_compile_definitions(pttruns PUBLIC PTT_HAVE_SQLITE)
  if(PTT_SQLITE_SONAME)
    target_compile_definitions(pttruns PRIVATE PTT_SQLITE_SONAME="${PTT_SQLITE_SONAME}")
  endif()
  find_package(EXPAT)
  if(EXPAT_FOUND)
    ptt_soname(${EXPAT_LIBRARY} PTT_EXPAT_SONAME)
    target_compile_definitions(pttruns PRIVATE PTT_HAVE_EXPAT)
    target_include_directories(pttruns PRIVATE ${EXPAT_INCLUDE_DIRS})
    if(PTT_EXPAT_SONAME)
      target_compile_definitions(pttruns PRIVATE PTT_EXPAT_SONAME="${PTT_EXPAT_SONAME}")
    endif()
    message(STATUS "SQLite and expat: found, ptt runs on")
  else()
    message(STATUS "SQLite: found, ptt runs on; expat: not found (Debian: libexpat1-dev), no JUnit XML")
  endif()
  target_link_libraries(ptt PRIVATE pttruns)
elseif(PTT_SQLITE)
  message(STATUS "SQLite: not found (Debian: libsqlite3-dev), ptt runs says so")
else()
  message(STATUS "SQLite: not used (PTT_SQLITE=OFF), ptt runs says so")
endif()
