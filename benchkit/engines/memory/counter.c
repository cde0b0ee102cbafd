/* benchkit's counting allocator: preloaded (LD_PRELOAD) into a memory worker process.
 *
 * It interposes malloc, calloc, realloc, free, posix_memalign, aligned_alloc, memalign,
 * valloc and pvalloc (operator new and new[] of libstdc++ call malloc, so they are seen
 * too), forwarding to glibc's own __libc_* entry points, and, once Python asks for it
 * (bk_install_python_hooks), wraps Python's three allocator domains (raw, mem, object), so
 * small objects served by pymalloc's arenas are counted as well. Every allocation is counted
 * once, at the outermost allocator: a pymalloc request that falls through to malloc is one
 * Python allocation, not also a native one.
 *
 * Sizes are the bytes requested. A table from address to requested size (mmap'd, never
 * malloc'd) gives the size of each freed block, so live bytes and their peak are exact in
 * requested bytes; a block allocated before counting started is found there too, because
 * the table is filled from the first allocation of the process.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include <Python.h>

extern void *__libc_malloc(size_t);
extern void __libc_free(void *);
extern void *__libc_calloc(size_t, size_t);
extern void *__libc_realloc(void *, size_t);
extern void *__libc_memalign(size_t, size_t);

#define SOURCES 2            /* 0: native (malloc & co.), 1: Python's allocator */
#define TABLE_BITS 22
#define TABLE_SIZE (1UL << TABLE_BITS)

typedef struct {
    uint64_t allocations, frees, bytes, freed_bytes;
} bk_source_counts;

typedef struct {
    bk_source_counts source[SOURCES];
    int64_t live;            /* requested bytes alive now, above the last reset */
    int64_t peak;            /* highest `live` since the last reset */
    uint64_t untracked_frees;  /* frees of blocks the table never saw (size unknown) */
    uint64_t table_full;       /* allocations not entered: the table was full */
} bk_counts;

static bk_counts counts;
static int counting;                      /* 0 until bk_reset() */
static volatile int table_lock;
static __thread int depth __attribute__((tls_model("initial-exec")));

typedef struct { uintptr_t key; size_t size; } slot;
static slot *table;
static size_t table_used;

static void lock(void) { while (__atomic_test_and_set(&table_lock, __ATOMIC_ACQUIRE)) {} }
static void unlock(void) { __atomic_clear(&table_lock, __ATOMIC_RELEASE); }

static size_t hash(uintptr_t key) {
    key ^= key >> 33; key *= 0xff51afd7ed558ccdULL; key ^= key >> 33;
    return key & (TABLE_SIZE - 1);
}

static int table_ready(void) {
    if (table) return 1;
    void *p = mmap(NULL, TABLE_SIZE * sizeof(slot), PROT_READ | PROT_WRITE,
                   MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (p == MAP_FAILED) return 0;
    table = p;
    return 1;
}

/* Called with the lock held. */
static int table_put(uintptr_t key, size_t size) {
    if (!table_ready() || table_used * 10 > TABLE_SIZE * 7) return 0;
    size_t i = hash(key);
    while (table[i].key && table[i].key != key) i = (i + 1) & (TABLE_SIZE - 1);
    if (!table[i].key) table_used++;
    table[i].key = key; table[i].size = size;
    return 1;
}

/* Called with the lock held; backward-shift deletion keeps probe chains whole. */
static int table_take(uintptr_t key, size_t *size) {
    if (!table) return 0;
    size_t i = hash(key);
    while (table[i].key != key) {
        if (!table[i].key) return 0;
        i = (i + 1) & (TABLE_SIZE - 1);
    }
    *size = table[i].size;
    size_t j = i;
    for (;;) {
        j = (j + 1) & (TABLE_SIZE - 1);
        if (!table[j].key) break;
        size_t home = hash(table[j].key);
        if ((j > i && (home <= i || home > j)) || (j < i && (home <= i && home > j))) {
            table[i] = table[j];
            i = j;
        }
    }
    table[i].key = 0;
    table_used--;
    return 1;
}

static void on_alloc(int source, void *p, size_t size) {
    if (!p) return;
    lock();
    if (!table_put((uintptr_t)p, size)) counts.table_full++;
    if (counting) {
        counts.source[source].allocations++;
        counts.source[source].bytes += size;
        counts.live += (int64_t)size;
        if (counts.live > counts.peak) counts.peak = counts.live;
    }
    unlock();
}

static void on_free(int source, void *p) {
    if (!p) return;
    size_t size = 0;
    lock();
    int known = table_take((uintptr_t)p, &size);
    if (counting) {
        counts.source[source].frees++;
        if (known) {
            counts.source[source].freed_bytes += size;
            counts.live -= (int64_t)size;
        } else {
            counts.untracked_frees++;
        }
    }
    unlock();
}

/* -- the native allocator ------------------------------------------------------------- */
void *malloc(size_t n) {
    void *p = __libc_malloc(n);
    if (!depth) on_alloc(0, p, n);
    return p;
}

void free(void *p) {
    if (!depth) on_free(0, p);
    __libc_free(p);
}

void *calloc(size_t n, size_t m) {
    void *p = __libc_calloc(n, m);
    if (!depth) on_alloc(0, p, n * m);
    return p;
}

void *realloc(void *old, size_t n) {
    if (depth) return __libc_realloc(old, n);
    if (old) on_free(0, old);
    void *p = __libc_realloc(old, n);
    if (p) on_alloc(0, p, n);
    else if (old && n) on_alloc(0, old, 0);   /* failed: the old block stays (size lost) */
    return p;
}

static void *aligned(size_t align, size_t n) {
    void *p = __libc_memalign(align, n);
    if (!depth) on_alloc(0, p, n);
    return p;
}

int posix_memalign(void **out, size_t align, size_t n) {
    if (align < sizeof(void *) || (align & (align - 1))) return EINVAL;
    void *p = aligned(align, n);
    if (!p) return ENOMEM;
    *out = p;
    return 0;
}

void *aligned_alloc(size_t align, size_t n) { return aligned(align, n); }
void *memalign(size_t align, size_t n) { return aligned(align, n); }
void *valloc(size_t n) { return aligned((size_t)sysconf(_SC_PAGESIZE), n); }
void *pvalloc(size_t n) {
    size_t page = (size_t)sysconf(_SC_PAGESIZE);
    return aligned(page, (n + page - 1) & ~(page - 1));
}

/* -- Python's allocator domains ------------------------------------------------------- */
static PyMemAllocatorEx wrapped[3];

static void *py_malloc(void *ctx, size_t n) {
    PyMemAllocatorEx *a = ctx;
    int outer = !depth++;
    void *p = a->malloc(a->ctx, n);
    depth--;
    if (outer) on_alloc(1, p, n);
    return p;
}

static void *py_calloc(void *ctx, size_t n, size_t m) {
    PyMemAllocatorEx *a = ctx;
    int outer = !depth++;
    void *p = a->calloc(a->ctx, n, m);
    depth--;
    if (outer) on_alloc(1, p, n * m);
    return p;
}

static void *py_realloc(void *ctx, void *old, size_t n) {
    PyMemAllocatorEx *a = ctx;
    int outer = !depth++;
    void *p = a->realloc(a->ctx, old, n);
    depth--;
    if (outer && p) {
        if (old) on_free(1, old);
        on_alloc(1, p, n);
    }
    return p;
}

static void py_free(void *ctx, void *p) {
    PyMemAllocatorEx *a = ctx;
    int outer = !depth++;
    if (outer) on_free(1, p);
    a->free(a->ctx, p);
    depth--;
}

/* Wrap the raw, mem and object domains (call once, with the GIL held). */
int bk_install_python_hooks(void) {
    static const PyMemAllocatorDomain domains[3] = {
        PYMEM_DOMAIN_RAW, PYMEM_DOMAIN_MEM, PYMEM_DOMAIN_OBJ};
    for (int i = 0; i < 3; i++) {
        PyMem_GetAllocator(domains[i], &wrapped[i]);
        PyMemAllocatorEx hook = {&wrapped[i], py_malloc, py_calloc, py_realloc, py_free};
        PyMem_SetAllocator(domains[i], &hook);
    }
    return 0;
}

/* Zero the counts and start counting; live and peak start from 0 here. */
void bk_reset(void) {
    lock();
    memset(&counts, 0, sizeof counts);
    counting = 1;
    unlock();
}

void bk_read(bk_counts *out) {
    lock();
    *out = counts;
    unlock();
}

int bk_loaded(void) { return 1; }
