/* <ptt.h> in a program (tests/e2e/test_names.py): name_api
 *
 * Names a heap mutex with ptt_name, a condvar with ptt_namef, a semaphore with a 300-byte name
 * (ptt keeps 255 bytes), a rwlock with a name that needs quoting (quotes, a backslash, a comma),
 * then uses each. Linked with pthread alone: without ptt trace the calls do nothing and the
 * program runs the same. Prints the addresses and what every call returned. */
#include <ptt.h>
#include <semaphore.h>

#include "progs.h"

int main(void)
{
    pthread_mutex_t *m = malloc(sizeof *m);
    pthread_cond_t c;
    sem_t s;
    pthread_rwlock_t rw;
    if (!m)
        return 99;
    put_addr("m", m);
    put_addr("c", &c);
    put_addr("s", &s);
    put_addr("rw", &rw);
    CALL("m_init", pthread_mutex_init(m, NULL));
    ptt_name(m, "request lock");
    CALL("c_init", pthread_cond_init(&c, NULL));
    ptt_namef(&c, "queue %d %s", 7, "not empty");
    CALL("s_init", sem_init(&s, 0, 1));
    char long_name[301];
    for (int i = 0; i < 300; i++)
        long_name[i] = (char)('a' + i % 26);
    long_name[300] = 0;
    ptt_namef(&s, "%s", long_name);
    CALL("rw_init", pthread_rwlock_init(&rw, NULL));
    ptt_name(&rw, "say \"hi\", C:\\dir");

    CALL("m_lock", pthread_mutex_lock(m));
    CALL("c_signal", pthread_cond_signal(&c));
    CALL("m_unlock", pthread_mutex_unlock(m));
    CALL("s_wait", sem_wait(&s));
    CALL("s_post", sem_post(&s));
    CALL("rw_wrlock", pthread_rwlock_wrlock(&rw));
    CALL("rw_unlock", pthread_rwlock_unlock(&rw));
    CALL("m_destroy", pthread_mutex_destroy(m));
    free(m);
    return 0;
}
