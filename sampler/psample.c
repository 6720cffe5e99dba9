/* psample.c - a thread's registers and C stack, from a perf event's
 * samples. */
#define _GNU_SOURCE
#include "sampler/psample.h"

#include <errno.h>
#include <linux/perf_event.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

/* The registers asked for, in the order the kernel writes them (bit order
 * of enum perf_event_x86_regs): ax bx cx dx si di bp sp ip flags (0-9),
 * then r8-r15 (16-23). The segment registers are of no use here. */
#define REGS_MASK (0x3ffull | (0xffull << 16))
#define NREGS 18

static size_t page_size(void)
{
    static size_t ps;
    if (!ps) {
        long v = sysconf(_SC_PAGESIZE);
        ps = v > 0 ? (size_t)v : 4096;
    }
    return ps;
}

static size_t map_len(void) { return (1 + PSAMPLE_PAGES) * page_size(); }

int psample__open(struct psample *p, pid_t tid, uint64_t period_ns)
{
    struct perf_event_attr a;
    memset(p, 0, sizeof *p);
    p->fd = -1;
    memset(&a, 0, sizeof a);
    a.size = sizeof a;
    a.type = PERF_TYPE_SOFTWARE;
    a.config = PERF_COUNT_SW_TASK_CLOCK;
    a.sample_period = period_ns ? period_ns : 1;
    a.sample_type = PERF_SAMPLE_TID | PERF_SAMPLE_TIME | PERF_SAMPLE_REGS_USER |
                    PERF_SAMPLE_STACK_USER;
    a.sample_regs_user = REGS_MASK;
    a.sample_stack_user = PSAMPLE_STACK;
    a.use_clockid = 1;
    a.clockid = CLOCK_MONOTONIC;
    a.exclude_kernel = 1; /* allowed up to perf_event_paranoid 2 */
    a.exclude_hv = 1;
    int fd = (int)syscall(SYS_perf_event_open, &a, tid, -1, -1, PERF_FLAG_FD_CLOEXEC);
    if (fd < 0)
        return -errno;
    void *ring = mmap(NULL, map_len(), PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    if (ring == MAP_FAILED) {
        int e = errno;
        close(fd);
        return -e;
    }
    p->fd = fd;
    p->ring = ring;
    return 0;
}

void psample__close(struct psample *p)
{
    if (p->ring)
        munmap(p->ring, map_len());
    if (p->fd >= 0)
        close(p->fd);
    p->ring = NULL;
    p->fd = -1;
}

void psample__ring_copy(const uint8_t *data, uint64_t size, uint64_t pos, void *dst, size_t len)
{
    uint64_t off = pos & (size - 1);
    size_t first = len < size - off ? len : (size_t)(size - off);
    memcpy(dst, data + off, first);
    if (first < len)
        memcpy((uint8_t *)dst + first, data, len - first);
}

static uint64_t word(const uint8_t *data, uint64_t size, uint64_t pos)
{
    uint64_t w;
    psample__ring_copy(data, size, pos, &w, sizeof w);
    return w;
}

/* One sample record of `len` bytes at pos: into *out if well formed (else
 * *out is left as it was). */
static bool parse(const uint8_t *data, uint64_t size, uint64_t pos, uint64_t len,
                  struct psample_hit *out)
{
    struct psample_hit h, *hit = &h;
    uint64_t end = pos + len, at = pos + sizeof(struct perf_event_header);
    if (len < sizeof(struct perf_event_header) + 8 + 8 + 8)
        return false;
    at += 8; /* pid, tid */
    hit->t_ns = word(data, size, at);
    at += 8;
    uint64_t abi = word(data, size, at);
    at += 8;
    if (abi == PERF_SAMPLE_REGS_ABI_NONE)
        return false; /* no user registers: not taken in user mode */
    if (at + NREGS * 8 + 8 > end)
        return false;
    uint64_t r[NREGS];
    psample__ring_copy(data, size, at, r, sizeof r);
    at += sizeof r;
    memset(&hit->regs, 0, sizeof hit->regs);
    hit->regs.rax = r[0];
    hit->regs.rbx = r[1];
    hit->regs.rcx = r[2];
    hit->regs.rdx = r[3];
    hit->regs.rsi = r[4];
    hit->regs.rdi = r[5];
    hit->regs.rbp = r[6];
    hit->regs.rsp = r[7];
    hit->regs.rip = r[8];
    hit->regs.eflags = r[9];
    hit->regs.r8 = r[10];
    hit->regs.r9 = r[11];
    hit->regs.r10 = r[12];
    hit->regs.r11 = r[13];
    hit->regs.r12 = r[14];
    hit->regs.r13 = r[15];
    hit->regs.r14 = r[16];
    hit->regs.r15 = r[17];
    uint64_t ssize = word(data, size, at);
    at += 8;
    hit->stack_pos = at;
    hit->stack_len = 0;
    if (ssize != 0) {
        if (ssize > PSAMPLE_STACK || at + ssize + 8 > end)
            return false;
        uint64_t dyn = word(data, size, at + ssize);
        hit->stack_len = (uint32_t)(dyn < ssize ? dyn : ssize);
    }
    *out = h;
    return true;
}

int psample__scan(const uint8_t *data, uint64_t size, uint64_t *tail, uint64_t head,
                  struct psample_hit *hit, unsigned long *samples, unsigned long *lost)
{
    uint64_t t = *tail;
    int found = 0;
    if (head < t || head - t > size)
        t = head > size ? head - size : 0; /* not a ring we follow: the newest records */
    while (t < head) {
        struct perf_event_header h;
        psample__ring_copy(data, size, t, &h, sizeof h);
        if (h.size < sizeof h || h.size % 8 || h.size > head - t)
            break;
        if (h.type == PERF_RECORD_SAMPLE) {
            (*samples)++;
            if (parse(data, size, t, h.size, hit))
                found = 1;
        } else if (h.type == PERF_RECORD_LOST && h.size >= sizeof h + 16) {
            *lost += word(data, size, t + sizeof h + 8);
        }
        t += h.size;
    }
    *tail = head;
    return found;
}

static const uint8_t *data_of(const struct psample *p, uint64_t *size)
{
    const struct perf_event_mmap_page *pg = p->ring;
    uint64_t off = pg->data_offset ? pg->data_offset : page_size();
    uint64_t sz = pg->data_size ? pg->data_size : PSAMPLE_PAGES * page_size();
    if (!sz || sz & (sz - 1) || off + sz > map_len())
        return NULL;
    *size = sz;
    return (const uint8_t *)p->ring + off;
}

int psample__newest(struct psample *p, struct psample_hit *hit)
{
    uint64_t size;
    const uint8_t *data;
    if (p->fd < 0 || !(data = data_of(p, &size)))
        return -1;
    struct perf_event_mmap_page *pg = p->ring;
    uint64_t head = __atomic_load_n(&pg->data_head, __ATOMIC_ACQUIRE);
    return psample__scan(data, size, &p->tail, head, hit, &p->samples, &p->lost);
}

void psample__copy_stack(const struct psample *p, const struct psample_hit *hit, void *dst)
{
    uint64_t size;
    const uint8_t *data = data_of(p, &size);
    if (data && hit->stack_len <= size)
        psample__ring_copy(data, size, hit->stack_pos, dst, hit->stack_len);
}

void psample__release(struct psample *p)
{
    if (p->fd < 0)
        return;
    struct perf_event_mmap_page *pg = p->ring;
    __atomic_store_n(&pg->data_tail, p->tail, __ATOMIC_RELEASE);
}
