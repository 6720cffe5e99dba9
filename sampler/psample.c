/* psample.c - threads' registers and C stacks, from the samples of a
 * perf event on every CPU. */
#define _GNU_SOURCE
#include "sampler/psample.h"

#include <linux/bpf.h>
#include <linux/perf_event.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "sampler/perfring.h"
#include "sampler/proc.h"

/* The registers asked for, in the order the kernel writes them (bit order
 * of enum perf_event_x86_regs): ax bx cx dx si di bp sp ip flags (0-9),
 * then r8-r15 (16-23). The segment registers are of no use here. */
#define REGS_MASK (0x3ffull | (0xffull << 16))
#define NREGS 18

/* The set's events: CPU-wide, on the CPU's clock. Kernel mode is not
 * excluded: a thread in a system call at the sampling instant is sampled
 * too, with the user registers it entered the kernel with (the kernel's
 * own threads have none, and are skipped). With the CPU's context
 * switches, each record ending in its thread and time (sample_id_all).
 * Without sampling at instants (period_ns 0): an event of the CPU's
 * context switches, a sample of the user registers of every thread that
 * leaves the CPU, without its stack (a sample taken in the scheduler, so
 * kernel mode must not be excluded), besides the switch records; or
 * (UINT64_MAX) a dummy event, the switch records alone. */
static void attr(struct perf_event_attr *a, uint64_t period_ns, size_t pages)
{
    memset(a, 0, sizeof *a);
    a->size = sizeof *a;
    a->type = PERF_TYPE_SOFTWARE;
    a->sample_type = PERF_SAMPLE_TID | PERF_SAMPLE_TIME;
    if (period_ns == UINT64_MAX) {
        a->config = PERF_COUNT_SW_DUMMY;
    } else if (period_ns) {
        a->config = PERF_COUNT_SW_CPU_CLOCK;
        a->sample_period = period_ns;
        a->sample_type |= PERF_SAMPLE_REGS_USER | PERF_SAMPLE_STACK_USER;
        a->sample_regs_user = REGS_MASK;
        a->sample_stack_user = PSAMPLE_STACK;
        a->exclude_idle = 1;
    } else {
        a->config = PERF_COUNT_SW_CONTEXT_SWITCHES;
        a->sample_period = 1;
        a->sample_type |= PERF_SAMPLE_REGS_USER;
        a->sample_regs_user = REGS_MASK;
    }
    a->use_clockid = 1;
    a->clockid = CLOCK_MONOTONIC;
    a->exclude_hv = 1;
    a->context_switch = 1;
    a->sample_id_all = 1;
    a->disabled = 1; /* until psample_set__enable */
    /* Read every tick; but a ring is readable to poll(2) once half full,
     * and read then if a tick is long (tracee.c). (Only poll: an event
     * opened with O_ASYNC would signal every sample, not the watermark.) */
    a->watermark = 1;
    a->wakeup_watermark = (uint32_t)(pages / 2 * perfring__page_size());
}

/* Whether hsspy is in the initial PID namespace, where the process ids it
 * sees are the ones BPF programs see (NSpid in /proc/self/status lists one
 * id per nested namespace). */
static bool initial_pid_ns(void)
{
    char v[128];
    unsigned long a, b;
    return proc__self_status_field("NSpid", v, sizeof v) && sscanf(v, "%lu %lu", &a, &b) == 1;
}

/* A BPF program that keeps a sample of the events only if the thread it
 * is of belongs to process pid: other programs' samples then take no room
 * in the rings (some 270 switches a tick fit there) and no parsing by
 * hsspy. Their switches still pay the kernel's preparation of the sample
 * before the program runs (measured, about as much as a sample written).
 * Its fd, or -errno (no CAP_BPF, say). */
static int filter_of(pid_t pid)
{
    struct bpf_insn prog[] = {
        /* r0 = bpf_get_current_pid_tgid() >> 32 (the process id) */
        {.code = BPF_JMP | BPF_CALL, .imm = BPF_FUNC_get_current_pid_tgid},
        {.code = BPF_ALU64 | BPF_RSH | BPF_K, .dst_reg = BPF_REG_0, .imm = 32},
        /* return r0 == pid */
        {.code = BPF_JMP | BPF_JEQ | BPF_K, .dst_reg = BPF_REG_0, .off = 2, .imm = pid},
        {.code = BPF_ALU64 | BPF_MOV | BPF_K, .dst_reg = BPF_REG_0, .imm = 0},
        {.code = BPF_JMP | BPF_EXIT},
        {.code = BPF_ALU64 | BPF_MOV | BPF_K, .dst_reg = BPF_REG_0, .imm = 1},
        {.code = BPF_JMP | BPF_EXIT},
    };
    union bpf_attr a;
    memset(&a, 0, sizeof a);
    a.prog_type = BPF_PROG_TYPE_PERF_EVENT;
    a.insns = (uint64_t)(uintptr_t)prog;
    a.insn_cnt = sizeof prog / sizeof prog[0];
    a.license = (uint64_t)(uintptr_t) "MIT";
    long fd = syscall(SYS_bpf, BPF_PROG_LOAD, &a, sizeof a);
    return fd < 0 ? -errno : (int)fd;
}

static int open_set(struct psample_set *s, uint64_t period_ns, size_t pages)
{
    struct perf_event_attr a;
    long n = sysconf(_SC_NPROCESSORS_CONF);
    memset(s, 0, sizeof *s);
    if (n < 1 || n > 4096)
        return -EINVAL;
    s->cpu = calloc((size_t)n, sizeof *s->cpu);
    if (!s->cpu)
        return -ENOMEM;
    s->n = (int)n;
    attr(&a, period_ns, pages);
    int opened = 0, err = 0;
    for (int i = 0; i < s->n; i++) {
        struct psample *p = &s->cpu[i];
        p->fd = -1;
        p->regs_only = period_ns == 0 || period_ns == UINT64_MAX;
        p->pages = pages;
        int e = perfring__open(&a, -1, i, pages, &p->fd, &p->ring);
        if (e == 0)
            opened++;
        else if (e != -ENODEV && e != -EINVAL) /* (an offline CPU) */
            err = e;
    }
    if (err || !opened) {
        psample_set__close(s);
        return err ? err : -ENODEV;
    }
    return 0;
}

int psample_set__open(struct psample_set *s, uint64_t period_ns, size_t pages)
{
    if (pages < PSAMPLE_PAGES || pages & (pages - 1))
        pages = PSAMPLE_PAGES;
    return open_set(s, period_ns && period_ns != UINT64_MAX ? period_ns : 1, pages);
}

size_t psample__switch_pages(uint64_t period_ns, long ncpus)
{
    uint64_t need = (period_ns + PSAMPLE_SWITCH_SPAN_NS - 1) / PSAMPLE_SWITCH_SPAN_NS;
    size_t pages = PSAMPLE_PAGES;
    while (need > 1 && pages < PSAMPLE_MAX_PAGES) {
        pages *= 2;
        need = (need + 1) / 2;
    }
    while (ncpus > 0 && pages > PSAMPLE_PAGES &&
           pages * (uint64_t)ncpus > PSAMPLE_BUDGET_PAGES)
        pages /= 2;
    return pages;
}

int psample_set__open_switches(struct psample_set *s, pid_t pid, size_t pages)
{
    if (pages < PSAMPLE_PAGES || pages & (pages - 1))
        pages = PSAMPLE_PAGES;
    int prog = initial_pid_ns() ? filter_of(pid) : -EINVAL;
    if (prog >= 0) {
        int err = open_set(s, 0, pages);
        for (int i = 0; err == 0 && i < s->n; i++)
            if (s->cpu[i].fd >= 0 && ioctl(s->cpu[i].fd, PERF_EVENT_IOC_SET_BPF, prog) != 0)
                err = -errno;
        close(prog); /* (the events hold it) */
        if (err == 0) {
            s->switch_samples = true;
            return 0;
        }
        psample_set__close(s);
        if (err != -EINVAL && err != -EPERM && err != -EACCES && err != -EOPNOTSUPP)
            return err;
    }
    /* No filter: the records alone (every switch on the machine would
     * fill the rings with samples, to be skipped). */
    return open_set(s, UINT64_MAX, pages);
}

void psample_set__close(struct psample_set *s)
{
    for (int i = 0; i < s->n; i++)
        perfring__close(&s->cpu[i].fd, &s->cpu[i].ring, s->cpu[i].pages);
    free(s->cpu);
    memset(s, 0, sizeof *s);
}

void psample_set__enable(struct psample_set *s)
{
    for (int i = 0; i < s->n; i++)
        if (s->cpu[i].fd >= 0)
            ioctl(s->cpu[i].fd, PERF_EVENT_IOC_ENABLE, 0);
}

void psample_set__rephase(struct psample_set *s, uint64_t period_ns)
{
    uint64_t p = period_ns ? period_ns : 1;
    for (int i = 0; i < s->n; i++)
        if (s->cpu[i].fd >= 0)
            ioctl(s->cpu[i].fd, PERF_EVENT_IOC_PERIOD, &p);
}

void psample__ring_copy(const uint8_t *data, uint64_t size, uint64_t pos, void *dst, size_t len)
{
    uint64_t off = pos & (size - 1);
    size_t first = len < size - off ? len : (size_t)(size - off);
    memcpy(dst, data + off, first);
    if (first < len)
        memcpy((uint8_t *)dst + first, data, len - first);
}

/* Eight bytes at pos: records are 8-byte aligned, so a word never wraps
 * (one that would, in a malformed ring, is copied in two parts). */
static uint64_t word(const uint8_t *data, uint64_t size, uint64_t pos)
{
    uint64_t w, off = pos & (size - 1);
    if (off + sizeof w <= size)
        memcpy(&w, data + off, sizeof w);
    else
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
    hit->src = out->src;
    hit->copy = NULL;
    at += 8; /* pid, tid */
    hit->t_ns = word(data, size, at);
    at += 8;
    uint64_t abi = word(data, size, at);
    at += 8;
    if (abi == PERF_SAMPLE_REGS_ABI_NONE)
        return false; /* no user registers: not taken in user mode */
    if (at + NREGS * 8 > end)
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
    hit->stack_pos = at;
    hit->stack_len = 0;
    if (out->src && out->src->regs_only) {
        *out = h; /* (the samples of switches: registers alone) */
        return true;
    }
    if (at + 8 > end)
        return false;
    uint64_t ssize = word(data, size, at);
    at += 8;
    hit->stack_pos = at;
    if (ssize != 0) {
        if (ssize > PSAMPLE_STACK || at + ssize + 8 > end)
            return false;
        uint64_t dyn = word(data, size, at + ssize);
        hit->stack_len = (uint32_t)(dyn < ssize ? dyn : ssize);
    }
    *out = h;
    return true;
}

/* A context-switch record of `len` bytes at pos into *r: its thread and
 * time (the record's sample_id: pid, tid, then time, last), which way. */
static bool parse_switch(const uint8_t *data, uint64_t size, uint64_t pos,
                         const struct perf_event_header *h, struct psample_rec *r)
{
    if (h->size < sizeof *h + 8 + 16)
        return false;
    uint64_t ids = word(data, size, pos + h->size - 16);
    r->pid = (pid_t)(uint32_t)ids;
    r->tid = (pid_t)(ids >> 32);
    r->t_ns = word(data, size, pos + h->size - 8);
    r->in = !(h->misc & PERF_RECORD_MISC_SWITCH_OUT);
    r->preempted = !r->in && (h->misc & PERF_RECORD_MISC_SWITCH_OUT_PREEMPT);
    /* (next_prev_pid, next_prev_tid: the next task on a switch out) */
    r->next_pid = (pid_t)(uint32_t)word(data, size, pos + sizeof *h);
    return true;
}

/* The records from *tail to head, each to fn. */
void psample__each(const uint8_t *data, uint64_t size, uint64_t *tail, uint64_t head,
                   const struct psample *src, psample_fn fn, void *ctx)
{
    uint64_t t = *tail;
    if (head < t || head - t > size)
        t = head > size ? head - size : 0; /* not a ring we follow: the newest records */
    /* (One record, its hit cleared only for samples: a ring holds mostly
     * switches, of every program, and the hit is most of its size.) */
    struct psample_rec r;
    memset(&r, 0, sizeof r);
    while (t < head) {
        struct perf_event_header h;
        _Static_assert(sizeof h == 8, "a perf record's header is a word");
        uint64_t hw = word(data, size, t);
        memcpy(&h, &hw, sizeof h);
        if (h.size < sizeof h || h.size % 8 || h.size > head - t)
            break;
        r.type = h.type;
        r.pid = r.tid = 0;
        r.lost = r.t_ns = 0;
        r.in = r.preempted = false;
        if (h.type == PERF_RECORD_SAMPLE) {
            memset(&r.hit, 0, sizeof r.hit);
            r.hit.src = src;
            uint64_t ids = word(data, size, t + sizeof h);
            r.pid = (pid_t)(uint32_t)ids;
            r.tid = (pid_t)(ids >> 32);
            if (!parse(data, size, t, h.size, &r.hit))
                r.type = 0; /* counted, not used */
            r.t_ns = r.hit.t_ns;
            fn(ctx, &r);
        } else if (h.type == PERF_RECORD_SWITCH_CPU_WIDE) {
            if (parse_switch(data, size, t, &h, &r))
                fn(ctx, &r);
        } else if (h.type == PERF_RECORD_LOST && h.size >= sizeof h + 16) {
            r.lost = word(data, size, t + sizeof h + 8);
            fn(ctx, &r);
        }
        t += h.size;
    }
    *tail = head;
}

static const uint8_t *data_of(const struct psample *p, uint64_t *size)
{
    const struct perf_event_mmap_page *pg = p->ring;
    uint64_t off = pg->data_offset ? pg->data_offset : perfring__page_size();
    uint64_t sz = pg->data_size ? pg->data_size : p->pages * perfring__page_size();
    if (!sz || sz & (sz - 1) || off + sz > (1 + p->pages) * perfring__page_size())
        return NULL;
    *size = sz;
    return (const uint8_t *)p->ring + off;
}

/* Every ring's records from *cursor (its tail, or its peek) up to its
 * head, to fn. A ring with less room left than a record of a switch takes
 * (as of the tail the kernel was last given: a release) may have dropped
 * records since, and the kernel says so, PERF_RECORD_LOST, only once it
 * has room again: a peek, which frees none, would never see it, and take
 * a thread given a CPU meanwhile for one that has not run (200 threads
 * napping in safe calls: stacks read while they ran, kept as they slept).
 * So a ring found full is a loss of records now (a LOST record with a
 * count of 0). */
static void each_ring(struct psample_set *s, bool peek, psample_fn fn, void *ctx)
{
    for (int i = 0; i < s->n; i++) {
        struct psample *p = &s->cpu[i];
        uint64_t size;
        const uint8_t *data;
        if (p->fd < 0 || !(data = data_of(p, &size)))
            continue;
        struct perf_event_mmap_page *pg = p->ring;
        uint64_t head = __atomic_load_n(&pg->data_head, __ATOMIC_ACQUIRE);
        uint64_t given = __atomic_load_n(&pg->data_tail, __ATOMIC_RELAXED);
        bool full = head - given <= size && size - (head - given) < PSAMPLE_FULL_FREE;
        if (p->peek < p->tail)
            p->peek = p->tail;
        psample__each(data, size, peek ? &p->peek : &p->tail, head, p, fn, ctx);
        if (!peek)
            p->peek = p->tail;
        if (full) {
            struct psample_rec r;
            memset(&r, 0, sizeof r);
            r.type = PERF_RECORD_LOST;
            fn(ctx, &r);
        }
    }
}

void psample_set__read(struct psample_set *s, psample_fn fn, void *ctx)
{
    each_ring(s, false, fn, ctx);
}

void psample_set__peek(struct psample_set *s, psample_fn fn, void *ctx)
{
    each_ring(s, true, fn, ctx);
}

void psample_set__release(struct psample_set *s)
{
    for (int i = 0; i < s->n; i++) {
        struct psample *p = &s->cpu[i];
        if (p->fd >= 0)
            __atomic_store_n(&((struct perf_event_mmap_page *)p->ring)->data_tail, p->tail,
                             __ATOMIC_RELEASE);
    }
}

void psample__copy_stack(const struct psample_hit *hit, void *dst)
{
    if (hit->copy) {
        memcpy(dst, hit->copy, hit->stack_len);
        return;
    }
    uint64_t size;
    const uint8_t *data = hit->src ? data_of(hit->src, &size) : NULL;
    if (data && hit->stack_len <= size)
        psample__ring_copy(data, size, hit->stack_pos, dst, hit->stack_len);
}
