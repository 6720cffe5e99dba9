/* svg.c - an interactive flame graph in one self-contained SVG file (inline
 * CSS and JavaScript, nothing fetched): hover for a frame's samples and
 * shares, click to zoom, a search box that highlights matches and sums
 * their share. Frames are coloured by the sample's tag, so the kinds of
 * work a GHC program does are told apart at a glance.
 *
 * Built from the same displayed stacks as the folded writer (out__path,
 * out__visible): the stacks are merged into a tree first, children in name
 * order like flamegraph.pl. Drawn as an icicle: the root ("all") at the
 * top, right under the header, callees below their callers. Stacks can be
 * hundreds of frames deep (Haskell recursion, a failed unwind); upside
 * down, the tags and the widest frames would be a long scroll away from
 * the header, as in flamegraph.pl's graphs. Frames narrower than 1/1000 of
 * the samples (about a pixel) are left out, with their subtrees, and
 * counted: a big profile stays a file a browser opens fast.
 */
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "out/counter.h"
#include "out/text.h"
#include "out/writer.h"

/* Geometry, in SVG user units (pixels at 100%). */
#define IMG_W 1200
#define PAD 10
#define FLAME_W (IMG_W - 2 * PAD)
#define FRAME_H 16
#define TOP 126               /* header: title, health, legend, hover details */
#define BOTTOM 10
#define CHAR_W 7.2            /* monospace 12px: advance of one character */
#define MIN_SHARE_INV 1000    /* frames under 1/1000 of all samples are left out */
#define NONE UINT32_MAX
#define HIGHLIGHT "#22dd44" /* search matches: a green no family uses */

/* Colour families beyond the sample tags: pseudo-frames ("all" and the
 * --threads roots), which mix every tag. */
#define FAM_PSEUDO TAG__COUNT

struct node {
    const char *name; /* interned in struct flame's names: compared as pointers */
    uint64_t n;       /* samples through this frame */
    uint64_t start;   /* offset of its first sample, after layout */
    uint32_t parent, child, next;
    uint16_t depth;
    uint8_t fam;     /* enum sample_tag, or FAM_PSEUDO */
    bool tag_frame;  /* the "[haskell]"-like frame itself: the family's base colour */
};

/* A name as out__path gives it -> its interned copy. The names of code
 * frames and tags are stable pointers, so looking up the pointer saves
 * hashing the string once per frame of every distinct stack. */
struct alias {
    const char *from, *to;
};

struct flame {
    struct node *v;
    size_t n, cap;
    uint32_t *hash; /* (parent, name) -> node, open addressing */
    size_t hash_size;
    struct counter names;
    struct alias *alias;
    size_t nalias, alias_size;
    uint64_t tags[TAG__COUNT]; /* shown samples per tag, for the legend */
    uint64_t total;
    uint64_t omitted;          /* frames too narrow to draw */
    int max_depth;             /* deepest drawn frame */
};

static size_t slot(const struct flame *fl, uint32_t parent, const char *name)
{
    uint64_t h = (uint64_t)parent * 0x9e3779b97f4a7c15ull ^ (uint64_t)(uintptr_t)name;
    h ^= h >> 29;
    h *= 0xbf58476d1ce4e5b9ull;
    h ^= h >> 32;
    return (size_t)h & (fl->hash_size - 1);
}

static int rehash(struct flame *fl)
{
    size_t size = fl->hash_size ? fl->hash_size * 2 : 1024;
    uint32_t *t = malloc(size * sizeof *t);
    if (!t)
        return -1;
    memset(t, 0xff, size * sizeof *t);
    free(fl->hash);
    fl->hash = t;
    fl->hash_size = size;
    for (size_t i = 1; i < fl->n; i++) {
        size_t h = slot(fl, fl->v[i].parent, fl->v[i].name);
        while (t[h] != NONE)
            h = (h + 1) & (size - 1);
        t[h] = (uint32_t)i;
    }
    return 0;
}

/* The child of parent named name (an interned pointer), made if new. */
static int64_t child(struct flame *fl, uint32_t parent, const char *name, uint8_t fam)
{
    if ((fl->n + 1) * 2 > fl->hash_size && rehash(fl) < 0)
        return -1;
    size_t h = slot(fl, parent, name);
    for (; fl->hash[h] != NONE; h = (h + 1) & (fl->hash_size - 1)) {
        const struct node *c = &fl->v[fl->hash[h]];
        if (c->parent == parent && c->name == name)
            return fl->hash[h];
    }
    if (fl->n == fl->cap) {
        size_t cap = fl->cap * 2;
        struct node *v = realloc(fl->v, cap * sizeof *v);
        if (!v)
            return -1;
        fl->v = v;
        fl->cap = cap;
    }
    uint32_t id = (uint32_t)fl->n++;
    fl->v[id] = (struct node){.name = name, .parent = parent, .child = NONE,
                              .next = fl->v[parent].child,
                              .depth = (uint16_t)(fl->v[parent].depth + 1), .fam = fam};
    fl->v[parent].child = id;
    fl->hash[h] = id;
    return id;
}

static const char *intern_string(struct flame *fl, const char *name)
{
    struct counter_entry *e = counter__add(&fl->names, name, 0, 0);
    return e ? e->key : NULL;
}

static size_t alias_slot(const char *from, size_t size)
{
    uint64_t h = (uint64_t)(uintptr_t)from * 0x9e3779b97f4a7c15ull;
    return (size_t)(h >> 20) & (size - 1);
}

static const char *intern(struct flame *fl, const char *name)
{
    if ((fl->nalias + 1) * 2 > fl->alias_size) {
        size_t size = fl->alias_size ? fl->alias_size * 2 : 1024;
        struct alias *t = calloc(size, sizeof *t);
        if (!t)
            return NULL;
        for (size_t i = 0; i < fl->alias_size; i++)
            if (fl->alias[i].from) {
                size_t h = alias_slot(fl->alias[i].from, size);
                while (t[h].from)
                    h = (h + 1) & (size - 1);
                t[h] = fl->alias[i];
            }
        free(fl->alias);
        fl->alias = t;
        fl->alias_size = size;
    }
    size_t h = alias_slot(name, fl->alias_size);
    for (; fl->alias[h].from; h = (h + 1) & (fl->alias_size - 1))
        if (fl->alias[h].from == name)
            return fl->alias[h].to;
    const char *to = intern_string(fl, name);
    if (to) {
        fl->alias[h] = (struct alias){name, to};
        fl->nalias++;
    }
    return to;
}

/* Samples with the same displayed stack: the stack id, the tag and (with
 * --threads) the thread decide it. */
/* Groups of samples in a fixed order (stack, thread, tag), so the drawing
 * does not depend on the grouping's. */
static int cmp_key(const void *a, const void *b)
{
    const struct prof_sample *x = &((const struct out_group *)a)->s;
    const struct prof_sample *y = &((const struct out_group *)b)->s;
    if (x->stack != y->stack)
        return x->stack < y->stack ? -1 : 1;
    if (x->thread != y->thread)
        return x->thread < y->thread ? -1 : 1;
    return (int)x->tag - (int)y->tag;
}

static int add_path(struct flame *fl, const struct profile *p, const struct out_opts *o,
                    const struct prof_sample *s, uint64_t count)
{
    const char *names[MAX_FRAMES + 4];
    char scratch[128];
    int first, n = out__path(p, s, o, names, MAX_FRAMES + 4, scratch, &first);
    uint32_t at = 0;

    fl->v[0].n += count;
    fl->tags[s->tag] += count;
    for (int k = 0; k < n; k++) {
        /* (The --threads root is formatted into scratch, anew each time.) */
        const char *name =
            names[k] == scratch ? intern_string(fl, names[k]) : intern(fl, names[k]);
        /* The --threads root mixes tags; the tag frame and everything above
         * it are of the sample's tag. */
        uint8_t fam = o->threads && k == 0 ? FAM_PSEUDO : s->tag;
        int64_t c = name ? child(fl, at, name, fam) : -1;
        if (c < 0)
            return -1;
        at = (uint32_t)c;
        fl->v[at].n += count;
        fl->v[at].tag_frame = s->tag != TAG_NONE && k == first - 1;
    }
    return 0;
}

static int cmp_name(const void *a, const void *b)
{
    const struct node *x = *(const struct node *const *)a, *y = *(const struct node *const *)b;
    return strcmp(x->name, y->name);
}

/* Children in name order, each one's first sample right after its elder
 * siblings'. Recursion is bounded by the stack depth (MAX_FRAMES plus the
 * pseudo-frames). */
static int layout(struct flame *fl, uint32_t id, uint64_t start, const struct node **tmp)
{
    struct node *nd = &fl->v[id];
    size_t k = 0;
    nd->start = start;
    for (uint32_t c = nd->child; c != NONE; c = fl->v[c].next)
        tmp[k++] = &fl->v[c];
    if (k == 0)
        return 0;
    qsort(tmp, k, sizeof *tmp, cmp_name);
    nd->child = (uint32_t)(tmp[0] - fl->v);
    for (size_t i = 0; i < k; i++)
        ((struct node *)tmp[i])->next = i + 1 < k ? (uint32_t)(tmp[i + 1] - fl->v) : NONE;
    uint64_t at = start;
    for (uint32_t c = nd->child; c != NONE; c = fl->v[c].next) {
        if (layout(fl, c, at, tmp + k) < 0)
            return -1;
        at += fl->v[c].n;
    }
    return 0;
}

static uint64_t subtree_size(const struct flame *fl, uint32_t id)
{
    uint64_t n = 1;
    for (uint32_t c = fl->v[id].child; c != NONE; c = fl->v[c].next)
        n += subtree_size(fl, c);
    return n;
}

static bool drawn(const struct flame *fl, const struct node *nd)
{
    return nd->n * MIN_SHARE_INV >= fl->total;
}

static void count_drawn(struct flame *fl, uint32_t id)
{
    const struct node *nd = &fl->v[id];
    if (!drawn(fl, nd)) {
        fl->omitted += subtree_size(fl, id);
        return;
    }
    if (nd->depth > fl->max_depth)
        fl->max_depth = nd->depth;
    for (uint32_t c = nd->child; c != NONE; c = fl->v[c].next)
        count_drawn(fl, c);
}

static int build(struct flame *fl, const struct profile *p, const struct out_opts *o)
{
    struct out_group *keys = NULL;
    const struct node **tmp = NULL;
    size_t nk = 0;
    int r = -1;

    memset(fl, 0, sizeof *fl);
    fl->cap = 1024;
    fl->v = malloc(fl->cap * sizeof *fl->v);
    if (!fl->v || counter__init(&fl->names) < 0 || rehash(fl) < 0 ||
        out__groups(p, o, o->threads ? OUT_BY_THREAD : 0, &keys, &nk) < 0)
        goto out;
    fl->n = 1;
    fl->v[0] = (struct node){.name = "all", .parent = NONE, .child = NONE, .next = NONE,
                             .fam = FAM_PSEUDO};
    qsort(keys, nk, sizeof *keys, cmp_key);
    for (size_t i = 0; i < nk; i++)
        if (add_path(fl, p, o, &keys[i].s, keys[i].count) < 0)
            goto out;
    fl->total = fl->v[0].n;
    /* Scratch for the children of every level of one path at once. */
    tmp = malloc(fl->n * sizeof *tmp);
    if (!tmp || layout(fl, 0, 0, tmp) < 0)
        goto out;
    count_drawn(fl, 0);
    r = 0;
out:
    free(tmp);
    free(keys);
    return r;
}

static void flame_free(struct flame *fl)
{
    free(fl->v);
    free(fl->hash);
    free(fl->alias);
    counter__free(&fl->names);
}

/* ---- colours ---- */

struct rgb {
    unsigned char r, g, b;
};

static struct rgb hsl(double h, double s, double l)
{
    h = fmod(h + 360.0, 360.0);
    double c = (1 - fabs(2 * l - 1)) * s, x = c * (1 - fabs(fmod(h / 60, 2) - 1)), m = l - c / 2;
    double r = 0, g = 0, b = 0;
    switch ((int)(h / 60)) {
    case 0: r = c, g = x; break;
    case 1: r = x, g = c; break;
    case 2: g = c, b = x; break;
    case 3: g = x, b = c; break;
    case 4: r = x, b = c; break;
    default: r = c, b = x; break;
    }
    return (struct rgb){(unsigned char)lround((r + m) * 255), (unsigned char)lround((g + m) * 255),
                        (unsigned char)lround((b + m) * 255)};
}

/* Each family: a hue and saturation, the lightness of its tag frame (the
 * legend swatch), and the range frames above it vary in, by name. */
static const struct family {
    const char *label;
    double hue, hue_spread, sat, base_l, lo_l, hi_l;
} FAMILY[TAG__COUNT + 1] = {
    [TAG_NONE] = {"native code", 0, 0, 0, 0, 0, 0}, /* warm palette, below */
    [TAG_HASKELL] = {"haskell", 272, 16, 0.55, 0.58, 0.64, 0.82},
    [TAG_UNSAFE_FFI] = {"unsafe-ffi", 30, 10, 0.95, 0.52, 0.58, 0.74},
    [TAG_SAFE_FFI] = {"safe-ffi", 210, 16, 0.70, 0.52, 0.60, 0.80},
    [TAG_GC] = {"gc", 0, 8, 0.80, 0.52, 0.58, 0.74},
    [TAG_RTS] = {"rts", 0, 0, 0, 0.52, 0.58, 0.72},
    [TAG_IDLE] = {"idle", 0, 0, 0, 0.76, 0.82, 0.90},
    [FAM_PSEUDO] = {"all / thread", 48, 0, 0.40, 0.78, 0.78, 0.78},
};

static uint64_t name_hash(const char *s)
{
    uint64_t h = 1469598103934665603ull;
    for (; *s; s++) {
        h ^= (unsigned char)*s;
        h *= 1099511628211ull;
    }
    return h ^ (h >> 31);
}

/* The same name gets the same colour everywhere (and in every profile),
 * so a function is recognised across the graph. */
static struct rgb colour(unsigned fam, const char *name, bool base)
{
    uint64_t h = name_hash(name);
    double v1 = (double)(h & 0xffff) / 65535.0, v2 = (double)((h >> 16) & 0xffff) / 65535.0,
           v3 = (double)((h >> 32) & 0xffff) / 65535.0;
    if (fam == TAG_NONE) /* flamegraph.pl's "hot" palette */
        return (struct rgb){(unsigned char)(205 + 50 * v3), (unsigned char)(230 * v1),
                            (unsigned char)(55 * v2)};
    const struct family *f = &FAMILY[fam];
    if (base)
        return hsl(f->hue, f->sat, f->base_l);
    return hsl(f->hue + (v1 - 0.5) * f->hue_spread, f->sat, f->lo_l + (f->hi_l - f->lo_l) * v2);
}

static const char *fam_class(unsigned fam)
{
    static const char *const cls[TAG__COUNT + 1] = {
        [TAG_NONE] = "c", [TAG_HASKELL] = "haskell", [TAG_UNSAFE_FFI] = "unsafe-ffi",
        [TAG_SAFE_FFI] = "safe-ffi", [TAG_GC] = "gc", [TAG_RTS] = "rts", [TAG_IDLE] = "idle",
        [FAM_PSEUDO] = "pseudo",
    };
    return cls[fam];
}

/* ---- XML text ---- */

/* Write s as XML character data or attribute value: markup characters as
 * entities (Haskell operators are full of them), and what XML 1.0 cannot
 * hold at all (control characters, bytes that are not UTF-8, U+FFFE and
 * U+FFFF) as '?', as text__clean does. At most max characters; with more,
 * max - 2 of them and "..". */
static void xml_text(FILE *f, const char *s, size_t max)
{
    size_t chars = 0;
    bool bad;
    for (const unsigned char *u = (const unsigned char *)s; *u; chars++)
        u += text__char(u, &bad);
    size_t keep = chars <= max ? chars : max >= 2 ? max - 2 : 0;
    const unsigned char *u = (const unsigned char *)s;
    for (size_t i = 0; i < keep && *u; i++) {
        int n = text__char(u, &bad);
        switch (*u) {
        case '<': fputs("&lt;", f); break;
        case '>': fputs("&gt;", f); break;
        case '&': fputs("&amp;", f); break;
        case '"': fputs("&quot;", f); break;
        case '\'': fputs("&apos;", f); break;
        default:
            if (bad)
                fputc('?', f);
            else
                fwrite(u, 1, (size_t)n, f);
        }
        u += n;
    }
    if (keep < chars)
        fputs("..", f);
}

static double pct(uint64_t a, uint64_t b) { return b ? 100.0 * (double)a / (double)b : 0.0; }

/* ---- the document ---- */

static const char CSS[] =
    "text { font-family: 'DejaVu Sans Mono', Menlo, Consolas, monospace; font-size: 12px; fill: #000; }\n"
    "#title { font-size: 16px; font-weight: bold; }\n"
    ".health { fill: #333; }\n"
    ".f { cursor: pointer; }\n"
    ".f text { pointer-events: none; }\n"
    ".f:hover rect { stroke: #000; stroke-width: 1; }\n"
    ".anc rect { opacity: 0.6; }\n"
    "#unzoom { cursor: pointer; fill: #1a4fd6; text-decoration: underline; }\n"
    "#matched { fill: #0a7a1a; font-weight: bold; }\n"
    "#details, #note { fill: #333; }\n";

/* The interactive part. Frames carry their first sample, samples and
 * depth (data-s, data-n, data-d); the name is the first line of their
 * <title>. Zooming recomputes x and width from those; search colours the
 * matches and sums the union of their sample ranges, so nested matches
 * (recursion) are not counted twice. A URL fragment #search=RE&zoom=NAME
 * applies both on load (links to a view, and the functional test). */
static const char JS[] =
    "(function () {\n"
    "'use strict';\n"
    "var svg = document.documentElement;\n"
    "var FW = +svg.getAttribute('data-fw'), FX = +svg.getAttribute('data-fx');\n"
    "var TOTAL = +svg.getAttribute('data-total'), CW = +svg.getAttribute('data-cw');\n"
    "var HL = svg.getAttribute('data-hl');\n"
    "var details = document.getElementById('details');\n"
    "var hint = details.textContent;\n"
    "var unzoom = document.getElementById('unzoom');\n"
    "var matched = document.getElementById('matched');\n"
    "var input = document.getElementById('search');\n"
    "var frames = [];\n"
    "var gs = document.getElementsByTagNameNS('http://www.w3.org/2000/svg', 'g');\n"
    "for (var i = 0; i < gs.length; i++) {\n"
    "  var g = gs[i];\n"
    "  if (!g.hasAttribute('data-s')) continue;\n"
    "  var t = g.getElementsByTagNameNS('http://www.w3.org/2000/svg', 'title')[0].textContent;\n"
    "  var nl = t.indexOf('\\n');\n"
    "  var rect = g.getElementsByTagNameNS('http://www.w3.org/2000/svg', 'rect')[0];\n"
    "  var f = {g: g, rect: rect,\n"
    "    text: g.getElementsByTagNameNS('http://www.w3.org/2000/svg', 'text')[0],\n"
    "    name: t.substring(0, nl), info: t.substring(nl + 1),\n"
    "    s: +g.getAttribute('data-s'), n: +g.getAttribute('data-n'),\n"
    "    d: +g.getAttribute('data-d'), fill: rect.getAttribute('fill')};\n"
    "  g.hsspyFrame = f;\n"
    "  frames.push(f);\n"
    "}\n"
    "var zs = 0, zn = TOTAL, zd = 0;\n"
    "function label(f, w) {\n"
    "  var max = Math.floor((w - 6) / CW);\n"
    "  if (f.name.length <= max) return f.name;\n"
    "  return max < 5 ? '' : f.name.substring(0, max - 2) + '..';\n"
    "}\n"
    "function draw() {\n"
    "  frames.forEach(function (f) {\n"
    "    var show, x, w;\n"
    "    if (f.d < zd) { show = f.s <= zs && f.s + f.n >= zs + zn; x = 0; w = FW; }\n"
    "    else { show = f.s >= zs && f.s + f.n <= zs + zn; x = (f.s - zs) / zn * FW; w = f.n / zn * FW; }\n"
    "    f.g.style.display = show ? '' : 'none';\n"
    "    if (!show) return;\n"
    "    if (f.d < zd) f.g.classList.add('anc'); else f.g.classList.remove('anc');\n"
    "    f.rect.setAttribute('x', (FX + x).toFixed(1));\n"
    "    f.rect.setAttribute('width', w.toFixed(1));\n"
    "    f.text.setAttribute('x', (FX + x + 3).toFixed(1));\n"
    "    f.text.textContent = label(f, w);\n"
    "  });\n"
    "  unzoom.style.display = zd > 0 ? '' : 'none';\n"
    "}\n"
    "function zoom(f) {\n"
    "  if (f.d === 0) { zs = 0; zn = TOTAL; zd = 0; } else { zs = f.s; zn = f.n; zd = f.d; }\n"
    "  draw();\n"
    "}\n"
    "function search(term) {\n"
    "  var re = null, hits = [];\n"
    "  if (term) { try { re = new RegExp(term); } catch (e) { re = null; } }\n"
    "  frames.forEach(function (f) {\n"
    "    var m = term !== '' && f.d > 0 && (re ? re.test(f.name) : f.name.indexOf(term) >= 0);\n"
    "    f.rect.setAttribute('fill', m ? HL : f.fill);\n"
    "    if (m) hits.push(f);\n"
    "  });\n"
    "  hits.sort(function (a, b) { return a.s - b.s || b.n - a.n; });\n"
    "  var sum = 0, end = 0;\n"
    "  hits.forEach(function (f) {\n"
    "    var e = f.s + f.n;\n"
    "    if (f.s >= end) { sum += f.n; end = e; } else if (e > end) { sum += e - end; end = e; }\n"
    "  });\n"
    "  matched.textContent = term === '' ? '' : 'matched: ' +\n"
    "    (TOTAL ? (100 * sum / TOTAL).toFixed(2) : '0.00') + '% of all (' + sum + ' samples, ' +\n"
    "    hits.length + ' frames)';\n"
    "}\n"
    "function frameOf(el) {\n"
    "  for (; el && el !== svg; el = el.parentNode) if (el.hsspyFrame) return el.hsspyFrame;\n"
    "  return null;\n"
    "}\n"
    "svg.addEventListener('mouseover', function (e) {\n"
    "  var f = frameOf(e.target);\n"
    "  if (f) details.textContent = f.name + ': ' + f.info;\n"
    "});\n"
    "svg.addEventListener('mouseout', function (e) {\n"
    "  if (frameOf(e.target)) details.textContent = hint;\n"
    "});\n"
    "svg.addEventListener('click', function (e) {\n"
    "  var f = frameOf(e.target);\n"
    "  if (f) zoom(f);\n"
    "});\n"
    "unzoom.addEventListener('click', function () { zoom(frames[0]); });\n"
    "input.addEventListener('input', function () { search(input.value); });\n"
    "draw();\n"
    "location.hash.replace(/^#/, '').split('&').forEach(function (kv) {\n"
    "  var i = kv.indexOf('='), k = kv.substring(0, i), v = decodeURIComponent(kv.substring(i + 1));\n"
    "  if (i < 0) return;\n"
    "  if (k === 'search') { input.value = v; search(v); }\n"
    "  if (k === 'zoom') {\n"
    "    var best = null;\n"
    "    frames.forEach(function (f) { if (f.name === v && (!best || f.n > best.n)) best = f; });\n"
    "    if (best) zoom(best);\n"
    "  }\n"
    "});\n"
    "svg.setAttribute('data-js', 'ready');\n"
    "})();\n";

static void header(const struct profile *p, const struct flame *fl, const struct out_opts *o,
                   FILE *f)
{
    uint64_t errors = profile__walk_errors(p);

    fprintf(f, "<text id=\"title\" x=\"%d\" y=\"24\">hsspy: pid %d: ", PAD, (int)p->pid);
    xml_text(f, p->cmdline[0] ? p->cmdline : "?", 100);
    fputs("<title>", f);
    xml_text(f, p->cmdline, sizeof p->cmdline);
    fputs("</title></text>\n", f);

    fprintf(f, "<text class=\"health\" x=\"%d\" y=\"44\">", PAD);
    if (p->ghc_version[0]) {
        fputs("GHC ", f);
        xml_text(f, p->ghc_version, sizeof p->ghc_version);
        fputs(", ", f);
    }
    fprintf(f,
            "%.2f s; rate %g Hz asked, %.1f Hz achieved; %" PRIu64 " ticks, %" PRIu64
            " missed</text>\n",
            (double)p->duration_ns / 1e9, p->rate_hz, profile__achieved_hz(p), p->ticks,
            p->missed_ticks);

    fprintf(f, "<text class=\"health\" x=\"%d\" y=\"60\">", PAD);
    if (p->pause.n)
        fprintf(f, "pause per stopped thread: mean %.1f \u00b5s, max %.1f \u00b5s; ",
                (double)p->pause.sum_ns / (double)p->pause.n / 1e3, (double)p->pause.max_ns / 1e3);
    else
        fputs("pause: no thread stopped; ", f);
    fprintf(f, "errors: %" PRIu64, errors);
    const char *sep = " (";
    for (int e = 1; e < WE__COUNT; e++)
        if (p->errors[e]) {
            fprintf(f, "%s%s: %" PRIu64, sep, walk_error__str(e), p->errors[e]);
            sep = ", ";
        }
    if (errors)
        fputc(')', f);
    if (p->lost_threads)
        fprintf(f, "; %" PRIu64 " thread stops timed out", p->lost_threads);
    fputs("</text>\n", f);

    fprintf(f,
            "<text id=\"note\" x=\"%d\" y=\"76\">%" PRIu64 " samples shown; %" PRIu64
            " frame%s narrower than 0.1%% of the width omitted%s</text>\n",
            PAD, fl->total, fl->omitted, fl->omitted == 1 ? "" : "s",
            o->idle ? "" : "; idle threads left out (--idle keeps them)");
}

static void swatch(FILE *f, int *x, struct rgb c, const char *label, const char *share)
{
    fprintf(f,
            "<rect class=\"swatch\" x=\"%d\" y=\"86\" width=\"14\" height=\"14\" rx=\"2\" "
            "fill=\"#%02x%02x%02x\"/><text x=\"%d\" y=\"97\">%s%s</text>\n",
            *x, c.r, c.g, c.b, *x + 18, label, share);
    *x += 18 + (int)((strlen(label) + strlen(share)) * CHAR_W) + 16;
}

static void legend(const struct profile *p, const struct flame *fl, const struct out_opts *o,
                   FILE *f)
{
    int x = PAD;
    char share[32];
    bool ghc = p->ghc_version[0] != 0;
    for (int t = TAG_HASKELL; ghc && t < TAG__COUNT; t++) {
        if (t == TAG_IDLE && !o->idle)
            continue; /* (left out: not 0.0% of the program's time) */
        snprintf(share, sizeof share, " %.1f%%", pct(fl->tags[t], fl->total));
        swatch(f, &x, colour((unsigned)t, "", true), FAMILY[t].label, share);
    }
    if (!ghc || fl->tags[TAG_NONE]) {
        snprintf(share, sizeof share, " %.1f%%", pct(fl->tags[TAG_NONE], fl->total));
        swatch(f, &x, colour(TAG_NONE, "a", false), ghc ? "untagged" : "native code", share);
    }
    swatch(f, &x, colour(FAM_PSEUDO, "", true), o->threads ? "all, thread" : "all", "");
    swatch(f, &x, (struct rgb){0x22, 0xdd, 0x44}, "search match", ""); /* HIGHLIGHT */
}

static void frame(const struct flame *fl, const struct node *nd, FILE *f)
{
    double x = (double)nd->start / (double)fl->total * FLAME_W;
    double w = (double)nd->n / (double)fl->total * FLAME_W;
    int y = TOP + nd->depth * FRAME_H;
    struct rgb c = colour(nd->fam, nd->name, nd->tag_frame || nd->depth == 0);

    fprintf(f, "<g class=\"f t-%s\" data-s=\"%" PRIu64 "\" data-n=\"%" PRIu64 "\" data-d=\"%d\"><title>",
            fam_class(nd->fam), nd->start, nd->n, nd->depth);
    xml_text(f, nd->name, SIZE_MAX);
    fprintf(f, "\n%" PRIu64 " sample%s", nd->n, nd->n == 1 ? "" : "s");
    if (nd->depth > 0)
        fprintf(f, ", %.2f%% of all, %.2f%% of parent", pct(nd->n, fl->total),
                pct(nd->n, fl->v[nd->parent].n));
    fprintf(f,
            "</title><rect x=\"%.1f\" y=\"%d\" width=\"%.1f\" height=\"%d\" rx=\"2\" "
            "fill=\"#%02x%02x%02x\"/><text x=\"%.1f\" y=\"%d\">",
            PAD + x, y, w, FRAME_H - 1, c.r, c.g, c.b, PAD + x + 3, y + FRAME_H - 4);
    /* The whole name, or at least 3 characters of it and "..". */
    double fit = (w - 6) / CHAR_W;
    if (fit >= 1 && (fit >= 5 || strlen(nd->name) <= (size_t)fit))
        xml_text(f, nd->name, (size_t)fit);
    fputs("</text></g>\n", f);
}

static void frames(const struct flame *fl, uint32_t id, FILE *f)
{
    const struct node *nd = &fl->v[id];
    if (!drawn(fl, nd))
        return;
    frame(fl, nd, f);
    for (uint32_t c = nd->child; c != NONE; c = fl->v[c].next)
        frames(fl, c, f);
}

static int write_svg(const struct profile *p, const struct out_opts *o, FILE *f)
{
    struct flame fl;
    if (build(&fl, p, o) < 0) {
        flame_free(&fl);
        return -1;
    }
    int height = TOP + (fl.max_depth + 1) * FRAME_H + BOTTOM;

    fprintf(f,
            "<?xml version=\"1.0\" encoding=\"UTF-8\" standalone=\"no\"?>\n"
            "<!-- hsspy flame graph (icicle: callers above callees); hover for details, "
            "click to zoom, search by regular expression -->\n"
            "<svg xmlns=\"http://www.w3.org/2000/svg\" version=\"1.1\" width=\"%d\" height=\"%d\" "
            "viewBox=\"0 0 %d %d\" data-fw=\"%d\" data-fx=\"%d\" data-total=\"%" PRIu64 "\" "
            "data-cw=\"%.1f\" data-hl=\"" HIGHLIGHT "\">\n",
            IMG_W, height, IMG_W, height, FLAME_W, PAD, fl.total, CHAR_W);
    fprintf(f, "<style type=\"text/css\"><![CDATA[\n%s]]></style>\n", CSS);
    fprintf(f, "<rect x=\"0\" y=\"0\" width=\"%d\" height=\"%d\" fill=\"#fbfbf7\"/>\n", IMG_W,
            height);
    header(p, &fl, o, f);
    legend(p, &fl, o, f);
    /* The search box: an HTML input, which every browser renders inside
     * SVG; then what it matched, and the way back from a zoom. */
    fprintf(f,
            "<foreignObject x=\"%d\" y=\"6\" width=\"260\" height=\"28\">"
            "<input xmlns=\"http://www.w3.org/1999/xhtml\" id=\"search\" type=\"search\" "
            "placeholder=\"search (regular expression)\" "
            "style=\"width:250px;font:12px monospace;padding:3px\"/></foreignObject>\n"
            "<text id=\"matched\" x=\"%d\" y=\"52\" text-anchor=\"end\"></text>\n"
            "<text id=\"unzoom\" x=\"%d\" y=\"97\" text-anchor=\"end\" style=\"display:none\">"
            "reset zoom</text>\n"
            "<text id=\"details\" x=\"%d\" y=\"116\">hover over a frame for its samples; click "
            "to zoom</text>\n",
            IMG_W - PAD - 260, IMG_W - PAD, IMG_W - PAD, PAD);

    if (fl.total == 0)
        fprintf(f, "<text x=\"%d\" y=\"%d\">no samples to show%s</text>\n", PAD, TOP + 12,
                o->idle ? "" : " (idle threads are left out; --idle keeps them)");
    else
        frames(&fl, 0, f);
    fprintf(f, "<script type=\"text/ecmascript\"><![CDATA[\n%s]]></script>\n</svg>\n", JS);
    flame_free(&fl);
    return ferror(f) ? -1 : 0;
}

const struct writer writer_svg = {
    .name = "svg",
    .help = "interactive flame graph, one self-contained file (not for a terminal)",
    .text = false,
    .write = write_svg,
};
