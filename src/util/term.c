/* -o, the pager and colours of the text-writing readers (term.h). */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "trace/writer.h"
#include "util/term.h"
#include "util/util.h"

static int color_on;
static pid_t pager_pid = -1;

int ptt_term_option(const char *cmd, struct ptt_term *t, int c, const char *arg)
{
    switch (c) {
    case 'o': t->output = arg; return 1;
    case PTT_TERM_OPT_NO_PAGER: t->no_pager = 1; return 1;
    case PTT_TERM_OPT_COLOR:
        if (!arg || !strcmp(arg, "always"))
            t->color = PTT_COLOR_ALWAYS;
        else if (!strcmp(arg, "auto"))
            t->color = PTT_COLOR_AUTO;
        else if (!strcmp(arg, "never"))
            t->color = PTT_COLOR_NEVER;
        else {
            ptt_warn(cmd, "--color=%s: use auto, always or never", arg);
            return -1;
        }
        return 1;
    default: return 0;
    }
}

/* auto: a terminal that shows colours, and no $NO_COLOR (no-color.org: set and not empty). */
static int auto_color(void)
{
    const char *no = getenv("NO_COLOR"), *term = getenv("TERM");
    return isatty(STDOUT_FILENO) && !(no && *no) && !(term && !strcmp(term, "dumb"));
}

int ptt_term_open(const char *cmd, const struct ptt_term *t)
{
    if (t->output && strcmp(t->output, "-")) {
        /* As ptt trace creates its file (docs/security.md), but overwriting: a text made again
         * from the trace is worth no FILE.old. */
        struct ptt_output o;
        char err[600];
        if (ptt_output_open(t->output, 1, 1, &o, err, sizeof err)) {
            ptt_warn(cmd, "%s", err);
            return -1;
        }
        if (dup2(o.fd, STDOUT_FILENO) < 0) {
            ptt_warn(cmd, "cannot write %s: %s", t->output, strerror(errno));
            close(o.fd);
            return -1;
        }
        close(o.fd);
    }
    color_on = t->color == PTT_COLOR_ALWAYS || (t->color == PTT_COLOR_AUTO && auto_color());
    return 0;
}

/* The pager's command, or NULL for none. */
static const char *pager_command(void)
{
    const char *p = getenv("PTT_PAGER");
    if (!p)
        p = getenv("PAGER");
    if (!p)
        p = "less -FRX";
    return *p && strcmp(p, "cat") ? p : NULL;
}

/* Killed while the pager runs: let it have the terminal back first, then die of the signal. */
static void on_signal(int sig)
{
    close(STDOUT_FILENO);
    if (pager_pid > 0)
        waitpid(pager_pid, NULL, 0);
    signal(sig, SIG_DFL);
    raise(sig);
}

void ptt_term_pager(const struct ptt_term *t)
{
    const char *cmd = pager_command();
    if (t->no_pager || !cmd || !isatty(STDOUT_FILENO) || pager_pid > 0)
        return;
    int fd[2];
    if (pipe2(fd, O_CLOEXEC))
        return;
    fflush(stdout);
    setenv("LESS", "FRX", 0); /* as git: a plain "less" too quits on a short text, keeps colours */
    setenv("LV", "-c", 0);
    pid_t pid = fork();
    if (pid == 0) {
        dup2(fd[0], STDIN_FILENO);
        execl("/bin/sh", "sh", "-c", cmd, (char *)NULL);
        _exit(127);
    }
    if (pid > 0 && dup2(fd[1], STDOUT_FILENO) >= 0) {
        pager_pid = pid;
        int sigs[] = {SIGINT, SIGTERM, SIGHUP, SIGQUIT};
        for (size_t i = 0; i < sizeof sigs / sizeof *sigs; i++)
            signal(sigs[i], on_signal);
    }
    close(fd[0]);
    close(fd[1]);
}

int ptt_term_paging(void)
{
    return pager_pid > 0;
}

int ptt_term_close(const char *cmd, const struct ptt_term *t)
{
    int bad = fflush(stdout) || ferror(stdout);
    int err = errno;
    if (pager_pid > 0) {
        close(STDOUT_FILENO);
        waitpid(pager_pid, NULL, 0);
        pager_pid = -1;
        return 0; /* a pager quit early is no error */
    }
    if (bad) {
        const char *name = t->output && strcmp(t->output, "-") ? t->output : "standard output";
        ptt_warn(cmd, "cannot write %s: %s", name, strerror(err));
        return -1;
    }
    return 0;
}

const char *ptt_c(enum ptt_color c)
{
    static const char *const esc[] = {"\033[m",   "\033[1m",  "\033[31m", "\033[32m",
                                      "\033[33m", "\033[34m", "\033[35m", "\033[36m"};
    return color_on ? esc[c] : "";
}

int ptt_color_on(void)
{
    return color_on;
}
