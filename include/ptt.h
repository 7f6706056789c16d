/* ptt.h: the public header for programs traced by ptt. Reserved for naming objects (see
 * ptt_name, to come); including it costs nothing and links against nothing. */
#ifndef PTT_H
#define PTT_H

#define PTT_VERSION_MAJOR 0
#define PTT_VERSION_MINOR 1

#endif
