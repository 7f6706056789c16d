/* The usage texts of ptt and its commands, generated from docs/src/CMD.txt (tools/gen_docs.py),
 * the source of the man pages and of the options in docs/ too. */
#ifndef PTT_USAGE_H
#define PTT_USAGE_H

/* "ptt" or a command's name; NULL for another name. */
const char *ptt_usage(const char *cmd);

#endif
