// The Java program ptt trace -p attaches to (tests/e2e/test_attach_more.py compiles it with javac
// at test time). Two threads take turns through a monitor (synchronized, wait, notifyAll), two
// contend on a java.util.concurrent ReentrantLock; the JVM implements both with pthread mutexes
// and condition variables (its parking), and names its threads' native side after the Java
// threads. Runs until "quit" on stdin; prints "pid=N", "ready=1", then "ok=1" if the counts
// kept under the locks agree with those of the threads.
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.util.concurrent.locks.ReentrantLock;

public class AttachJvm {
    static final Object monitor = new Object();
    static final ReentrantLock lock = new ReentrantLock();
    static volatile boolean quit;
    static int turn;
    static long turns, counter;
    static final long[] mine = new long[4];

    static void player(int seat) {
        while (!quit) {
            synchronized (monitor) {
                while (turn != seat && !quit) {
                    try {
                        monitor.wait();
                    } catch (InterruptedException e) {
                        return;
                    }
                }
                turn = 1 - seat;
                turns++;
                mine[seat]++;
                monitor.notifyAll();
            }
        }
    }

    static void count(int me) {
        long x = 0;
        while (!quit) {
            lock.lock();
            try {
                counter++;
                mine[me]++;
                for (int i = 0; i < 200; i++) // held a while: the other one parks
                    x = x * 31 + i;
            } finally {
                lock.unlock();
            }
        }
        if (x == 42)
            System.out.println("unlikely");
    }

    public static void main(String[] args) throws Exception {
        Thread[] t = {new Thread(() -> player(0), "player-0"),
                      new Thread(() -> player(1), "player-1"),
                      new Thread(() -> count(2), "counter-0"),
                      new Thread(() -> count(3), "counter-1")};
        for (Thread x : t)
            x.start();
        System.out.println("pid=" + ProcessHandle.current().pid());
        System.out.println("ready=1");
        BufferedReader in = new BufferedReader(new InputStreamReader(System.in));
        for (String line; (line = in.readLine()) != null && !line.equals("quit");)
            ;
        quit = true;
        synchronized (monitor) {
            monitor.notifyAll();
        }
        for (Thread x : t)
            x.join();
        boolean ok = turns == mine[0] + mine[1] && counter == mine[2] + mine[3] && turns > 0;
        System.out.println("ok=" + (ok ? 1 : 0));
    }
}
