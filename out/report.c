/* report.c - a human-readable summary: how the sampling went, then per OS
 * thread its samples, time on CPU, tag shares and top functions. */
#define _GNU_SOURCE
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

#include "out/counter.h"
#include "out/writer.h"

#define TOP 10

static void header(const struct profile *p, FILE *f)
{
    uint64_t errors = profile__walk_errors(p), visible_threads = profile__threads_sampled(p);

    fprintf(f, "hsspy report\n");

    fprintf(f, "  target:    pid %d: %s\n", (int)p->pid, p->cmdline);
    if (p->ghc_version[0])
        fprintf(f, "  runtime:   GHC %s%s\n", p->ghc_version,
                p->made_with & PROF_MADE_CCS
                    ? "; Haskell stacks: cost-centre stacks (--stack ccs)"
                    : "");
    fprintf(f, "  duration:  %.2f s\n", (double)p->duration_ns / 1e9);
    fprintf(f, "  rate:      %g Hz asked, %.1f Hz achieved, %" PRIu64 " ticks, %" PRIu64
               " missed\n",
            p->rate_hz, profile__achieved_hz(p), p->ticks, p->missed_ticks);
    fprintf(f, "  samples:   %zu thread sample%s from %" PRIu64 " thread%s\n", p->nsamples,
            p->nsamples == 1 ? "" : "s", visible_threads, visible_threads == 1 ? "" : "s");
    if (p->pause.n) {
        fprintf(f,
                "  pause:     per stopped thread: mean %.1f us, median %.1f us, p99 %.1f us, "
                "max %.1f us (%" PRIu64 " stops)\n",
                (double)p->pause.sum_ns / (double)p->pause.n / 1e3,
                (double)hist__quantile(&p->pause, 0.5) / 1e3,
                (double)hist__quantile(&p->pause, 0.99) / 1e3, (double)p->pause.max_ns / 1e3,
                p->pause.n);
        fprintf(f, "             (time to stop: median %.1f us, p99 %.1f us",
                (double)hist__quantile(&p->stop_latency, 0.5) / 1e3,
                (double)hist__quantile(&p->stop_latency, 0.99) / 1e3);
        if (p->stop_reads)
            fprintf(f, "; memory read in %.2f process_vm_readv calls per stop",
                    (double)p->stop_reads / (double)p->pause.n);
        if (p->stop_reads_waiting)
            fprintf(f, " (%.2f of them while its registers were awaited, %.2f after)",
                    (double)p->stop_reads_waiting / (double)p->pause.n,
                    (double)(p->stop_reads - p->stop_reads_waiting) / (double)p->pause.n);
        if (p->pause_switched >= p->pause.n)
            fprintf(f, "; each stop timed from the thread's switch off its CPU");
        else if (p->pause_switched)
            fprintf(f, "; %" PRIu64 " of the %" PRIu64 " stops timed from the thread's switch "
                       "off its CPU, the others from when hsspy saw them",
                    p->pause_switched, p->pause.n);
        if (p->pause_regs_ring)
            fprintf(f, "; registers of %" PRIu64 " from the sample of that switch, not "
                       "PTRACE_GETREGS",
                    p->pause_regs_ring);
        if (p->pause_prefetched || p->pause_prefetch_missed)
            fprintf(f, "; the C stack of %" PRIu64 " read while waiting for that sample, "
                       "near the thread's last stack pointers (%" PRIu64 " more read there, "
                       "then again where the registers said)",
                    p->pause_prefetched, p->pause_prefetch_missed);
        if (p->pause_between)
            fprintf(f, "; %" PRIu64 " resumed between reads of threads blocked in calls, not "
                       "after them all", p->pause_between);
        if (p->handler_entries)
            fprintf(f, "; %" PRIu64 " found at a signal handler's entry, the signal just passed "
                       "on, sampled where it interrupted the thread", p->handler_entries);
        if (p->deferred)
            fprintf(f, "; %" PRIu64 " interrupted only once fewer than %u threads were awaited "
                       "(not all at once, each then waiting stopped for the captures of "
                       "those before it)",
                    p->deferred, PROF_SEND_CAP);
        fprintf(f, ")\n");
    }
    if (p->self_cpu_ns && p->duration_ns && p->ticks) {
        char prio[32];
        if (p->realtime || !p->nice)
            snprintf(prio, sizeof prio, "%s priority", p->realtime ? "real-time" : "normal");
        else
            snprintf(prio, sizeof prio, "nice %d", p->nice);
        /* Per tick, the steady cost: the first tick apart (where the
         * recording says it), which stops every thread there is and reads
         * each in full, with no earlier sample to reuse or read ahead by. */
        uint64_t cpu = p->self_cpu_ns, ticks = p->ticks;
        char first[96] = "";
        if (p->first_tick_cpu_ns && ticks >= 2) {
            cpu -= p->first_tick_cpu_ns;
            ticks--;
            snprintf(first, sizeof first, " after the first, which took %.1f ms",
                     (double)p->first_tick_cpu_ns / 1e6);
        }
        char held[160] = "";
        if (p->cap_held)
            snprintf(held, sizeof held,
                     "; held to half a CPU %" PRIu64 " time%s, the next tick put off (the "
                     "ticks that could not come in time are among the missed)",
                     p->cap_held, p->cap_held == 1 ? "" : "s");
        fprintf(f, "  hsspy:     %.1f%% of one CPU while recording (%.0f us per tick%s), at %s%s%s\n",
                100.0 * (double)p->self_cpu_ns / (double)p->duration_ns,
                ticks ? (double)cpu / (double)ticks / 1e3 : 0.0, first, prio,
                p->short_slices ? " in 0.1 ms slices" : "", held);
    }
    if (p->copied_threads)
        fprintf(f, "  copied:    %.1f KB of the program's memory per thread sampled from it "
                   "(stacks and runtime words), %.1f KB per tick\n",
                (double)p->copied_bytes / (double)p->copied_threads / 1024,
                p->ticks ? (double)p->copied_bytes / (double)p->ticks / 1024 : 0.0);
    if (p->beyond_copy)
        fprintf(f, "  beyond:    %" PRIu64 " samples' C stacks went deeper than the copy: their "
                   "outer frames were read after the thread ran on, and may be wrong\n",
                p->beyond_copy);
    if (p->repeated)
        fprintf(f, "  idle:      %" PRIu64 " samples of threads that had not run were taken "
                   "without stopping them\n", p->repeated);
    if (p->cs_threads || p->cs_refused) {
        fprintf(f, "  switches:  whether a thread ran since its last sample, and whether it is on "
                   "a CPU, told ");
        if (p->cs_threads && p->cs_cpu_wide)
            fprintf(f, "by the context-switch records of the per-CPU perf events for %s%" PRIu64
                       " thread%s", p->cs_threads == 1 ? "its " : "all ", p->cs_threads,
                    p->cs_threads == 1 ? "" : "s");
        else if (p->cs_threads)
            fprintf(f, "by its context-switch records (perf events) for %s%" PRIu64 " thread%s",
                    p->cs_refused || p->cs_threads == 1 ? "" : "all ", p->cs_threads,
                    p->cs_threads == 1 ? "" : "s");
        if (p->cs_refused)
            fprintf(f, "%sby /proc for %s%" PRIu64 " (perf events refused: %s)",
                    p->cs_threads ? "; " : "", p->cs_threads ? "" : "all ", p->cs_refused,
                    p->cs_errno == PROF_CS_ELOCKED
                        ? "their rings' locked memory is used up: perf_event_mlock_kb, ulimit -l"
                        : strerror((int)p->cs_errno));
        if (p->cs_busy)
            fprintf(f, "; %" PRIu64 " of them switched more than once a tick for a while "
                       "(their records cost the program more than /proc costs hsspy: "
                       "/proc told then)", p->cs_busy);
        if (p->cs_drains)
            fprintf(f, "; their rings read %" PRIu64 " times between ticks, half full",
                    p->cs_drains);
        if (p->cs_losses && p->cs_cpu_wide)
            fprintf(f, "; records lost at %" PRIu64 " ticks (/proc told then)", p->cs_losses);
        else if (p->cs_losses)
            fprintf(f, "; records lost %" PRIu64 " times (/proc told then)", p->cs_losses);
        fputc('\n', f);
    }
    if (p->preempt || p->preempt_refused) {
        fprintf(f, "  preempted: %" PRIu64 " samples of threads waiting for a CPU since they were "
                   "preempted were taken without stopping them, from their registers as they "
                   "left it (the per-CPU events' samples of switches)", p->preempt);
        if (p->preempt_refused)
            fprintf(f, "; %" PRIu64 " were stopped after all (given a CPU while being read)",
                    p->preempt_refused);
        fputc('\n', f);
    }
    if (p->nonblocking) {
        fprintf(f, "  nonblocking: running threads sampled by the kernel (a perf event on each "
                   "CPU), not stopped: %" PRIu64 " samples", p->ps_samples);
        if (p->ps_stale)
            fprintf(f, ", %" PRIu64 " repeated (it ran, but was on no CPU at a sampling "
                       "instant)", p->ps_stale);
        if (p->ps_lost)
            fprintf(f, ", %" PRIu64 " dropped by the kernel", p->ps_lost);
        fprintf(f, "; %" PRIu64 " stops in all (a thread's first tick, to learn its thread "
                   "pointer, or one with no sample to repeat)\n", p->pause.n);
    }
    if (p->fd_short)
        fprintf(f, "  files:     %" PRIu64 " threads went without some of their /proc files or "
                   "perf events, as hsspy may open only %" PRIu64 " files (ulimit -n): they were "
                   "stopped more often; raise the limit for fewer stops\n",
                p->fd_short, p->fd_limit);
    if (p->soft || p->soft_refused || p->calls_known) {
        fprintf(f, "  blocked:   %" PRIu64 " samples of threads blocked in a system call were "
                   "taken without stopping them", p->soft);
        if (p->soft_breaking)
            fprintf(f, " (%" PRIu64 " in epoll_wait, semop or sigtimedwait, which a stop "
                       "would make fail with EINTR)", p->soft_breaking);
        if (p->soft_idle)
            fprintf(f, "; %" PRIu64 " of them idle by where they were blocked alone, nothing "
                       "read (the very call, arguments and stack pointer of an idle sample "
                       "before; in a program not GHC's, any call)", p->soft_idle);
        if (p->calls_known)
            fprintf(f, "; %" PRIu64 " times a blocked thread's call was named by the "
                       "registers it left its CPU with (the per-CPU events' samples of "
                       "switches), its /proc syscall file not read", p->calls_known);
        if (p->soft_again)
            fprintf(f, "; %" PRIu64 " times a thread that ran while it was read was read again, "
                       "asleep in a call again", p->soft_again);
        if (p->soft_refused)
            fprintf(f, "; %" PRIu64 " were stopped after all (they ran while being read, or "
                       "their Haskell stack pointer was in a register)", p->soft_refused);
        if (p->soft_short)
            fprintf(f, "; %" PRIu64 " lacked registers their C stack needed (stopped there "
                       "since)", p->soft_short);
        fputc('\n', f);
    }
    if (p->restarted)
        fprintf(f, "  restarted: %" PRIu64 " calls a stop interrupted (EINTR from epoll_wait and "
                   "the like) were restarted, unseen by the program\n", p->restarted);
    if (p->late)
        fprintf(f, "  late:      %" PRIu64 " %s a thread stopped after its tick (waiting for a "
                   "CPU), sampled then\n", p->late, p->late == 1 ? "time" : "times");
    fprintf(f, "  errors:    %" PRIu64, errors);
    if (errors) {
        const char *sep = " (";
        for (int e = 1; e < WE__COUNT; e++)
            if (p->errors[e]) {
                fprintf(f, "%s%s: %" PRIu64, sep, walk_error__str(e), p->errors[e]);
                sep = ", ";
            }
        fputc(')', f);
    }
    if (p->lost_threads)
        fprintf(f, "; %" PRIu64 " threads exited before they could be stopped",
                p->lost_threads);
    fputc('\n', f);
    if (p->children[0])
        fprintf(f, "  children:  %s\n", p->children);
    if (p->exited && p->exit_status != -1) {
        const char *who = p->launched ? "the command" : "the process";
        if (WIFEXITED(p->exit_status))
            fprintf(f, "  exit:      %s exited with status %d\n", who, WEXITSTATUS(p->exit_status));
        else if (WIFSIGNALED(p->exit_status)) {
            const char *abbrev = sigabbrev_np(WTERMSIG(p->exit_status));
            fprintf(f, "  exit:      %s was killed by signal %d (SIG%s)\n", who,
                    WTERMSIG(p->exit_status), abbrev ? abbrev : "?");
        }
    }
}

static void top(FILE *f, const char *title, const struct counter *c, uint64_t total)
{
    struct counter_entry *v = counter__sorted(c, COUNTER_BY_COUNT);
    if (!v)
        return;
    fprintf(f, "  %s\n", title);
    for (size_t i = 0; i < c->n && i < TOP; i++)
        fprintf(f, "    %6.1f%%  %s\n", 100.0 * (double)v[i].count / (double)total, v[i].key);
    free(v);
}

/* One OS thread: its figures, then its top functions over its visible
 * samples, counted from the groups of samples that display alike. */
static int thread_section(const struct profile *p, const struct out_opts *o, size_t ti,
                          const struct out_group *g, size_t ng, FILE *f)
{
    const struct prof_thread *t = &p->threads[ti];
    struct counter self, total;
    const char *names[MAX_FRAMES + 4];
    char scratch[128];
    uint64_t shown = 0;
    struct out_opts no_root = *o;

    no_root.threads = false;
    if (counter__init(&self) < 0 || counter__init(&total) < 0)
        return -1;
    for (size_t i = 0; i < ng; i++) {
        const struct prof_sample *s = &g[i].s;
        int first, n;
        if (s->thread != ti)
            continue;
        shown += g[i].count;
        n = out__path(p, s, &no_root, names, MAX_FRAMES + 4, scratch, &first);
        if (n > first)
            counter__add(&self, names[n - 1], g[i].count, 0);
        /* A function counts once per sample however often it recurses. */
        for (int k = first; k < n; k++) {
            bool dup = false;
            for (int j = first; j < k && !dup; j++)
                dup = strcmp(names[j], names[k]) == 0;
            if (!dup)
                counter__add(&total, names[k], g[i].count, 0);
        }
    }
    fprintf(f, "\nthread %d (%s)%s%s: %" PRIu64 " samples, on CPU %.1f%%", (int)t->tid, t->comm,
            t->role[0] ? ", " : "", t->role, t->samples,
            t->samples ? 100.0 * (double)t->oncpu / (double)t->samples : 0.0);
    if (shown != t->samples)
        fprintf(f, ", %" PRIu64 " shown (idle left out; --idle keeps them)", shown);
    fputc('\n', f);
    bool tagged = false;
    for (int k = 1; k < TAG__COUNT; k++)
        tagged |= t->tags[k] > 0;
    if (tagged && t->samples) {
        fprintf(f, "  tags:");
        for (int k = 1; k < TAG__COUNT; k++)
            if (t->tags[k])
                fprintf(f, " %s %.1f%%", sample_tag__str(k),
                        100.0 * (double)t->tags[k] / (double)t->samples);
        fputc('\n', f);
    }
    if (shown) {
        top(f, "self:", &self, shown);
        top(f, "total:", &total, shown);
    }
    counter__free(&self);
    counter__free(&total);
    return 0;
}

/* Which OS threads held each capability, and what the holder was doing:
 * shares of all ticks (a capability nobody holds is free). One a
 * collection holds while a thread waits for it (SAMPLE_CAP_COLLECTED:
 * under +RTS -qg or -qn, the collecting Task holds every capability) is
 * held by the collection, gc. */
static int capability_section(const struct profile *p, FILE *f)
{
    struct prof_iter it;
    struct prof_sample s;
    int ncaps = 0;
    if (profile__iter(p, &it) < 0)
        return -1;
    while (profile__next(&it, &s))
        if (s.cap >= ncaps)
            ncaps = s.cap + 1;
    profile__iter_free(&it);
    if (ncaps == 0 || p->ticks == 0)
        return 0;
    /* Per capability: samples held, by tag and by thread. */
    size_t nt = p->nthreads ? p->nthreads : 1;
    uint64_t *held = calloc((size_t)ncaps, sizeof *held);
    uint64_t *tags = calloc((size_t)ncaps * TAG__COUNT, sizeof *tags);
    uint64_t *by = calloc((size_t)ncaps * nt, sizeof *by);
    uint64_t *collected = calloc((size_t)ncaps, sizeof *collected);
    int r = -1;
    if (!held || !tags || !by || !collected || profile__iter(p, &it) < 0)
        goto out;
    while (profile__next(&it, &s)) {
        if (s.cap < 0)
            continue;
        if (s.flags & SAMPLE_CAP_COLLECTED) {
            /* (Each thread waiting for it says so: one a tick, mostly.) */
            if (collected[s.cap] < p->ticks) {
                collected[s.cap]++;
                held[s.cap]++;
                tags[(size_t)s.cap * TAG__COUNT + TAG_GC]++;
            }
            continue;
        }
        held[s.cap]++;
        tags[(size_t)s.cap * TAG__COUNT + s.tag]++;
        by[(size_t)s.cap * nt + s.thread]++;
    }
    profile__iter_free(&it);
    fprintf(f, "\ncapabilities (shares of %" PRIu64 " ticks):\n", p->ticks);
    for (int c = 0; c < ncaps; c++) {
        struct counter bc;
        if (counter__init(&bc) < 0)
            goto out;
        for (size_t t = 0; t < p->nthreads; t++)
            if (by[(size_t)c * nt + t]) {
                char key[48];
                snprintf(key, sizeof key, "tid %d", (int)p->threads[t].tid);
                counter__add(&bc, key, by[(size_t)c * nt + t], 0);
            }
        if (collected[c])
            counter__add(&bc, "a collection", collected[c], 0);
        fprintf(f, "  capability %d: held %.1f%%", c,
                100.0 * (double)held[c] / (double)p->ticks);
        struct counter_entry *v = counter__sorted(&bc, COUNTER_BY_COUNT);
        for (size_t k = 0; v && k < bc.n && k < 8; k++)
            fprintf(f, "%s%s %.1f%%", k ? ", " : " (by ", v[k].key,
                    100.0 * (double)v[k].count / (double)p->ticks);
        fprintf(f, "%s\n   ", bc.n ? ")" : "");
        free(v);
        counter__free(&bc);
        for (int g = 1; g < TAG__COUNT; g++)
            if (tags[(size_t)c * TAG__COUNT + g])
                fprintf(f, " %s %.1f%%", sample_tag__str(g),
                        100.0 * (double)tags[(size_t)c * TAG__COUNT + g] / (double)p->ticks);
        fprintf(f, " free %.1f%%\n",
                held[c] < p->ticks ? 100.0 * (double)(p->ticks - held[c]) / (double)p->ticks
                                   : 0.0);
    }
    r = 0;
out:
    free(held);
    free(tags);
    free(by);
    free(collected);
    return r;
}

static int write_report(const struct profile *p, const struct out_opts *o, FILE *f)
{
    uint64_t *shown = calloc(p->nthreads + 1, sizeof *shown);
    struct out_rank *order = NULL;
    struct out_group *g = NULL;
    size_t ng = 0;
    int r = -1;
    if (!shown || out__groups(p, o, OUT_BY_THREAD, &g, &ng) < 0)
        goto out;
    for (size_t i = 0; i < ng; i++)
        shown[g[i].s.thread] += g[i].count;
    if (out__rank_threads(p, shown, &order) < 0)
        goto out;
    header(p, f);
    for (size_t i = 0; i < p->nthreads; i++)
        if (thread_section(p, o, order[i].t, g, ng, f) < 0)
            goto out;
    r = capability_section(p, f);
out:
    free(g);
    free(order);
    free(shown);
    return r;
}

const struct writer writer_report = {
    .name = "report",
    .help = "summary: sampling health, then per thread its top self and total functions",
    .text = true,
    .write = write_report,
};
