/* The interposed routines' real definitions, found with dlsym(RTLD_NEXT). */
#ifndef PTT_REAL_H
#define PTT_REAL_H

#include <pthread.h>
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
    X(int, pthread_barrier_destroy, (pthread_barrier_t *))

#define PTT_DECLARE_REAL(ret, name, params) extern ret(*ptt_real_##name) params;
PTT_REAL_FUNCS(PTT_DECLARE_REAL)
#undef PTT_DECLARE_REAL

void ptt_resolve(void);

/* The real routine, resolved on first use if a call comes before libptt's constructor. */
#define REAL(name) \
    (__builtin_expect(ptt_real_##name != 0, 1) ? ptt_real_##name : (ptt_resolve(), ptt_real_##name))

#endif
