/* live.c - `hsspy top`: the recording loop's live hooks (record.h) turn
 * each second's samples into out/top.c's figures and draw its screen;
 * keys change what the screen shows. */
#include "sampler/live.h"

#include <stdlib.h>

#include "out/top.h"
#include "sampler/log.h"
#include "sampler/record.h"
#include "sampler/term.h"

#define KEYS "q quit, t threads, s sort, a window"

struct live {
    struct top *view;
    struct top_opts opts;
    int rows, cols; /* the size of the last screen drawn */
    bool failed;
};

static int on_start(void *arg, const struct profile *p)
{
    (void)arg;
    (void)p;
    return term__enter();
}

static enum live_action on_refresh(void *arg, const struct profile *p, uint64_t now_ns)
{
    struct live *l = arg;
    if (top__add(l->view, p, now_ns) < 0) {
        l->failed = true;
        return LIVE_STOP;
    }
    term__size(&l->rows, &l->cols);
    char *screen = top__render(l->view, p, &l->opts, l->rows, l->cols);
    if (!screen) {
        l->failed = true;
        return LIVE_STOP;
    }
    term__draw(screen, l->rows);
    free(screen);
    return LIVE_GO;
}

static enum live_action on_poll(void *arg)
{
    struct live *l = arg;
    enum live_action a = LIVE_GO;
    int k, rows, cols;
    term__flush();
    while ((k = term__key()) >= 0) {
        switch (k) {
        case 'q':
        case 'Q':
            return LIVE_STOP;
        case 't': l->opts.threads = !l->opts.threads; a = LIVE_REFRESH; break;
        case 's':
            l->opts.sort = l->opts.sort == TOP_SORT_OWN ? TOP_SORT_TOTAL : TOP_SORT_OWN;
            a = LIVE_REFRESH;
            break;
        case 'a': l->opts.all_time = !l->opts.all_time; a = LIVE_REFRESH; break;
        case ' ':
        case '\f': a = LIVE_REFRESH; break; /* Ctrl-L: redraw */
        default: break;
        }
    }
    /* Resized (no SIGWINCH handler needed: looked at every poll). */
    term__size(&rows, &cols);
    if (rows != l->rows || cols != l->cols)
        a = LIVE_REFRESH;
    return a;
}

static bool on_job(void *arg, bool stopping)
{
    struct live *l = arg;
    if (stopping) {
        term__suspend();
        return true;
    }
    if (!term__resume())
        return false;
    l->rows = l->cols = -1; /* drawn again at the next poll */
    return true;
}

static void on_stop(void *arg)
{
    (void)arg;
    term__leave();
}

int live__run(const struct live_opts *o)
{
    /* Before touching the target: a view needs a terminal. */
    if (term__usable() < 0)
        return 2;
    struct live l = {.view = top__new(LIVE_HALF_LIFE_S, o->idle),
                     .opts = {.keys = KEYS,
                              .options = o->idle && o->nonblocking ? "--idle --nonblocking"
                                         : o->idle                 ? "--idle"
                                         : o->nonblocking          ? "--nonblocking"
                                                                   : ""}};
    if (!l.view) {
        log__error("out of memory");
        return 1;
    }
    term__size(&l.rows, &l.cols);
    struct record_live hooks = {
        .arg = &l,
        .refresh_ns = (uint64_t)(LIVE_REFRESH_S * 1e9),
        .start = on_start,
        .refresh = on_refresh,
        .poll = on_poll,
        .stop = on_stop,
        .job = on_job,
    };
    struct record_opts ro = {
        .rate_hz = o->rate_hz,
        .format = "top",
        .idle = o->idle,
        .nonblocking = o->nonblocking,
        .pid = o->pid,
        .stack_bytes = 32 * 1024,
        .live = &hooks,
    };
    int rc = record__run(&ro);
    term__release(); /* the target is detached: the terminal may take its time */
    top__free(l.view);
    if (l.failed) {
        log__error("out of memory: the view stopped");
        return 1;
    }
    return rc;
}
