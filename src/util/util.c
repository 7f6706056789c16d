#define _GNU_SOURCE
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <getopt.h>
#include <stdlib.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "util/json.h"
#include "util/util.h"

int64_t ptt_parse_size(const char *s)
{
    char *end;
    if (!s || *s < '0' || *s > '9')
        return -1;
    unsigned long long v = strtoull(s, &end, 10);
    unsigned shift = 0;
    switch (*end) {
    case 'k':
    case 'K':
        shift = 10;
        end++;
        break;
    case 'm':
    case 'M':
        shift = 20;
        end++;
        break;
    case 'g':
    case 'G':
        shift = 30;
        end++;
        break;
    default: break;
    }
    if (*end == 'i' && shift)
        end++;
    if (*end == 'B' || (*end == 'b' && shift))
        end++;
    if (*end || v > (1ull << 50) >> shift)
        return -1;
    return (int64_t)(v << shift);
}

void ptt_warn(const char *cmd, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fprintf(stderr, "ptt %s: ", cmd);
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    va_end(ap);
}

const char *ptt_command;

size_t ptt_term_char(const char *str, size_t n, size_t i, int *unsafe)
{
    const unsigned char *s = (const unsigned char *)str;
    unsigned char c = s[i];
    *unsafe = c < 0x20 || c == 0x7f;
    if (c < 0x80)
        return 1;
    size_t bad, len = ptt_utf8_seq(s + i, n - i, &bad);
    *unsafe = !len || (c == 0xc2 && s[i + 1] < 0xa0);
    return len ? len : bad;
}

size_t ptt_term_escape(char *out, size_t cap, const char *s, size_t n)
{
    size_t o = 0;
    for (size_t i = 0, k; i < n; i += k) {
        int unsafe;
        k = ptt_term_char(s, n, i, &unsafe);
        size_t need = unsafe ? 4 * k : k;
        if (out && o + need >= cap)
            break; /* whole characters only */
        for (size_t j = i; out && j < i + k; j++)
            if (unsafe)
                snprintf(out + o + 4 * (j - i), 5, "\\x%02x", (unsigned char)s[j]);
            else
                out[o + j - i] = s[j];
        o += need;
    }
    if (out && cap)
        out[o] = 0;
    return o;
}

size_t ptt_unctrl(char *s, size_t n, int lines)
{
    size_t k = 0;
    for (size_t i = 0; i < n;) {
        int unsafe;
        size_t len = ptt_term_char(s, n, i, &unsafe);
        if (unsafe && !(lines && (s[i] == '\n' || s[i] == '\t'))) {
            memset(s + i, '?', len);
            k++;
        }
        i += len;
    }
    return k;
}

void ptt_note(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fprintf(stderr, "ptt%s%s: ", ptt_command ? " " : "", ptt_command ? ptt_command : "");
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    va_end(ap);
}

void ptt_bad_option(const char *cmd, char **argv)
{
    const char *arg = optind > 0 ? argv[optind - 1] : NULL;
    if (arg && arg[0] == '-' && arg[1] == '-')
        ptt_warn(cmd, "option '%s' is unknown or lacks its value; see 'ptt %s --help'", arg, cmd);
    else
        ptt_warn(cmd, "option -%c is unknown or lacks its value; see 'ptt %s --help'",
                 optopt ? optopt : '?', cmd);
}

uint64_t ptt_mono_ns(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (uint64_t)t.tv_sec * 1000000000u + (uint64_t)t.tv_nsec;
}

int ptt_thread_gone(int32_t pid, int32_t tid)
{
    return syscall(SYS_tgkill, pid, tid, 0) < 0 && errno == ESRCH;
}

uint64_t ptt_real_ns(void)
{
    struct timespec t;
    clock_gettime(CLOCK_REALTIME, &t);
    return (uint64_t)t.tv_sec * 1000000000u + (uint64_t)t.tv_nsec;
}

_Thread_local void (*ptt_oom_hook)(void);
int ptt_oom_status = 2;

void ptt_out_of_memory(void)
{
    if (ptt_oom_hook)
        ptt_oom_hook(); /* a reader's second thread: does not return */
    fprintf(stderr, "ptt: out of memory\n");
    exit(ptt_oom_status);
}

void *ptt_must(void *p)
{
    if (!p)
        ptt_out_of_memory();
    return p;
}

static char default_buf[4096];

const char *ptt_default_hint(const char *path)
{
    if (path != default_buf || !access(path, F_OK))
        return "";
    return " (the default trace file: give a FILE, or write it with ptt trace)";
}

const char *ptt_trace_arg(const char *cmd, int argc, char **argv, int first)
{
    if (first < argc - 1) {
        ptt_warn(cmd, "one trace file at a time");
        return NULL;
    }
    return first < argc ? argv[first] : ptt_default_trace(cmd);
}

const char *ptt_default_trace(const char *cmd)
{
    char *buf = default_buf;
    const char *dir = getenv("PTT_DIR");
    int has_dir = dir && *dir;
    if (snprintf(buf, sizeof default_buf, "%s%s" PTT_DEFAULT_TRACE, has_dir ? dir : "",
                 has_dir ? "/" : "") >= (int)sizeof default_buf) {
        ptt_warn(cmd, "PTT_DIR is too long");
        return NULL;
    }
    return buf;
}

static char *arg_start, *arg_end; /* main's argv strings, one after the other */

void ptt_keep_argv(int argc, char **argv)
{
    if (argc < 1 || !argv[0])
        return;
    char *end = argv[0] + strlen(argv[0]) + 1;
    for (int i = 1; i < argc && argv[i] == end; i++)
        end = argv[i] + strlen(argv[i]) + 1;
    arg_start = argv[0];
    arg_end = end;
}

void ptt_retitle(const char *title)
{
    prctl(PR_SET_NAME, title);
    if (!arg_start)
        return;
    size_t room = (size_t)(arg_end - arg_start), n = strlen(title);
    memset(arg_start, 0, room); /* NUL to the end: the kernel reads no further */
    memcpy(arg_start, title, n < room ? n : room - 1);
}

/* "1,5,17-19": the members of a bit mask, bit 0 named first. */
const char *ptt_mask_list(char *buf, size_t len, uint64_t v, unsigned first)
{
    size_t o = 0;
    buf[0] = 0;
    for (unsigned i = 0; i < 64 && o + 12 < len; i++) {
        if (!((v >> i) & 1))
            continue;
        unsigned j = i;
        while (j + 1 < 64 && ((v >> (j + 1)) & 1))
            j++;
        o += (size_t)snprintf(buf + o, len - o, j > i ? "%s%u-%u" : "%s%u", o ? "," : "", i + first,
                              j + first);
        i = j;
    }
    if (!o)
        snprintf(buf, len, "none");
    return buf;
}
