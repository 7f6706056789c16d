/* Small helpers shared by the commands. */
#ifndef PTT_UTIL_H
#define PTT_UTIL_H

#include <stdint.h>

#include <stddef.h>

/* "64K", "16M", "1G", "4096": bytes, or -1 for anything else. */
int64_t ptt_parse_size(const char *s);
/* Print "ptt <cmd>: message" on stderr. */
void ptt_warn(const char *cmd, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* The command running ("view", "trace"...), which ptt_note names; NULL: none. */
extern const char *ptt_command;
/* Print "ptt <ptt_command>: message" on stderr: a notice from code that is not the command's. */
void ptt_note(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* The character at s[i] (of n bytes): its length in bytes, and (*unsafe) whether a terminal must
 * not be given it as it is: a C0 control or DEL, a C1 control (U+0080..U+009F in UTF-8: U+009B
 * is a CSI), or bytes that are not UTF-8 (one ill-formed part: a lone 0x9b is a CSI to an 8-bit
 * terminal). */
size_t ptt_term_char(const char *s, size_t n, size_t i, int *unsafe);
/* n bytes of s as a terminal may be given them: each byte of what ptt_term_char says unsafe as
 * \xNN, the rest as it is; into out (cap bytes, NUL included: whole characters only, NULL: none).
 * The length of the whole text (snprintf's way: what out needs, less its NUL). */
size_t ptt_term_escape(char *out, size_t cap, const char *s, size_t n);
/* The control characters of n bytes of s as '?' (ptt_term_char; lines: newlines and tabs kept),
 * in place, so that no escape sequence of a program's output or a log reaches a terminal; how
 * many there were. */
size_t ptt_unctrl(char *s, size_t n, int lines);
/* After getopt_long returned '?' or ':': one line naming the bad option. */
void ptt_bad_option(const char *cmd, char **argv);
/* "ptt: out of memory" and exit status ptt_oom_status (2; ptt trace's own failures are 125).
 * On a thread that set ptt_oom_hook (a reader's read-ahead), the hook runs instead: it hands
 * what was read over and parks the thread, and the command's thread says it after the events
 * read before. */
__attribute__((noreturn)) void ptt_out_of_memory(void);
extern _Thread_local void (*ptt_oom_hook)(void);
extern int ptt_oom_status;
/* p, or ptt_out_of_memory() when it is NULL: the tools' tables cannot do without the memory
 * they ask for. */
void *ptt_must(void *p);
uint64_t ptt_mono_ns(void);
/* Whether thread tid of process pid no longer exists (tgkill says ESRCH). */
int ptt_thread_gone(int32_t pid, int32_t tid);
/* The default trace file, as perf's perf.data: ptt.data in $PTT_DIR, else in the current
 * directory (written by ptt trace without -o, read by the readers without FILE). NULL (having
 * said why, as cmd) when $PTT_DIR is too long. */
#define PTT_DEFAULT_TRACE "ptt.data"
/* "1,5,17-19" (bit i named i + first), "none" for 0: a signal or CPU set as ptt view says it. */
const char *ptt_mask_list(char *buf, size_t len, uint64_t v, unsigned first);
const char *ptt_default_trace(const char *cmd);
/* The readers' one FILE after their options (argv[first], first: getopt's optind), else the default
 * trace; NULL (having said why, as cmd) for more than one file. */
const char *ptt_trace_arg(const char *cmd, int argc, char **argv, int first);
/* After path could not be read: a hint to append when it is the default and is missing, else "". */
const char *ptt_default_hint(const char *path);
uint64_t ptt_real_ns(void);

/* main's argv, whose memory ptt_retitle overwrites: the command line ps -f and pgrep -f see. */
void ptt_keep_argv(int argc, char **argv);
/* A process forked from ptt and not exec'd shows ptt's whole command line: pkill -f "ptt trace"
 * would signal it as if it were ptt trace. Show title instead, as its command line and name. */
void ptt_retitle(const char *title);

#endif
