// The workloads of bench/peers/run.py: small pthread programs whose calls are counted, so that a
// tracer's cost can be given per call. Each writes the number of pthread calls it made (locks,
// unlocks, waits, signals, creates, joins; the main thread's too) to the file named by
// $PEERS_CALLS when it is set, not to stdout, which some tracers write to.
//   workloads uncontended THREADS N   each thread: N lock/unlock pairs on its own mutex
//   workloads contended THREADS N     each thread: N lock/unlock pairs on one shared mutex
//   workloads condvar N               one producer, one consumer, N items through one slot
//   workloads churn N                 N create/join pairs, 4 threads at a time
#define _GNU_SOURCE
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct padded {
    pthread_mutex_t m;
    char pad[64 - sizeof(pthread_mutex_t) % 64];
};

static long n_iter;
static struct padded *locks;
static pthread_mutex_t shared = PTHREAD_MUTEX_INITIALIZER;
static volatile long counter;

static void *own_loop(void *arg)
{
    pthread_mutex_t *m = &locks[(long)arg].m;
    for (long i = 0; i < n_iter; i++) {
        pthread_mutex_lock(m);
        pthread_mutex_unlock(m);
    }
    return NULL;
}

static void *shared_loop(void *arg)
{
    (void)arg;
    for (long i = 0; i < n_iter; i++) {
        pthread_mutex_lock(&shared);
        counter++;
        pthread_mutex_unlock(&shared);
    }
    return NULL;
}

// Runs THREADS threads of FN; returns the calls made (2 per pair, plus creates and joins).
static long run_threads(int threads, void *(*fn)(void *))
{
    pthread_t t[64];
    locks = aligned_alloc(64, sizeof(*locks) * (size_t)threads);
    for (int i = 0; i < threads; i++)
        pthread_mutex_init(&locks[i].m, NULL);
    for (long i = 0; i < threads; i++)
        pthread_create(&t[i], NULL, fn, (void *)i);
    for (int i = 0; i < threads; i++)
        pthread_join(t[i], NULL);
    return 2L * n_iter * threads + 2L * threads + threads;
}

static pthread_mutex_t q_m = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t q_full = PTHREAD_COND_INITIALIZER, q_empty = PTHREAD_COND_INITIALIZER;
static int q_has;
static long q_calls[2];

// One slot: the producer waits until it is empty, the consumer until it is full.
static void *slot_loop(void *arg)
{
    long who = (long)arg, calls = 0;
    pthread_cond_t *mine = who ? &q_full : &q_empty, *other = who ? &q_empty : &q_full;
    for (long i = 0; i < n_iter; i++) {
        pthread_mutex_lock(&q_m);
        calls += 2;
        while (q_has == (int)!who) {
            pthread_cond_wait(mine, &q_m);
            calls++;
        }
        q_has = !who;
        pthread_cond_signal(other);
        pthread_mutex_unlock(&q_m);
        calls++;
    }
    q_calls[who] = calls;
    return NULL;
}

static long run_condvar(void)
{
    pthread_t t[2];
    for (long i = 0; i < 2; i++)
        pthread_create(&t[i], NULL, slot_loop, (void *)i);
    for (int i = 0; i < 2; i++)
        pthread_join(t[i], NULL);
    return q_calls[0] + q_calls[1] + 4;
}

static void *nothing(void *arg)
{
    return arg;
}

static long run_churn(void)
{
    pthread_t t[4];
    long calls = 0;
    for (long i = 0; i < n_iter; i += 4) {
        int k = n_iter - i < 4 ? (int)(n_iter - i) : 4;
        for (int j = 0; j < k; j++)
            pthread_create(&t[j], NULL, nothing, NULL);
        for (int j = 0; j < k; j++)
            pthread_join(t[j], NULL);
        calls += 2L * k;
    }
    return calls;
}

int main(int argc, char **argv)
{
    if (argc < 3)
        goto usage;
    int threads = argc > 3 ? atoi(argv[2]) : 1;
    n_iter = atol(argv[argc - 1]);
    if (threads < 1 || threads > 64 || n_iter < 1)
        goto usage;
    long calls;
    if (!strcmp(argv[1], "uncontended") && argc == 4)
        calls = run_threads(threads, own_loop);
    else if (!strcmp(argv[1], "contended") && argc == 4)
        calls = run_threads(threads, shared_loop);
    else if (!strcmp(argv[1], "condvar") && argc == 3)
        calls = run_condvar();
    else if (!strcmp(argv[1], "churn") && argc == 3)
        calls = run_churn();
    else
        goto usage;
    const char *out = getenv("PEERS_CALLS");
    FILE *f = out ? fopen(out, "w") : NULL;
    if (f) {
        fprintf(f, "%ld\n", calls);
        fclose(f);
    }
    return 0;
usage:
    fprintf(stderr, "usage: workloads uncontended|contended THREADS N | condvar N | churn N\n");
    return 2;
}
