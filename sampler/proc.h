/* proc.h - what /proc says about a process and its threads.
 *
 * Everything here is read-only and tolerant of the process or thread vanishing
 * mid-read (a thread that exits between two steps is not an error): functions
 * return 0 or -errno, and -ESRCH/-ENOENT simply mean "gone".
 */
#ifndef HSSPY_PROC_H
#define HSSPY_PROC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/* Read a whole small /proc file into buf (NUL-terminated). Returns bytes read or -errno. */
ssize_t proc__read(const char *path, char *buf, size_t size);

/* The thread ids of pid, from /proc/PID/task; *tids is malloc'ed. 0 or -errno. */
int proc__tasks(pid_t pid, pid_t **tids, size_t *n);

/* The one-letter state (R, S, D, T, t, Z, X, ...) from the text of a stat file,
 * or '?' when it cannot be parsed. The comm field may contain spaces and
 * parentheses, so the state is found after the last ')'. */
char proc__stat_state(const char *stat_text);

/* The value of field key ("CapEff", "NSpid") in the text of a status file,
 * its leading blanks and the newline left off, into out (NUL-terminated,
 * cut to size). False if the text has no such field. */
bool proc__status_field(const char *status_text, const char *key, char *out, size_t size);

/* The same from hsspy's own /proc/self/status. */
bool proc__self_status_field(const char *key, char *out, size_t size);

/* State letter of a process (tid == 0) or thread; '?' if gone. */
char proc__state(pid_t pid, pid_t tid);

/* Is pid a kernel thread (PF_KTHREAD in its stat flags)? Nothing of it
 * runs in user space, and nothing traces it. */
bool proc__is_kthread(pid_t pid);

/* Is pid's process not dumpable (prctl PR_SET_DUMPABLE 0, a set-user-ID
 * program), though it does not run as root? Only root, or CAP_SYS_PTRACE,
 * may trace it or read its memory then. */
bool proc__not_dumpable(pid_t pid);

/* Does the executable at path give the process that runs it privileges
 * hsspy's own credentials lack: set-user-ID to another user, set-group-ID
 * to another group, or file capabilities? Then what, as a few words, else
 * NULL. Run under ptrace by a tracer without CAP_SYS_PTRACE, such a
 * program runs without them (NULL if hsspy has it: root). */
const char *proc__privileged_exe(const char *path);

/* What makes a process not dumpable, for messages: the kernel makes one
 * so that runs a program it may not read or that gives it privileges. */
#define PROC_UNDUMPABLE_WHY                                                                   \
    "not dumpable (it runs a set-user-ID, set-group-ID or file-capability program, or one "   \
    "this user may not read, or changed its user IDs, or called prctl PR_SET_DUMPABLE 0)"

/* The thread's name (comm, at most 15 chars); "?" if gone. */
void proc__comm(pid_t pid, pid_t tid, char *buf, size_t size);

/* The command line, arguments joined by spaces; "" if gone. */
void proc__cmdline(pid_t pid, char *buf, size_t size);

/* The process (thread group) of a thread, from its /proc/TID/status
 * (the tid of any thread names it there): -errno on error. */
int proc__tgid(pid_t tid);

/* TracerPid from /proc/PID/status: 0 if untraced, -errno on error. */
int proc__tracer(pid_t pid);

/* Open /proc/PID/task/TID/stat for repeated pread()s (see proc__stat_fd_state). */
int proc__open_stat(pid_t pid, pid_t tid);

/* Re-read an open stat fd from offset 0 and return its state letter, '?' on error.
 * Re-reading an open fd costs one syscall, not three. */
char proc__stat_fd_state(int fd);

/* Open /proc/PID/task/TID/schedstat; -errno if the kernel has none. */
int proc__open_schedstat(pid_t pid, pid_t tid);

/* Re-read an open schedstat fd: time run on a CPU (ns) and the number of
 * times the thread was scheduled in. 0 or -1. Both stand still exactly when
 * the thread has not run. */
int proc__schedstat(int fd, uint64_t *run_ns, uint64_t *slices);

/* Open /proc/PID/task/TID/syscall for repeated pread()s; proc__syscall_fd:
 * PROC_RUNNING if the thread is running or runnable (state R),
 * PROC_BLOCKED if it is not, with the system call it sleeps in (*nr, -1
 * when blocked outside of one) and its user sp and pc, and in *where (if
 * not NULL) a hash of the whole line, the call's six arguments included:
 * the same wait, at the same place, hashes alike; -1 if unreadable or
 * gone. One read tells both the R-or-not of the stat file (for a fraction
 * of its cost: it formats one line, not fifty fields) and the call. */
enum { PROC_RUNNING = 1, PROC_BLOCKED = 0 };
int proc__open_syscall(pid_t pid, pid_t tid);
int proc__syscall_fd(int fd, long *nr, uint64_t *sp, uint64_t *pc, uint64_t *where);

/* The hash proc__syscall_fd gives as *where for a thread blocked in call
 * nr (>= 0) with these six arguments, user sp and pc: the kernel's line,
 * formatted as the kernel formats it. */
uint64_t proc__syscall_where(long nr, const uint64_t args[6], uint64_t sp, uint64_t pc);

/* The calls a thread was last found blocked in, each with the registers it
 * entered the kernel with: a thread whose sample of its switch to sleep
 * (psample_set__open_switches) shows registers met before is blocked in
 * the same call, named without a read of its syscall file, which shows
 * those very registers (its six arguments, sp and pc) and, besides, only
 * the call's number. A call is learnt only where the registers agree with
 * what the file said (proc__syscall_where), and only from registers
 * sampled inside a call (rax is -ENOSYS there, on x86_64, until the call
 * returns). A thread blocks in few places; the oldest goes when full. */
#define PROC_CALLS 4
struct proc_call {
    uint64_t pc, sp, args[6];
    long nr;
    uint64_t where;
};
struct proc_calls {
    struct proc_call c[PROC_CALLS];
    uint8_t n, next;
};
struct user_regs_struct;
/* Learn regs as call nr, whose syscall file hashed to where; false if they
 * do not agree (or regs are not of a thread inside a call). */
bool proc__calls_learn(struct proc_calls *cs, const struct user_regs_struct *regs, long nr,
                       uint64_t where);
/* The call regs (sampled as the thread left its CPU to sleep) were learnt
 * as: its number and hash. False if not met before. */
bool proc__calls_find(const struct proc_calls *cs, const struct user_regs_struct *regs, long *nr,
                      uint64_t *where);

/* /proc/loadavg, kept open; proc__running: the number of threads running
 * or runnable on the whole machine right now (its fourth field), -1 on
 * error. */
int proc__open_loadavg(void);
long proc__running(int fd);

/* Does this (x86_64) system call fail with EINTR when its thread is merely
 * stopped and continued, even without a signal handler? signal(7) lists
 * epoll_wait, epoll_pwait, semop, semtimedop, sigtimedwait, sigwaitinfo. */
bool proc__syscall_breaks_on_stop(long nr);

/* The CPU time of a process, from the text of its /proc/PID/stat, in
 * clock ticks (sysconf(_SC_CLK_TCK)): its own threads' (utime + stime)
 * and that of the children it has waited for (cutime + cstime: a reaped
 * child's, with those it waited for in turn); and when it started (ticks
 * since boot: with the pid, which process this is). 0, or -EINVAL if the
 * text cannot be parsed (the comm field may hold spaces and parentheses:
 * the fields are counted from the last ')'). */
int proc__stat_cpu(const char *stat_text, uint64_t *own, uint64_t *reaped, uint64_t *started);

/* The child processes of one thread of pid (tid == 0: of its main
 * thread), from /proc/PID/task/TID/children: up to max of them in out.
 * Returns how many it lists (possibly more than max), or -errno (-ENOENT
 * as well where the kernel has no such file). */
int proc__children(pid_t pid, pid_t tid, pid_t *out, size_t max);

#endif
