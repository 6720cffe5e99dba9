/* Symbol lookup against real executables, PIE and non-PIE: start the
 * workload, read the addresses it prints of its own functions, and check
 * that the module set (maps + load bias + .symtab) names them, with DWARF
 * file:line, and that return addresses are looked up at pc - 1. */
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "symbolizer/dwarf_lines.h"
#include "symbolizer/modset.h"
#include "symbolizer/symbolize.h"
#include "tests/unit/unit.h"

struct target {
    pid_t pid;
    int in_fd; /* its stdin: closing it ends the program */
    unsigned long alpha, beta, gamma;
};

static int start(const char *path, struct target *t)
{
    int in[2], out[2];
    if (pipe(in) < 0 || pipe(out) < 0)
        return -1;
    t->pid = fork();
    if (t->pid == 0) {
        dup2(in[0], 0);
        dup2(out[1], 1);
        close(in[1]);
        close(out[0]);
        execl(path, path, (char *)NULL);
        _exit(127);
    }
    close(in[0]);
    close(out[1]);
    t->in_fd = in[1];
    FILE *f = fdopen(out[0], "r");
    int ok = f && fscanf(f, "alpha %lx beta %lx gamma %lx", &t->alpha, &t->beta, &t->gamma) == 3;
    if (f)
        fclose(f);
    return ok ? 0 : -1;
}

static void stop(struct target *t)
{
    close(t->in_fd);
    waitpid(t->pid, NULL, 0);
}

static const char *name_of(struct modset *ms, uint64_t addr, enum frame_kind kind,
                           struct frame_sym *fs)
{
    frame_sym__free(fs);
    symbolize__frame(ms, &(struct raw_frame){addr, kind, 0}, fs);
    return fs->name;
}

static void check_binary(const char *path, bool pie)
{
    struct target t;
    struct modset ms;
    struct frame_sym fs = {0};

    if (start(path, &t) < 0)
        UNIT_FAIL("cannot start %s (run make workloads)", path);
    int r = modset__init(&ms, t.pid);
    if (r < 0) {
        stop(&t);
        UNIT_FAIL("modset__init: %d", r);
    }
    struct module *m = modset__find(&ms, t.alpha);
    CHECK(m != NULL);
    CHECK(ms.main == m);
    if (pie)
        CHECK(m->bias != 0);
    else
        CHECK_EQ_INT(m->bias, 0);

    CHECK_EQ_STR(name_of(&ms, t.alpha, FK_PC, &fs), "symtest_alpha");
    CHECK_EQ_STR(fs.object, strrchr(path, '/') + 1);
    CHECK(fs.file && strstr(fs.file, "symtest.c"));
    CHECK_EQ_INT(fs.line, 6);
    CHECK_EQ_STR(name_of(&ms, t.alpha + 1, FK_PC, &fs), "symtest_alpha");
    CHECK_EQ_STR(name_of(&ms, t.beta, FK_PC, &fs), "symtest_beta");
    CHECK_EQ_STR(name_of(&ms, t.gamma + 4, FK_PC, &fs), "symtest_gamma");
    /* A return address right at beta's start belongs to the call before it. */
    CHECK(strcmp(name_of(&ms, t.beta, FK_RET, &fs), "symtest_beta") != 0);
    CHECK_EQ_STR(name_of(&ms, t.beta + 1, FK_RET, &fs), "symtest_beta");
    /* Its unwind information knows each function's first address (what a
     * stripped file's frames are named by). */
    uint64_t first = 0;
    CHECK(module__cfi_function(m, t.gamma + 4, &first));
    CHECK_EQ_INT(first, t.gamma);
    CHECK(module__cfi_function(m, t.alpha, &first));
    CHECK_EQ_INT(first, t.alpha);
    CHECK(!module__cfi_function(m, m->lo - 1, &first));
    /* crt's _fini has no size: it reaches to the end of .fini, not to every
     * address above it that no symbol names. */
    GElf_Sym fini;
    CHECK(module__find_symbol(m, "_fini", &fini));
    const struct sym *in_fini = module__symbol(m, fini.st_value + (uint64_t)m->bias);
    CHECK(in_fini && strcmp(in_fini->name, "_fini") == 0);
    const struct sym *past = module__symbol(m, fini.st_value + 0x40 + (uint64_t)m->bias);
    CHECK(!past || strcmp(past->name, "_fini") != 0);
    /* Nothing mapped at page 1: unknown, not a crash. */
    CHECK_EQ_STR(name_of(&ms, 0x1000, FK_PC, &fs), "[unknown]");
    /* libc is found, with its symbols (.dynsym at least). */
    bool libc = false;
    for (size_t i = 0; i < ms.nmods; i++)
        if (strncmp(ms.mods[i]->name, "libc.so", 7) == 0) {
            libc = true;
            CHECK(ms.mods[i]->bias != 0);
            CHECK(ms.mods[i]->ehf_count > 100);
        }
    CHECK(libc);
    frame_sym__free(&fs);
    modset__free(&ms);
    stop(&t);
}

TEST(pie_executable) { check_binary("build/workloads/symtest_pie", true); }
TEST(non_pie_executable) { check_binary("build/workloads/symtest_nopie", false); }

UNIT_MAIN()

/* hsspy defines sigprocmask, to spare libunwind's signal masking while it
 * unwinds (symbolizer/unwind.c); anywhere else it must do what libc's does. */
TEST(sigprocmask_outside_unwinding)
{
    sigset_t usr2, old, now, back;
    sigemptyset(&usr2);
    sigaddset(&usr2, SIGUSR2);
    CHECK_EQ_INT(sigprocmask(SIG_BLOCK, &usr2, &old), 0);
    CHECK(!sigismember(&old, SIGUSR2));
    CHECK_EQ_INT(pthread_sigmask(SIG_SETMASK, NULL, &now), 0);
    CHECK(sigismember(&now, SIGUSR2));
    CHECK_EQ_INT(sigprocmask(SIG_SETMASK, &old, &back), 0);
    CHECK(sigismember(&back, SIGUSR2));
    CHECK_EQ_INT(pthread_sigmask(SIG_SETMASK, NULL, &now), 0);
    CHECK(!sigismember(&now, SIGUSR2));
    CHECK(sigprocmask(12345, &usr2, NULL) < 0); /* a bad `how` still fails */
}

/* The way back from a signal handler, glibc's __restore_rt: the address a
 * handler returns to is it (modset__is_sigreturn), and it is named so, as
 * a pc (the unwinder takes it and the interrupted frame under it as pcs,
 * not return addresses), with libc's debug symbols or without. */
static volatile uint64_t handler_ra;
static void take_ra(int sig)
{
    (void)sig;
    handler_ra = (uint64_t)__builtin_extract_return_addr(__builtin_return_address(0));
}

TEST(signal_return)
{
    struct sigaction sa, old;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = take_ra;
    sigemptyset(&sa.sa_mask);
    CHECK_EQ_INT(sigaction(SIGUSR2, &sa, &old), 0);
    raise(SIGUSR2);
    sigaction(SIGUSR2, &old, NULL);
    CHECK(handler_ra != 0);
    struct modset ms;
    int r = modset__init(&ms, getpid());
    if (r < 0)
        UNIT_FAIL("modset__init: %d", r);
    struct frame_sym fs = {0};
    CHECK(modset__is_sigreturn(&ms, handler_ra));
    CHECK(!modset__is_sigreturn(&ms, handler_ra + 1));
    CHECK(!modset__is_sigreturn(&ms, (uint64_t)(uintptr_t)&take_ra));
    const char *name = name_of(&ms, handler_ra, FK_PC, &fs);
    if (!name || strcmp(name, "__restore_rt") != 0)
        UNIT_FAIL("the handler returns to %s", name ? name : "(null)");
    frame_sym__free(&fs);
    modset__free(&ms);
}

/* GHC's compile unit directories end in '/', which libdw joins to a relative
 * file name with another. */
static const char *clean(const char *path)
{
    static char buf[256];
    snprintf(buf, sizeof buf, "%s", path);
    dwarf_lines__clean_path(buf);
    return buf;
}

/* Where a mapping's bytes sit from where the load bias puts them: 0 for
 * each segment mapped as the loader maps it, also where two segments
 * share a page of the file (a GHC program's text and data, ld without
 * separate code: the data's page is also the text's last); the distance
 * for a part of the text mapped again elsewhere. */
static void check_shifts(const char *path)
{
    struct module m;
    if (module__open_file(&m, path, 0x400000, 0x800000, 0) < 0)
        UNIT_FAIL("cannot open %s (run make workloads unit)", path);
    const GElf_Phdr *text = NULL;
    for (size_t i = 0; i < m.nph; i++) {
        const GElf_Phdr *ph = &m.ph[i];
        if (ph->p_type != PT_LOAD)
            continue;
        struct map_entry e = {.start = ph->p_vaddr & ~0xfffull, .offset = ph->p_offset & ~0xfffull};
        CHECK_EQ_INT(module__mapping_shift(&m, &e), 0);
        if ((ph->p_flags & PF_X) && !text)
            text = ph;
    }
    CHECK(text != NULL);
    struct map_entry again = {.start = 0x7f0000000000ull, .offset = text->p_offset & ~0xfffull};
    CHECK_EQ_INT(module__mapping_shift(&m, &again),
                 (int64_t)((text->p_vaddr & ~0xfffull) - 0x7f0000000000ull));
    module__close(&m);
}

TEST(mapping_shifts)
{
    check_shifts("build/workloads/symtest_nopie");
    check_shifts("build/workloads/hs/calib");
}

/* The names GHC gives procedures of its own in DWARF, which are no
 * binding's: 9.0's block labels (c3hy, s3hy), 9.6's uniques in decimal. */
TEST(ghc_labels)
{
    CHECK(dwarf_lines__is_label("c3hy"));
    CHECK(dwarf_lines__is_label("_s3hy"));
    CHECK(dwarf_lines__is_label("L7133701809754876057"));
    CHECK(!dwarf_lines__is_label("L12"));        /* (too short for a unique) */
    CHECK(!dwarf_lines__is_label("L7133701809x")); /* (not all digits) */
    CHECK(!dwarf_lines__is_label("Left"));
    CHECK(!dwarf_lines__is_label("spinA"));
}

TEST(source_path_cleaned)
{
    CHECK_EQ_STR(clean("/src/app//Main.hs"), "/src/app/Main.hs");
    CHECK_EQ_STR(clean("/src/./app/.//Main.hs"), "/src/app/Main.hs");
    CHECK_EQ_STR(clean("./app/Main.hs"), "app/Main.hs");
    CHECK_EQ_STR(clean(".//app/Main.hs"), "app/Main.hs");
    CHECK_EQ_STR(clean("///x.c"), "/x.c");
    CHECK_EQ_STR(clean("/src/../lib/x.c"), "/src/../lib/x.c");
    CHECK_EQ_STR(clean("/src/.hidden/x.c"), "/src/.hidden/x.c");
    CHECK_EQ_STR(clean("Main.hs"), "Main.hs");
    CHECK_EQ_STR(clean("./"), "./");
    CHECK_EQ_STR(clean(""), "");
}
