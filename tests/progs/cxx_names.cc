/* Names of C++ code (tests/e2e/test_cxx_names.py): a class with a mutex member, a class template
 * with a mutex and a condition variable, threads running lambdas, a functor, functions given as
 * pointers (without arguments, with arguments, a static member function, a member function, an
 * extern "C" function, one std::async runs), a static local mutex in two functions, a mutex in an
 * anonymous namespace, three heap objects first used on the
 * same line. Every lock, unlock and wait goes through libstdc++'s inline wrappers (std::lock_guard,
 * std::unique_lock, std::condition_variable::wait, gthr-default.h). Prints KEY=VALUE lines. */
#include <atomic>
#include <condition_variable>
#include <cstdio>
#include <future>
#include <mutex>
#include <thread>
#include <unistd.h>

#include <sys/syscall.h>

namespace bank
{
struct Account {
    std::mutex m;
    long balance = 0;
    void deposit(long v)
    {
        std::lock_guard<std::mutex> g(m); /* site:deposit_lock */
        balance += v;
    }
};
namespace
{
std::mutex vault; /* bank::(anonymous namespace)::vault */
} // namespace
} // namespace bank

template <typename T> struct Box {
    std::mutex m;
    std::condition_variable cv;
    T value{};
    bool full = false;
    std::atomic<bool> waiting{false}; /* the taker waits (so that the putter wakes it) */
    void put(T v)
    {
        std::unique_lock<std::mutex> l(m); /* site:put_lock */
        value = v;
        full = true;
        cv.notify_one(); /* site:put_notify */
    }
    T take()
    {
        std::unique_lock<std::mutex> l(m); /* site:take_lock */
        while (!full) {
            waiting = true;
            cv.wait(l); /* site:take_wait */
        }
        full = false;
        return value;
    }
};

bank::Account account;
Box<int> box;

static std::mutex *f1()
{
    static std::mutex lock;
    std::lock_guard<std::mutex> g(lock); /* site:f1_lock */
    return &lock;
}

static std::mutex *f2()
{
    static std::mutex lock;
    lock.lock();   /* site:f2_lock */
    lock.unlock(); /* site:f2_unlock */
    return &lock;
}

static int tid()
{
    return (int)syscall(SYS_gettid);
}

static void worker()
{
    std::printf("@tid_worker=%d\n", tid());
    account.deposit(1);
    std::printf("@f1_lock=%p\n", (void *)f1());
    std::printf("@f2_lock=%p\n", (void *)f2());
    std::lock_guard<std::mutex> g(bank::vault);
    std::printf("@vault=%p\n", (void *)&bank::vault);
}

static void paid(int times, long amount)
{
    std::printf("@tid_paid=%d\n", tid());
    for (int i = 0; i < times; i++)
        account.deposit(amount);
}

static void logged(const char *what)
{
    std::printf("@tid_logged=%d\nlogged=%s\n", tid(), what);
}

extern "C" void c_worker(int k)
{
    std::printf("@tid_c_worker=%d\nc_worker=%d\n", tid(), k);
}

struct Teller {
    long served = 0;
    static void open(int desk)
    {
        std::printf("@tid_open=%d\ndesk=%d\n", tid(), desk);
    }
    void serve(int n)
    {
        std::printf("@tid_serve=%d\n", tid());
        served += n;
    }
};

static int squared(int x)
{
    std::printf("@tid_async=%d\n", tid());
    return x * x;
}

struct Depositor {
    void operator()() const
    {
        std::printf("@tid_functor=%d\n", tid());
        account.deposit(2);
    }
};

int main()
{
    std::printf("@tid_main=%d\n", tid());
    std::thread taker([] {
        std::printf("@tid_taker=%d\n", tid());
        std::printf("took=%d\n", box.take());
    });
    std::thread putter([] {
        std::printf("@tid_putter=%d\n", tid());
        while (!box.waiting) /* then box.m is free only once the taker waits */
            std::this_thread::yield();
        box.put(7);
    });
    taker.join();
    putter.join();
    std::thread w(worker);
    w.join();
    std::thread d{Depositor()};
    d.join();
    std::thread p(paid, 2, 5L), l(logged, "ok"), o(Teller::open, 4), c(c_worker, 9);
    p.join();
    l.join();
    o.join();
    c.join();
    Teller teller;
    std::thread s(&Teller::serve, &teller, 3);
    s.join();
    std::printf("async=%d\n", std::async(std::launch::async, squared, 7).get());
    bank::Account *heap[3];
    for (int i = 0; i < 3; i++) {
        heap[i] = new bank::Account;
        heap[i]->deposit(3);
        std::printf("@heap%d=%p\n", i, (void *)&heap[i]->m);
    }
    for (auto a : heap)
        delete a;
    std::printf("@account=%p\n@box_m=%p\n@box_cv=%p\n", (void *)&account.m, (void *)&box.m,
                (void *)&box.cv);
    return 0;
}
