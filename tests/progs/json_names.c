/* Names that are not ASCII, and some that are not UTF-8 (tests/e2e/test_json_strict.py):
 * json_names
 *
 * Four threads name themselves with pthread_setname_np (at most 15 bytes): UTF-8 ("wörker-ü",
 * "线程"), a byte 0xff, control characters and JSON's special characters. Main names one mutex
 * per entry of OBJECTS with ptt_name: UTF-8, and every kind of ill-formed UTF-8. Each thread then
 * locks every mutex, so that every name shows in every reader's output. Last, a mutex named with
 * 300 bytes ("é" 150 times), more than ptt keeps. Prints each thread's id (@tid_N) and each
 * mutex's address (@obj_N, @obj_long). */
#include <ptt.h>

#include "progs.h"

static const char *const THREADS[] = {
    "w\xc3\xb6rker-\xc3\xbc",   /* wörker-ü */
    "\xe7\xba\xbf\xe7\xa8\x8b", /* 线程 */
    "bad\xffname",              /* a byte that is never UTF-8 */
    "tab\tq\"b\\s/",            /* a control character, quote, backslash, slash */
};

static const char *const OBJECTS[] = {
    "verrou-\xc3\xa9",                           /* verrou-é */
    "\xe4\xba\x92\xe6\x96\xa5\xe9\x94\x81/lock", /* 互斥锁/lock */
    "emoji-\xf0\x9f\x94\x92",                    /* U+1F512, four bytes */
    "lone\x80"
    "cont",                          /* a continuation byte alone */
    "cut\xe4\xb8",                   /* a sequence cut short by the end */
    "cut\xe4\xb8-mid",               /* ... and by an ASCII byte */
    "overlong\xc0\xaf-\xe0\x80\xaf", /* '/' as overlong forms */
    "surrogate\xed\xa0\x80",         /* U+D800 */
    "big\xf4\x90\x80\x80",           /* above U+10FFFF */
    "ff\xff-fe\xfe",                 /* bytes that are never UTF-8 */
    "nl\nbell\x07"
    "del\x7f", /* control characters */
};

#define NT (sizeof THREADS / sizeof *THREADS)
#define NO (sizeof OBJECTS / sizeof *OBJECTS)

static pthread_mutex_t locks[NO + 1];

static void *worker(void *arg)
{
    int i = (int)(intptr_t)arg;
    char key[16];
    snprintf(key, sizeof key, "%d", i);
    CHECK(pthread_setname_np(pthread_self(), THREADS[i]));
    put_tid(key);
    for (size_t k = 0; k <= NO; k++) {
        pthread_mutex_lock(&locks[k]);
        pthread_mutex_unlock(&locks[k]);
    }
    return NULL;
}

int main(void)
{
    for (size_t k = 0; k < NO; k++) {
        char key[16];
        CHECK(pthread_mutex_init(&locks[k], NULL));
        ptt_name(&locks[k], OBJECTS[k]);
        snprintf(key, sizeof key, "obj_%zu", k);
        put_addr(key, &locks[k]);
    }
    /* A name longer than ptt keeps (255 bytes): cut inside a two-byte sequence. */
    char longname[301];
    for (size_t k = 0; k < 300; k += 2)
        memcpy(longname + k, "\xc3\xa9", 2);
    longname[300] = 0;
    CHECK(pthread_mutex_init(&locks[NO], NULL));
    ptt_name(&locks[NO], longname);
    put_addr("obj_long", &locks[NO]);
    pthread_t t[NT];
    for (size_t i = 0; i < NT; i++)
        CHECK(pthread_create(&t[i], NULL, worker, (void *)(intptr_t)i));
    for (size_t i = 0; i < NT; i++)
        CHECK(pthread_join(t[i], NULL));
    return 0;
}
