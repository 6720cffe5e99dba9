/* hsspy.c - the command line: subcommands, options, help. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "out/writer.h"
#include "sampler/launch.h"
#include "sampler/live.h"
#include "sampler/log.h"
#include "sampler/output.h"
#include "sampler/record.h"
#include "sampler/replay.h"

/* The longest -d (the tick loop's deadline is in nanoseconds). */
#define MAX_DURATION_S 1e9

#ifndef HSSPY_VERSION
#define HSSPY_VERSION "0.1.0"
#endif

static void usage(FILE *f)
{
    fprintf(f,
            "usage: hsspy <command> [options]\n"
            "\n"
            "A sampling profiler for running GHC Haskell programs (and any native\n"
            "x86_64 Linux process): attaches from outside with ptrace, no rebuild.\n"
            "\n"
            "commands:\n"
            "  record    sample a process and write a profile\n"
            "  top       a live view of where a running process spends its time\n"
            "  dump      print every thread's stack once, now\n"
            "  report    write a saved recording (record -f raw) in any format\n"
            "\n"
            "  hsspy --help              this text\n"
            "  hsspy record --help       options of record\n"
            "  hsspy top --help          options and keys of top\n"
            "  hsspy dump --help         options of dump\n"
            "  hsspy report --help       options of report\n"
            "  hsspy --version           the version\n");
}

/* The -f list, as the writers describe themselves. */
static void formats_usage(FILE *f)
{
    const struct writer *const *w = writer__all();
    for (size_t i = 0; w[i]; i++)
        fprintf(f, "                          %-10s %s\n", w[i]->name, w[i]->help);
}

static void record_usage(FILE *f)
{
    fprintf(f,
            "usage: hsspy record [-F HZ] [-d SECONDS] [-o FILE] [-f FORMAT] [--sort acc|own]\n"
            "                    [--stack stg|ccs] [--threads] [--idle] [--nice N | --realtime]\n"
            "                    [--no-perf-events | --per-thread-events | --nonblocking] [-q]\n"
            "                    [--save-captures DIR] (-p PID | -- CMD [ARGS...])\n"
            "\n"
            "Sample every thread of a process and write a profile.\n"
            "\n"
            "  -p, --pid PID         attach to a running process (or to a thread's process)\n"
            "  -- CMD [ARGS...]      run CMD and profile it until it exits (followed\n"
            "                        through exec: env, nice, a script's exec; child\n"
            "                        processes are not sampled, and when they used more\n"
            "                        CPU than it, the last lines say so and name the\n"
            "                        busiest); if CMD fails, hsspy says so and exits\n"
            "                        with its status (128 + N if signal N killed it),\n"
            "                        unless hsspy failed itself (1; 3: a GHC program\n"
            "                        whose runtime could not be read);\n"
            "                        its standard output goes to standard error when\n"
            "                        the profile goes to standard output, not a terminal\n"
            "  -F, --rate HZ         samples per second (default 99; jittered +-10%%)\n"
            "  -d, --duration SECS   stop after SECS seconds (fractions allowed; default:\n"
            "                        until Ctrl-C or the target exits)\n"
            "  -o, --output FILE     write to FILE (default, or -: standard output),\n"
            "                        replaced whole once the profile is written (a\n"
            "                        recording that fails, a full disk, leave it as it was)\n"
            "  -f, --format FORMAT   output format (default folded):\n");
    formats_usage(f);
    fprintf(f,
            "      --sort acc|own    -f calls: order functions by samples anywhere on the\n"
            "                        stack (acc, default) or as the leaf (own)\n"
            "      --stack stg|ccs   the Haskell part of each sample of a GHC program:\n"
            "                        stg (default), the frames on the thread's Haskell\n"
            "                        stack; ccs, its current cost-centre stack (what\n"
            "                        GHC's own profiler charges the time to), each cost\n"
            "                        centre named Module.label; for a program built\n"
            "                        with -prof\n"
            "      --threads         a root frame per OS thread: \"tid 1234 (comm)\"\n"
            "      --idle            keep samples of idle threads (a GHC program's by\n"
            "                        their tag, [idle]; another's, asleep in the kernel,\n"
            "                        state S or D); dropped by default\n"
            "  -q, --quiet           no progress line, informational messages or warnings\n"
            "                        (nor the last line: what was recorded, and where it\n"
            "                        was written); errors still are\n"
            "      --nice N          the nice value to sample at, -20 to 19 (default:\n"
            "                        -10 where allowed, i.e. root or CAP_SYS_NICE,\n"
            "                        unless hsspy was started niced), so that ticks\n"
            "                        come on time on a busy machine; never more than\n"
            "                        half a CPU so; the program, and naming and\n"
            "                        writing, keep their own nice value\n"
            "      --realtime        sample at real-time priority (SCHED_FIFO 1; needs\n"
            "                        root or CAP_SYS_NICE), so that ticks come on time\n"
            "                        on a busy machine; at most half a CPU, and the\n"
            "                        program keeps its own priority\n"
            "      --no-perf-events  tell which threads ran since the last tick, and\n"
            "                        which are on a CPU, from /proc reads (a few per\n"
            "                        thread per tick) instead of the kernel's records\n"
            "                        of context switches (a perf event per CPU where\n"
            "                        hsspy may watch every CPU, else one per thread);\n"
            "                        /proc is also what is used where perf events are\n"
            "                        not allowed\n"
            "      --per-thread-events  take those records from a perf event on each\n"
            "                        thread even where hsspy may watch every CPU: only\n"
            "                        the program's switches are recorded (a per-CPU\n"
            "                        event records every program's, up to a couple of\n"
            "                        microseconds each on a VM), but each costs the\n"
            "                        program more, and threads waiting for a CPU are\n"
            "                        stopped\n"
            "      --nonblocking     do not stop running threads: take each one's\n"
            "                        registers and C stack from the kernel's samples\n"
            "                        (a perf event on each CPU, at random instants about\n"
            "                        a tick apart; needs root, CAP_PERFMON or\n"
            "                        perf_event_paranoid <= 0), and read its Haskell\n"
            "                        stack while it runs on; cheaper for the program,\n"
            "                        but a stack may be read after it moved on (up to a\n"
            "                        tick late), so some frames can be wrong; each\n"
            "                        thread is still stopped once, at its first tick,\n"
            "                        unless the runtime's Tasks give its thread pointer\n"
            "      --save-captures DIR  also save up to 200 raw captures (registers and\n"
            "                        copied memory of one thread each) in DIR, as the\n"
            "                        stack walkers see them: input for hsspy's fuzzer\n"
            "                        (every blocked thread is then read, idle or not)\n"
            "  -h, --help            this text\n"
            "\n"
            "Ctrl-C (or SIGTERM, SIGHUP) stops the recording, detaches and writes the\n"
            "output. Ctrl-C at the terminal also reaches a command launched with -- CMD\n"
            "(one process group, as with perf record), whose end is then said and passed\n"
            "on; SIGTERM to hsspy stops only the recording. The target keeps running\n"
            "whatever happens to hsspy.\n");
}

static int parse_double(const char *s, double *out)
{
    char *end;
    errno = 0;
    double v = strtod(s, &end);
    if (errno || end == s || *end || !isfinite(v))
        return -1;
    *out = v;
    return 0;
}

static int parse_sort(const char *s, enum out_sort *sort)
{
    if (strcmp(s, "acc") == 0)
        *sort = OUT_SORT_ACC;
    else if (strcmp(s, "own") == 0)
        *sort = OUT_SORT_OWN;
    else {
        log__error("--sort needs acc or own, not '%s'", s);
        return -1;
    }
    return 0;
}

/* Only the calls analysis has an order to choose; silently ignoring --sort
 * elsewhere would let a user believe it did something. */
static bool sort_misplaced(const char *format)
{
    if (strcmp(format, "calls") == 0)
        return false;
    log__error("--sort applies to -f calls only, not to -f %s", format);
    return true;
}

static int parse_pid(const char *s, pid_t *pid)
{
    char *end;
    errno = 0;
    long v = strtol(s, &end, 10);
    if (errno || *end || v <= 0 || v > 0x7fffffff) {
        log__error("-p needs a process id, not '%s'", s);
        return -1;
    }
    *pid = (pid_t)v;
    return 0;
}

/* -o FILE: not empty (one line said, -1). */
static int parse_output(const char *arg, const char **out)
{
    if (!arg[0]) {
        log__error("-o needs a file name (or - for standard output)");
        return -1;
    }
    *out = arg;
    return 0;
}

/* getopt found an unknown option or one given a value it does not take
 * (c == '?'), or one missing its value (c == ':', optstrings begin with
 * ':'). A long one is argv[optind - 1], "--name[=value]" (optopt 0 if
 * unknown, else its val); a short one is optopt (getopt may not have
 * moved past its cluster yet: argv[optind - 1] is then an element before). */
static int bad_option(char **argv, const char *cmd, int c, const struct option *opts)
{
    const char *arg = argv[optind - 1];
    size_t len = strcspn(arg + (strncmp(arg, "--", 2) == 0 ? 2 : 0), "=");
    const struct option *named = NULL; /* the long option arg names, if any */
    for (const struct option *o = opts; strncmp(arg, "--", 2) == 0 && o->name; o++)
        if (strncmp(o->name, arg + 2, len) == 0 && (!named || strlen(o->name) == len))
            named = o; /* (an abbreviation, as getopt takes them; the exact name first) */
    bool is_long = strncmp(arg, "--", 2) == 0 && (optopt == 0 || (named && named->val == optopt));
    if (!is_long && c == ':')
        log__error("option -%c needs a value (see hsspy %s --help)", optopt, cmd);
    else if (!is_long)
        log__error("unknown option '-%c' (see hsspy %s --help)", optopt, cmd);
    else if (c == ':' && named)
        log__error("option --%s needs a value (see hsspy %s --help)", named->name, cmd);
    else if (named && optopt && arg[2 + len] == '=')
        log__error("option --%s takes no value (see hsspy %s --help)", named->name, cmd);
    else
        log__error("unknown option '%s' (see hsspy %s --help)", arg, cmd);
    return 2;
}

/* --save-captures DIR: a directory hsspy can write its captures in, told
 * now rather than by captures that are never written. */
static int check_save_dir(const char *dir)
{
    struct stat st;
    const char *why = NULL;
    if (stat(dir, &st) < 0)
        why = strerror(errno);
    else if (!S_ISDIR(st.st_mode))
        why = "not a directory";
    else if (faccessat(AT_FDCWD, dir, W_OK | X_OK, AT_EACCESS) < 0)
        why = strerror(errno);
    if (!why)
        return 0;
    log__error("--save-captures needs a directory to write in: '%s': %s", dir, why);
    return -1;
}

/* -F: samples per second, within what the sampler can do. */
static int parse_rate(const char *s, double *hz)
{
    if (parse_double(s, hz) < 0 || *hz < 0.1 || *hz > 10000) {
        log__error("-F needs a rate between 0.1 and 10000 samples per second, not '%s'", s);
        return -1;
    }
    return 0;
}

static int parse_nice(const char *s, int *out)
{
    char *end;
    errno = 0;
    long v = strtol(s, &end, 10);
    if (errno || end == s || *end || v < -20 || v > 19) {
        log__error("--nice needs a nice value from -20 to 19, not '%s'", s);
        return -1;
    }
    *out = (int)v;
    return 0;
}

static int cmd_record(int argc, char **argv)
{
    static const struct option opts[] = {
        {"pid", required_argument, NULL, 'p'},
        {"rate", required_argument, NULL, 'F'},
        {"duration", required_argument, NULL, 'd'},
        {"output", required_argument, NULL, 'o'},
        {"format", required_argument, NULL, 'f'},
        {"threads", no_argument, NULL, 'T'},
        {"idle", no_argument, NULL, 'I'},
        {"sort", required_argument, NULL, 'S'},
        {"quiet", no_argument, NULL, 'q'},
        {"save-captures", required_argument, NULL, 'C'},
        {"realtime", no_argument, NULL, 'R'},
        {"nice", required_argument, NULL, 'Z'},
        {"no-perf-events", no_argument, NULL, 'E'},
        {"per-thread-events", no_argument, NULL, 'U'},
        {"nonblocking", no_argument, NULL, 'N'},
        {"stack", required_argument, NULL, 'K'},
        {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0},
    };
    bool sorted = false;
    struct record_opts o = {
        .rate_hz = 99,
        .format = "folded",
        .stack_bytes = 32 * 1024,
    };
    int c;

    optind = 1;
    opterr = 0; /* our own one-line messages instead of getopt's */
    /* '+': stop at the first non-option, so `-- CMD -x` keeps CMD's options. */
    while ((c = getopt_long(argc, argv, "+:p:F:d:o:f:qh", opts, NULL)) != -1) {
        switch (c) {
        case 'p':
            if (parse_pid(optarg, &o.pid) < 0)
                return 2;
            break;
        case 'F':
            if (parse_rate(optarg, &o.rate_hz) < 0)
                return 2;
            break;
        case 'd':
            if (parse_double(optarg, &o.duration_s) < 0 || o.duration_s <= 0) {
                log__error("-d needs a positive number of seconds, not '%s'", optarg);
                return 2;
            }
            /* (A deadline in nanoseconds must fit: 1e10 s and more wrapped
             * around, and the recording ended at once, empty.) */
            if (o.duration_s > MAX_DURATION_S) {
                log__error("-d %s is more than %.0f seconds (31 years): leave -d out to record "
                           "until Ctrl-C or the program's end",
                           optarg, MAX_DURATION_S);
                return 2;
            }
            break;
        case 'o':
            if (parse_output(optarg, &o.output) < 0)
                return 2;
            break;
        case 'f':
            if (!writer__find(optarg)) {
                log__error("unknown format '%s' (see hsspy record --help)", optarg);
                return 2;
            }
            o.format = optarg;
            break;
        case 'T': o.threads = true; break;
        case 'I': o.idle = true; break;
        case 'S':
            if (parse_sort(optarg, &o.sort) < 0)
                return 2;
            sorted = true;
            break;
        case 'q': log__set_quiet(true); break;
        case 'C':
            if (check_save_dir(optarg) < 0)
                return 2;
            o.save_dir = optarg;
            break;
        case 'R': o.realtime = true; break;
        case 'Z':
            if (parse_nice(optarg, &o.nice) < 0)
                return 2;
            o.nice_given = true;
            break;
        case 'E': o.no_perf_events = true; break;
        case 'U': o.per_thread_events = true; break;
        case 'N': o.nonblocking = true; break;
        case 'K':
            if (strcmp(optarg, "stg") == 0) {
                o.stack = STACK_STG;
            } else if (strcmp(optarg, "ccs") == 0) {
                o.stack = STACK_CCS;
            } else {
                log__error("--stack needs stg or ccs, not '%s'", optarg);
                return 2;
            }
            break;
        case 'h': record_usage(stdout); return 0;
        default:
            return bad_option(argv, "record", c, opts);
        }
    }
    if (sorted && sort_misplaced(o.format))
        return 2;
    if (o.realtime && o.nice_given) {
        log__error("--realtime and --nice are two ways to set hsspy's priority: give one");
        return 2;
    }
    if (o.nonblocking && o.no_perf_events) {
        log__error("--nonblocking samples by perf events: it cannot go with --no-perf-events");
        return 2;
    }
    if (o.per_thread_events && (o.nonblocking || o.no_perf_events)) {
        log__error(o.nonblocking ? "--nonblocking takes context switches from its per-CPU "
                                   "events: it cannot go with --per-thread-events"
                                 : "--per-thread-events and --no-perf-events contradict each "
                                   "other: give one");
        return 2;
    }
    if (optind < argc)
        o.argv = argv + optind;
    if (o.pid && o.argv && strcmp(argv[optind - 1], "--") != 0) {
        /* (hsspy record -p 123 456: not a command, a second process) */
        log__error("unexpected argument '%s': -p takes one PID (a command to run goes after "
                   "--, without -p)",
                   o.argv[0]);
        return 2;
    }
    if (!o.pid == !o.argv) {
        log__error(o.pid ? "give either -p PID or -- CMD, not both"
                         : "nothing to profile: give -p PID or -- CMD [ARGS...] (see hsspy "
                           "record --help)");
        return 2;
    }
    return record__run(&o);
}

static void top_usage(FILE *f)
{
    fprintf(f, "usage: hsspy top [-F HZ] [--idle] [--nonblocking] -p PID\n"
               "\n"
               "A live view of a running process, redrawn every second, like top(1):\n"
               "its functions by own share (samples where the function is the leaf)\n"
               "and total share (samples with it anywhere on the stack, once however\n"
               "deep it recurses) and, for a GHC program, the share of each tag\n"
               "(haskell, unsafe-ffi, safe-ffi, gc, rts, idle, over every sample,\n"
               "idle ones included). The header gives the target (and its GHC\n"
               "version), the rate asked and achieved, the samples taken, the time\n"
               "since the start, missed ticks, walk errors, and --idle and\n"
               "--nonblocking when given.\n"
               "\n"
               "Shares are of the recent past: each sample's weight halves every\n"
               "%.0f s (an exponentially decayed window: the last %.0f s count for 7/8),\n"
               "so the view follows what the program does now; the a key switches to\n"
               "all-time counts and back.\n"
               "\n"
               "  -p, --pid PID         the process to watch\n"
               "  -F, --rate HZ         samples per second (default 99; jittered +-10%%)\n"
               "      --idle            count samples of idle threads in the function\n"
               "                        lists too; left out by default\n"
               "      --nonblocking     do not stop running threads: sample them by\n"
               "                        perf events (see hsspy record --help)\n"
               "  -h, --help            this text\n"
               "\n"
               "keys:\n"
               "  q          quit: detach and leave the process running (so do Ctrl-C,\n"
               "             SIGTERM and SIGHUP; top also ends when the process exits)\n"
               "  t          all threads merged, or one section per thread (busiest\n"
               "             first, by time on a CPU: its role, share of the samples,\n"
               "             share of them on a CPU, tags and its own top functions)\n"
               "  s          sort by own or by total share\n"
               "  a          recent window or all-time counts\n"
               "  space      redraw now (so does Ctrl-L)\n"
               "\n"
               "It needs a terminal on standard input and output; the terminal is put\n"
               "back as it was however top ends. The process keeps running whatever\n"
               "happens to hsspy.\n",
            LIVE_HALF_LIFE_S, 3 * LIVE_HALF_LIFE_S);
}

static int cmd_top(int argc, char **argv)
{
    static const struct option opts[] = {
        {"pid", required_argument, NULL, 'p'},
        {"rate", required_argument, NULL, 'F'},
        {"idle", no_argument, NULL, 'I'},
        {"nonblocking", no_argument, NULL, 'N'},
        {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0},
    };
    struct live_opts o = {.rate_hz = 99};
    int c;
    optind = 1;
    opterr = 0;
    while ((c = getopt_long(argc, argv, ":p:F:h", opts, NULL)) != -1) {
        switch (c) {
        case 'p':
            if (parse_pid(optarg, &o.pid) < 0)
                return 2;
            break;
        case 'F':
            if (parse_rate(optarg, &o.rate_hz) < 0)
                return 2;
            break;
        case 'I': o.idle = true; break;
        case 'N': o.nonblocking = true; break;
        case 'h': top_usage(stdout); return 0;
        default: return bad_option(argv, "top", c, opts);
        }
    }
    if (!o.pid || optind < argc) {
        log__error("top needs -p PID and nothing else (see hsspy top --help)");
        return 2;
    }
    return live__run(&o);
}

static void dump_usage(FILE *f)
{
    fprintf(f, "usage: hsspy dump [--json] [-o FILE] [-q] -p PID\n"
               "\n"
               "Stop every thread of a running process once, print each one's role, tag\n"
               "and whole stack (innermost frame first, with raw addresses), and detach.\n"
               "For a GHC program the Haskell frames are printed exactly as they are on\n"
               "the stack (recursion is not folded), and so is every Haskell thread, not\n"
               "only those a capability is running: its id, label (GHC 9.6+), what it is\n"
               "blocked on (an MVar, a black hole and the thread evaluating it, STM, a\n"
               "foreign call, ...) and its stack. Every OS thread is stopped for the\n"
               "moment of the snapshot, so the picture is consistent. Child processes\n"
               "are not dumped: the dump ends with their pids and commands.\n"
               "\n"
               "  -p, --pid PID         the process\n"
               "      --json            one JSON document instead of text\n"
               "  -o, --output FILE     write to FILE (default, or -: standard output)\n"
               "  -q, --quiet           no informational messages or warnings\n"
               "  -h, --help            this text\n");
}

static int cmd_dump(int argc, char **argv)
{
    static const struct option opts[] = {
        {"pid", required_argument, NULL, 'p'},
        {"output", required_argument, NULL, 'o'},
        {"json", no_argument, NULL, 'J'},
        {"quiet", no_argument, NULL, 'q'},
        {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0},
    };
    struct record_opts o = {
        .rate_hz = 1,
        .format = "dump",
        .stack_bytes = 64 * 1024,
        .idle = true,
        .snapshot = true,
    };
    int c;
    optind = 1;
    opterr = 0;
    while ((c = getopt_long(argc, argv, ":p:o:qh", opts, NULL)) != -1) {
        switch (c) {
        case 'p':
            if (parse_pid(optarg, &o.pid) < 0)
                return 2;
            break;
        case 'o':
            if (parse_output(optarg, &o.output) < 0)
                return 2;
            break;
        case 'J': o.format = "json"; break;
        case 'q': log__set_quiet(true); break;
        case 'h': dump_usage(stdout); return 0;
        default:
            return bad_option(argv, "dump", c, opts);
        }
    }
    if (!o.pid || optind < argc) {
        log__error("dump needs -p PID and nothing else (see hsspy dump --help)");
        return 2;
    }
    return record__run(&o);
}

static void report_usage(FILE *f)
{
    fprintf(f, "usage: hsspy report [-f FORMAT] [-o FILE] [--threads] [--idle] [--sort acc|own]\n"
               "                    [-q] FILE\n"
               "\n"
               "Read a recording saved with `hsspy record -f raw -o FILE`, name its frames\n"
               "from the files on this machine (those whose build-id still matches the\n"
               "recording's; the frames of a file not there, changed, without a build-id\n"
               "or stripped since keep the names the recording saved), and write it in\n"
               "any format. FILE -, or a pipe, is read whole from standard input\n"
               "(zcat run.hsspy.gz | hsspy report -).\n"
               "\n"
               "  -f, --format FORMAT   output format (default report):\n");
    formats_usage(f);
    fprintf(f, "  -o, --output FILE     write to FILE (default, or -: standard output),\n"
               "                        replaced whole once written; not the recording\n"
               "                        read (but with -f raw)\n"
               "      --threads         a root frame per OS thread (the default if the\n"
               "                        recording was made with it)\n"
               "      --idle            keep samples of idle threads (likewise)\n"
               "      --sort acc|own    -f calls: order by samples on the stack (acc, the\n"
               "                        default) or as the leaf (own)\n"
               "  -q, --quiet           no informational messages or warnings\n"
               "  -h, --help            this text\n");
}

static int cmd_report(int argc, char **argv)
{
    static const struct option opts[] = {
        {"format", required_argument, NULL, 'f'},
        {"output", required_argument, NULL, 'o'},
        {"threads", no_argument, NULL, 'T'},
        {"idle", no_argument, NULL, 'I'},
        {"sort", required_argument, NULL, 'S'},
        {"quiet", no_argument, NULL, 'q'},
        {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0},
    };
    struct replay_opts o = {.format = "report"};
    bool sorted = false;
    int c;
    optind = 1;
    opterr = 0;
    while ((c = getopt_long(argc, argv, ":f:o:qh", opts, NULL)) != -1) {
        switch (c) {
        case 'f':
            if (!writer__find(optarg)) {
                log__error("unknown format '%s' (see hsspy report --help)", optarg);
                return 2;
            }
            o.format = optarg;
            break;
        case 'o':
            if (parse_output(optarg, &o.output) < 0)
                return 2;
            break;
        case 'T': o.threads = true; break;
        case 'I': o.idle = true; break;
        case 'S':
            if (parse_sort(optarg, &o.sort) < 0)
                return 2;
            sorted = true;
            break;
        case 'q': log__set_quiet(true); break;
        case 'h': report_usage(stdout); return 0;
        default: return bad_option(argv, "report", c, opts);
        }
    }
    if (sorted && sort_misplaced(o.format))
        return 2;
    if (optind != argc - 1) {
        log__error("report needs exactly one FILE, a recording saved with `hsspy record -f raw "
                   "-o FILE` (see hsspy report --help)");
        return 2;
    }
    o.input = argv[optind];
    return replay__run(&o);
}

int main(int argc, char **argv)
{
    output__guard_std_fds();
    if (argc < 2) {
        usage(stderr);
        return 2;
    }
    if (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0 ||
        strcmp(argv[1], "help") == 0) {
        usage(stdout);
        return 0;
    }
    if (strcmp(argv[1], "--version") == 0 || strcmp(argv[1], "-V") == 0) {
        printf("hsspy %s\n", HSSPY_VERSION);
        return 0;
    }
    launch__raise_nofile();
    if (strcmp(argv[1], "record") == 0)
        return cmd_record(argc - 1, argv + 1);
    if (strcmp(argv[1], "top") == 0)
        return cmd_top(argc - 1, argv + 1);
    if (strcmp(argv[1], "dump") == 0)
        return cmd_dump(argc - 1, argv + 1);
    if (strcmp(argv[1], "report") == 0)
        return cmd_report(argc - 1, argv + 1);
    /* (One line, as for every error; the usage is --help's.) */
    log__error("unknown command '%s': the commands are record, top, dump and report "
               "(hsspy --help)",
               argv[1]);
    return 2;
}
