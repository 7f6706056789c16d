/* ptt: one multi-call program. "ptt trace ..." and "ptt-trace ..." (a link to ptt) are the same. */
#include <stdio.h>
#include <string.h>

#include "cmds.h"

#ifndef PTT_VERSION
#define PTT_VERSION "0.1"
#endif

static const struct {
    const char *name;
    int (*fn)(int, char **);
    const char *summary;
} commands[] = {
#define PTT_CMD_ENTRY(name, summary) {#name, cmd_##name, summary},
    PTT_COMMANDS(PTT_CMD_ENTRY)
#undef PTT_CMD_ENTRY
};
#define NCOMMANDS (sizeof commands / sizeof commands[0])

static void usage(FILE *f)
{
    fprintf(f, "usage: ptt COMMAND [ARGS]   (or ptt-COMMAND [ARGS])\n\ncommands:\n");
    for (size_t i = 0; i < NCOMMANDS; i++)
        fprintf(f, "  %-8s %s\n", commands[i].name, commands[i].summary);
    fprintf(f, "\n'ptt COMMAND --help' describes a command; 'man ptt-COMMAND' has the details.\n");
}

static int run(const char *name, int argc, char **argv)
{
    for (size_t i = 0; i < NCOMMANDS; i++)
        if (!strcmp(commands[i].name, name))
            return commands[i].fn(argc, argv);
    fprintf(stderr, "ptt: '%s' is not a ptt command; see 'ptt --help'\n", name);
    return PTT_EXIT_USAGE;
}

int main(int argc, char **argv)
{
    const char *base = argv[0] ? strrchr(argv[0], '/') : NULL;
    base = base ? base + 1 : argv[0] ? argv[0] : "ptt";
    if (!strncmp(base, "ptt-", 4))
        return run(base + 4, argc, argv);
    if (argc < 2) {
        usage(stderr);
        return PTT_EXIT_USAGE;
    }
    if (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h") || !strcmp(argv[1], "help")) {
        usage(stdout);
        return 0;
    }
    if (!strcmp(argv[1], "--version")) {
        printf("ptt %s\n", PTT_VERSION);
        return 0;
    }
    return run(argv[1], argc - 1, argv + 1);
}
