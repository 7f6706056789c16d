# The test corpus of ptt check (tests/progs/check/README.md): one program per expected finding,
# and correct programs that must give none. Built like the programs of CMakeLists.txt, into
# build/tests/progs/check.
set(PTT_CHECK_PROGS
  check_abba check_relock check_rw_upgrade check_deadlock3
  check_order3 check_order_long check_order_rw check_order_spin
  check_barrier_short check_sem_never check_sem_reinit check_sem_reopen check_sem_open_never check_lost_wakeup check_rewait check_signal_self
  check_sem_lock_abba check_sem_lock_self check_sem_lock_ended check_sem_signal_hang check_sem_destroyed
  check_join_forever
  check_unlock_not_held check_unlock_other check_double_unlock check_recursive_over
  check_destroy_locked check_destroy_cond_busy check_destroy_barrier_busy check_cond_two_mutexes check_wait_unlocked check_join_detached
  check_join_twice check_exit_holding check_uninit
  check_errors check_owner_dead
  ok_prodcons ok_readers_writers ok_rw_read_cycle ok_phased_barrier ok_gate_lock
  ok_hand_over_hand ok_trylock_backoff ok_recursive ok_robust ok_atfork ok_idle_pool
  ok_fork_objects ok_crash_child ok_sem_shared ok_sem_lock ok_sem_condition ok_sem_open_twice)
foreach(p ${PTT_CHECK_PROGS})
  add_executable(checkprog_${p} check/${p}.c)
  target_link_libraries(checkprog_${p} PRIVATE pthread)
  target_compile_definitions(checkprog_${p} PRIVATE _GNU_SOURCE)
  set_target_properties(checkprog_${p} PROPERTIES OUTPUT_NAME ${p}
    RUNTIME_OUTPUT_DIRECTORY ${CMAKE_BINARY_DIR}/tests/progs/check)
endforeach()
