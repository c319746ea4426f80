// std_mutex.rs - a Rust program whose threads wait on one std::sync::Mutex
// (futex-based since Rust 1.62: its waits reach syncprof only through
// libc's syscall()).  A holder takes the lock HOLDS times and sleeps
// HOLD_MS inside; WAITERS threads lock it meanwhile and measure, around
// each lock call, how long they waited.  Prints "measured_wait_ns N".
// Usage: std_mutex [HOLDS [HOLD_MS [WAITERS]]]
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::thread;
use std::time::{Duration, Instant};

fn arg(i: usize, default: u64) -> u64 {
    std::env::args().nth(i).map_or(default, |s| s.parse().expect("a number"))
}

fn main() {
    let (holds, hold_ms, waiters) = (arg(1, 12), arg(2, 20), arg(3, 3));
    let lock = Arc::new(Mutex::new(0u64));
    let done = Arc::new(AtomicBool::new(false));
    let first = lock.lock().unwrap(); // held while the waiters start
    let mut hs = Vec::new();
    for _ in 0..waiters {
        let (lock, done) = (lock.clone(), done.clone());
        hs.push(thread::spawn(move || {
            let mut waited = Duration::ZERO;
            while !done.load(Ordering::Relaxed) {
                let t = Instant::now();
                let mut g = lock.lock().unwrap(); // LINE_WAIT
                waited += t.elapsed();
                *g += 1;
                drop(g);
                thread::sleep(Duration::from_millis(2));
            }
            waited
        }));
    }
    thread::sleep(Duration::from_millis(hold_ms));
    drop(first);
    for _ in 1..holds {
        thread::sleep(Duration::from_millis(1));
        let g = lock.lock().unwrap(); // LINE_HOLD
        thread::sleep(Duration::from_millis(hold_ms)); // held, sleeping
        drop(g);
    }
    done.store(true, Ordering::Relaxed);
    let mut total = Duration::ZERO;
    for h in hs {
        total += h.join().unwrap(); // LINE_JOIN
    }
    println!("measured_wait_ns {}", total.as_nanos());
}
