/* Names of threads and objects, and call sites (tests/e2e: test_names, test_sites,
 * test_filters): names_prog
 *
 * Threads: main; two started at producer (named producer and producer#2: the second is created
 * once the first has started), one started at consumer that names itself "eater" first thing, one
 * started at idle that main names "sleeper" before it does anything. Objects: globals
 * (queue_lock), struct fields (cache.lock, cache.cond), array elements (locks[2],
 * shards[1].lock), a heap mutex initialized here (mutex@names_prog.c:LINE), a heap mutex never
 * initialized, first locked here, a barrier on main's stack, objects named with ptt_name and
 * ptt_namef (renamed_lock also has a symbol, which ptt_name wins over), two globals a --names file
 * names (by address and by symbol), a semaphore. Last, a forked child locks queue_lock.
 *
 * A call whose site the tests check carries a comment "site:KEY" on its line (test_sites.py
 * reads them from this file). Prints the addresses (@NAME=0x...) and thread ids (@tid_NAME). */
#include <ptt.h>
#include <semaphore.h>
#include <sys/wait.h>

#include "progs.h"

pthread_mutex_t queue_lock = PTHREAD_MUTEX_INITIALIZER;

struct cache {
    long hits;
    pthread_mutex_t lock;
    pthread_cond_t cond;
} cache = {0, PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER};

pthread_mutex_t locks[4] = {PTHREAD_MUTEX_INITIALIZER, PTHREAD_MUTEX_INITIALIZER,
                            PTHREAD_MUTEX_INITIALIZER, PTHREAD_MUTEX_INITIALIZER};

struct shard {
    int id;
    pthread_mutex_t lock;
} shards[3];

pthread_mutex_t addr_named_lock = PTHREAD_MUTEX_INITIALIZER;   /* --names: by address */
pthread_mutex_t symbol_named_lock = PTHREAD_MUTEX_INITIALIZER; /* --names: by symbol */
pthread_mutex_t renamed_lock = PTHREAD_MUTEX_INITIALIZER;      /* ptt_name wins */
sem_t items;

static int started[2], named, waiting;

void *producer(void *arg)
{
    int id = *(int *)arg;
    put_tid(id ? "producer1" : "producer0");
    set_flag(&started[id]);
    pthread_mutex_lock(&queue_lock);       /* site:producer_lock */
    pthread_mutex_unlock(&queue_lock);     /* site:producer_unlock */
    sem_post(&items);                      /* site:producer_post */
    pthread_mutex_lock(&locks[2]);         /* site:producer_lock_locks2 */
    pthread_mutex_unlock(&locks[2]);       /* site:producer_unlock_locks2 */
    pthread_mutex_lock(&shards[1].lock);   /* site:producer_lock_shard */
    pthread_mutex_unlock(&shards[1].lock); /* site:producer_unlock_shard */
    if (id == 0) {
        wait_flag(&waiting); /* the consumer is in its wait, or about to be */
        wait_cond_waiters(&cache.cond, &cache.lock, 1);
        pthread_mutex_lock(&cache.lock); /* site:producer_lock_cache */
        cache.hits++;
        pthread_cond_signal(&cache.cond);  /* site:producer_signal */
        pthread_mutex_unlock(&cache.lock); /* site:producer_unlock_cache */
    }
    return arg;
}

void *consumer(void *arg)
{
    pthread_barrier_t *gate = arg;
    CHECK(pthread_setname_np(pthread_self(), "eater"));
    put_tid("consumer");
    for (int i = 0; i < 2; i++)
        sem_wait(&items);            /* site:consumer_wait */
    pthread_mutex_lock(&cache.lock); /* site:consumer_lock_cache */
    set_flag(&waiting);
    while (!cache.hits)
        pthread_cond_wait(&cache.cond, &cache.lock); /* site:consumer_cond_wait */
    pthread_mutex_unlock(&cache.lock);               /* site:consumer_unlock_cache */
    pthread_barrier_wait(gate);                      /* site:consumer_gate_wait */
    return NULL;
}

void *idle(void *arg)
{
    put_tid("idle");
    wait_flag(&named);
    pthread_mutex_lock(&addr_named_lock);     /* site:idle_lock_addr */
    pthread_mutex_unlock(&addr_named_lock);   /* site:idle_unlock_addr */
    pthread_mutex_lock(&symbol_named_lock);   /* site:idle_lock_symbol */
    pthread_mutex_unlock(&symbol_named_lock); /* site:idle_unlock_symbol */
    return arg;
}

int main(void)
{
    put_tid("main");
    put_addr("queue_lock", &queue_lock);
    put_addr("cache_lock", &cache.lock);
    put_addr("cache_cond", &cache.cond);
    put_addr("locks2", &locks[2]);
    put_addr("shard1", &shards[1].lock);
    put_addr("addr_named", &addr_named_lock);
    put_addr("symbol_named", &symbol_named_lock);
    put_addr("renamed", &renamed_lock);
    put_addr("items", &items);
    ptt_name(&renamed_lock, "renamed by ptt_name");
    for (int i = 0; i < 3; i++)
        pthread_mutex_init(&shards[i].lock, NULL); /* site:shard_init */
    sem_init(&items, 0, 0);                        /* site:items_init */

    pthread_mutex_t *heap = malloc(sizeof *heap);
    pthread_mutex_t *fresh = malloc(sizeof *fresh);
    pthread_mutex_t *job = malloc(sizeof *job);
    if (!heap || !fresh || !job)
        return 99;
    put_addr("heap", heap);
    put_addr("fresh", fresh);
    put_addr("job", job);
    pthread_mutex_init(heap, NULL); /* site:heap_init */
    *fresh = (pthread_mutex_t)PTHREAD_MUTEX_INITIALIZER;
    pthread_mutex_init(job, NULL); /* site:job_init */
    ptt_namef(job, "job %d lock", 7);
    pthread_barrier_t gate;
    put_addr("gate", &gate);
    pthread_barrier_init(&gate, NULL, 2); /* site:gate_init */

    pthread_t prod[2], cons, sleeper;
    int ids[2] = {0, 1};
    for (int i = 0; i < 2; i++) {
        CHECK(pthread_create(&prod[i], NULL, producer, &ids[i])); /* site:create_producer */
        wait_flag(&started[i]);
    }
    CHECK(pthread_create(&cons, NULL, consumer, &gate)); /* site:create_consumer */
    CHECK(pthread_create(&sleeper, NULL, idle, NULL));   /* site:create_idle */
    CHECK(pthread_setname_np(sleeper, "sleeper"));
    set_flag(&named);

    pthread_mutex_lock(heap);            /* site:main_lock_heap */
    pthread_mutex_unlock(heap);          /* site:main_unlock_heap */
    pthread_mutex_lock(fresh);           /* site:main_lock_fresh */
    pthread_mutex_unlock(fresh);         /* site:main_unlock_fresh */
    pthread_mutex_lock(job);             /* site:main_lock_job */
    pthread_mutex_unlock(job);           /* site:main_unlock_job */
    pthread_mutex_lock(&renamed_lock);   /* site:main_lock_renamed */
    pthread_mutex_unlock(&renamed_lock); /* site:main_unlock_renamed */
    pthread_barrier_wait(&gate);         /* site:main_gate_wait */
    for (int i = 0; i < 2; i++)
        CHECK(pthread_join(prod[i], NULL)); /* site:join_producer */
    CHECK(pthread_join(cons, NULL));        /* site:join_consumer */
    CHECK(pthread_join(sleeper, NULL));     /* site:join_idle */

    fflush(stdout);
    pid_t child = fork();
    if (child == 0) {
        pthread_mutex_lock(&queue_lock);   /* site:child_lock */
        pthread_mutex_unlock(&queue_lock); /* site:child_unlock */
        _exit(0);
    }
    int status;
    if (child < 0 || waitpid(child, &status, 0) != child || status != 0)
        return 99;
    put_line("@child=%d", (int)child);
    put_line("hits=%ld", cache.hits);
    return 0;
}
