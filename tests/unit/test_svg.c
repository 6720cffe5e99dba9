/* The SVG flame graph writer on hand-built profiles: XML escaping of the
 * names Haskell is full of, one frame per merged stack prefix with its
 * exact sample counts, colours by tag, agreement with the folded writer,
 * narrow frames left out and counted, the sampling health in the header.
 * Well-formedness is checked by xmllint (tests/deps.sh installs it). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "out/profile.h"
#include "out/writer.h"
#include "tests/unit/unit.h"

static void name_frames(struct profile *p, const char *const *names)
{
    p->syms = calloc(p->nframes, sizeof *p->syms);
    p->cap_syms = p->nnamed = p->nframes;
    for (size_t i = 0; i < p->nframes; i++)
        p->syms[i].name = strdup(names[p->frames[i].addr]);
}

static char *render(const struct profile *p, const char *fmt, struct out_opts o)
{
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    int rc = writer__find(fmt)->write(p, &o, f);
    fclose(f);
    if (rc < 0) {
        free(buf);
        return NULL;
    }
    return buf;
}

/* Frames use their addr as an index into the names (innermost first). */
static void add(struct profile *p, int thread, const int *addrs, int n, int tag, bool idle,
                int times)
{
    struct raw_frame f[16];
    for (int i = 0; i < n; i++)
        f[i] = (struct raw_frame){(uint64_t)addrs[i], FK_RET, 0};
    int64_t st = profile__stack(p, f, n);
    for (int k = 0; k < times; k++) {
        struct prof_sample s = {.thread = (uint32_t)thread, .stack = (uint32_t)st,
                                .tag = (uint8_t)tag, .state = idle ? 'S' : 'R', .cap = -1};
        if (idle)
            s.flags = SAMPLE_IDLE;
        profile__add(p, &s);
    }
}

/* ---- reading the output back ---- */

struct frame {
    char name[256]; /* unescaped */
    char info[256]; /* the title's second line */
    char cls[32];   /* "haskell", "unsafe-ffi", ..., "c", "pseudo" */
    unsigned long long s, n;
    int d;
    unsigned r, g, b;
};

static void unescape(const char *s, size_t len, char *out, size_t size)
{
    static const struct { const char *ent; char c; } E[] = {
        {"&lt;", '<'}, {"&gt;", '>'}, {"&amp;", '&'}, {"&quot;", '"'}, {"&apos;", '\''}};
    size_t k = 0;
    for (size_t i = 0; i < len && k + 1 < size;) {
        size_t j;
        for (j = 0; j < 5; j++)
            if (strncmp(s + i, E[j].ent, strlen(E[j].ent)) == 0)
                break;
        if (j < 5) {
            out[k++] = E[j].c;
            i += strlen(E[j].ent);
        } else {
            out[k++] = s[i++];
        }
    }
    out[k] = 0;
}

/* Every drawn frame: <g class="f t-CLS" data-s data-n data-d><title>NAME\nINFO</title>
 * <rect ... fill="#rrggbb"/>... */
static int frames_of(const char *svg, struct frame *v, int max)
{
    int n = 0;
    for (const char *at = svg; (at = strstr(at, "<g class=\"f t-")) && n < max; at++) {
        struct frame *f = &v[n];
        memset(f, 0, sizeof *f);
        if (sscanf(at, "<g class=\"f t-%31[^\"]\" data-s=\"%llu\" data-n=\"%llu\" data-d=\"%d\">",
                   f->cls, &f->s, &f->n, &f->d) != 4)
            return -1;
        const char *t = strstr(at, "<title>"), *nl = t ? strchr(t, '\n') : NULL,
                   *end = t ? strstr(t, "</title>") : NULL, *fill = strstr(at, "fill=\"#");
        if (!t || !nl || !end || nl > end || !fill)
            return -1;
        t += strlen("<title>");
        unescape(t, (size_t)(nl - t), f->name, sizeof f->name);
        unescape(nl + 1, (size_t)(end - nl - 1), f->info, sizeof f->info);
        if (sscanf(fill, "fill=\"#%2x%2x%2x\"", &f->r, &f->g, &f->b) != 3)
            return -1;
        n++;
    }
    return n;
}

/* The frame's path from below the root, names joined by ';': its parent
 * is the frame one level down whose samples contain its first one. */
static void path_of(const struct frame *v, int n, int i, char *out, size_t size)
{
    const char *parts[64];
    int k = 0;
    for (int at = i; v[at].d > 0 && k < 64;) {
        parts[k++] = v[at].name;
        int up = -1;
        for (int j = 0; j < n && up < 0; j++)
            if (v[j].d == v[at].d - 1 && v[j].s <= v[at].s && v[at].s < v[j].s + v[j].n)
                up = j;
        if (up < 0)
            break;
        at = up;
    }
    out[0] = 0;
    while (k-- > 0) {
        strncat(out, parts[k], size - strlen(out) - 1);
        if (k)
            strncat(out, ";", size - strlen(out) - 1);
    }
}

static const struct frame *find(const struct frame *v, int n, const char *path)
{
    char buf[256];
    for (int i = 0; i < n; i++) {
        path_of(v, n, i, buf, sizeof buf);
        if (strcmp(buf, path) == 0)
            return &v[i];
    }
    return NULL;
}

/* xmllint's verdict; NULL if well-formed, else its first complaint. */
static const char *not_xml(const char *svg)
{
    static char why[256];
    char path[] = "/tmp/hsspy-test-svg-XXXXXX";
    int fd = mkstemp(path);
    if (fd < 0)
        return "cannot make a temporary file";
    FILE *f = fdopen(fd, "w");
    fputs(svg, f);
    fclose(f);
    char cmd[256];
    snprintf(cmd, sizeof cmd, "xmllint --noout %s 2>&1", path);
    FILE *pp = popen(cmd, "r");
    why[0] = 0;
    if (pp) {
        if (!fgets(why, sizeof why, pp))
            why[0] = 0;
        int st = pclose(pp);
        if (st != 0 && !why[0])
            snprintf(why, sizeof why, "xmllint failed (status %d): is libxml2-utils installed?",
                     st);
    }
    unlink(path);
    return why[0] ? why : NULL;
}

static double hue(const struct frame *f)
{
    double r = f->r / 255.0, g = f->g / 255.0, b = f->b / 255.0;
    double mx = fmax(r, fmax(g, b)), mn = fmin(r, fmin(g, b)), c = mx - mn, h;
    if (c == 0)
        return -1;
    if (mx == r)
        h = fmod((g - b) / c + 6, 6);
    else if (mx == g)
        h = (b - r) / c + 2;
    else
        h = (r - g) / c + 4;
    return h * 60;
}

/* ---- profiles ---- */

static const char *const NAMES[] = {"leaf",  "middle", "outer", "Main.main",
                                    "ffi_c", "poll",   "gc_fn"};

/* A GHC program with every tag. Shown (no --idle): 74 samples. */
static void ghc_profile(struct profile *p)
{
    profile__init(p);
    strcpy(p->ghc_version, "9.0.2");
    int t0 = profile__thread(p, 100, "prog");
    int t1 = profile__thread(p, 101, "prog:w");
    add(p, t0, (int[]){0, 1, 2, 3}, 4, TAG_HASKELL, false, 30);
    add(p, t0, (int[]){1, 2, 3}, 3, TAG_HASKELL, false, 10);
    add(p, t1, (int[]){0, 2, 3}, 3, TAG_HASKELL, false, 5);
    add(p, t0, (int[]){4, 3}, 2, TAG_UNSAFE_FFI, false, 15);
    add(p, t1, (int[]){5, 3}, 2, TAG_SAFE_FFI, false, 8);
    add(p, t1, (int[]){6}, 1, TAG_GC, false, 4);
    add(p, t1, (int[]){5}, 1, TAG_RTS, false, 2);
    add(p, t1, (int[]){5}, 1, TAG_IDLE, true, 6);
    name_frames(p, NAMES);
}

TEST(escapes_names_and_is_well_formed)
{
    struct profile p;
    profile__init(&p);
    p.pid = 7;
    strcpy(p.cmdline, "./prog --op='<&>' \"x\"");
    strcpy(p.ghc_version, "9.0.2");
    int t = profile__thread(&p, 7, "prog");
    add(&p, t, (int[]){0, 1, 2}, 3, TAG_HASKELL, false, 5);
    add(&p, t, (int[]){3, 2}, 2, TAG_HASKELL, false, 5);
    /* Haskell operators, quotes, and what XML cannot hold at all: a
     * control character and a byte that is not UTF-8. */
    name_frames(&p, (const char *const[]){"Main.<&>", "Data.Map.!?\"q\"", "it's>>=",
                                          "bad\x01\xff", NULL});
    char *s = render(&p, "svg", (struct out_opts){false, false, OUT_SORT_ACC});
    CHECK(s);
    const char *why = not_xml(s);
    if (why)
        UNIT_FAIL("not well-formed: %s", why);
    CHECK(strstr(s, "<title>Main.&lt;&amp;&gt;\n"));
    CHECK(strstr(s, "<title>Data.Map.!?&quot;q&quot;\n"));
    CHECK(strstr(s, "<title>it&apos;s&gt;&gt;=\n"));
    CHECK(strstr(s, "<title>bad??\n"));
    CHECK(!strstr(s, "Main.<&>"));
    CHECK(strstr(s, "./prog --op=&apos;&lt;&amp;&gt;&apos; &quot;x&quot;"));
    /* And the names read back as they were. */
    struct frame v[16];
    int n = frames_of(s, v, 16);
    CHECK_EQ_INT(n, 6); /* all, [haskell], it's>>=, Data.Map..., Main.<&>, bad?? */
    CHECK(find(v, n, "[haskell];it's>>=;Data.Map.!?\"q\";Main.<&>"));
    free(s);
    profile__free(&p);
}

TEST(one_frame_per_merged_prefix_with_its_counts)
{
    struct profile p;
    ghc_profile(&p);
    char *s = render(&p, "svg", (struct out_opts){false, false, OUT_SORT_ACC});
    CHECK(s);
    struct frame v[64];
    int n = frames_of(s, v, 64);
    /* all; [haskell] Main.main outer middle leaf, outer;leaf; [unsafe-ffi]
     * Main.main ffi_c; [safe-ffi] Main.main poll; [gc] gc_fn; [rts] poll */
    CHECK_EQ_INT(n, 17);
    int rects = 0;
    for (const char *at = s; (at = strstr(at, "<rect x=")); at++)
        rects++;
    CHECK_EQ_INT(rects, 17 + 1); /* and the background */
    static const struct { const char *path; int n; const char *info; } want[] = {
        {"", 74, "74 samples"},
        {"[haskell]", 45, "45 samples, 60.81% of all, 60.81% of parent"},
        {"[haskell];Main.main;outer", 45, "45 samples, 60.81% of all, 100.00% of parent"},
        {"[haskell];Main.main;outer;middle", 40, "40 samples, 54.05% of all, 88.89% of parent"},
        {"[haskell];Main.main;outer;middle;leaf", 30,
         "30 samples, 40.54% of all, 75.00% of parent"},
        {"[haskell];Main.main;outer;leaf", 5, "5 samples, 6.76% of all, 11.11% of parent"},
        {"[unsafe-ffi];Main.main;ffi_c", 15, "15 samples, 20.27% of all, 100.00% of parent"},
        {"[safe-ffi];Main.main;poll", 8, "8 samples, 10.81% of all, 100.00% of parent"},
        {"[gc];gc_fn", 4, "4 samples, 5.41% of all, 100.00% of parent"},
        {"[rts];poll", 2, "2 samples, 2.70% of all, 100.00% of parent"},
    };
    for (size_t i = 0; i < sizeof want / sizeof *want; i++) {
        const struct frame *f = find(v, n, want[i].path);
        if (!f)
            UNIT_FAIL("no frame %s", want[i].path);
        if ((int)f->n != want[i].n || strcmp(f->info, want[i].info) != 0)
            UNIT_FAIL("%s: %llu samples, title '%s'; expected %d, '%s'", want[i].path, f->n,
                      f->info, want[i].n, want[i].info);
    }
    /* Idle samples are shown only with --idle. */
    CHECK(!find(v, n, "[idle]"));
    free(s);
    s = render(&p, "svg", (struct out_opts){false, true, OUT_SORT_ACC});
    n = frames_of(s, v, 64);
    CHECK_EQ_INT(n, 19);
    CHECK(find(v, n, "[idle];poll") && find(v, n, "[idle];poll")->n == 6);
    CHECK(find(v, n, "")->n == 80);
    free(s);
    profile__free(&p);
}

TEST(colours_by_tag)
{
    struct profile p;
    ghc_profile(&p);
    char *s = render(&p, "svg", (struct out_opts){false, true, OUT_SORT_ACC});
    CHECK(s);
    struct frame v[64];
    int n = frames_of(s, v, 64);
    CHECK_EQ_INT(n, 19);
    char path[256];
    int checked = 0;
    for (int i = 0; i < n; i++) {
        const struct frame *f = &v[i];
        double h = hue(f);
        path_of(v, n, i, path, sizeof path);
        if (f->d == 0) {
            CHECK_EQ_STR(f->cls, "pseudo");
            continue;
        }
        /* The tag frame and every frame above it: the tag's family. */
        char tag[32];
        sscanf(path, "[%31[^]]", tag);
        if (strcmp(f->cls, tag) != 0)
            UNIT_FAIL("%s has class %s", path, f->cls);
        bool ok;
        if (!strcmp(tag, "haskell"))
            ok = h >= 255 && h <= 290; /* purple */
        else if (!strcmp(tag, "unsafe-ffi"))
            ok = h >= 20 && h <= 40; /* orange */
        else if (!strcmp(tag, "safe-ffi"))
            ok = h >= 195 && h <= 225; /* blue */
        else if (!strcmp(tag, "gc"))
            ok = h >= 350 || (h >= 0 && h <= 8); /* red */
        else if (!strcmp(tag, "rts"))
            ok = f->r == f->g && f->g == f->b && f->r < 200; /* grey */
        else if (!strcmp(tag, "idle"))
            ok = f->r == f->g && f->g == f->b && f->r >= 190; /* light grey */
        else
            ok = false;
        if (!ok)
            UNIT_FAIL("%s: #%02x%02x%02x (hue %.0f) is not in the %s family", path, f->r, f->g,
                      f->b, h, tag);
        checked++;
        /* The legend's swatch is the tag frame's own colour. */
        if (f->d == 1) {
            char sw[96];
            snprintf(sw, sizeof sw, "fill=\"#%02x%02x%02x\"/><text x=", f->r, f->g, f->b);
            const char *at = strstr(s, sw);
            char label[64];
            CHECK(at && sscanf(strchr(at, '>') + 1, "<text x=\"%*d\" y=\"%*d\">%63[^ <]", label) == 1);
            CHECK_EQ_STR(label, tag);
        }
    }
    CHECK_EQ_INT(checked, 18);
    free(s);
    profile__free(&p);

    /* A program without tags: flamegraph.pl's warm palette. */
    profile__init(&p);
    int t = profile__thread(&p, 1, "c");
    add(&p, t, (int[]){0, 1, 2, 3}, 4, TAG_NONE, false, 3);
    add(&p, t, (int[]){4, 5, 6}, 3, TAG_NONE, false, 3);
    name_frames(&p, NAMES);
    s = render(&p, "svg", (struct out_opts){false, false, OUT_SORT_ACC});
    n = frames_of(s, v, 64);
    CHECK_EQ_INT(n, 8);
    for (int i = 0; i < n; i++)
        if (v[i].d > 0 && (strcmp(v[i].cls, "c") || v[i].r < 205 || v[i].b > 55))
            UNIT_FAIL("%s: class %s, #%02x%02x%02x is not warm", v[i].name, v[i].cls, v[i].r,
                      v[i].g, v[i].b);
    CHECK(strstr(s, ">native code 100.0%</text>"));
    CHECK(!strstr(s, ">haskell "));
    free(s);
    profile__free(&p);
}

/* Every frame holds exactly the samples of the folded lines it prefixes:
 * the same displayed stacks, --threads roots and --idle included. */
TEST(same_stacks_as_folded)
{
    struct profile p;
    ghc_profile(&p);
    struct out_opts o = {true, true, OUT_SORT_ACC};
    char *s = render(&p, "svg", o), *folded = render(&p, "folded", o);
    CHECK(s && folded);
    struct frame v[64];
    int n = frames_of(s, v, 64);
    CHECK(n > 19);
    char path[256];
    for (int i = 0; i < n; i++) {
        path_of(v, n, i, path, sizeof path);
        size_t len = strlen(path);
        unsigned long long want = 0;
        for (char *line = folded; *line;) {
            char *nl = strchr(line, '\n');
            *nl = 0;
            char *sp = strrchr(line, ' ');
            if (len == 0 || (strncmp(line, path, len) == 0 && (line[len] == ';' || line + len == sp)))
                want += strtoull(sp + 1, NULL, 10);
            *nl = '\n';
            line = nl + 1;
        }
        if (v[i].n != want)
            UNIT_FAIL("%s: %llu samples in the svg, %llu in the folded lines", path, v[i].n, want);
    }
    CHECK(find(v, n, "tid 100 (prog)") && !strcmp(find(v, n, "tid 100 (prog)")->cls, "pseudo"));
    CHECK(find(v, n, "tid 101 (prog:w);[idle];poll"));
    free(s);
    free(folded);
    profile__free(&p);
}

TEST(narrow_frames_left_out_and_counted)
{
    struct profile p;
    profile__init(&p);
    int t = profile__thread(&p, 1, "c");
    add(&p, t, (int[]){0, 1, 3}, 3, TAG_NONE, false, 1997);
    add(&p, t, (int[]){2, 3}, 2, TAG_NONE, false, 2);       /* 0.1%: drawn */
    add(&p, t, (int[]){5, 4, 3}, 3, TAG_NONE, false, 1);    /* 0.05%: 2 frames left out */
    name_frames(&p, NAMES);
    char *s = render(&p, "svg", (struct out_opts){false, false, OUT_SORT_ACC});
    CHECK(s);
    struct frame v[16];
    int n = frames_of(s, v, 16);
    CHECK_EQ_INT(n, 5); /* all, Main.main, middle, leaf, outer */
    CHECK(find(v, n, "Main.main;outer") && find(v, n, "Main.main;outer")->n == 2);
    CHECK(!find(v, n, "Main.main;ffi_c"));
    CHECK(strstr(s, ">2000 samples shown; 2 frames narrower than 0.1% of the width omitted;"));
    /* The left-out samples still count in their parents. */
    CHECK(find(v, n, "Main.main")->n == 2000);
    free(s);
    profile__free(&p);
}

TEST(header_shows_target_and_sampling_health)
{
    struct profile p;
    ghc_profile(&p);
    p.pid = 4242;
    strcpy(p.cmdline, "./demo 5 +RTS -N2 -RTS");
    p.rate_hz = 99;
    p.duration_ns = 2000000000;
    p.ticks = 10;
    p.missed_ticks = 2;
    hist__add(&p.pause, 4000);
    hist__add(&p.pause, 12000);
    p.errors[WE_C_UNWIND] = 3;
    char *s = render(&p, "svg", (struct out_opts){false, false, OUT_SORT_ACC});
    CHECK(s);
    CHECK(strstr(s, ">hsspy: pid 4242: ./demo 5 +RTS -N2 -RTS<"));
    CHECK(strstr(s, ">GHC 9.0.2, 2.00 s; rate 99 Hz asked, 5.0 Hz achieved; 10 ticks, 2 missed<"));
    CHECK(strstr(s, ">74 samples shown; 0 frames narrower than 0.1% of the width omitted; "
                    "idle threads left out (--idle keeps them)<"));
    CHECK(strstr(s, "pause per stopped thread: mean 8.0 \u00b5s, max 12.0 \u00b5s; "
                    "errors: 3 (C unwind failed: 3)<"));
    CHECK(strstr(s, ">haskell 60.8%<"));
    CHECK(strstr(s, ">unsafe-ffi 20.3%<"));
    /* Idle samples left out: no share of them in the legend (was "idle
     * 0.0%", as if the program never idled); kept with --idle. */
    CHECK(!strstr(s, ">idle "));
    free(s);
    s = render(&p, "svg", (struct out_opts){false, true, OUT_SORT_ACC});
    CHECK(s && strstr(s, ">idle ") && !strstr(s, ">idle 0.0%<"));
    free(s);
    profile__free(&p);
}

TEST(empty_profile)
{
    struct profile p;
    profile__init(&p);
    int t = profile__thread(&p, 1, "c");
    add(&p, t, (int[]){5}, 1, TAG_NONE, true, 4); /* only idle: nothing shown */
    name_frames(&p, NAMES);
    char *s = render(&p, "svg", (struct out_opts){false, false, OUT_SORT_ACC});
    CHECK(s);
    const char *why = not_xml(s);
    if (why)
        UNIT_FAIL("not well-formed: %s", why);
    CHECK(strstr(s, "no samples to show"));
    struct frame v[4];
    CHECK_EQ_INT(frames_of(s, v, 4), 0);
    free(s);
    profile__free(&p);
}

TEST(registered_and_not_for_terminals)
{
    const struct writer *w = writer__find("svg");
    CHECK(w);
    CHECK(!w->text);
}

UNIT_MAIN()
