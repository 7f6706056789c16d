/* The C++ program ptt trace -p attaches to (tests/e2e/test_attach_more.py). Two std::threads
 * running count_worker contend on one std::mutex through std::lock_guard, in bursts; two running
 * Player::run take turns through another std::mutex and a std::condition_variable. Each counts
 * its own calls, and only runs while told to: commands on stdin, one a line,
 *   go     the workers run
 *   pause  they stop; prints, for each worker I, "locks_I=N waits_I=N notifies_I=N", the
 *          lock, wait and notify calls it made since the last go
 *   spawn  starts a std::thread running Tally::run (SPAWN_LOCKS locks of the counter), joins it;
 *          prints its tid
 *   quit   prints "ok=1" if the counter and the turns agree with the counts, and ends.
 * Idle workers poll a flag with nanosleep: no POSIX threads call outside a phase, so the calls
 * made while attached are exactly those of the phases while attached. The workers' tids are
 * printed at the start as "@tid_I". Built with -g -O1 (tests/progs/cxx.cmake): std::mutex's calls
 * are inlined from libstdc++'s headers and named by this file's lines. */
#include <atomic>
#include <condition_variable>
#include <cstdio>
#include <cstring>
#include <mutex>
#include <thread>
#include <time.h>
#include <unistd.h>

#include <sys/syscall.h>

enum { COUNTERS = 2, PLAYERS = 2, WORKERS = COUNTERS + PLAYERS, SPAWN_LOCKS = 1000, BURST = 20 };

struct Counts {
    long locks, waits, notifies;
};

static std::atomic<bool> go, quit;
static std::atomic<int> pause_gen, ack[WORKERS], tids[WORKERS];
static Counts phase[WORKERS]; /* a worker's counts of the last phase, read after its ack */
static long total_locks, total_rounds;
static std::atomic<long> ends; /* phases a player ended */

std::mutex counter_lock;
long counter;

struct Table {
    std::mutex m;
    std::condition_variable cv;
    int turn;
    long rounds;
} table;

static void snooze()
{
    struct timespec d = {0, 200000};
    nanosleep(&d, nullptr);
}

/* Idle until a phase begins (true) or the program ends (false); hands over the counts of the
 * phase that ended once per pause. */
static bool wait_phase(int me, Counts &mine)
{
    for (;;) {
        if (quit)
            return false;
        if (go)
            return true;
        int g = pause_gen;
        if (ack[me] != g) {
            phase[me] = mine;
            mine = Counts{};
            ack[me] = g;
        }
        snooze();
    }
}

static void count_worker(int me)
{
    tids[me] = (int)syscall(SYS_gettid);
    Counts mine{};
    while (wait_phase(me, mine))
        while (go) {
            for (int i = 0; i < BURST; i++) {
                std::lock_guard<std::mutex> g(counter_lock); /* site:count_lock */
                counter++;
                mine.locks++;
            }
            snooze(); /* a trace of a second that the test reads whole */
        }
}

struct Player {
    int me, seat;
    /* Takes turns with the other player while the phase lasts; whoever sees the phase end wakes
     * the other, which then sees it too. */
    void run()
    {
        tids[me] = (int)syscall(SYS_gettid);
        Counts mine{};
        while (wait_phase(me, mine))
            for (;;) {
                std::unique_lock<std::mutex> l(table.m); /* site:turn_lock */
                mine.locks++;
                while (table.turn != seat && go) {
                    mine.waits++;
                    table.cv.wait(l); /* site:turn_wait */
                }
                mine.notifies++;
                if (!go) {
                    table.cv.notify_all(); /* site:end_notify */
                    ends++;
                    break;
                }
                table.turn = 1 - seat;
                table.rounds++;
                table.cv.notify_one(); /* site:turn_notify */
            }
    }
};

struct Tally {
    void run()
    {
        std::printf("@tid_spawned=%d\n", (int)syscall(SYS_gettid));
        for (int i = 0; i < SPAWN_LOCKS; i++) {
            std::lock_guard<std::mutex> g(counter_lock); /* site:tally_lock */
            counter++;
        }
    }
};

static void end_phase()
{
    go = false;
    int g = ++pause_gen;
    for (int i = 0; i < WORKERS; i++)
        while (ack[i] != g)
            snooze();
    for (int i = 0; i < WORKERS; i++) {
        std::printf("locks_%d=%ld\nwaits_%d=%ld\nnotifies_%d=%ld\n", i, phase[i].locks, i,
                    phase[i].waits, i, phase[i].notifies);
        total_locks += i < COUNTERS ? phase[i].locks : 0;
        total_rounds += i < COUNTERS ? 0 : phase[i].notifies;
    }
}

int main()
{
    setvbuf(stdout, nullptr, _IOLBF, 0);
    std::thread workers[WORKERS];
    Player players[PLAYERS] = {{COUNTERS, 0}, {COUNTERS + 1, 1}};
    for (int i = 0; i < COUNTERS; i++)
        workers[i] = std::thread(count_worker, i);
    for (int i = 0; i < PLAYERS; i++)
        workers[COUNTERS + i] = std::thread(&Player::run, &players[i]);
    for (int i = 0; i < WORKERS; i++)
        while (!tids[i])
            snooze();
    std::printf("@pid=%d\n", (int)getpid());
    for (int i = 0; i < WORKERS; i++)
        std::printf("@tid_%d=%d\n", i, (int)tids[i]);
    std::printf("ready=1\n");
    long spawned = 0;
    char line[64];
    while (std::fgets(line, sizeof line, stdin)) {
        if (!std::strcmp(line, "go\n")) {
            go = true;
            std::printf("going=1\n");
        } else if (!std::strcmp(line, "pause\n")) {
            end_phase();
        } else if (!std::strcmp(line, "spawn\n")) {
            Tally t;
            std::thread(&Tally::run, &t).join();
            spawned += SPAWN_LOCKS;
            std::printf("spawned=%d\n", SPAWN_LOCKS);
        } else if (!std::strcmp(line, "quit\n")) {
            break;
        }
    }
    quit = true;
    for (auto &w : workers)
        w.join();
    /* Every pass of a player's loop ends with one notify: a turn passed, or the phase's end. */
    std::printf("ok=%d\n", counter == total_locks + spawned && table.rounds + ends == total_rounds);
    return 0;
}
