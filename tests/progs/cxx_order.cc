// cxx_order: two threads take two std::mutex in opposite orders, one after the other (no
// deadlock happens), in the lambdas their functions are inlined into: ptt check's lock-order
// finding names those, C++ names with spaces ("> >"), whole. Built as cxx_names is
// (tests/progs/cxx.cmake). Prints n=0.
#include <cstdio>
#include <mutex>
#include <thread>

struct Bank {
    std::mutex audit, ledger;
    long n = 0;
} bank;

namespace svc
{
__attribute__((always_inline)) inline void post()
{
    std::lock_guard<std::mutex> a(bank.ledger);
    std::lock_guard<std::mutex> b(bank.audit);
    bank.n++;
}
__attribute__((always_inline)) inline void audit()
{
    std::lock_guard<std::mutex> a(bank.audit);
    std::lock_guard<std::mutex> b(bank.ledger);
    bank.n--;
}
} // namespace svc

int main()
{
    std::thread t1([] { svc::post(); });
    t1.join();
    std::thread t2([] { svc::audit(); });
    t2.join();
    std::printf("n=%ld\n", bank.n);
}
