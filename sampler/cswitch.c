/* cswitch.c - a thread's context switches, from a perf event's ring. */
#define _GNU_SOURCE
#include "sampler/cswitch.h"

#include <linux/perf_event.h>
#include <string.h>

#include "sampler/perfring.h"

/* One data page: 512 records of 8 bytes, read every tick. A thread that
 * switches more often than that between two ticks loses records, which
 * the reader sees and treats as "it ran, where to is unknown". */
#define DATA_PAGES 1

int cswitch__open(struct cswitch *c, pid_t tid)
{
    struct perf_event_attr a;
    memset(c, 0, sizeof *c);
    c->fd = -1;
    memset(&a, 0, sizeof a);
    a.size = sizeof a;
    a.type = PERF_TYPE_SOFTWARE;
    a.config = PERF_COUNT_SW_DUMMY;
    a.context_switch = 1;
    /* Nothing of the kernel's is asked for: allowed up to paranoid 2. */
    a.exclude_kernel = 1;
    a.exclude_hv = 1;
    return perfring__open(&a, tid, -1, DATA_PAGES, &c->fd, &c->ring);
}

void cswitch__close(struct cswitch *c) { perfring__close(&c->fd, &c->ring, DATA_PAGES); }

/* Records of interest are 8 bytes (a bare header: no sample_id_all), so
 * a header never straddles the end of the ring; longer ones (LOST) may,
 * but only their header is read. */
bool cswitch__fold(struct cswitch *c, const unsigned char *data, uint64_t size, uint64_t head)
{
    bool ok = true;
    /* A ring with less room than a LOST record and a switch record take
     * may have dropped the newest records without a LOST record yet (the
     * kernel writes one, with the next record, once they fit). */
    if (head < c->tail || head - c->tail > size - 32)
        ok = false;
    while (ok && c->tail < head) {
        struct perf_event_header h;
        memcpy(&h, data + (c->tail & (size - 1)), sizeof h);
        if (h.size < sizeof h || h.size % 8 || h.size > head - c->tail) {
            ok = false;
            break;
        }
        c->tail += h.size;
        if (h.type == PERF_RECORD_LOST) {
            ok = false;
            break;
        }
        if (h.type != PERF_RECORD_SWITCH)
            continue;
        if (!(h.misc & PERF_RECORD_MISC_SWITCH_OUT)) {
            c->ins++;
            c->where = CS_ON_CPU;
        } else {
            c->where = h.misc & PERF_RECORD_MISC_SWITCH_OUT_PREEMPT ? CS_PREEMPTED : CS_ASLEEP;
        }
    }
    if (!ok) {
        /* What happened in between is unknown: count it as a run, and
         * start afresh from the newest record. */
        c->ins++;
        c->where = CS_UNKNOWN;
        c->tail = head;
    }
    return ok;
}

bool cswitch__update(struct cswitch *c)
{
    if (c->fd < 0)
        return false;
    struct perf_event_mmap_page *pg = c->ring;
    uint64_t head = __atomic_load_n(&pg->data_head, __ATOMIC_ACQUIRE);
    uint64_t off = pg->data_offset ? pg->data_offset : perfring__page_size();
    uint64_t size = pg->data_size ? pg->data_size : DATA_PAGES * perfring__page_size();
    if (!size || size & (size - 1) || off + size > (1 + DATA_PAGES) * perfring__page_size()) {
        cswitch__close(c); /* not a ring this code knows */
        return false;
    }
    if (!cswitch__fold(c, (const unsigned char *)c->ring + off, size, head))
        c->losses++;
    __atomic_store_n(&pg->data_tail, c->tail, __ATOMIC_RELEASE);
    return true;
}
