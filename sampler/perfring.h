/* perfring.h - a perf event on one thread, with its ring buffer mapped:
 * what cswitch.c (context-switch records) and psample.c (samples) share. */
#ifndef HSSPY_PERFRING_H
#define HSSPY_PERFRING_H

#include <linux/perf_event.h>
#include <stddef.h>
#include <sys/types.h>

size_t perfring__page_size(void);

/* The error of a ring that could not be mapped for want of locked memory
 * (perf_event_mlock_kb and RLIMIT_MEMLOCK used up: mmap's EPERM), told
 * apart from a perf event refused (EPERM, EACCES): not an errno. */
#define PERFRING_ELOCKED 4096

/* perf_event_open(a) on thread tid (on CPU cpu, -1: any; close-on-exec), then map its
 * control page and `pages` data pages. 0 with *fd and *ring set, or
 * -errno, or -PERFRING_ELOCKED (nothing left open). */
int perfring__open(struct perf_event_attr *a, pid_t tid, int cpu, size_t pages, int *fd,
                   void **ring);

/* Unmap and close what perfring__open gave (either may be gone already:
 * fd -1, ring NULL); both are reset. */
void perfring__close(int *fd, void **ring, size_t pages);

#endif
