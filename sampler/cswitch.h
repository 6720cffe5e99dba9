/* cswitch.h - whether a thread has run, from the kernel's own records of
 * its context switches, read without a system call.
 *
 * For each traced thread hsspy opens a perf event that counts nothing
 * (PERF_COUNT_SW_DUMMY) but asks for context-switch records: each time the
 * thread is given a CPU, or leaves one, the kernel appends a PERF_RECORD_SWITCH
 * to a small ring buffer mapped into hsspy, saying which way and, going
 * out, whether the thread was still runnable (preempted) or went to sleep.
 * Reading the ring is reading memory: it tells, for every thread and every
 * tick, what one pread of /proc/.../schedstat each told before (has it been
 * given a CPU since?), and more: whether it is on a CPU now, waiting for
 * one, or asleep, which spares running threads the read of their syscall
 * file too.
 *
 * The kernel writes those records at every context switch of the thread
 * (well under a microsecond each); where perf events are not allowed
 * (perf_event_paranoid above 2, as Debian's kernels set it, without
 * CAP_PERFMON) or the locked memory for the rings runs out
 * (perf_event_mlock_kb, 516 KB a user), or when records were lost, the
 * caller falls back on /proc for that thread.
 */
#ifndef HSSPY_CSWITCH_H
#define HSSPY_CSWITCH_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

enum cswitch_where {
    CS_UNKNOWN,   /* no record yet: where it was when the ring was opened */
    CS_ON_CPU,    /* last given a CPU, not taken off it since */
    CS_PREEMPTED, /* taken off a CPU while runnable: waiting for one */
    CS_ASLEEP,    /* left its CPU to sleep (a system call, a fault, a stop) */
};

struct cswitch {
    int fd;        /* the perf event, -1 if none */
    void *ring;    /* its mapping: the control page, then the data pages */
    uint64_t tail; /* how far the records have been read */
    uint64_t ins;  /* times it was given a CPU since the ring was opened */
    enum cswitch_where where;
    unsigned long losses; /* times records were lost (then counted as a run,
                           * where to unknown: see cswitch__fold) */
};

/* Open the ring of thread tid. 0, or -errno (c->fd stays -1: use /proc). */
int cswitch__open(struct cswitch *c, pid_t tid);

/* Read the records written since the last call into c->ins and c->where.
 * False if there is no ring (the caller uses /proc). */
bool cswitch__update(struct cswitch *c);

void cswitch__close(struct cswitch *c);

/* The records of data (a ring of size bytes, a power of two), from
 * c->tail up to head, folded into c. False if records were lost (a LOST
 * record, a full ring that may have dropped the newest, a malformed
 * header): then what happened since the last read is unknown, so it
 * counts as one more time given a CPU, c->where is CS_UNKNOWN, and
 * c->tail moves to head. */
bool cswitch__fold(struct cswitch *c, const unsigned char *data, uint64_t size, uint64_t head);

#endif
