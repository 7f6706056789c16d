/* The interposed routines' real definitions, found with dlsym(RTLD_NEXT). */
#ifndef PTT_REAL_H
#define PTT_REAL_H

#include <mqueue.h>
#include <pthread.h>
#include <sched.h>
#include <semaphore.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>

/* X(return type, name, parameter list) for every routine libptt interposes. */
#define PTT_REAL_FUNCS(X)                                                                          \
    X(int, pthread_create, (pthread_t *, const pthread_attr_t *, void *(*)(void *), void *))       \
    X(void, pthread_exit, (void *))                                                                \
    X(int, pthread_join, (pthread_t, void **))                                                     \
    X(int, pthread_tryjoin_np, (pthread_t, void **))                                               \
    X(int, pthread_timedjoin_np, (pthread_t, void **, const struct timespec *))                    \
    X(int, pthread_detach, (pthread_t))                                                            \
    X(int, pthread_mutex_init, (pthread_mutex_t *, const pthread_mutexattr_t *))                   \
    X(int, pthread_mutex_lock, (pthread_mutex_t *))                                                \
    X(int, pthread_mutex_trylock, (pthread_mutex_t *))                                             \
    X(int, pthread_mutex_timedlock, (pthread_mutex_t *, const struct timespec *))                  \
    X(int, pthread_mutex_unlock, (pthread_mutex_t *))                                              \
    X(int, pthread_mutex_destroy, (pthread_mutex_t *))                                             \
    X(int, pthread_cond_init, (pthread_cond_t *, const pthread_condattr_t *))                      \
    X(int, pthread_cond_wait, (pthread_cond_t *, pthread_mutex_t *))                               \
    X(int, pthread_cond_timedwait, (pthread_cond_t *, pthread_mutex_t *, const struct timespec *)) \
    X(int, pthread_cond_signal, (pthread_cond_t *))                                                \
    X(int, pthread_cond_broadcast, (pthread_cond_t *))                                             \
    X(int, pthread_cond_destroy, (pthread_cond_t *))                                               \
    X(int, pthread_barrier_init, (pthread_barrier_t *, const pthread_barrierattr_t *, unsigned))   \
    X(int, pthread_barrier_wait, (pthread_barrier_t *))                                            \
    X(int, pthread_barrier_destroy, (pthread_barrier_t *))                                         \
    X(int, pthread_mutex_clocklock, (pthread_mutex_t *, clockid_t, const struct timespec *))       \
    X(int, pthread_mutex_consistent, (pthread_mutex_t *))                                          \
    X(int, pthread_cond_clockwait,                                                                 \
      (pthread_cond_t *, pthread_mutex_t *, clockid_t, const struct timespec *))                   \
    X(int, pthread_rwlock_init, (pthread_rwlock_t *, const pthread_rwlockattr_t *))                \
    X(int, pthread_rwlock_rdlock, (pthread_rwlock_t *))                                            \
    X(int, pthread_rwlock_tryrdlock, (pthread_rwlock_t *))                                         \
    X(int, pthread_rwlock_timedrdlock, (pthread_rwlock_t *, const struct timespec *))              \
    X(int, pthread_rwlock_clockrdlock, (pthread_rwlock_t *, clockid_t, const struct timespec *))   \
    X(int, pthread_rwlock_wrlock, (pthread_rwlock_t *))                                            \
    X(int, pthread_rwlock_trywrlock, (pthread_rwlock_t *))                                         \
    X(int, pthread_rwlock_timedwrlock, (pthread_rwlock_t *, const struct timespec *))              \
    X(int, pthread_rwlock_clockwrlock, (pthread_rwlock_t *, clockid_t, const struct timespec *))   \
    X(int, pthread_rwlock_unlock, (pthread_rwlock_t *))                                            \
    X(int, pthread_rwlock_destroy, (pthread_rwlock_t *))                                           \
    X(int, pthread_spin_init, (pthread_spinlock_t *, int))                                         \
    X(int, pthread_spin_lock, (pthread_spinlock_t *))                                              \
    X(int, pthread_spin_trylock, (pthread_spinlock_t *))                                           \
    X(int, pthread_spin_unlock, (pthread_spinlock_t *))                                            \
    X(int, pthread_spin_destroy, (pthread_spinlock_t *))                                           \
    X(int, sem_init, (sem_t *, int, unsigned))                                                     \
    X(int, sem_destroy, (sem_t *))                                                                 \
    X(sem_t *, sem_open, (const char *, int, ...))                                                 \
    X(int, sem_close, (sem_t *))                                                                   \
    X(int, sem_unlink, (const char *))                                                             \
    X(int, sem_wait, (sem_t *))                                                                    \
    X(int, sem_trywait, (sem_t *))                                                                 \
    X(int, sem_timedwait, (sem_t *, const struct timespec *))                                      \
    X(int, sem_clockwait, (sem_t *, clockid_t, const struct timespec *))                           \
    X(int, sem_post, (sem_t *))                                                                    \
    X(int, sem_getvalue, (sem_t *, int *))                                                         \
    X(int, pthread_key_create, (pthread_key_t *, void (*)(void *)))                                \
    X(int, pthread_key_delete, (pthread_key_t))                                                    \
    X(int, pthread_setspecific, (pthread_key_t, const void *))                                     \
    X(void *, pthread_getspecific, (pthread_key_t))                                                \
    X(int, pthread_once, (pthread_once_t *, void (*)(void)))                                       \
    X(int, pthread_cancel, (pthread_t))                                                            \
    X(int, pthread_setcancelstate, (int, int *))                                                   \
    X(int, pthread_setcanceltype, (int, int *))                                                    \
    X(void, pthread_testcancel, (void))                                                            \
    X(int, pthread_kill, (pthread_t, int))                                                         \
    X(int, pthread_sigqueue, (pthread_t, int, const union sigval))                                 \
    X(int, pthread_sigmask, (int, const sigset_t *, sigset_t *))                                   \
    X(int, sigwait, (const sigset_t *, int *))                                                     \
    X(int, sigwaitinfo, (const sigset_t *, siginfo_t *))                                           \
    X(int, sigtimedwait, (const sigset_t *, siginfo_t *, const struct timespec *))                 \
    X(int, sigaction, (int, const struct sigaction *, struct sigaction *))                         \
    X(int, pthread_setname_np, (pthread_t, const char *))                                          \
    X(int, pthread_setschedparam, (pthread_t, int, const struct sched_param *))                    \
    X(int, pthread_setschedprio, (pthread_t, int))                                                 \
    X(int, pthread_setaffinity_np, (pthread_t, size_t, const cpu_set_t *))                         \
    X(int, pthread_yield, (void))                                                                  \
    X(int, sched_yield, (void))                                                                    \
    X(int, prctl, (int, ...))                                                                      \
    X(int, timer_create, (clockid_t, struct sigevent *, timer_t *))                                \
    X(int, timer_settime, (timer_t, int, const struct itimerspec *, struct itimerspec *))          \
    X(int, timer_delete, (timer_t))                                                                \
    X(mqd_t, mq_open, (const char *, int, ...))                                                    \
    X(int, mq_send, (mqd_t, const char *, size_t, unsigned))                                       \
    X(int, mq_timedsend, (mqd_t, const char *, size_t, unsigned, const struct timespec *))         \
    X(ssize_t, mq_receive, (mqd_t, char *, size_t, unsigned *))                                    \
    X(ssize_t, mq_timedreceive, (mqd_t, char *, size_t, unsigned *, const struct timespec *))      \
    X(int, mq_notify, (mqd_t, const struct sigevent *))                                            \
    X(int, mq_close, (mqd_t))                                                                      \
    X(int, mq_unlink, (const char *))                                                              \
    X(pid_t, waitpid, (pid_t, int *, int))                                                         \
    X(pid_t, wait4, (pid_t, int *, int, struct rusage *))                                          \
    X(int, waitid, (idtype_t, id_t, siginfo_t *, int))                                             \
    X(void *, dlopen, (const char *, int))

#define PTT_DECLARE_REAL(ret, name, params) extern ret(*ptt_real_##name) params;
PTT_REAL_FUNCS(PTT_DECLARE_REAL)
#undef PTT_DECLARE_REAL

void ptt_resolve(void);

/* The real routine, resolved on first use if a call comes before libptt's constructor. */
#define REAL(name) \
    (__builtin_expect(ptt_real_##name != 0, 1) ? ptt_real_##name : (ptt_resolve(), ptt_real_##name))

#endif
