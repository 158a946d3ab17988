/*
 * Handle tables: MPI handles are ints laid out as in the MPICH ABI
 * (bits 30-31 kind, bits 26-29 object type, low 26 bits index). Predefined
 * objects have kind "builtin" (01); objects created at run time get kind
 * "direct" (10) and an index into a growable table of pointers with a free
 * list.
 */
#ifndef BMPI_RUNTIME_HANDLE_H
#define BMPI_RUNTIME_HANDLE_H

#include <stdint.h>

#define BMPI_HANDLE_KIND_MASK    0xc0000000u
#define BMPI_HANDLE_KIND_BUILTIN 0x40000000u
#define BMPI_HANDLE_KIND_DIRECT  0x80000000u
#define BMPI_HANDLE_TYPE_MASK    0x3c000000u
#define BMPI_HANDLE_INDEX_MASK   0x03ffffffu

/* object types, as MPICH numbers them */
#define BMPI_OBJ_COMM       0x04000000u
#define BMPI_OBJ_GROUP      0x08000000u
#define BMPI_OBJ_DATATYPE   0x0c000000u
#define BMPI_OBJ_ERRHANDLER 0x14000000u
#define BMPI_OBJ_OP         0x18000000u
#define BMPI_OBJ_INFO       0x1c000000u
#define BMPI_OBJ_WIN        0x20000000u
#define BMPI_OBJ_KEYVAL     0x24000000u
#define BMPI_OBJ_REQUEST    0x2c000000u

struct bmpi_handle_table {
    uint32_t type; /* BMPI_OBJ_* */
    void **objs;
    int cap;
    int *free_idx;
    int nfree;
    int used; /* high-water mark of indices */
};

/* Store obj and return its new handle, or 0 when out of memory. */
int bmpi_handle_new(struct bmpi_handle_table *t, void *obj);
void bmpi_handle_release(struct bmpi_handle_table *t, int handle);
/* Free the table itself (objects are the owner's business). */
void bmpi_handle_table_free(struct bmpi_handle_table *t);

/* The object behind a direct handle of this table, or NULL. Inline: every
 * MPI call with an object looks its handle up. */
static inline void *bmpi_handle_get(const struct bmpi_handle_table *t, int handle)
{
    uint32_t h = (uint32_t)handle;
    if ((h & (BMPI_HANDLE_KIND_MASK | BMPI_HANDLE_TYPE_MASK)) != (BMPI_HANDLE_KIND_DIRECT | t->type))
        return NULL;
    uint32_t idx = h & BMPI_HANDLE_INDEX_MASK;
    if (idx >= (uint32_t)t->used)
        return NULL;
    return t->objs[idx];
}

static inline int bmpi_handle_is_builtin(int h, uint32_t type)
{
    return ((uint32_t)h & (BMPI_HANDLE_KIND_MASK | BMPI_HANDLE_TYPE_MASK)) ==
           (BMPI_HANDLE_KIND_BUILTIN | type);
}

#endif
