/* The commands of the ptt multi-call program: one file each, cmd_<name>.c. */
#ifndef PTT_CMDS_H
#define PTT_CMDS_H

/* X(name); their summaries and usage texts are in docs/src/ (usage.h). */
#define PTT_COMMANDS(X) \
    X(trace) X(view) X(stat) X(check) X(paje) X(export) X(report) X(ctl) X(scal) X(runs)

#define PTT_DECLARE_CMD(name) int cmd_##name(int argc, char **argv);
PTT_COMMANDS(PTT_DECLARE_CMD)
#undef PTT_DECLARE_CMD

/* Exit status of a command for bad usage or unreadable input. */
#define PTT_EXIT_USAGE 2

#endif
