/* remote.h - reading the target's memory with process_vm_readv.
 *
 * One syscall moves many ranges: callers describe what they need as a batch of
 * requests and learn, per request, how many bytes arrived. A range that
 * crosses into unmapped memory yields a short count, not an error for the
 * whole batch. Never PTRACE_PEEKDATA: one syscall per word is what makes
 * naive profilers slow.
 */
#ifndef HSSPY_REMOTE_H
#define HSSPY_REMOTE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

struct remote_req {
    uint64_t addr;
    void *buf;
    size_t len;
    size_t got; /* filled in: bytes actually read (0..len) */
};

/* Read every request; returns the number of requests read in full.
 * Requests that fail or come back short have got < len. */
size_t remote__batch(pid_t pid, struct remote_req *reqs, size_t n);

/* Read len bytes at addr into buf: 0 if all of it arrived, -EFAULT (or
 * -ESRCH if the process is gone) otherwise. */
int remote__read(pid_t pid, uint64_t addr, void *buf, size_t len);

/* The pid through which pid's memory is read, also in /proc (maps, exe,
 * root): pid itself, but for a process whose leader (the thread whose tid
 * is its pid) has exited while others run on, as a main() that ends in
 * pthread_exit does: that zombie has no memory, and another of its
 * threads is named (found again when it goes; remote__forget). The reads
 * above go through it. */
pid_t remote__mm_pid(pid_t pid);

/* A thread we reaped: its tid may be another process's from now on. */
void remote__forget(pid_t tid);

/* process_vm_readv calls made so far by this process (both of the above):
 * what a stop costs in system calls, told by the difference across it. */
unsigned long remote__calls(void);

/* Was a read refused (EPERM)? A process that makes itself non-dumpable
 * (prctl PR_SET_DUMPABLE 0) closes its memory to a tracer without
 * CAP_SYS_PTRACE, even one already attached. */
bool remote__denied(void);

#endif
