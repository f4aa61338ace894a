// Makes ThreadSanitizer see Swift's `Synchronization.Mutex` on Linux.
//
// `Mutex.withLock` takes and releases the lock with atomics inlined into the caller, which a
// sanitized build instruments; but when the lock is contended it waits and wakes in
// `_MutexHandle._lockSlow` and `_unlockSlow`, futex calls inside libswiftSynchronization.so,
// which is not instrumented. ThreadSanitizer then misses that one critical section ends before
// the next begins, and reports every access under a contended Mutex as a race.
//
// Preloaded into the sanitized test processes (scripts/sanitize.sh), this library stands in
// for those slow paths: each calls the library's own and tells ThreadSanitizer what it did,
// a release on the mutex's address before unlocking, an acquire after locking, the same
// address the inlined atomics synchronize on. Races outside a Mutex are reported as before.
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

// Defined by the ThreadSanitizer runtime linked into a sanitized executable; weak so that a
// process without it (any program a test starts) still loads this library.
void __tsan_acquire(void *address) __attribute__((weak));
void __tsan_release(void *address) __attribute__((weak));

// The methods take their `borrowing self`, the mutex's address, in the Swift self register.
#define SELF __attribute__((swift_context))
#define SWIFTCALL __attribute__((swiftcall))

typedef SWIFTCALL void (*LockSlow)(uint32_t thread, void *SELF mutex);
typedef SWIFTCALL bool (*TryLockSlow)(void *SELF mutex);
typedef SWIFTCALL void (*UnlockSlow)(void *SELF mutex);

#define LOCK_SLOW "$s15Synchronization12_MutexHandleV9_lockSlowyys6UInt32VF"
#define TRY_LOCK_SLOW "$s15Synchronization12_MutexHandleV12_tryLockSlowSbyF"
#define UNLOCK_SLOW "$s15Synchronization12_MutexHandleV11_unlockSlowyyF"

static LockSlow next_lock_slow;
static TryLockSlow next_try_lock_slow;
static UnlockSlow next_unlock_slow;

static void *original(const char *name) {
    void *function = dlsym(RTLD_NEXT, name);
    if (function == NULL) {
        fprintf(stderr, "tsan_mutex: %s not found: %s\n", name, dlerror());
        abort();
    }
    return function;
}

// Resolved once, before any Swift code runs; a process without Swift's Synchronization
// library (any program a test starts) is left alone.
__attribute__((constructor)) static void resolve(void) {
    if (dlsym(RTLD_NEXT, UNLOCK_SLOW) == NULL) return;
    next_lock_slow = (LockSlow)original(LOCK_SLOW);
    next_try_lock_slow = (TryLockSlow)original(TRY_LOCK_SLOW);
    next_unlock_slow = (UnlockSlow)original(UNLOCK_SLOW);
}

SWIFTCALL void lock_slow(uint32_t thread, void *SELF mutex) __asm__(LOCK_SLOW);
SWIFTCALL void lock_slow(uint32_t thread, void *SELF mutex) {
    next_lock_slow(thread, mutex);
    if (__tsan_acquire) __tsan_acquire(mutex);
}

SWIFTCALL bool try_lock_slow(void *SELF mutex) __asm__(TRY_LOCK_SLOW);
SWIFTCALL bool try_lock_slow(void *SELF mutex) {
    bool locked = next_try_lock_slow(mutex);
    if (locked && __tsan_acquire) __tsan_acquire(mutex);
    return locked;
}

SWIFTCALL void unlock_slow(void *SELF mutex) __asm__(UNLOCK_SLOW);
SWIFTCALL void unlock_slow(void *SELF mutex) {
    if (__tsan_release) __tsan_release(mutex);
    next_unlock_slow(mutex);
}
