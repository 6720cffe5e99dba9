/* test_rts_layout.c - unit tests for haskell-stack/rts_layout.{h,c} and the
 * generated GHC 9.0.2, 9.6.6 and 9.10.3 tables: lookup, structural sanity of
 * every table, and spot checks against numbers known independently of the
 * generator (each version's installed DerivedConstants.h and IPE.h, and
 * offsets seen on live processes).
 */
#include "tests/unit/unit.h"
#include "haskell-stack/rts_layout.h"

#include <stdbool.h>

static const struct rts_layout *must_find(const char *v, bool thr, bool prof,
                                          bool dbg)
{
    const struct rts_layout *L = rts_layout__find(v, thr, prof, dbg);
    if (!L)
        UNIT_FAIL("no layout for %s threaded=%d profiled=%d debug=%d", v, thr,
                  prof, dbg);
    return L;
}

TEST(finds_every_9_0_2_variant)
{
    for (int i = 0; i < RTS_LAYOUT__N_VARIANTS; i++) {
        bool thr = i & 4, prof = i & 2, dbg = i & 1;
        const struct rts_layout *L = must_find("9.0.2", thr, prof, dbg);
        CHECK_EQ_STR(L->ghc_version, "9.0.2");
        CHECK_EQ_INT(L->threaded, thr);
        CHECK_EQ_INT(L->profiled, prof);
        /* -DDEBUG changes nothing in 9.0.2, so the debug slots share the
         * non-debug tables. */
        CHECK_EQ_INT(L->debug, false);
        CHECK(L == must_find("9.0.2", thr, prof, false));
    }
}

/* 9.6 and 9.10 have a debug RTS whose `generation` differs (old_threads
 * moves): their threaded debug slots have tables of their own. */
TEST(finds_every_9_6_and_9_10_variant)
{
    const char *const vs[] = {"9.6.6", "9.10.3"};
    for (int k = 0; k < 2; k++)
        for (int i = 0; i < RTS_LAYOUT__N_VARIANTS; i++) {
            bool thr = i & 4, prof = i & 2, dbg = i & 1;
            const struct rts_layout *L = must_find(vs[k], thr, prof, dbg);
            CHECK_EQ_STR(L->ghc_version, vs[k]);
            CHECK_EQ_INT(L->threaded, thr);
            CHECK_EQ_INT(L->profiled, prof);
            CHECK_EQ_INT(L->debug, dbg && thr);
        }
    CHECK_EQ_STR(rts_layout__supported(), "9.0.2, 9.6.6, 9.10.3");
}

TEST(unknown_versions_are_null)
{
    CHECK(rts_layout__find("8.10.7", true, false, false) == NULL);
    CHECK(rts_layout__find("9.0", true, false, false) == NULL);
    CHECK(rts_layout__find("9.0.2.1", false, false, false) == NULL);
    CHECK(rts_layout__find("9.6.7", false, false, false) == NULL);
    CHECK(rts_layout__find("9.10", true, false, false) == NULL);
    CHECK(rts_layout__find("", false, false, false) == NULL);
    CHECK(rts_layout__find(NULL, false, false, false) == NULL);
}

/* Every present field lies inside its structure (or, for info tables, just
 * before the info pointer); every absent one is {-1, 0}. */
static void check_field(const struct rts_layout *L, const char *grp,
                        bool info_based, int32_t struct_size,
                        const char *name, const char *kind,
                        struct rts_layout__field f)
{
    bool elem = kind[0] == 'e' || kind[0] == 'f'; /* elem, first */
    if (!rts_layout__has(f)) {
        if (f.off != -1 || f.size != 0)
            UNIT_FAIL("%s.%s (thr=%d prof=%d): absent but {%d, %d}", grp,
                      name, L->threaded, L->profiled, f.off, f.size);
        return;
    }
    if (struct_size <= 0)
        UNIT_FAIL("%s.%s present but %s has no size", grp, name, grp);
    long lo = info_based ? -(long)struct_size : 0;
    long hi = info_based ? 0 : struct_size;
    long end = (long)f.off + (elem ? 0 : f.size);
    if (f.off < lo || end > hi)
        UNIT_FAIL("%s.%s (thr=%d prof=%d) = {%d, %d} outside [%ld, %ld]", grp,
                  name, L->threaded, L->profiled, f.off, f.size, lo, hi);
}

#define CHECK_FIELD(name, member, kind) \
    check_field(L, grp, info_based, g->struct_size, #name, #kind, g->name);
/* A structure the version does not have at all (IPE before 9.2) is -1
 * with every field absent. */
#define CHECK_GROUP(group, ctype, base, fields)                \
    {                                                          \
        const __typeof__(L->group) *g = &L->group;             \
        const char *grp = #group;                              \
        bool info_based = strcmp(#base, "INFO") == 0;          \
        (void)g, (void)grp, (void)info_based;                  \
        CHECK(g->struct_size > 0 || g->struct_size == -1);     \
        fields(CHECK_FIELD)                                    \
    }

static const char *const all_versions[] = {"9.0.2", "9.6.6", "9.10.3"};

TEST(every_field_fits_its_struct)
{
    for (int v = 0; v < 3; v++)
        for (int i = 0; i < RTS_LAYOUT__N_VARIANTS; i++) {
            const struct rts_layout *L = must_find(all_versions[v], i & 4, i & 2, i & 1);
            RTS_LAYOUT__GROUPS(CHECK_GROUP)
            /* every structure the reader and walker use exists */
            CHECK(L->capability.struct_size > 0 && L->task.struct_size > 0 &&
                  L->tso.struct_size > 0 && L->stack.struct_size > 0);
            /* the register table is embedded in the Capability */
            CHECK(L->capability.r.off + L->reg.struct_size <=
                  L->capability.struct_size);
        }
}

TEST(closure_types_are_distinct_and_in_range)
{
  for (int v = 0; v < 3; v++) {
    const struct rts_layout *L = must_find(all_versions[v], true, false, false);
    int32_t seen[256] = {0};
    int n = L->closure_type.N_CLOSURE_TYPES;
    CHECK(n > 0 && n < 256);
#define CHECK_CT(name)                                                       \
    if (L->closure_type.name != -1 && &L->closure_type.name !=               \
                                          &L->closure_type.N_CLOSURE_TYPES) { \
        CHECK(L->closure_type.name >= 0 && L->closure_type.name < n);        \
        CHECK_EQ_INT(seen[L->closure_type.name]++, 0);                       \
    }
    RTS_LAYOUT__CLOSURE_TYPES(CHECK_CT)
  }
}

/* DerivedConstants.h gives closure offsets without the header:
 * SIZEOF_StgHeader is 8, or 24 with PROF_HDR_SIZE 2 words. */
TEST(matches_derived_constants)
{
    for (int prof = 0; prof <= 1; prof++) {
        const struct rts_layout *L = must_find("9.0.2", true, prof, false);
        int hdr = prof ? 24 : 8;
        CHECK_EQ_INT(L->header.struct_size, hdr);
        CHECK_EQ_INT(L->tso.stackobj.off, hdr + 16);  /* OFFSET_StgTSO_stackobj */
        CHECK_EQ_INT(L->tso.what_next.off, hdr + 24); /* OFFSET_StgTSO_what_next */
        CHECK_EQ_INT(L->tso.what_next.size, 2);       /* REP_ b16 */
        CHECK_EQ_INT(L->tso.why_blocked.off, hdr + 26);
        CHECK_EQ_INT(L->tso.id.off, hdr + 40);
        CHECK_EQ_INT(L->tso.cap.off, hdr + 64);
        CHECK_EQ_INT(L->stack.stack_size.off, hdr + 0);
        CHECK_EQ_INT(L->stack.sp.off, hdr + 8);
        CHECK_EQ_INT(L->stack.stack.off, hdr + 16);
        CHECK_EQ_INT(L->update_frame.updatee.off, hdr + 0);
        CHECK_EQ_INT(L->catch_frame.handler.off, hdr + 8);
        CHECK_EQ_INT(L->mvar.head.off, hdr + 0);
        CHECK_EQ_INT(L->mvar.value.off, hdr + 16);
        CHECK_EQ_INT(L->ind.indirectee.off, hdr + 0);
        CHECK_EQ_INT(L->thunk_header.struct_size, hdr + 8); /* SMP thunk hdr */
        CHECK_EQ_INT(L->capability.r.off, 24);
        CHECK_EQ_INT(L->capability.no.off, 944);
        CHECK_EQ_INT(L->capability.lock.off, 1208);
        CHECK_EQ_INT(L->capability.context_switch.off, 1176);
        CHECK_EQ_INT(L->capability.total_allocated.off, 1184);
        CHECK_EQ_INT(L->reg.rSp.off, 832);
        CHECK_EQ_INT(L->reg.rHpLim.off, 856);
        CHECK_EQ_INT(L->reg.rCCCS.off, 864);
        CHECK_EQ_INT(L->reg.rCurrentTSO.off, 872);
        CHECK_EQ_INT(L->reg.rHpAlloc.off, 904);
        CHECK_EQ_INT(L->ccs.prevStack.off, 16);
        CHECK_EQ_INT(L->ccs.struct_size, 96);
        CHECK_EQ_INT(L->cc.link.off, 56);
        CHECK_EQ_INT(L->generation.struct_size, 384);
        CHECK_EQ_INT(L->generation.weak_ptr_list.off, 112);
        CHECK_EQ_INT(L->bdescr.gen_no.off, 40);
        CHECK_EQ_INT(L->bdescr.blocks.off, 48);
        CHECK_EQ_INT(1 << L->misc.BLOCK_SHIFT, 4096);
        CHECK_EQ_INT(1 << L->misc.MBLOCK_SHIFT, 1048576);
    }
    const struct rts_layout *P = must_find("9.0.2", true, true, false);
    CHECK_EQ_INT(P->tso.prof_cccs.off, 24 + 112); /* OFFSET_StgTSO_cccs */
    CHECK_EQ_INT(P->header.prof_ccs.off, 8);      /* OFFSET_StgHeader_ccs */
}

/* Offsets seen on live 9.0.2 processes (docs/ghc-rts-notes.md, and
 * re-checked with gdb when this table was generated). */
TEST(matches_live_checked_values)
{
    const struct rts_layout *T = must_find("9.0.2", true, false, false);
    CHECK_EQ_INT(T->capability.struct_size, 1408);
    CHECK_EQ_INT(T->capability.running_task.off, 952);
    CHECK_EQ_INT(T->capability.in_haskell.off, 960);
    CHECK_EQ_INT(T->capability.in_haskell.size, 1);
    CHECK_EQ_INT(T->capability.idle.off, 964);
    CHECK_EQ_INT(T->capability.run_queue_hd.off, 976);
    CHECK_EQ_INT(T->capability.n_run_queue.off, 992);
    CHECK_EQ_INT(T->capability.suspended_ccalls.off, 1000);
    CHECK_EQ_INT(T->capability.n_suspended_ccalls.off, 1008);
    CHECK_EQ_INT(T->capability.spare_workers.off, 1192);
    CHECK_EQ_INT(T->capability.n_spare_workers.off, 1200);
    CHECK_EQ_INT(T->task.struct_size, 176);
    CHECK_EQ_INT(T->task.id.off, 0);
    CHECK_EQ_INT(T->task.cap.off, 112);
    CHECK_EQ_INT(T->task.incall.off, 120);
    CHECK_EQ_INT(T->task.worker.off, 144);
    CHECK_EQ_INT(T->task.stopped.off, 145);
    CHECK_EQ_INT(T->task.next.off, 152);
    CHECK_EQ_INT(T->task.all_next.off, 160);
    CHECK_EQ_INT(T->task.all_prev.off, 168);
    CHECK_EQ_INT(T->incall.suspended_tso.off, 8);
    CHECK_EQ_INT(T->incall.suspended_cap.off, 16);
    CHECK_EQ_INT(T->incall.prev_stack.off, 48);
    CHECK_EQ_INT(T->incall.next.off, 64);
    CHECK_EQ_INT(T->symbol_size.capabilities, 8); /* a pointer in 9.0 */
    CHECK_EQ_INT(T->misc.TABLES_NEXT_TO_CODE, 1);

    const struct rts_layout *V = must_find("9.0.2", false, false, false);
    CHECK_EQ_INT(V->capability.struct_size, 1280);
    CHECK_EQ_INT(V->capability.no.off, 944);
    CHECK(!rts_layout__has(V->capability.lock));
    CHECK(!rts_layout__has(V->capability.spare_workers));
    CHECK(!rts_layout__has(V->task.id));
    CHECK_EQ_INT(V->task.struct_size, 64);
    CHECK_EQ_INT(V->task.cap.off, 0);
    CHECK_EQ_INT(V->task.incall.off, 8);
    CHECK_EQ_INT(V->task.worker.off, 32);
    CHECK_EQ_INT(V->task.all_next.off, 48);

    /* Profiling: headers grow, the RTS-private structures do not. */
    const struct rts_layout *P = must_find("9.0.2", true, true, false);
    CHECK_EQ_INT(P->capability.struct_size, 1408);
    CHECK_EQ_INT(P->capability.running_task.off, 952);
    CHECK_EQ_INT(P->task.incall.off, 120);
    CHECK_EQ_INT(P->ccs.cc.off, 8);
    CHECK_EQ_INT(P->ccs.prevStack.off, 16);
    CHECK_EQ_INT(P->ccs.depth.off, 40);
    CHECK_EQ_INT(P->cc.label.off, 8);
    CHECK_EQ_INT(P->cc.module.off, 16);
    CHECK_EQ_INT(P->cc.srcloc.off, 24);
    CHECK(!rts_layout__has(T->tso.prof_cccs));
    CHECK(!rts_layout__has(T->tso.label)); /* new in 9.6 */

    /* Info tables: type is at info - 8 with or without profiling. */
    CHECK_EQ_INT(T->info.type.off, -8);
    CHECK_EQ_INT(T->info.type.size, 4);
    CHECK_EQ_INT(T->info.layout.off, -16);
    CHECK_EQ_INT(T->info.srt.off, -4);
    CHECK_EQ_INT(T->info.struct_size, 16);
    CHECK_EQ_INT(P->info.type.off, -8);
    CHECK_EQ_INT(P->info.layout.off, -16);
    CHECK_EQ_INT(P->info.struct_size, 32);
    /* Frames with a bare info word do not grow with profiling. */
    CHECK_EQ_INT(P->underflow_frame.next_chunk.off, 8);
    CHECK_EQ_INT(P->ret_fun.fun.off, 16);
}

TEST(constants)
{
    const struct rts_layout *L = must_find("9.0.2", false, true, false);
    CHECK_EQ_INT(L->closure_type.RET_BCO, 29);
    CHECK_EQ_INT(L->closure_type.RET_SMALL, 30);
    CHECK_EQ_INT(L->closure_type.RET_BIG, 31);
    CHECK_EQ_INT(L->closure_type.RET_FUN, 32);
    CHECK_EQ_INT(L->closure_type.UPDATE_FRAME, 33);
    CHECK_EQ_INT(L->closure_type.CATCH_FRAME, 34);
    CHECK_EQ_INT(L->closure_type.UNDERFLOW_FRAME, 35);
    CHECK_EQ_INT(L->closure_type.STOP_FRAME, 36);
    CHECK_EQ_INT(L->closure_type.ATOMICALLY_FRAME, 55);
    CHECK_EQ_INT(L->closure_type.CATCH_RETRY_FRAME, 56);
    CHECK_EQ_INT(L->closure_type.CATCH_STM_FRAME, 57);
    CHECK_EQ_INT(L->closure_type.TSO, 52);
    CHECK_EQ_INT(L->closure_type.STACK, 53);
    CHECK_EQ_INT(L->closure_type.BLACKHOLE, 38);
    CHECK_EQ_INT(L->closure_type.N_CLOSURE_TYPES, 64);
    CHECK_EQ_INT(L->closure_type.CONTINUATION, -1); /* 9.6+ */
    CHECK_EQ_INT(L->why_blocked.BlockedOnCCall, 10);
    CHECK_EQ_INT(L->why_blocked.BlockedOnCCall_Interruptible, 11);
    CHECK_EQ_INT(L->why_blocked.BlockedOnMVarRead, 14);
    CHECK_EQ_INT(L->what_next.ThreadRunGHC, 1);
    CHECK_EQ_INT(L->misc.BITMAP_SIZE_MASK, 0x3f);
    CHECK_EQ_INT(L->misc.BITMAP_BITS_SHIFT, 6);
}

/* 9.6.6 and 9.10.3 against their own installed DerivedConstants.h (offsets
 * without the closure header) and the differences ghc-rts-notes.md lists. */
TEST(matches_9_6_and_9_10_derived_constants)
{
    for (int prof = 0; prof <= 1; prof++) {
        int hdr = prof ? 24 : 8;
        const struct rts_layout *A = must_find("9.6.6", true, prof, false);
        const struct rts_layout *B = must_find("9.10.3", true, prof, false);
        CHECK_EQ_INT(A->tso.stackobj.off, hdr + 16);
        CHECK_EQ_INT(B->tso.stackobj.off, hdr + 16);
        CHECK_EQ_INT(A->tso.what_next.off, hdr + 24);
        CHECK_EQ_INT(B->tso.what_next.off, hdr + 24);
        CHECK_EQ_INT(A->tso.why_blocked.off, hdr + 26); /* 9.6: u16 */
        CHECK_EQ_INT(A->tso.why_blocked.size, 2);
        CHECK_EQ_INT(B->tso.why_blocked.off, hdr + 32); /* 9.10: u32, moved */
        CHECK_EQ_INT(B->tso.why_blocked.size, 4);
        CHECK_EQ_INT(A->tso.id.off, hdr + 40);
        CHECK_EQ_INT(B->tso.id.off, hdr + 48);
        CHECK_EQ_INT(A->tso.cap.off, hdr + 64);
        CHECK_EQ_INT(B->tso.cap.off, hdr + 72);
        CHECK_EQ_INT(A->tso.alloc_limit.off, hdr + 104);
        CHECK_EQ_INT(B->tso.alloc_limit.off, hdr + 112);
        CHECK_EQ_INT(A->tso.label.off, hdr + 80); /* new in 9.6 */
        CHECK_EQ_INT(B->tso.label.off, hdr + 88);
        if (prof) {
            CHECK_EQ_INT(A->tso.prof_cccs.off, hdr + 120);
            CHECK_EQ_INT(B->tso.prof_cccs.off, hdr + 128);
        }
        CHECK_EQ_INT(A->stack.sp.off, hdr + 8);
        CHECK_EQ_INT(B->stack.stack.off, hdr + 16);
        /* 9.6 dropped CATCH_FRAME's exceptions_blocked word */
        CHECK_EQ_INT(A->catch_frame.handler.off, hdr + 0);
        CHECK_EQ_INT(B->catch_frame.handler.off, hdr + 0);
        CHECK(!rts_layout__has(A->catch_frame.exceptions_blocked));
        for (int k = 0; k < 2; k++) {
            const struct rts_layout *L = k ? B : A;
            CHECK_EQ_INT(L->capability.r.off, 24);
            CHECK_EQ_INT(L->capability.no.off, 944);
            CHECK_EQ_INT(L->capability.lock.off, 1224);
            CHECK_EQ_INT(L->reg.rSp.off, 832);
            CHECK_EQ_INT(L->reg.rCCCS.off, 864);
            CHECK_EQ_INT(L->reg.rCurrentTSO.off, 872);
            CHECK_EQ_INT(L->misc.TABLES_NEXT_TO_CODE, 1);
            CHECK_EQ_INT(L->closure_type.CONTINUATION, 64);
            CHECK_EQ_INT(L->closure_type.RET_SMALL, 30);
            CHECK_EQ_INT(L->closure_type.STOP_FRAME, 36);
            /* Up to mut_lists the Capability is unchanged since 9.0. */
            CHECK_EQ_INT(L->capability.running_task.off, 952);
            CHECK_EQ_INT(L->capability.in_haskell.off, 960);
            CHECK_EQ_INT(L->capability.suspended_ccalls.off, 1000);
        }
    }
    /* capabilities: an array Capability *[MAX_N_CAPABILITIES] in 9.6 only */
    CHECK_EQ_INT(must_find("9.6.6", true, false, false)->symbol_size.capabilities, 2048);
    CHECK_EQ_INT(must_find("9.6.6", true, false, false)->misc.MAX_N_CAPABILITIES, 256);
    CHECK_EQ_INT(must_find("9.10.3", true, false, false)->symbol_size.capabilities, 8);
    CHECK_EQ_INT(must_find("9.0.2", false, false, false)->symbol_size.capabilities, 8);
    /* ... and only the declaration says array or pointer: 9.6 without
     * -threaded has an array of one, as big as a pointer. */
    CHECK_EQ_INT(must_find("9.6.6", false, false, false)->symbol_size.capabilities, 8);
    for (int i = 0; i < RTS_LAYOUT__N_VARIANTS; i++) {
        CHECK_EQ_INT(must_find("9.0.2", i & 4, i & 2, i & 1)->symbol_is_array.capabilities, 0);
        CHECK_EQ_INT(must_find("9.6.6", i & 4, i & 2, i & 1)->symbol_is_array.capabilities, 1);
        CHECK_EQ_INT(must_find("9.10.3", i & 4, i & 2, i & 1)->symbol_is_array.capabilities, 0);
    }
    /* Task grew (a Condition carries its clock since 9.4): id stays first */
    const struct rts_layout *T = must_find("9.6.6", true, false, false);
    CHECK_EQ_INT(T->task.id.off, 0);
    CHECK_EQ_INT(T->task.cap.off, 120);
    CHECK_EQ_INT(T->task.incall.off, 128);
}

/* IPE (rts/include/rts/IPE.h): absent in 9.0; in 9.6 the entries follow the
 * node and carry their info pointer and module; in 9.10 they are behind a
 * pointer, may be compressed, and the module is the node's. */
TEST(ipe_layouts)
{
    const struct rts_layout *O = must_find("9.0.2", true, false, false);
    CHECK_EQ_INT(O->ipe_node.struct_size, -1);
    CHECK_EQ_INT(O->ipe_entry.struct_size, -1);

    const struct rts_layout *A = must_find("9.6.6", false, false, false);
    CHECK_EQ_INT(A->ipe_node.struct_size, 24);
    CHECK_EQ_INT(A->ipe_node.string_table.off, 8);
    CHECK_EQ_INT(A->ipe_node.count.off, 16);
    CHECK_EQ_INT(A->ipe_node.entries_inline.off, 24);
    CHECK_EQ_INT(A->ipe_node.entries_inline.size, 40);
    CHECK(!rts_layout__has(A->ipe_node.entries));
    CHECK(!rts_layout__has(A->ipe_node.compressed));
    CHECK_EQ_INT(A->ipe_entry.struct_size, 40);
    CHECK_EQ_INT(A->ipe_entry.info.off, 0);
    CHECK_EQ_INT(A->ipe_entry.table_name.off, 8);
    CHECK_EQ_INT(A->ipe_entry.module_name.off, 24);
    CHECK_EQ_INT(A->ipe_entry.src_span.off, 32);
    CHECK_EQ_INT(A->info_prov.closure_desc.size, 8); /* a string */

    const struct rts_layout *B = must_find("9.10.3", true, true, true);
    CHECK_EQ_INT(B->ipe_node.struct_size, 72);
    CHECK_EQ_INT(B->ipe_node.compressed.off, 8);
    CHECK_EQ_INT(B->ipe_node.count.off, 16);
    CHECK_EQ_INT(B->ipe_node.tables.off, 24);
    CHECK_EQ_INT(B->ipe_node.entries.off, 32);
    CHECK_EQ_INT(B->ipe_node.entries_size.off, 40);
    CHECK_EQ_INT(B->ipe_node.string_table.off, 48);
    CHECK_EQ_INT(B->ipe_node.string_table_size.off, 56);
    CHECK_EQ_INT(B->ipe_node.unit_id.off, 64);
    CHECK_EQ_INT(B->ipe_node.module_name.off, 68);
    CHECK(!rts_layout__has(B->ipe_node.entries_inline));
    CHECK_EQ_INT(B->ipe_entry.struct_size, 24);
    CHECK(!rts_layout__has(B->ipe_entry.info));
    CHECK(!rts_layout__has(B->ipe_entry.module_name));
    CHECK_EQ_INT(B->ipe_entry.closure_desc.off, 4);
    CHECK_EQ_INT(B->ipe_entry.src_span.off, 20);
    CHECK_EQ_INT(B->info_prov.closure_desc.size, 4); /* a closure type */

    /* The IPE structures have no variant-dependent members, which is why
     * the symbolizer may read them with any variant's table. */
    for (int v = 0; v < 3; v++) {
        const struct rts_layout *V = must_find(all_versions[v], false, false, false);
        for (int i = 1; i < RTS_LAYOUT__N_VARIANTS; i++) {
            const struct rts_layout *X = must_find(all_versions[v], i & 4, i & 2, i & 1);
            CHECK(memcmp(&V->ipe_node, &X->ipe_node, sizeof V->ipe_node) == 0);
            CHECK(memcmp(&V->ipe_entry, &X->ipe_entry, sizeof V->ipe_entry) == 0);
            CHECK(memcmp(&V->info_prov, &X->info_prov, sizeof V->info_prov) == 0);
        }
    }
}

UNIT_MAIN()
