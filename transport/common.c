/*
 * What all transports share: the "not supported" stubs for operations a
 * transport lacks, and the list of transports compiled in.
 */
#include "config.h"

#include <stdio.h>

#include "runtime/error.h"
#include "transport/transport.h"

static int unsupported(struct bmpi_tl *tl, const char *op)
{
    return bmpi_err_set(MPI_ERR_UNSUPPORTED_OPERATION, "transport %s has no %s operation",
                        tl->caps.name, op);
}

int bmpi_tl_unsupported_mem_reg(struct bmpi_tl *tl, void *addr, size_t len, void **memh)
{
    (void)addr, (void)len, (void)memh;
    return unsupported(tl, "mem_reg");
}

int bmpi_tl_unsupported_mem_dereg(struct bmpi_tl *tl, void *memh)
{
    (void)memh;
    return unsupported(tl, "mem_dereg");
}

int bmpi_tl_unsupported_rkey_pack(struct bmpi_tl *tl, void *memh, void *buf, size_t *len)
{
    (void)memh, (void)buf, (void)len;
    return unsupported(tl, "rkey_pack");
}

int bmpi_tl_unsupported_get(struct bmpi_tl *tl, int peer, void *local, void *local_memh, size_t len,
                            uint64_t remote_addr, const void *rkey, size_t rkey_len,
                            bmpi_tl_done_fn done, void *ctx)
{
    (void)peer, (void)local, (void)local_memh, (void)len, (void)remote_addr, (void)rkey;
    (void)rkey_len, (void)done, (void)ctx;
    return unsupported(tl, "get");
}

int bmpi_tl_unsupported_put(struct bmpi_tl *tl, int peer, const void *local, void *local_memh,
                            size_t len, uint64_t remote_addr, const void *rkey, size_t rkey_len,
                            bmpi_tl_done_fn done, void *ctx)
{
    (void)peer, (void)local, (void)local_memh, (void)len, (void)remote_addr, (void)rkey;
    (void)rkey_len, (void)done, (void)ctx;
    return unsupported(tl, "put");
}

bool bmpi_tl_unsupported_amo_native(struct bmpi_tl *tl, int peer, enum bmpi_tl_amo_op op,
                                    enum bmpi_tl_amo_type type, bool fetch)
{
    (void)tl, (void)peer, (void)op, (void)type, (void)fetch;
    return false;
}

int bmpi_tl_unsupported_amo(struct bmpi_tl *tl, int peer, const struct bmpi_tl_amo *amo,
                            bmpi_tl_done_fn done, void *ctx)
{
    (void)peer, (void)amo, (void)done, (void)ctx;
    return unsupported(tl, "amo");
}

int bmpi_tl_flush_done(struct bmpi_tl *tl, int peer, bmpi_tl_done_fn done, void *ctx)
{
    (void)tl, (void)peer;
    done(ctx, BMPI_OK);
    return BMPI_OK;
}

int bmpi_tl_unsupported_query_other_jobs(char *why, size_t why_len)
{
    snprintf(why, why_len, "reaches processes of its own job only");
    return MPI_ERR_UNSUPPORTED_OPERATION;
}

int bmpi_tl_unsupported_card(struct bmpi_tl *tl, void *buf, size_t *len)
{
    (void)buf, (void)len;
    return unsupported(tl, "card");
}

int bmpi_tl_unsupported_add_card(struct bmpi_tl *tl, int peer, uint64_t job, int job_rank, const void *card,
                                 size_t len, char *why, size_t why_len)
{
    (void)peer, (void)job, (void)job_rank, (void)card, (void)len;
    snprintf(why, why_len, "transport %s reaches processes of its own job only", tl->caps.name);
    return unsupported(tl, "add_card");
}

extern const struct bmpi_tl_ops bmpi_tl_self_ops;
extern const struct bmpi_tl_ops bmpi_tl_shm_ops;
#ifdef BMPI_HAVE_VERBS
extern const struct bmpi_tl_ops bmpi_tl_verbs_ops;
#endif
#ifdef BMPI_HAVE_OFI
extern const struct bmpi_tl_ops bmpi_tl_ofi_ops;
#endif

const struct bmpi_tl_component bmpi_tl_components[] = {
    {"self", &bmpi_tl_self_ops},
    {"shm", &bmpi_tl_shm_ops},
#ifdef BMPI_HAVE_VERBS
    {"verbs", &bmpi_tl_verbs_ops},
#endif
#ifdef BMPI_HAVE_OFI
    {"ofi", &bmpi_tl_ofi_ops},
#endif
};
const int bmpi_tl_ncomponents = (int)(sizeof(bmpi_tl_components) / sizeof(bmpi_tl_components[0]));
