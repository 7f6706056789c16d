/* ptt.h: for programs traced by ptt (see docs/names.md).
 *
 * ptt_name(object, name) gives a POSIX threads object (a mutex, condvar, rwlock, semaphore,
 * barrier, spinlock...) the name the ptt tools show instead of its address:
 *
 *     #include <ptt.h>
 *     pthread_mutex_init(&q->lock, NULL);
 *     ptt_namef(&q->lock, "queue %d lock", q->id);
 *
 * Header only: it links against nothing. Outside ptt trace (libptt.so not loaded) a call does
 * nothing; the first one looks libptt up (dlsym), the others cost a test. */
#ifndef PTT_H
#define PTT_H

#include <dlfcn.h>
#include <stdarg.h>
#include <stdio.h>

#define PTT_VERSION_MAJOR 0
#define PTT_VERSION_MINOR 1

#ifdef __cplusplus
extern "C" {
#endif

/* libptt's entry point, looked up once (NULL outside ptt trace). */
static inline void (*ptt_name_fn_(void))(const void *, const char *)
{
    static void (*fn)(const void *, const char *);
    static int looked;
    if (!__atomic_load_n(&looked, __ATOMIC_ACQUIRE)) {
        void *f = dlsym(RTLD_DEFAULT, "ptt_name_object");
        __builtin_memcpy(&fn, &f, sizeof fn);
        __atomic_store_n(&looked, 1, __ATOMIC_RELEASE);
    }
    return fn;
}

/* Name object (up to 255 bytes are kept). */
static inline void ptt_name(const void *object, const char *name)
{
    void (*fn)(const void *, const char *) = ptt_name_fn_();
    if (fn)
        fn(object, name);
}

/* Name object with a printf format. */
static inline void ptt_namef(const void *object, const char *format, ...)
    __attribute__((format(printf, 2, 3)));
static inline void ptt_namef(const void *object, const char *format, ...)
{
    void (*fn)(const void *, const char *) = ptt_name_fn_();
    if (!fn)
        return;
    char name[256];
    va_list ap;
    va_start(ap, format);
    vsnprintf(name, sizeof name, format, ap);
    va_end(ap);
    fn(object, name);
}

#ifdef __cplusplus
}
#endif

#endif
