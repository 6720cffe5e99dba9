/* rts_layout.h - byte layouts of the GHC RTS structures hsspy reads from a
 * target's memory, one table per GHC version and RTS variant.
 *
 * This header owns the *list* of what is described (the X-macro lists below)
 * and the table type.  The numbers live in generated files
 * (layout_ghc_<version>.c, made by gen-layout.sh from that GHC's own sources
 * and installed headers), because the installed RTS has no DWARF and
 * DerivedConstants.h covers only a fraction of the fields.
 *
 * The lists are data on purpose: gen-layout.sh extracts them with the C
 * preprocessor, so adding a field here and re-running the generator is the
 * whole job, and a field that some GHC version or RTS variant does not have
 * comes out as absent (off == -1) rather than as a compile error.
 *
 * Adding a GHC version: generate haskell-stack/layout_ghc_<v>.c and add one
 * V(<v>) line to RTS_LAYOUT__VERSIONS.
 */
#ifndef HSSPY_RTS_LAYOUT_H
#define HSSPY_RTS_LAYOUT_H

#include <stdbool.h>
#include <stdint.h>

/* One field of one RTS structure.
 * off:  byte offset, or -1 (RTS_LAYOUT__ABSENT) when the field does not
 *       exist in this version/variant.  Relative to the start of the
 *       structure, except in the info-table groups, where offsets are
 *       negative (see base INFO below); the generator refuses a real field
 *       at -1, so -1 is unambiguous.
 * size: width in bytes of the value to read (for a flexible array member:
 *       of one element); 0 for an embedded aggregate wider than 255 bytes
 *       (e.g. Capability.r: use the reg group's struct_size instead). */
struct rts_layout__field {
    int32_t off;
    uint8_t size;
};

#define RTS_LAYOUT__ABSENT (-1)

static inline bool rts_layout__has(struct rts_layout__field f)
{
    return f.off != RTS_LAYOUT__ABSENT;
}

/* ---------------------------------------------------------------------------
 * Structure groups:  G(group, C type, base, field list)
 *
 * base START: offsets are offsetof(C type, member).
 * base INFO:  offsets are relative to an info pointer, i.e. what a closure's
 *             first word or a stack frame's return address points at.  With
 *             tables-next-to-code that is the end of the table (so offsets
 *             are negative: StgInfoTable.type is at info - 8); without it, the
 *             start.  misc.TABLES_NEXT_TO_CODE says which one was used.
 *
 * Field lists:  F(name, member expression, kind)
 *   kind one:  a scalar or embedded struct; size = sizeof(member)
 *   kind elem: a flexible array member; size = sizeof(member[0])
 *   kind first: member is "array[0]", the first element of a flexible array
 *              member: it compiles only if the member is an array (not a
 *              pointer), which is the fact recorded; size = sizeof(element)
 *
 * Closure offsets include the closure header (StgHeader: 8 bytes, 24 when
 * profiled), unlike DerivedConstants.h's OFFSET_* which exclude it.
 * ------------------------------------------------------------------------- */
#define RTS_LAYOUT__GROUPS(G)                                                  \
    G(capability,        Capability,         START, RTS_LAYOUT__CAPABILITY)    \
    G(reg,               StgRegTable,        START, RTS_LAYOUT__REG)           \
    G(task,              Task,               START, RTS_LAYOUT__TASK)          \
    G(incall,            InCall,             START, RTS_LAYOUT__INCALL)        \
    G(header,            StgHeader,          START, RTS_LAYOUT__HEADER)        \
    G(thunk_header,      StgThunkHeader,     START, RTS_LAYOUT__THUNK_HEADER)  \
    G(info,              StgInfoTable,       INFO,  RTS_LAYOUT__INFO_TABLE)    \
    G(fun_info,          StgFunInfoTable,    INFO,  RTS_LAYOUT__FUN_INFO)      \
    G(con_info,          StgConInfoTable,    INFO,  RTS_LAYOUT__CON_INFO)      \
    G(large_bitmap,      StgLargeBitmap,     START, RTS_LAYOUT__LARGE_BITMAP)  \
    G(closure,           StgClosure,         START, RTS_LAYOUT__CLOSURE)       \
    G(thunk,             StgThunk,           START, RTS_LAYOUT__THUNK)         \
    G(ind,               StgInd,             START, RTS_LAYOUT__IND)           \
    G(selector,          StgSelector,        START, RTS_LAYOUT__SELECTOR)      \
    G(pap,               StgPAP,             START, RTS_LAYOUT__PAP)           \
    G(ap,                StgAP,              START, RTS_LAYOUT__AP)            \
    G(ap_stack,          StgAP_STACK,        START, RTS_LAYOUT__AP_STACK)      \
    G(arr_words,         StgArrBytes,        START, RTS_LAYOUT__ARR_WORDS)     \
    G(bco,               StgBCO,             START, RTS_LAYOUT__BCO)           \
    G(tso,               StgTSO,             START, RTS_LAYOUT__TSO)           \
    G(stack,             StgStack,           START, RTS_LAYOUT__STACK)         \
    G(update_frame,      StgUpdateFrame,     START, RTS_LAYOUT__UPDATE_FRAME)  \
    G(catch_frame,       StgCatchFrame,      START, RTS_LAYOUT__CATCH_FRAME)   \
    G(underflow_frame,   StgUnderflowFrame,  START, RTS_LAYOUT__UNDERFLOW_FRAME) \
    G(stop_frame,        StgStopFrame,       START, RTS_LAYOUT__STOP_FRAME)    \
    G(ret_fun,           StgRetFun,          START, RTS_LAYOUT__RET_FUN)       \
    G(atomically_frame,  StgAtomicallyFrame, START, RTS_LAYOUT__ATOMICALLY_FRAME) \
    G(catch_stm_frame,   StgCatchSTMFrame,   START, RTS_LAYOUT__CATCH_STM_FRAME) \
    G(catch_retry_frame, StgCatchRetryFrame, START, RTS_LAYOUT__CATCH_RETRY_FRAME) \
    G(mvar,              StgMVar,            START, RTS_LAYOUT__MVAR)          \
    G(mvar_tso_queue,    StgMVarTSOQueue,    START, RTS_LAYOUT__MVAR_TSO_QUEUE) \
    G(blocking_queue,    StgBlockingQueue,   START, RTS_LAYOUT__BLOCKING_QUEUE) \
    G(msg_black_hole,    MessageBlackHole,   START, RTS_LAYOUT__MSG_BLACK_HOLE) \
    G(msg_throw_to,      MessageThrowTo,     START, RTS_LAYOUT__MSG_THROW_TO)  \
    G(trec_header,       StgTRecHeader,      START, RTS_LAYOUT__TREC_HEADER)   \
    G(tvar,              StgTVar,            START, RTS_LAYOUT__TVAR)          \
    G(ccs,               CostCentreStack,    START, RTS_LAYOUT__CCS)           \
    G(cc,                CostCentre,         START, RTS_LAYOUT__CC)            \
    G(generation,        generation,         START, RTS_LAYOUT__GENERATION)    \
    G(bdescr,            bdescr,             START, RTS_LAYOUT__BDESCR)        \
    G(ipe_node,          IpeBufferListNode,  START, RTS_LAYOUT__IPE_NODE)      \
    G(ipe_entry,         IpeBufferEntry,     START, RTS_LAYOUT__IPE_ENTRY)     \
    G(info_prov,         InfoProv,           START, RTS_LAYOUT__INFO_PROV)

/* Capability (rts/Capability.h).  r is the StgRegTable; BaseReg == &cap->r.
 * idle is a GC counter, not an "is idle" flag.  The threaded-only fields
 * (spare_workers .. io_manager_control_wr_fd) are absent non-threaded. */
#define RTS_LAYOUT__CAPABILITY(F)                                              \
    F(f,                       f,                       one)                   \
    F(r,                       r,                       one)                   \
    F(no,                      no,                      one)                   \
    F(node,                    node,                    one)                   \
    F(running_task,            running_task,            one)                   \
    F(in_haskell,              in_haskell,              one)                   \
    F(idle,                    idle,                    one)                   \
    F(disabled,                disabled,                one)                   \
    F(run_queue_hd,            run_queue_hd,            one)                   \
    F(run_queue_tl,            run_queue_tl,            one)                   \
    F(n_run_queue,             n_run_queue,             one)                   \
    F(suspended_ccalls,        suspended_ccalls,        one)                   \
    F(n_suspended_ccalls,      n_suspended_ccalls,      one)                   \
    F(mut_lists,               mut_lists,               one)                   \
    F(saved_mut_lists,         saved_mut_lists,         one)                   \
    F(pinned_object_block,     pinned_object_block,     one)                   \
    F(pinned_object_blocks,    pinned_object_blocks,    one)                   \
    F(weak_ptr_list_hd,        weak_ptr_list_hd,        one)                   \
    F(weak_ptr_list_tl,        weak_ptr_list_tl,        one)                   \
    F(context_switch,          context_switch,          one)                   \
    F(interrupt,               interrupt,               one)                   \
    F(total_allocated,         total_allocated,         one)                   \
    F(spare_workers,           spare_workers,           one)                   \
    F(n_spare_workers,         n_spare_workers,         one)                   \
    F(lock,                    lock,                    one)                   \
    F(returning_tasks_hd,      returning_tasks_hd,      one)                   \
    F(returning_tasks_tl,      returning_tasks_tl,      one)                   \
    F(n_returning_tasks,       n_returning_tasks,       one)                   \
    F(inbox,                   inbox,                   one)                   \
    F(putMVars,                putMVars,                one)                   \
    F(sparks,                  sparks,                  one)                   \
    F(io_manager_control_wr_fd, io_manager_control_wr_fd, one)                 \
    F(free_trec_headers,       free_trec_headers,       one)                   \
    F(transaction_tokens,      transaction_tokens,      one)

/* StgRegTable (includes/stg/Regs.h); offsets from the register table, so
 * the absolute address is cap + capability.r.off + reg.X.off. */
#define RTS_LAYOUT__REG(F)                                                     \
    F(rR1,             rR1,             one)                                   \
    F(rR2,             rR2,             one)                                   \
    F(rR3,             rR3,             one)                                   \
    F(rR4,             rR4,             one)                                   \
    F(rR5,             rR5,             one)                                   \
    F(rR6,             rR6,             one)                                   \
    F(rL1,             rL1,             one)                                   \
    F(rSp,             rSp,             one)                                   \
    F(rSpLim,          rSpLim,          one)                                   \
    F(rHp,             rHp,             one)                                   \
    F(rHpLim,          rHpLim,          one)                                   \
    F(rCCCS,           rCCCS,           one)                                   \
    F(rCurrentTSO,     rCurrentTSO,     one)                                   \
    F(rNursery,        rNursery,        one)                                   \
    F(rCurrentNursery, rCurrentNursery, one)                                   \
    F(rCurrentAlloc,   rCurrentAlloc,   one)                                   \
    F(rHpAlloc,        rHpAlloc,        one)                                   \
    F(rRet,            rRet,            one)

/* Task (rts/Task.h).  id (a pthread_t, == the thread's fs_base on glibc),
 * node, cond, lock and wakeup exist only in the threaded RTS, and their
 * absence shifts everything else. */
#define RTS_LAYOUT__TASK(F)                                                    \
    F(id,                   id,                   one)                         \
    F(node,                 node,                 one)                         \
    F(cond,                 cond,                 one)                         \
    F(lock,                 lock,                 one)                         \
    F(wakeup,               wakeup,               one)                         \
    F(cap,                  cap,                  one)                         \
    F(incall,               incall,               one)                         \
    F(n_spare_incalls,      n_spare_incalls,      one)                         \
    F(spare_incalls,        spare_incalls,        one)                         \
    F(worker,               worker,               one)                         \
    F(stopped,              stopped,              one)                         \
    F(running_finalizers,   running_finalizers,   one)                         \
    F(preferred_capability, preferred_capability, one)                         \
    F(next,                 next,                 one)                         \
    F(all_next,             all_next,             one)                         \
    F(all_prev,             all_prev,             one)

/* InCall (rts/Task.h): a Task's current call into Haskell; suspended_tso is
 * set while the thread is in a safe foreign call. */
#define RTS_LAYOUT__INCALL(F)                                                  \
    F(tso,           tso,           one)                                       \
    F(suspended_tso, suspended_tso, one)                                       \
    F(suspended_cap, suspended_cap, one)                                       \
    F(rstat,         rstat,         one)                                       \
    F(ret,           ret,           one)                                       \
    F(task,          task,          one)                                       \
    F(prev_stack,    prev_stack,    one)                                       \
    F(prev,          prev,          one)                                       \
    F(next,          next,          one)

/* StgHeader: struct_size is the closure header size.  prof_ccs is the CCS
 * that allocated the closure (profiled only). */
#define RTS_LAYOUT__HEADER(F)                                                  \
    F(info,     info,     one)                                                 \
    F(prof_ccs, prof.ccs, one)                                                 \
    F(prof_hp,  prof.hp,  one)

/* StgThunkHeader: thunks carry one extra (SMP padding) word before their
 * payload, so their payload starts at thunk_header.struct_size. */
#define RTS_LAYOUT__THUNK_HEADER(F)                                            \
    F(info, info,    one)                                                      \
    F(smp,  smp.pad, one)

/* StgInfoTable, relative to the info pointer.  layout is the small bitmap
 * (size in the low BITMAP_SIZE_MASK bits, then the bits), or for RET_BIG an
 * int32 offset from the info pointer to an StgLargeBitmap.  srt is a
 * half-word.  The prof_* offsets (to the closure type/description strings,
 * relative to the info pointer) exist in profiled builds only. */
#define RTS_LAYOUT__INFO_TABLE(F)                                              \
    F(layout,                layout,                one)                       \
    F(type,                  type,                  one)                       \
    F(srt,                   srt,                   one)                       \
    F(prof_closure_type_off, prof.closure_type_off, one)                       \
    F(prof_closure_desc_off, prof.closure_desc_off, one)

/* StgFunInfoTable, relative to the info pointer: what a RET_FUN frame needs
 * to size its arguments (fun_type ARG_GEN: bitmap is a small bitmap;
 * ARG_GEN_BIG: bitmap is an offset to an StgLargeBitmap; otherwise the RTS
 * symbol stg_arg_bitmaps[fun_type]). */
#define RTS_LAYOUT__FUN_INFO(F)                                                \
    F(slow_apply_offset, f.slow_apply_offset, one)                             \
    F(bitmap,            f.b.bitmap,          one)                             \
    F(fun_type,          f.fun_type,          one)                             \
    F(arity,             f.arity,             one)                             \
    F(type,              i.type,              one)

/* StgConInfoTable: con_desc is an int32 offset from the info pointer to the
 * "package:Module.Con" string (with tables-next-to-code). */
#define RTS_LAYOUT__CON_INFO(F)                                                \
    F(con_desc, con_desc, one)                                                 \
    F(type,     i.type,   one)

#define RTS_LAYOUT__LARGE_BITMAP(F)                                            \
    F(size,   size,   one)                                                     \
    F(bitmap, bitmap, elem)

#define RTS_LAYOUT__CLOSURE(F)                                                 \
    F(payload, payload, elem)

#define RTS_LAYOUT__THUNK(F)                                                   \
    F(payload, payload, elem)

/* IND and BLACKHOLE: a BLACKHOLE's indirectee is the owning TSO (or a
 * BLOCKING_QUEUE) while the thunk is under evaluation. */
#define RTS_LAYOUT__IND(F)                                                     \
    F(indirectee, indirectee, one)

#define RTS_LAYOUT__SELECTOR(F)                                                \
    F(selectee, selectee, one)

#define RTS_LAYOUT__PAP(F)                                                     \
    F(arity,   arity,   one)                                                   \
    F(n_args,  n_args,  one)                                                   \
    F(fun,     fun,     one)                                                   \
    F(payload, payload, elem)

#define RTS_LAYOUT__AP(F)                                                      \
    F(arity,   arity,   one)                                                   \
    F(n_args,  n_args,  one)                                                   \
    F(fun,     fun,     one)                                                   \
    F(payload, payload, elem)

#define RTS_LAYOUT__AP_STACK(F)                                                \
    F(size,    size,    one)                                                   \
    F(fun,     fun,     one)                                                   \
    F(payload, payload, elem)

#define RTS_LAYOUT__ARR_WORDS(F)                                               \
    F(bytes,   bytes,   one)                                                   \
    F(payload, payload, elem)

/* StgBCO: a RET_BCO frame is 2 words + the BCO's bitmap size; bitmap is an
 * embedded StgLargeBitmap. */
#define RTS_LAYOUT__BCO(F)                                                     \
    F(instrs,   instrs,   one)                                                 \
    F(literals, literals, one)                                                 \
    F(ptrs,     ptrs,     one)                                                 \
    F(arity,    arity,    one)                                                 \
    F(size,     size,     one)                                                 \
    F(bitmap,   bitmap,   elem)

/* StgTSO (includes/rts/storage/TSO.h), header included.  label is new in
 * 9.6; prof_cccs (the CCS saved when the thread is not running) exists in
 * profiled builds only. */
#define RTS_LAYOUT__TSO(F)                                                     \
    F(link,               _link,              one)                             \
    F(global_link,        global_link,        one)                             \
    F(stackobj,           stackobj,           one)                             \
    F(what_next,          what_next,          one)                             \
    F(why_blocked,        why_blocked,        one)                             \
    F(flags,              flags,              one)                             \
    F(block_info,         block_info,         one)                             \
    F(id,                 id,                 one)                             \
    F(saved_errno,        saved_errno,        one)                             \
    F(dirty,              dirty,              one)                             \
    F(bound,              bound,              one)                             \
    F(cap,                cap,                one)                             \
    F(trec,               trec,               one)                             \
    F(label,              label,              one)                             \
    F(blocked_exceptions, blocked_exceptions, one)                             \
    F(bq,                 bq,                 one)                             \
    F(alloc_limit,        alloc_limit,        one)                             \
    F(tot_stack_size,     tot_stack_size,     one)                             \
    F(prof_cccs,          prof.cccs,          one)

/* StgStack, header included.  stack_size counts words; stack is the first
 * word of the chunk, sp points into it, and the chunk ends at
 * stack + stack_size words. */
#define RTS_LAYOUT__STACK(F)                                                   \
    F(stack_size, stack_size, one)                                             \
    F(dirty,      dirty,      one)                                             \
    F(marking,    marking,    one)                                             \
    F(sp,         sp,         one)                                             \
    F(stack,      stack,      elem)

/* Stack frames, offsets from the frame's first word (its return address /
 * info pointer).  Frames declared with a full StgHeader grow by the
 * profiling header; UNDERFLOW and RET_FUN frames have a bare info word. */
#define RTS_LAYOUT__UPDATE_FRAME(F)                                            \
    F(updatee, updatee, one)

#define RTS_LAYOUT__CATCH_FRAME(F)                                             \
    F(exceptions_blocked, exceptions_blocked, one)                             \
    F(handler,            handler,            one)

#define RTS_LAYOUT__UNDERFLOW_FRAME(F)                                         \
    F(info,       info,       one)                                             \
    F(next_chunk, next_chunk, one)

/* No fields: only struct_size matters. */
#define RTS_LAYOUT__STOP_FRAME(F)

/* RET_FUN frame: 3 words + the arguments described by fun's info table. */
#define RTS_LAYOUT__RET_FUN(F)                                                 \
    F(info,    info,    one)                                                   \
    F(size,    size,    one)                                                   \
    F(fun,     fun,     one)                                                   \
    F(payload, payload, elem)

#define RTS_LAYOUT__ATOMICALLY_FRAME(F)                                        \
    F(code,   code,   one)                                                     \
    F(result, result, one)

#define RTS_LAYOUT__CATCH_STM_FRAME(F)                                         \
    F(code,    code,    one)                                                   \
    F(handler, handler, one)

#define RTS_LAYOUT__CATCH_RETRY_FRAME(F)                                       \
    F(running_alt_code, running_alt_code, one)                                 \
    F(first_code,       first_code,       one)                                 \
    F(alt_code,         alt_code,         one)

/* MVar and its queue of blocked threads (BlockedOnMVar[Read]). */
#define RTS_LAYOUT__MVAR(F)                                                    \
    F(head,  head,  one)                                                       \
    F(tail,  tail,  one)                                                       \
    F(value, value, one)

#define RTS_LAYOUT__MVAR_TSO_QUEUE(F)                                          \
    F(link, link, one)                                                         \
    F(tso,  tso,  one)

#define RTS_LAYOUT__BLOCKING_QUEUE(F)                                          \
    F(link,  link,  one)                                                       \
    F(bh,    bh,    one)                                                       \
    F(owner, owner, one)                                                       \
    F(queue, queue, one)

/* tso.block_info for BlockedOnBlackHole / BlockedOnMsgThrowTo. */
#define RTS_LAYOUT__MSG_BLACK_HOLE(F)                                          \
    F(link, link, one)                                                         \
    F(tso,  tso,  one)                                                         \
    F(bh,   bh,   one)

#define RTS_LAYOUT__MSG_THROW_TO(F)                                            \
    F(link,      link,      one)                                               \
    F(source,    source,    one)                                               \
    F(target,    target,    one)                                               \
    F(exception, exception, one)

#define RTS_LAYOUT__TREC_HEADER(F)                                             \
    F(enclosing_trec, enclosing_trec, one)                                     \
    F(current_chunk,  current_chunk,  one)                                     \
    F(state,          state,          one)

#define RTS_LAYOUT__TVAR(F)                                                    \
    F(current_value,           current_value,           one)                   \
    F(first_watch_queue_entry, first_watch_queue_entry, one)                   \
    F(num_updates,             num_updates,             one)

/* Cost-centre stacks (includes/rts/prof/CCS.h).  The C types exist in every
 * variant, but only a profiled RTS has any CCS in memory. */
#define RTS_LAYOUT__CCS(F)                                                     \
    F(ccsID,      ccsID,      one)                                             \
    F(cc,         cc,         one)                                             \
    F(prevStack,  prevStack,  one)                                             \
    F(indexTable, indexTable, one)                                             \
    F(root,       root,       one)                                             \
    F(depth,      depth,      one)                                             \
    F(scc_count,  scc_count,  one)                                             \
    F(time_ticks, time_ticks, one)                                             \
    F(mem_alloc,  mem_alloc,  one)

#define RTS_LAYOUT__CC(F)                                                      \
    F(ccID,       ccID,       one)                                             \
    F(label,      label,      one)                                             \
    F(module,     module,     one)                                             \
    F(srcloc,     srcloc,     one)                                             \
    F(mem_alloc,  mem_alloc,  one)                                             \
    F(time_ticks, time_ticks, one)                                             \
    F(is_caf,     is_caf,     one)                                             \
    F(link,       link,       one)

/* generation (includes/rts/storage/GC.h): every live TSO is on exactly one
 * generations[g].threads list (linked by tso.global_link), which is how to
 * find all Haskell threads, not only the running/runnable ones. */
#define RTS_LAYOUT__GENERATION(F)                                              \
    F(no,            no,            one)                                       \
    F(blocks,        blocks,        one)                                       \
    F(n_blocks,      n_blocks,      one)                                       \
    F(large_objects, large_objects, one)                                       \
    F(threads,       threads,       one)                                       \
    F(weak_ptr_list, weak_ptr_list, one)                                       \
    F(to,            to,            one)                                       \
    F(collections,   collections,   one)                                       \
    F(old_threads,   old_threads,   one)

/* Block descriptor (includes/rts/storage/Block.h), for telling heap
 * addresses apart and finding an object's generation. */
#define RTS_LAYOUT__BDESCR(F)                                                  \
    F(start,  start,  one)                                                     \
    F(free,   free,   one)                                                     \
    F(link,   link,   one)                                                     \
    F(gen,    gen,    one)                                                     \
    F(gen_no, gen_no, one)                                                     \
    F(flags,  flags,  one)                                                     \
    F(blocks, blocks, one)

/* Info-table provenance (-finfo-table-map, rts/include/rts/IPE.h; 9.4+):
 * every module compiled with it has a static IpeBufferListNode, the symbol
 * <Module>_ipe_buf, holding its entries and a string table they index with
 * 32-bit offsets.  The node changed shape between versions, and the fields
 * below say which shape a version has:
 *   entries_inline  the entries follow the node (9.6: IpeBufferEntry
 *                   entries[]; the member expression entries[0] compiles
 *                   only for an array), each carrying its info pointer and
 *                   its module name;
 *   entries, tables pointers to the entries and to a parallel array of info
 *                   pointers (9.10), the module and unit names shared in the
 *                   node;
 *   compressed      non-zero when the entries and the string table are zstd
 *                   frames, of entries_size and string_table_size bytes
 *                   once decompressed (9.10). */
#define RTS_LAYOUT__IPE_NODE(F)                                                \
    F(next,              next,              one)                               \
    F(compressed,        compressed,        one)                               \
    F(count,             count,             one)                               \
    F(tables,            tables,            one)                               \
    F(entries_inline,    entries[0],        first)                             \
    F(entries,           entries,           one)                               \
    F(entries_size,      entries_size,      one)                               \
    F(string_table,      string_table,      one)                               \
    F(string_table_size, string_table_size, one)                               \
    F(unit_id,           unit_id,           one)                               \
    F(module_name,       module_name,       one)

/* One IPE entry as stored in the file: string-table offsets (and, 9.6, the
 * info pointer, which with tables-next-to-code is the entry code). */
#define RTS_LAYOUT__IPE_ENTRY(F)                                               \
    F(info,         info,         one)                                         \
    F(table_name,   table_name,   one)                                         \
    F(closure_desc, closure_desc, one)                                         \
    F(ty_desc,      ty_desc,      one)                                         \
    F(label,        label,        one)                                         \
    F(module_name,  module_name,  one)                                         \
    F(src_file,     src_file,     one)                                         \
    F(src_span,     src_span,     one)

/* The decoded entry the RTS hands out.  Read for one fact only: whether
 * closure_desc is a string (size 8, 9.6: the entry's closure_desc indexes
 * the string table) or the closure type number itself (size 4, 9.10). */
#define RTS_LAYOUT__INFO_PROV(F)                                               \
    F(table_name,   table_name,   one)                                         \
    F(closure_desc, closure_desc, one)                                         \
    F(ty_desc,      ty_desc,      one)                                         \
    F(label,        label,        one)                                         \
    F(unit_id,      unit_id,      one)                                         \
    F(module,       module,       one)                                         \
    F(src_file,     src_file,     one)                                         \
    F(src_span,     src_span,     one)

/* ---------------------------------------------------------------------------
 * Constant groups:  K(group, kind, list),  entries C(NAME), named exactly as
 * in the RTS headers so they can be grepped for.
 *   kind MACRO:  the value of the RTS header macro NAME, -1 if not defined.
 *   kind SIZEOF: sizeof(NAME) for an RTS global as its header declares it,
 *                -1 if not declared; compare with the ELF symbol's st_size
 *                (e.g. capabilities: 8 = a pointer, 2048 = an array).
 *   kind ARRAY:  1 if the RTS global NAME is declared as an array, 0 if as
 *                a pointer, -1 if not declared.  The size alone cannot say:
 *                9.6's non-threaded Capability *capabilities[1] is 8 bytes,
 *                like 9.0's and 9.10's Capability **capabilities.
 * ------------------------------------------------------------------------- */
#define RTS_LAYOUT__CONST_GROUPS(K)                                            \
    K(closure_type, MACRO,  RTS_LAYOUT__CLOSURE_TYPES)                         \
    K(what_next,    MACRO,  RTS_LAYOUT__WHAT_NEXT)                             \
    K(why_blocked,  MACRO,  RTS_LAYOUT__WHY_BLOCKED)                           \
    K(tso_flag,     MACRO,  RTS_LAYOUT__TSO_FLAGS)                             \
    K(fun_type,     MACRO,  RTS_LAYOUT__FUN_TYPES)                             \
    K(misc,         MACRO,  RTS_LAYOUT__MISC)                                  \
    K(symbol_size,  SIZEOF, RTS_LAYOUT__SYMBOLS)                               \
    K(symbol_is_array, ARRAY, RTS_LAYOUT__ARRAY_SYMBOLS)

/* includes/rts/storage/ClosureTypes.h (CONTINUATION: 9.6+). */
#define RTS_LAYOUT__CLOSURE_TYPES(C)                                           \
    C(INVALID_OBJECT) C(CONSTR) C(CONSTR_1_0) C(CONSTR_0_1) C(CONSTR_2_0)      \
    C(CONSTR_1_1) C(CONSTR_0_2) C(CONSTR_NOCAF)                                \
    C(FUN) C(FUN_1_0) C(FUN_0_1) C(FUN_2_0) C(FUN_1_1) C(FUN_0_2)              \
    C(FUN_STATIC)                                                              \
    C(THUNK) C(THUNK_1_0) C(THUNK_0_1) C(THUNK_2_0) C(THUNK_1_1) C(THUNK_0_2)  \
    C(THUNK_STATIC) C(THUNK_SELECTOR)                                          \
    C(BCO) C(AP) C(PAP) C(AP_STACK) C(IND) C(IND_STATIC)                       \
    C(RET_BCO) C(RET_SMALL) C(RET_BIG) C(RET_FUN)                              \
    C(UPDATE_FRAME) C(CATCH_FRAME) C(UNDERFLOW_FRAME) C(STOP_FRAME)            \
    C(BLOCKING_QUEUE) C(BLACKHOLE) C(MVAR_CLEAN) C(MVAR_DIRTY) C(TVAR)         \
    C(ARR_WORDS) C(MUT_ARR_PTRS_CLEAN) C(MUT_ARR_PTRS_DIRTY)                   \
    C(MUT_ARR_PTRS_FROZEN_DIRTY) C(MUT_ARR_PTRS_FROZEN_CLEAN)                  \
    C(MUT_VAR_CLEAN) C(MUT_VAR_DIRTY) C(WEAK) C(PRIM) C(MUT_PRIM)              \
    C(TSO) C(STACK) C(TREC_CHUNK)                                              \
    C(ATOMICALLY_FRAME) C(CATCH_RETRY_FRAME) C(CATCH_STM_FRAME)                \
    C(WHITEHOLE) C(SMALL_MUT_ARR_PTRS_CLEAN) C(SMALL_MUT_ARR_PTRS_DIRTY)       \
    C(SMALL_MUT_ARR_PTRS_FROZEN_DIRTY) C(SMALL_MUT_ARR_PTRS_FROZEN_CLEAN)      \
    C(COMPACT_NFDATA) C(CONTINUATION)                                          \
    C(N_CLOSURE_TYPES)

/* tso.what_next (includes/rts/Constants.h). */
#define RTS_LAYOUT__WHAT_NEXT(C)                                               \
    C(ThreadRunGHC) C(ThreadInterpret) C(ThreadKilled) C(ThreadComplete)

/* tso.why_blocked (includes/rts/Constants.h). */
#define RTS_LAYOUT__WHY_BLOCKED(C)                                             \
    C(NotBlocked) C(BlockedOnMVar) C(BlockedOnMVarRead) C(BlockedOnBlackHole)  \
    C(BlockedOnRead) C(BlockedOnWrite) C(BlockedOnDelay) C(BlockedOnSTM)       \
    C(BlockedOnDoProc) C(BlockedOnCCall) C(BlockedOnCCall_Interruptible)       \
    C(BlockedOnMsgThrowTo) C(ThreadMigrating) C(BlockedOnIOCompletion)

/* tso.flags bits (includes/rts/Constants.h). */
#define RTS_LAYOUT__TSO_FLAGS(C)                                               \
    C(TSO_LOCKED) C(TSO_BLOCKEX) C(TSO_INTERRUPTIBLE)                          \
    C(TSO_STOPPED_ON_BREAKPOINT) C(TSO_MARKED) C(TSO_SQUEEZED)                 \
    C(TSO_ALLOC_LIMIT)

/* fun_info.fun_type values that need special handling
 * (includes/rts/storage/FunTypes.h); the rest index stg_arg_bitmaps. */
#define RTS_LAYOUT__FUN_TYPES(C)                                               \
    C(ARG_GEN) C(ARG_GEN_BIG) C(ARG_BCO) C(ARG_NONE)

/* Small-bitmap encoding, block geometry, stack reserve, and whether the
 * headers were read with tables-next-to-code (1) or not (-1).  Sizes are
 * given as shifts only: BLOCK_SIZE is also a <linux/fs.h> macro, which would
 * clash with a member of that name. */
#define RTS_LAYOUT__MISC(C)                                                    \
    C(BITMAP_SIZE_MASK) C(BITMAP_BITS_SHIFT)                                   \
    C(BLOCK_SHIFT) C(MBLOCK_SHIFT) C(BDESCR_SHIFT)                             \
    C(RESERVED_STACK_WORDS) C(STACK_DIRTY) C(MAX_N_CAPABILITIES)               \
    C(TABLES_NEXT_TO_CODE)

/* RTS globals a reader locates by symbol. */
#define RTS_LAYOUT__SYMBOLS(C)                                                 \
    C(capabilities) C(n_capabilities) C(enabled_capabilities)                  \
    C(MainCapability) C(all_tasks) C(my_task) C(generations)

/* RTS globals that are an array in some versions, a pointer in others. */
#define RTS_LAYOUT__ARRAY_SYMBOLS(C) \
    C(capabilities)

/* ---------------------------------------------------------------------------
 * The table type, built from the lists above.
 * ------------------------------------------------------------------------- */
#define RTS_LAYOUT__DECLARE_FIELD(name, member, kind) \
    struct rts_layout__field name;
#define RTS_LAYOUT__DECLARE_GROUP(group, ctype, base, fields) \
    struct rts_layout__##group {                               \
        int32_t struct_size; /* sizeof(ctype), -1 if absent */ \
        fields(RTS_LAYOUT__DECLARE_FIELD)                      \
    } group;
#define RTS_LAYOUT__DECLARE_CONST(name) int32_t name;
#define RTS_LAYOUT__DECLARE_CONST_GROUP(group, kind, list) \
    struct rts_layout__##group {                           \
        list(RTS_LAYOUT__DECLARE_CONST)                    \
    } group;

struct rts_layout {
    const char *ghc_version;
    /* The variant these numbers were computed for.  A debug lookup returns
     * the non-debug table (debug == false) when -DDEBUG changes nothing. */
    bool threaded, profiled, debug;
    RTS_LAYOUT__GROUPS(RTS_LAYOUT__DECLARE_GROUP)
    RTS_LAYOUT__CONST_GROUPS(RTS_LAYOUT__DECLARE_CONST_GROUP)
};

/* Number of generated values in a table: lets a generated file check at
 * compile time that it was generated from this list (a stale file would
 * silently leave new fields at offset 0). */
#define RTS_LAYOUT__COUNT_ONE(...) +1
#define RTS_LAYOUT__COUNT_GROUP(group, ctype, base, fields) \
    +1 fields(RTS_LAYOUT__COUNT_ONE)
#define RTS_LAYOUT__COUNT_CONST_GROUP(group, kind, list) \
    list(RTS_LAYOUT__COUNT_ONE)
enum {
    RTS_LAYOUT__N_VALUES = 0 RTS_LAYOUT__GROUPS(RTS_LAYOUT__COUNT_GROUP)
                             RTS_LAYOUT__CONST_GROUPS(RTS_LAYOUT__COUNT_CONST_GROUP)
};

/* ---------------------------------------------------------------------------
 * Generated tables.
 * ------------------------------------------------------------------------- */

/* Index of a variant in rts_layout__version.variant. */
#define RTS_LAYOUT__VARIANT(threaded, profiled, debug) \
    ((((threaded) ? 1 : 0) << 2) | (((profiled) ? 1 : 0) << 1) | ((debug) ? 1 : 0))
#define RTS_LAYOUT__N_VARIANTS 8

/* One GHC version: every variant slot is filled (debug slots may share the
 * non-debug table). */
struct rts_layout__version {
    const char *ghc_version;
    const struct rts_layout *variant[RTS_LAYOUT__N_VARIANTS];
};

/* Every generated version, V(version with '_' for '.'). */
#define RTS_LAYOUT__VERSIONS(V) \
    V(9_0_2)                    \
    V(9_6_6)                    \
    V(9_10_3)

#define RTS_LAYOUT__DECLARE_VERSION(v) \
    extern const struct rts_layout__version rts_layout__ghc_##v;
RTS_LAYOUT__VERSIONS(RTS_LAYOUT__DECLARE_VERSION)

/* The layout for an RTS of GHC version ghc_version ("9.0.2", as in
 * __GLASGOW_HASKELL_FULL_VERSION__) built threaded/profiled/debug, or NULL
 * if that version was never generated. */
/* The versions with a table, "9.0.2, 9.6.6" (for messages). */
const char *rts_layout__supported(void);

const struct rts_layout *rts_layout__find(const char *ghc_version,
                                          bool threaded, bool profiled,
                                          bool debug);

#endif
