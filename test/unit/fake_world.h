/*
 * The runtime pieces a unit test of transport sources needs when it does
 * not link the runtime: bmpi_world, filled by the test, and an error
 * recorder whose last reason the test reads in err_reason. Include it in
 * exactly one file of the test program.
 */
#ifndef BMPI_TEST_UNIT_FAKE_WORLD_H
#define BMPI_TEST_UNIT_FAKE_WORLD_H

#include <stdarg.h>
#include <stdio.h>

#include "runtime/error.h"
#include "runtime/world.h"

struct bmpi_world bmpi_world;
static char err_reason[1024];

int bmpi_err_set(int errclass, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err_reason, sizeof err_reason, fmt, ap);
    va_end(ap);
    return errclass;
}

const char *bmpi_err_reason(void) { return err_reason; }

/* transport/common.c's stubs for transports that cannot reach other jobs
 * or do atomics, and its flush for transports whose done means remote
 * completion (its list of transports would bring every one in). */
int bmpi_tl_unsupported_query_other_jobs(char *why, size_t why_len)
{
    snprintf(why, why_len, "reaches processes of its own job only");
    return MPI_ERR_UNSUPPORTED_OPERATION;
}

int bmpi_tl_unsupported_card(struct bmpi_tl *tl, void *buf, size_t *len)
{
    (void)tl, (void)buf, (void)len;
    return bmpi_err_set(MPI_ERR_UNSUPPORTED_OPERATION, "no card operation");
}

int bmpi_tl_flush_done(struct bmpi_tl *tl, int peer, bmpi_tl_done_fn done, void *ctx)
{
    (void)tl, (void)peer;
    done(ctx, BMPI_OK);
    return BMPI_OK;
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
    (void)tl, (void)peer, (void)amo, (void)done, (void)ctx;
    return bmpi_err_set(MPI_ERR_UNSUPPORTED_OPERATION, "no amo operation");
}

int bmpi_tl_unsupported_add_card(struct bmpi_tl *tl, int peer, uint64_t job, int job_rank, const void *card,
                                 size_t len, char *why, size_t why_len)
{
    (void)tl, (void)peer, (void)job, (void)job_rank, (void)card, (void)len;
    snprintf(why, why_len, "reaches processes of its own job only");
    return MPI_ERR_UNSUPPORTED_OPERATION;
}

#endif
