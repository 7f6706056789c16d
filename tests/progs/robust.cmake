# Programs of the robustness tests (tests/e2e: test_process, test_crash, test_hang, test_control,
# test_flight, test_signals_storm, test_cancel_storm, test_sessions, test_env, test_large,
# test_kill_on_hang, test_control_robust, test_control_stopped), built like those of
# CMakeLists.txt.
set(PTT_ROBUST_PROGS proc_chain proc_other crash_loop timed_work sig_storm cancel_storm abba
  idle_sleep numbered phases setname_flood hang_busy gap_work sig_blocked_storm proc_churn
  rwlock_hang attach_loop attach_inflight stopped_calls hang_churn renamed_stopped
  hang_readers hang_keydtor hang_pidreuse hang_exec sig_count hang_sem_ended
  hang_pidreuse_held hang_pidreuse_cycle)
foreach(p ${PTT_ROBUST_PROGS})
  add_executable(e2eprog_${p} ${p}.c)
  target_link_libraries(e2eprog_${p} PRIVATE pthread)
  target_compile_definitions(e2eprog_${p} PRIVATE _GNU_SOURCE)
  set_target_properties(e2eprog_${p} PROPERTIES OUTPUT_NAME ${p}
    RUNTIME_OUTPUT_DIRECTORY ${CMAKE_BINARY_DIR}/tests/progs)
endforeach()
# The same, its calls made through the GOT directly (call *slot(%rip)): ptt trace -p follows
# those in progress at the attach too (test_attach_inflight).
add_executable(e2eprog_attach_inflight_noplt attach_inflight.c)
target_link_libraries(e2eprog_attach_inflight_noplt PRIVATE pthread)
target_compile_definitions(e2eprog_attach_inflight_noplt PRIVATE _GNU_SOURCE)
target_compile_options(e2eprog_attach_inflight_noplt PRIVATE -fno-plt)
set_target_properties(e2eprog_attach_inflight_noplt PROPERTIES OUTPUT_NAME attach_inflight_noplt
  RUNTIME_OUTPUT_DIRECTORY ${CMAKE_BINARY_DIR}/tests/progs)
