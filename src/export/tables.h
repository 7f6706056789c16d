/* ptt export --format=tables: the tables and their columns, with their SQL types. The header line
 * of each file and DIR/schema.sql are made from this list, and docs/export.md documents it. */
#ifndef PTT_TABLES_H
#define PTT_TABLES_H

/* TABLE(name, what it holds) then its COLUMN(name, SQL type)s, in file order. */
#define PTT_TABLES(TABLE, COLUMN)                                                   \
    TABLE(events, "every event, in ptt view's order")                               \
    COLUMN(event_id, "BIGINT")                                                      \
    COLUMN(ns, "BIGINT")                                                            \
    COLUMN(pid, "INTEGER")                                                          \
    COLUMN(tid, "INTEGER")                                                          \
    COLUMN(serial, "INTEGER")                                                       \
    COLUMN(event, "VARCHAR")                                                        \
    COLUMN(class, "VARCHAR")                                                        \
    COLUMN(kind, "VARCHAR")                                                         \
    COLUMN(routine, "VARCHAR")                                                      \
    COLUMN(object, "UBIGINT")                                                       \
    COLUMN(site, "UBIGINT")                                                         \
    COLUMN(ret, "BIGINT")                                                           \
    COLUMN(errno, "BIGINT")                                                         \
    COLUMN(nested, "BOOLEAN")                                                       \
    TABLE(fields, "every field of every event, as ptt view --format=raw prints it") \
    COLUMN(event_id, "BIGINT")                                                      \
    COLUMN(position, "INTEGER")                                                     \
    COLUMN(field, "VARCHAR")                                                        \
    COLUMN(type, "VARCHAR")                                                         \
    COLUMN(value, "VARCHAR")                                                        \
    TABLE(threads, "every thread, as ptt stat counts them")                         \
    COLUMN(pid, "INTEGER")                                                          \
    COLUMN(tid, "INTEGER")                                                          \
    COLUMN(name, "VARCHAR")                                                         \
    COLUMN(start_ns, "BIGINT")                                                      \
    COLUMN(end_ns, "BIGINT")                                                        \
    COLUMN(creator, "INTEGER")                                                      \
    COLUMN(pthread, "UBIGINT")                                                      \
    TABLE(processes, "every process")                                               \
    COLUMN(pid, "INTEGER")                                                          \
    COLUMN(ppid, "INTEGER")                                                         \
    COLUMN(start_ns, "BIGINT")                                                      \
    COLUMN(end_ns, "BIGINT")                                                        \
    COLUMN(exit_status, "INTEGER")                                                  \
    COLUMN(exit_code, "INTEGER")                                                    \
    COLUMN(signal, "INTEGER")                                                       \
    TABLE(objects, "every POSIX threads object the events name")                    \
    COLUMN(pid, "INTEGER")                                                          \
    COLUMN(address, "UBIGINT")                                                      \
    COLUMN(kind, "VARCHAR")                                                         \
    COLUMN(name, "VARCHAR")                                                         \
    TABLE(sites, "every call site the events name")                                 \
    COLUMN(pid, "INTEGER")                                                          \
    COLUMN(address, "UBIGINT")                                                      \
    COLUMN(name, "VARCHAR")                                                         \
    COLUMN(function, "VARCHAR")                                                     \
    COLUMN(file, "VARCHAR")                                                         \
    COLUMN(line, "INTEGER")                                                         \
    TABLE(waits, "the calls ptt stat counts: waits, acquisitions, blocked time")    \
    COLUMN(pid, "INTEGER")                                                          \
    COLUMN(tid, "INTEGER")                                                          \
    COLUMN(object, "UBIGINT")                                                       \
    COLUMN(kind, "VARCHAR")                                                         \
    COLUMN(call, "VARCHAR")                                                         \
    COLUMN(site, "UBIGINT")                                                         \
    COLUMN(begin_ns, "BIGINT")                                                      \
    COLUMN(end_ns, "BIGINT")                                                        \
    COLUMN(counted, "BOOLEAN")                                                      \
    COLUMN(acquired, "BOOLEAN")                                                     \
    COLUMN(contended, "BOOLEAN")                                                    \
    COLUMN(blocked, "BOOLEAN")                                                      \
    COLUMN(unfinished, "BOOLEAN")                                                   \
    COLUMN(result, "BIGINT")                                                        \
    TABLE(holds, "the holds of locks ptt stat counts")                              \
    COLUMN(pid, "INTEGER")                                                          \
    COLUMN(tid, "INTEGER")                                                          \
    COLUMN(object, "UBIGINT")                                                       \
    COLUMN(kind, "VARCHAR")                                                         \
    COLUMN(begin_ns, "BIGINT")                                                      \
    COLUMN(end_ns, "BIGINT")                                                        \
    COLUMN(taken_site, "UBIGINT")                                                   \
    COLUMN(released_site, "UBIGINT")

#endif
