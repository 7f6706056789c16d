/* The commands of the ptt multi-call program: one file each, cmd_<name>.c. */
#ifndef PTT_CMDS_H
#define PTT_CMDS_H

/* X(name, summary) */
#define PTT_COMMANDS(X)                                                                          \
    X(trace, "run a program and record its POSIX threads events into a trace file")              \
    X(view, "print a trace file as text, in time order")                                         \
    X(stat, "contention, wait and hold times per object, blocked time per thread")               \
    X(paje, "write a Pajé trace for ViTE and PajeNG")                                            \
    X(export, "write the trace for Perfetto/Chrome, babeltrace2/Trace Compass (CTF), SCO tools") \
    X(report, "write a self-contained HTML report")                                              \
    X(ctl, "control a running session: start, stop, level, events, dump, status")

#define PTT_DECLARE_CMD(name, summary) int cmd_##name(int argc, char **argv);
PTT_COMMANDS(PTT_DECLARE_CMD)
#undef PTT_DECLARE_CMD

/* Exit status of a command for bad usage or unreadable input. */
#define PTT_EXIT_USAGE 2

#endif
