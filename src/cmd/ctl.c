/* ptt ctl: live control of a running session. */
#define _GNU_SOURCE
#include <stdio.h>
#include <string.h>

#include "cmd/cmds.h"
#include "session/control.h"
#include "cmd/usage.h"
#include "util/util.h"

int cmd_ctl(int argc, char **argv)
{
    if (argc >= 2 && (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h"))) {
        fputs(ptt_usage("ctl"), stdout);
        return 0;
    }
    if (argc == 2 && !strcmp(argv[1], "list")) {
        char out[16384];
        if (ptt_ctl_list(out, sizeof out)) {
            ptt_warn("ctl", "%s", out);
            return PTT_EXIT_USAGE;
        }
        fputs(out, stdout);
        return 0;
    }
    if (argc < 3) {
        ptt_warn("ctl", "usage: ptt ctl list | ptt ctl SESSION REQUEST (see 'ptt ctl --help')");
        return PTT_EXIT_USAGE;
    }
    char req[512] = "";
    for (int i = 2; i < argc; i++) {
        size_t l = strlen(req);
        snprintf(req + l, sizeof req - l, "%s%s", i > 2 ? " " : "", argv[i]);
    }
    char reply[8192];
    int r = ptt_ctl_request(argv[1], req, reply, sizeof reply);
    if (r) {
        reply[strcspn(reply, "\n")] = 0;
        ptt_warn("ctl", "%s", !strncmp(reply, "error: ", 7) ? reply + 7 : reply);
        return PTT_EXIT_USAGE;
    }
    fputs(reply, stdout);
    return 0;
}
