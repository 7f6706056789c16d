/* ptt: one multi-call program. "ptt trace ..." and "ptt-trace ..." (a link to ptt) are the same. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>

#include "cmd/cmds.h"
#include "cmd/usage.h"
#include "util/util.h"

#ifndef PTT_VERSION
#define PTT_VERSION "0.1"
#endif

static const struct {
    const char *name;
    int (*fn)(int, char **);
} commands[] = {
#define PTT_CMD_ENTRY(name) {#name, cmd_##name},
    PTT_COMMANDS(PTT_CMD_ENTRY)
#undef PTT_CMD_ENTRY
};
#define NCOMMANDS (sizeof commands / sizeof commands[0])

static int unknown(const char *name)
{
    fprintf(stderr, "ptt: '%s' is not a ptt command; see 'ptt --help'\n", name);
    return PTT_EXIT_USAGE;
}

/* Standard input, output or error closed when ptt started: /dev/null opened read-only in its
 * place, so that no file the command opens takes the number (a temporary file would receive
 * "standard output"), and writing there fails as it should. Not for ptt trace, whose program
 * gets its descriptors as they were. */
static void fill_std_fds(void)
{
    for (int fd = 0; fd < 3; fd++) /* in order: the lowest number free is fd's */
        if (fcntl(fd, F_GETFD) < 0 && errno == EBADF && open("/dev/null", O_RDONLY) < 0)
            return;
}

static int run(const char *name, int argc, char **argv)
{
    for (size_t i = 0; i < NCOMMANDS; i++)
        if (!strcmp(commands[i].name, name)) {
            ptt_command = commands[i].name;
            if (strcmp(name, "trace"))
                fill_std_fds();
            return commands[i].fn(argc, argv);
        }
    return unknown(name);
}

/* ptt help [COMMAND]: ptt's usage, or the command's, as 'ptt COMMAND --help' prints it. */
static int help(int argc, char **argv)
{
    if (argc > 3) {
        fprintf(stderr, "ptt: usage: ptt help [COMMAND]\n");
        return PTT_EXIT_USAGE;
    }
    if (argc == 3)
        for (size_t i = 0; i < NCOMMANDS; i++)
            if (!strcmp(commands[i].name, argv[2])) {
                fputs(ptt_usage(argv[2]), stdout);
                return 0;
            }
    if (argc == 3)
        return unknown(argv[2]);
    fputs(ptt_usage("ptt"), stdout);
    return 0;
}

int main(int argc, char **argv)
{
    ptt_keep_argv(argc, argv);
    const char *base = argv[0] ? strrchr(argv[0], '/') : NULL;
    base = base ? base + 1 : argv[0] ? argv[0] : "ptt";
    if (!strncmp(base, "ptt-", 4))
        return run(base + 4, argc, argv);
    if (argc < 2) {
        fputs(ptt_usage("ptt"), stderr);
        return PTT_EXIT_USAGE;
    }
    if (!strcmp(argv[1], "help"))
        return help(argc, argv);
    if (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h")) {
        fputs(ptt_usage("ptt"), stdout);
        return 0;
    }
    if (!strcmp(argv[1], "--version")) {
        printf("ptt %s\n", PTT_VERSION);
        return 0;
    }
    return run(argv[1], argc - 1, argv + 1);
}
