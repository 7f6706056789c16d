/* Libraries loaded when a command first needs them (dlopen), not linked: libdw (the readers'
 * symbols), zlib (ptt export's tables), SQLite (ptt runs) and expat (JUnit XML) would cost every
 * start of ptt about 2 ms linked, ptt trace's included, where few commands use them
 * (docs/performance.md, "ptt's own libraries"). The build still finds each one and its headers;
 * a library missing at run time is what a build without it does, said in one line. A library
 * with thread-local data (libdw) has its user allocate it at once, on each thread that calls
 * it: glibc allocates a loaded library's on its first use, and aborts the process if that
 * fails (analysis/symbols.c, dw_loaded).
 *
 * A user of library L lists its functions once, FUNCS(X), and writes:
 *   static struct { FUNCS(PTT_DYN_PTR) } l;            the functions, typed by L's own header
 *   static const char *const l_names[] = {FUNCS(PTT_DYN_NAME)};
 *   static struct ptt_dynlib l_lib = PTT_DYNLIB(SONAME, l, l_names);
 * then, once ptt_dynlib_load(&l_lib) said 1, calls l.f: through "#define f (*l.f)" lines, the
 * code that calls L reads as it would linked. */
#ifndef PTT_DYNLIB_H
#define PTT_DYNLIB_H

#include <stddef.h>

struct ptt_dynlib {
    const char *soname;       /* the name the build found, as the dynamic linker knows it */
    const char *const *names; /* the functions, in the order of the table's pointers */
    size_t n;
    void *table;   /* a struct of n function pointers */
    int state;     /* 0: not tried; 1: loaded; -1: not there */
    char why[256]; /* when not there: why, in one line */
};

#define PTT_DYN_PTR(f) __typeof__(f) *f;
#define PTT_DYN_NAME(f) #f,
/* 0, and a compile-time error where a and b differ in size. */
#define PTT_DYN_SAME_SIZE(a, b) (0 * sizeof(char[sizeof(a) == sizeof(b) ? 1 : -1]))
#define PTT_DYNLIB(soname, table, names)                                                          \
    {                                                                                             \
        soname, names, sizeof names / sizeof *names + PTT_DYN_SAME_SIZE(table, names), &table, 0, \
            ""                                                                                    \
    }

/* Whether the library's functions can be called (1), loading it the first time; 0 with l->why.
 * When the load failed twice and an allocation fails after it, ptt_out_of_memory: a library
 * that is there is not said missing where memory ran out (a failed mapping with memory left for
 * a small allocation is said as dlopen says it). Safe from any thread. */
int ptt_dynlib_load(struct ptt_dynlib *l);

#endif
