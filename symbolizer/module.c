/* module.c - opening a mapped ELF object and answering questions about it. */
#define _GNU_SOURCE
#include "symbolizer/module.h"
#include "symbolizer/ipe.h"
#include "symbolizer/zdecode.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "sampler/remote.h"

#define PAGE_MASK_4K (~(uint64_t)0xfff)

static void ensure_libelf(void)
{
    static bool done;
    if (!done) {
        elf_version(EV_CURRENT);
        done = true;
    }
}

static bool same_file(const struct map_entry *a, const struct map_entry *b)
{
    return a->inode == b->inode && a->dev_major == b->dev_major &&
           a->dev_minor == b->dev_minor && strcmp(a->path, b->path) == 0;
}

/* Is fd the very file the mapping maps (same inode and device)? */
static bool is_mapped_file(int fd, const struct map_entry *e)
{
    struct stat st;
    return fstat(fd, &st) == 0 && (uint64_t)st.st_ino == e->inode &&
           major(st.st_dev) == e->dev_major && minor(st.st_dev) == e->dev_minor;
}

/* The file behind a mapping, as the target sees it. Its maps path is
 * relative to the target's root: in a container (its own mount namespace
 * and root) "/usr/lib/x86_64-linux-gnu/libc.so.6" names the container's
 * libc, which only /proc/PID/root reaches, while the same path on the host
 * is another libc altogether. So, in order: the path under /proc/PID/root,
 * if it is the mapped inode; the mapping itself (/proc/PID/map_files, which
 * needs privileges, and also serves a file that was replaced or removed
 * after it was mapped, "(deleted)"); for the executable, /proc/PID/exe,
 * which the same user may open where map_files needs CAP_SYS_ADMIN (an
 * executable removed or replaced since it started, not root: before, its
 * symbols and CFI were lost, and a GHC program read as not one, exit 0);
 * then, unverified, the path under
 * /proc/PID/root or as it is (a chroot in the host's namespace shows
 * host paths; some filesystems, overlayfs, report other inode numbers). */
static int open_target_file(pid_t pid, const struct map_entry *e)
{
    char path[4200];
    const char *del = " (deleted)";
    size_t pl = strlen(e->path), dl = strlen(del);
    bool deleted = pl > dl && strcmp(e->path + pl - dl, del) == 0;
    int fd;

    snprintf(path, sizeof path, "/proc/%d/root%s", (int)remote__mm_pid(pid), e->path);
    if (!deleted && (fd = open(path, O_RDONLY | O_CLOEXEC)) >= 0) {
        if (is_mapped_file(fd, e))
            return fd;
        close(fd);
    }
    snprintf(path, sizeof path, "/proc/%d/map_files/%llx-%llx", (int)remote__mm_pid(pid),
             (unsigned long long)e->start, (unsigned long long)e->end);
    if ((fd = open(path, O_RDONLY | O_CLOEXEC)) >= 0)
        return fd;
    snprintf(path, sizeof path, "/proc/%d/exe", (int)remote__mm_pid(pid));
    if ((fd = open(path, O_RDONLY | O_CLOEXEC)) >= 0) {
        if (is_mapped_file(fd, e))
            return fd;
        close(fd);
    }
    if (deleted) {
        errno = ENOENT;
        return -1;
    }
    snprintf(path, sizeof path, "/proc/%d/root%s", (int)remote__mm_pid(pid), e->path);
    fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        fd = open(e->path, O_RDONLY | O_CLOEXEC);
    return fd;
}

static void read_build_id(struct module *m)
{
    for (size_t i = 0; i < m->nph; i++) {
        if (m->ph[i].p_type != PT_NOTE)
            continue;
        Elf_Data *d = elf_getdata_rawchunk(m->elf, (int64_t)m->ph[i].p_offset,
                                           m->ph[i].p_filesz, ELF_T_NHDR);
        if (!d)
            continue;
        size_t off = 0, name_off, desc_off;
        GElf_Nhdr nh;
        while ((off = gelf_getnote(d, off, &nh, &name_off, &desc_off)) > 0) {
            if (nh.n_type == NT_GNU_BUILD_ID && nh.n_namesz == 4 &&
                memcmp((char *)d->d_buf + name_off, "GNU", 4) == 0 && nh.n_descsz > 0 &&
                nh.n_descsz <= sizeof m->build_id) {
                memcpy(m->build_id, (char *)d->d_buf + desc_off, nh.n_descsz);
                m->build_id_len = nh.n_descsz;
                return;
            }
        }
    }
}

/* The file's section of that name and type (its header in *sh), or NULL. */
static Elf_Scn *section_named(const struct module *m, const char *name, GElf_Word type,
                              GElf_Shdr *sh)
{
    size_t shstrndx;
    Elf_Scn *scn = NULL;
    if (!m->elf || elf_getshdrstrndx(m->elf, &shstrndx) != 0)
        return NULL;
    while ((scn = elf_nextscn(m->elf, scn)) != NULL) {
        const char *nm;
        if (gelf_getshdr(scn, sh) && sh->sh_type == type &&
            (nm = elf_strptr(m->elf, shstrndx, sh->sh_name)) && strcmp(nm, name) == 0)
            return scn;
    }
    return NULL;
}

/* GHC puts ".ident \"GHC 9.0.2\"" in every object it compiles, so the
 * linked .comment section says whether (and by which GHC) Haskell code is in
 * this file. */
static void read_comment(struct module *m)
{
    GElf_Shdr sh;
    Elf_Scn *scn = section_named(m, ".comment", SHT_PROGBITS, &sh);
    Elf_Data *d = scn ? elf_getdata(scn, NULL) : NULL;
    if (!d || !d->d_buf)
        return;
    const char *p = d->d_buf, *end = p + d->d_size;
    while (p < end) {
        size_t len = strnlen(p, (size_t)(end - p));
        if (len > 4 && memcmp(p, "GHC ", 4) == 0) {
            m->is_haskell = true;
            /* The version, "9.0.2": what else the file says there is
             * not written anywhere (it is the target's). */
            size_t vl = 0;
            while (vl < len - 4 && vl < sizeof m->ghc_version - 1 &&
                   ((p[4 + vl] >= '0' && p[4 + vl] <= '9') || p[4 + vl] == '.'))
                vl++;
            memcpy(m->ghc_version, p + 4, vl);
            m->ghc_version[vl] = 0;
        }
        p += len + 1;
    }
}

/* Decode one pointer of the .eh_frame_hdr header (only the encodings
 * linkers emit there). Returns its size, or 0 if unsupported. */
static size_t read_encoded(const uint8_t *p, size_t avail, uint8_t enc, uint64_t at,
                           uint64_t *out)
{
    uint64_t v;
    size_t sz;
    switch (enc & 0x0f) {
    case 0x00: /* absptr */
    case 0x04: /* udata8 */
    case 0x0c: /* sdata8 */
        sz = 8;
        if (avail < sz)
            return 0;
        memcpy(&v, p, 8);
        break;
    case 0x03: { /* udata4 */
        uint32_t u;
        sz = 4;
        if (avail < sz)
            return 0;
        memcpy(&u, p, 4);
        v = u;
        break;
    }
    case 0x0b: { /* sdata4 */
        int32_t s;
        sz = 4;
        if (avail < sz)
            return 0;
        memcpy(&s, p, 4);
        v = (uint64_t)(int64_t)s;
        break;
    }
    default:
        return 0;
    }
    if ((enc & 0x70) == 0x10) /* pcrel */
        v += at;
    *out = v;
    return sz;
}

static void read_eh_frame_hdr(struct module *m)
{
    for (size_t i = 0; i < m->nph; i++) {
        const GElf_Phdr *ph = &m->ph[i];
        uint8_t hdr[32];
        if (ph->p_type != PT_GNU_EH_FRAME || ph->p_filesz < 12)
            continue;
        uint64_t at = ph->p_vaddr + (uint64_t)m->bias;
        size_t n = ph->p_filesz < sizeof hdr ? ph->p_filesz : sizeof hdr;
        if (module__read(m, at, hdr, n) < 0 || hdr[0] != 1)
            return;
        uint64_t ehf, count;
        size_t pos = 4, k;
        k = read_encoded(hdr + pos, n - pos, hdr[1], at + pos, &ehf);
        if (!k)
            return;
        pos += k;
        k = read_encoded(hdr + pos, n - pos, hdr[2], at + pos, &count);
        if (!k)
            return;
        pos += k;
        /* libunwind's binary search handles only datarel|sdata4 tables. */
        if (hdr[3] != 0x3b)
            return;
        m->ehf_hdr = at;
        m->ehf_table = at + pos;
        m->ehf_count = count;
        m->ehf_section = ehf;
        return;
    }
}

/* Without a .eh_frame_hdr (a static executable, see eh_frame.h), the
 * table it would hold, built from .eh_frame: else libunwind finds no
 * function's CFI in the file, and every address in a GHC program's file
 * would pass for Haskell code, its C code included. */
static void index_eh_frame(struct module *m)
{
    GElf_Shdr sh;
    /* (x86-64's type for it; other linkers' PROGBITS) */
    if (!section_named(m, ".eh_frame", SHT_X86_64_UNWIND, &sh) &&
        !section_named(m, ".eh_frame", SHT_PROGBITS, &sh))
        return;
    size_t avail = 0;
    const uint8_t *p = (sh.sh_flags & SHF_ALLOC) ? module__file_at(m, sh.sh_addr, &avail) : NULL;
    if (!p)
        return;
    uint64_t at = sh.sh_addr + (uint64_t)m->bias;
    struct eh_frame_entry *e;
    long n = eh_frame__index(p, sh.sh_size < avail ? sh.sh_size : avail, at, m->bias, m->lo,
                             m->hi, &e);
    if (n <= 0)
        return;
    m->ehf_index = e;
    m->ehf_hdr = at;
    m->ehf_section = at;
    m->ehf_count = (uint64_t)n;
}

static void find_unwind_table(struct module *m)
{
    read_eh_frame_hdr(m);
    if (!m->ehf_count)
        index_eh_frame(m);
}

static int finish_open(struct module *m)
{
    size_t nph;
    if (elf_kind(m->elf) != ELF_K_ELF || elf_getphdrnum(m->elf, &nph) != 0 || nph == 0)
        return -ENOEXEC;
    m->ph = calloc(nph, sizeof *m->ph);
    if (!m->ph)
        return -ENOMEM;
    for (size_t i = 0; i < nph; i++)
        if (gelf_getphdr(m->elf, (int)i, &m->ph[i]))
            m->nph++;
    m->image = (const uint8_t *)elf_rawfile(m->elf, &m->image_size);
    if (!m->image)
        return -ENOEXEC;
    read_build_id(m);
    read_comment(m);
    return 0;
}

static bool bias_from_mapping(struct module *m, const struct map_entry *e)
{
    for (size_t i = 0; i < m->nph; i++) {
        const GElf_Phdr *ph = &m->ph[i];
        if (ph->p_type != PT_LOAD)
            continue;
        if ((ph->p_offset & PAGE_MASK_4K) == e->offset) {
            m->bias = (int64_t)(e->start - (ph->p_vaddr & PAGE_MASK_4K));
            return true;
        }
    }
    return false;
}

int64_t module__mapping_shift(const struct module *m, const struct map_entry *e)
{
    int64_t shift = 0;
    bool found = false;
    if (!m->elf || m->mem)
        return 0; /* (the vDSO: one mapping) */
    /* (Segments can share a page of the file, an older linker's text and
     * data: the mapping is where the bias puts one of them, shift 0, if
     * any.) */
    for (size_t i = 0; i < m->nph; i++) {
        const GElf_Phdr *ph = &m->ph[i];
        uint64_t off = ph->p_offset & PAGE_MASK_4K;
        if (ph->p_type != PT_LOAD || e->offset < off ||
            e->offset - off >= ph->p_filesz + (ph->p_offset - off))
            continue;
        uint64_t at = (ph->p_vaddr & PAGE_MASK_4K) + (e->offset - off) + (uint64_t)m->bias;
        if (at == e->start)
            return 0;
        if (!found)
            shift = (int64_t)(at - e->start);
        found = true;
    }
    return shift; /* (0 too where no segment has it: nothing of it is named) */
}

static void open_debug_file(struct module *m);

int module__open(struct module *m, pid_t pid, const struct maps *maps, size_t first)
{
    const struct map_entry *e0 = &maps->e[first];
    bool have_bias = false;
    int r;

    ensure_libelf();
    memset(m, 0, sizeof *m);
    m->fd = m->debug_fd = -1;
    m->path = strdup(e0->path);
    if (!m->path)
        return -ENOMEM;
    m->name = strrchr(m->path, '/') ? strrchr(m->path, '/') + 1 : m->path;
    m->lo = e0->start;
    m->hi = e0->end;
    m->lo_offset = e0->offset;

    m->pid = pid;
    m->fd = open_target_file(pid, e0);
    if (m->fd < 0) {
        r = -errno;
        goto err;
    }
    m->elf = elf_begin(m->fd, ELF_C_READ_MMAP, NULL);
    if (!m->elf) {
        r = -ENOEXEC;
        goto err;
    }
    if ((r = finish_open(m)) < 0)
        goto err;
    for (size_t i = first; i < maps->n; i++) {
        const struct map_entry *e = &maps->e[i];
        if (!same_file(e, e0))
            continue;
        if (e->start < m->lo)
            m->lo = e->start;
        if (e->end > m->hi)
            m->hi = e->end;
        if (!have_bias)
            have_bias = bias_from_mapping(m, e);
    }
    if (!have_bias) {
        r = -ENOEXEC;
        goto err;
    }
    find_unwind_table(m);
    /* Find a separate debug file now, while the target's root can still
     * be reached through /proc: it is read only when a frame needs a
     * name, which can be after the target has exited. */
    open_debug_file(m);
    return 0;
err:
    module__close(m);
    return r;
}

int module__open_memory(struct module *m, const char *name, uint64_t start, const void *bytes,
                        size_t len)
{
    int r;
    ensure_libelf();
    memset(m, 0, sizeof *m);
    m->fd = m->debug_fd = -1;
    m->path = strdup(name);
    m->mem = malloc(len);
    if (!m->path || !m->mem) {
        module__close(m);
        return -ENOMEM;
    }
    memcpy(m->mem, bytes, len);
    m->name = m->path;
    m->lo = start;
    m->hi = start + len;
    m->elf = elf_memory(m->mem, len);
    if (!m->elf) {
        module__close(m);
        return -ENOEXEC;
    }
    if ((r = finish_open(m)) < 0) {
        module__close(m);
        return r;
    }
    for (size_t i = 0; i < m->nph; i++)
        if (m->ph[i].p_type == PT_LOAD) {
            m->bias = (int64_t)(start - (m->ph[i].p_vaddr & PAGE_MASK_4K));
            break;
        }
    find_unwind_table(m);
    return 0;
}

int module__open_file(struct module *m, const char *path, uint64_t lo, uint64_t hi,
                      int64_t bias)
{
    int r;
    ensure_libelf();
    memset(m, 0, sizeof *m);
    m->fd = m->debug_fd = -1;
    m->path = strdup(path);
    if (!m->path)
        return -ENOMEM;
    m->name = strrchr(m->path, '/') ? strrchr(m->path, '/') + 1 : m->path;
    m->lo = lo;
    m->hi = hi;
    m->bias = bias;
    m->fd = open(path, O_RDONLY | O_CLOEXEC);
    if (m->fd < 0) {
        r = -errno;
        goto err;
    }
    m->elf = elf_begin(m->fd, ELF_C_READ_MMAP, NULL);
    if (!m->elf) {
        r = -ENOEXEC;
        goto err;
    }
    if ((r = finish_open(m)) < 0)
        goto err;
    find_unwind_table(m);
    return 0;
err:
    module__close(m);
    return r;
}

void module__close(struct module *m)
{
    if (m->ipe) {
        ipe_map__free(m->ipe);
        free(m->ipe);
    }
    if (m->syms_loaded)
        symtab__free(&m->syms);
    free(m->plt);
    if (m->lines_ok)
        dwarf_lines__close(&m->lines);
    if (m->debug_elf)
        elf_end(m->debug_elf);
    if (m->debug_fd >= 0)
        close(m->debug_fd);
    if (m->elf)
        elf_end(m->elf);
    if (m->fd >= 0)
        close(m->fd);
    free(m->mem);
    free(m->ehf_index);
    free(m->ph);
    free(m->path);
    memset(m, 0, sizeof *m);
    m->fd = m->debug_fd = -1;
}

int module__read(const struct module *m, uint64_t addr, void *out, size_t len)
{
    uint64_t vaddr = addr - (uint64_t)m->bias;
    for (size_t i = 0; i < m->nph; i++) {
        const GElf_Phdr *ph = &m->ph[i];
        if (ph->p_type != PT_LOAD || (ph->p_flags & PF_W))
            continue;
        if (vaddr < ph->p_vaddr || vaddr - ph->p_vaddr > ph->p_filesz ||
            len > ph->p_filesz - (vaddr - ph->p_vaddr))
            continue;
        uint64_t off = ph->p_offset + (vaddr - ph->p_vaddr);
        if (off > m->image_size || len > m->image_size - off)
            return -EFAULT;
        memcpy(out, m->image + off, len);
        return 0;
    }
    return -EFAULT;
}

const uint8_t *module__file_at(const struct module *m, uint64_t vaddr, size_t *avail)
{
    for (size_t i = 0; i < m->nph; i++) {
        const GElf_Phdr *ph = &m->ph[i];
        if (ph->p_type != PT_LOAD || vaddr < ph->p_vaddr || vaddr - ph->p_vaddr >= ph->p_filesz)
            continue;
        uint64_t off = ph->p_offset + (vaddr - ph->p_vaddr);
        uint64_t left = ph->p_filesz - (vaddr - ph->p_vaddr);
        if (!m->image || off >= m->image_size)
            return NULL;
        if (left > m->image_size - off)
            left = m->image_size - off;
        *avail = (size_t)left;
        return m->image + off;
    }
    return NULL;
}

/* Entry i of the table of FDEs by function start (.eh_frame_hdr's, or
 * the one built from .eh_frame): both relative to ehf_hdr. */
static bool table_entry(const struct module *m, uint64_t i, struct eh_frame_entry *e)
{
    if (m->ehf_index) {
        *e = m->ehf_index[i];
        return true;
    }
    return module__read(m, m->ehf_table + 8 * i, e, sizeof *e) == 0;
}

bool module__cfi_function(const struct module *m, uint64_t addr, uint64_t *start)
{
    /* The last entry starting at or below addr (a binary search of the
     * file's sorted table; a table that is not sorted finds nothing
     * worse than a wrong FDE, which the range check below refuses). */
    uint64_t lo = 0, hi = m->ehf_count;
    struct eh_frame_entry e;
    int64_t rel = (int64_t)(addr - m->ehf_hdr);
    if (!m->ehf_count || rel < INT32_MIN || rel > INT32_MAX)
        return false;
    while (hi - lo > 1) {
        uint64_t mid = lo + (hi - lo) / 2;
        if (!table_entry(m, mid, &e))
            return false;
        if (e.start <= rel)
            lo = mid;
        else
            hi = mid;
    }
    if (!table_entry(m, lo, &e) || e.start > rel)
        return false;
    size_t avail;
    const uint8_t *sec = module__file_at(m, m->ehf_section - (uint64_t)m->bias, &avail);
    uint64_t fde = m->ehf_hdr + (uint64_t)(int64_t)e.fde, first, size;
    if (!sec || fde < m->ehf_section || fde - m->ehf_section >= avail ||
        !eh_frame__function(sec, avail, (size_t)(fde - m->ehf_section), m->ehf_section,
                            m->bias, &first, &size))
        return false;
    if (addr < first || addr - first >= size)
        return false;
    *start = first;
    return true;
}

/* Debian ships symbols and DWARF of stripped files separately, found by
 * build-id: /usr/lib/debug/.build-id/ab/cdef....debug, first among the
 * target's own files (a container's debug packages), then the host's. */
static void open_debug_file(struct module *m)
{
    char hex[130], path[300];
    if (m->debug_elf || m->build_id_len < 2 || m->debug_tried)
        return;
    m->debug_tried = true;
    module__build_id_hex(m, hex, sizeof hex);
    if (m->pid > 0) {
        snprintf(path, sizeof path, "/proc/%d/root/usr/lib/debug/.build-id/%.2s/%s.debug",
                 (int)remote__mm_pid(m->pid), hex, hex + 2);
        m->debug_fd = open(path, O_RDONLY | O_CLOEXEC);
    }
    if (m->debug_fd < 0) {
        snprintf(path, sizeof path, "/usr/lib/debug/.build-id/%.2s/%s.debug", hex, hex + 2);
        m->debug_fd = open(path, O_RDONLY | O_CLOEXEC);
    }
    if (m->debug_fd < 0)
        return;
    m->debug_elf = elf_begin(m->debug_fd, ELF_C_READ_MMAP, NULL);
    if (!m->debug_elf) {
        close(m->debug_fd);
        m->debug_fd = -1;
    }
}

bool module__plt_name(struct module *m, uint64_t addr, char *buf, size_t size)
{
    if (!m->plt_loaded) {
        m->plt_loaded = true;
        long n = plt__read(m->elf, &m->plt);
        m->nplt = n > 0 ? (size_t)n : 0;
    }
    const struct plt_stub *st = plt__lookup(m->plt, m->nplt, addr - (uint64_t)m->bias);
    if (!st)
        return false;
    const char *name = st->name;
    if (!name) {
        /* an ifunc of this very file: named after its resolver's symbol
         * (glibc's memcpy is the ifunc whose resolver that is) */
        const struct sym *r = module__symbol(m, st->resolver + (uint64_t)m->bias);
        if (!r || r->addr != st->resolver)
            return false;
        name = r->name;
    }
    /* (no symbol version: "getchar@plt", not "getchar@GLIBC_2.2.5@plt") */
    snprintf(buf, size, "%.*s@plt", (int)strcspn(name, "@"), name);
    return true;
}

const struct sym *module__symbol(struct module *m, uint64_t addr)
{
    if (!m->syms_loaded) {
        m->syms_loaded = true;
        if (symtab__load(&m->syms, m->elf) < 0)
            memset(&m->syms, 0, sizeof m->syms);
        if (m->syms.from_symtab == 0) {
            /* Stripped: a separate debug file may have the full table. */
            open_debug_file(m);
            struct symtab dbg;
            if (m->debug_elf && symtab__load(&dbg, m->debug_elf) == 0 && dbg.n > 0) {
                symtab__free(&m->syms);
                m->syms = dbg;
            }
        }
    }
    return symtab__lookup(&m->syms, addr - (uint64_t)m->bias);
}

const struct sym *module__symbol_nearest(struct module *m, uint64_t addr)
{
    module__symbol(m, addr); /* loads the table */
    return symtab__nearest(&m->syms, addr - (uint64_t)m->bias);
}

const struct sym *module__symbol_next(struct module *m, uint64_t addr)
{
    module__symbol(m, addr);
    return symtab__next(&m->syms, addr - (uint64_t)m->bias);
}

bool module__line(struct module *m, uint64_t addr, const char **file, int *line)
{
    if (!m->lines_tried) {
        m->lines_tried = true;
        m->lines_ok = dwarf_lines__open(&m->lines, m->elf);
        if (!m->lines_ok) {
            open_debug_file(m);
            if (m->debug_elf)
                m->lines_ok = dwarf_lines__open(&m->lines, m->debug_elf);
        }
    }
    return m->lines_ok && dwarf_lines__find(&m->lines, addr - (uint64_t)m->bias, file, line);
}

bool module__haskell_function(struct module *m, uint64_t addr, char *out, size_t size)
{
    const char *fn, *linkage = NULL, *file;
    int line;
    uint64_t lo, hi, vaddr = addr - (uint64_t)m->bias;
    bool haskell;
    struct zdecoded z;

    module__line(m, addr, &file, &line); /* opens the DWARF index */
    if (!m->lines_ok ||
        !dwarf_lines__function(&m->lines, vaddr, &fn, &linkage, &lo, &hi, &haskell) ||
        !haskell)
        return false;
    /* The linkage name, where it is a Haskell symbol's, says more than the
     * binding's name for a procedure GHC named after a label (a worker,
     * $wspinA: GHC 9.6 on names every such one so) and for an instance's
     * method ($fShapeCircle_$carea: both instances' are "area"). (Not
     * otherwise: a foreign export's is $fstableZC0ZCmainZCMainZChsWork1.) */
    bool by_linkage = linkage && zdecode__symbol(linkage, &z) &&
                      (dwarf_lines__is_label(fn) ||
                       (strncmp(z.name, "$f", 2) == 0 && strstr(z.name, "_$c")));
    if (by_linkage) {
        snprintf(out, size, "%s.%s", z.module, z.name);
        return true;
    }
    if (dwarf_lines__is_label(fn))
        return false;
    /* DWARF has the binding's name, not its module: take the module of a
     * Haskell symbol in the same compile unit. (The program's entry,
     * ZCMain_main_info, is :Main.main: its module's code is Main's.) */
    const struct sym *s = module__symbol_nearest(m, addr);
    if (!s || s->addr < lo || !zdecode__symbol(s->name, &z)) {
        s = module__symbol_next(m, addr);
        if (!s || s->addr >= hi || !zdecode__symbol(s->name, &z))
            return false;
    }
    snprintf(out, size, "%s.%s", z.module[0] == ':' ? z.module + 1 : z.module, fn);
    return true;
}

bool module__find_symbol(struct module *m, const char *name, GElf_Sym *out)
{
    return symtab__find_by_name(m->elf, name, out) == 1;
}

/* The first line of the table +RTS --info prints (rts/RtsUtils.c): in the
 * read-only data of every GHC runtime, symbols or not. */
static const char rts_info_head[] = "[(\"GHC RTS\", \"YES\")";

/* Is that line in the file's .rodata? Read in pieces (a large program's
 * .rodata is tens of MB: none of it is kept). */
static bool has_rts_info(const struct module *m)
{
    enum { PIECE = 1 << 20, OVERLAP = sizeof rts_info_head - 1 };
    GElf_Shdr sh;
    bool found = false;

    if (m->fd < 0)
        return false;
    Elf_Scn *scn = section_named(m, ".rodata", SHT_PROGBITS, &sh);
    char *buf = scn && sh.sh_size <= (1ull << 30) ? malloc(PIECE + OVERLAP) : NULL;
    if (!buf)
        return false;
    size_t kept = 0; /* bytes at buf's start from the piece before */
    for (uint64_t at = 0; at < sh.sh_size && !found;) {
        size_t want = sh.sh_size - at < PIECE ? (size_t)(sh.sh_size - at) : PIECE;
        ssize_t n = pread(m->fd, buf + kept, want, (off_t)(sh.sh_offset + at));
        if (n <= 0)
            break;
        size_t have = kept + (size_t)n;
        found = memmem(buf, have, rts_info_head, OVERLAP) != NULL;
        kept = have < OVERLAP ? have : OVERLAP;
        memmove(buf, buf + have - kept, kept);
        at += (uint64_t)n;
    }
    free(buf);
    return found;
}

bool module__is_ghc(struct module *m)
{
    GElf_Sym s;
    /* (The runtime's info line, for a file stripped of its symbols only:
     * any program may hold those bytes, hsspy itself does; one with a
     * symbol table and no runtime symbols is no GHC program.) */
    if (!m->is_haskell && m->elf &&
        ((module__find_symbol(m, "stg_upd_frame_info", &s) &&
          module__find_symbol(m, "hs_init_ghc", &s)) ||
         (!module__has_symtab(m) && has_rts_info(m))))
        m->is_haskell = true;
    return m->is_haskell;
}

bool module__has_symtab(const struct module *m)
{
    Elf_Scn *scn = NULL;
    GElf_Shdr sh;
    while (m->elf && (scn = elf_nextscn(m->elf, scn)) != NULL)
        if (gelf_getshdr(scn, &sh) && sh.sh_type == SHT_SYMTAB)
            return true;
    return false;
}

void module__build_id_hex(const struct module *m, char *buf, size_t size)
{
    size_t w = 0;
    if (size)
        buf[0] = 0;
    for (size_t i = 0; i < m->build_id_len && w + 3 <= size; i++)
        w += (size_t)snprintf(buf + w, size - w, "%02x", m->build_id[i]);
}
