/*
 * Context ids and the construction of communicators.
 *
 * Every communicator owns a pair of context ids: an even id for its
 * point-to-point traffic and id + 1 for its collectives. Each process keeps
 * a bitmap of the pairs it is not using; creating a communicator ANDs the
 * bitmaps of all members (a reduce-then-broadcast over the parent's
 * collective context, internal point-to-point only, negative reserved tags)
 * and takes the lowest pair free everywhere. Freeing a communicator returns
 * its pair. So ids never collide among the members of any live
 * communicator, however many are created and freed, and communicators split
 * concurrently from different parents get different ids wherever they
 * share a process.
 *
 * MPI_Comm_idup agrees without blocking (bmpi_ctx_agree_nb): pairs it
 * offers are held for it until its round ends, see context.c.
 *
 * Pairs 0 and 1 (ids 0..3) are MPI_COMM_WORLD's and MPI_COMM_SELF's.
 */
#ifndef BMPI_RUNTIME_CONTEXT_H
#define BMPI_RUNTIME_CONTEXT_H

#include <stdbool.h>
#include <stdint.h>
#include <mpi.h>

#include "runtime/comm.h"
#include "runtime/group.h"

/* Live communicators per process; the bitmap travels in every agreement. */
#define BMPI_CTX_SLOTS 4096
#define BMPI_CTX_WORDS (BMPI_CTX_SLOTS / 64)

/* Reserved internal tags on a communicator's collective context. The
 * collectives use 0..INT_MAX, the API never lets users on this context. */
#define BMPI_TAG_CTX_UP    (-100)
#define BMPI_TAG_CTX_DOWN  (-101)
#define BMPI_TAG_DGRAPH    (-102) /* and -103 */
/* MPI_Comm_create_group: the user's tag folded into [INT_MIN, -1000) */
#define BMPI_TAG_CGROUP_BASE (-1000)
/* Nonblocking agreements: three tags each, by sequence number on the
 * communicator, below those of MPI_Comm_create_from_group. */
#define BMPI_TAG_NB_BASE (-1700000000)
#define BMPI_TAG_NB_SPAN (1u << 26)

/*
 * The agreement every creation runs. Over the n members of a (sub)set of
 * parent's processes (members[i]: parent rank of member i; NULL: all of
 * parent, in rank order), me being member index `me`: each member brings k
 * ints in vals[me*k .. me*k+k) and receives everybody's in vals[0 .. n*k);
 * when want_id, all get the same fresh context id in *id (reserved here).
 * Collective over the members; tags up/down on parent's collective context.
 */
int bmpi_ctx_agree(struct bmpi_comm *parent, const int *members, int n, int me, int up_tag,
                   int down_tag, int *vals, int k, int want_id, uint32_t *id);

/* The same over all of parent, but the k ints in vals[0 .. k) are added
 * element by element across the members (every member gets the sums): a
 * fresh context id plus an allreduce(SUM) in one tree round. */
int bmpi_ctx_agree_sum(struct bmpi_comm *parent, int *vals, int k, uint32_t *id);

/* A fresh context id for a communicator built over all of parent's
 * processes (dup, create, topologies): collective over parent, often
 * without any message (ids agreed ahead in batches, see context.c). */
int bmpi_ctx_new(struct bmpi_comm *parent, uint32_t *id);

/* Agreement across the two groups of an intercommunicator (runtime/
 * intercomm.c): this process's free pairs, and the reservation of the
 * lowest pair free both in mask (the AND over every process involved) and
 * here. Every process given the same mask reserves the same id. */
void bmpi_ctx_free_mask(uint64_t mask[BMPI_CTX_WORDS]);
int bmpi_ctx_reserve_lowest(const uint64_t mask[BMPI_CTX_WORDS], uint32_t *id);

/*
 * MPI_Comm_idup's agreement, nonblocking: fresh context ids free on every
 * process of comm (of both groups of an intercommunicator: two ids then,
 * for it and its hidden local communicator). Progress drives it; done(arg,
 * err, ids) runs once, from inside progress (or this call). Collective
 * over comm, in the order of comm's other creations; any number may be in
 * flight, on any communicators, in any order across them.
 */
int bmpi_ctx_agree_nb(struct bmpi_comm *comm, void (*done)(void *arg, int err, const uint32_t *ids), void *arg);
/* Called by bmpi_progress(): advances the agreements in flight. */
int bmpi_ctx_progress(void);
/* An id agreed ahead for creations over parent, if one is left (no message). */
bool bmpi_ctx_take_cached(struct bmpi_comm *parent, uint32_t *id);

/* Give a context id pair back (communicator freed, or never created). */
void bmpi_ctx_release(uint32_t id);

/*
 * Creating communicators (runtime/comm_api.c). A member gets a new
 * communicator on group g with context id `id` that inherits parent's error
 * handler; g == NULL gives *out = NULL (not a member). The id is released
 * on failure.
 */
int bmpi_comm_build(struct bmpi_comm *parent, struct bmpi_group *g, uint32_t id,
                    struct bmpi_comm **out);
/* The intercommunicator between local's group and the processes of
 * remote[] (peer indices), with context id `id` agreed by both groups
 * (released on failure) and local's error handler; collective over local
 * (its hidden local communicator gets an id of its own). */
int bmpi_intercomm_build(struct bmpi_comm *local, const int *remote, int nremote, uint32_t id,
                         struct bmpi_comm **out);
/* MPI_Comm_dup of an intercommunicator (runtime/intercomm.c): the same two
 * groups with a context id agreed by both. */
int bmpi_intercomm_dup(struct bmpi_comm *inter, struct bmpi_comm **out);
/* ... with the ids bmpi_ctx_agree_nb agreed: ids[0] its own, ids[1] its
 * hidden local communicator's (both released on failure). */
int bmpi_intercomm_dup_ids(struct bmpi_comm *inter, const uint32_t ids[2], struct bmpi_comm **out);
/* MPI_Comm_split's algorithm, for MPI_Cart_sub and friends: *out NULL for
 * MPI_UNDEFINED. */
int bmpi_comm_split_internal(struct bmpi_comm *parent, int color, int key, struct bmpi_comm **out);
/* The members of one colour of a split in their new order: vals holds
 * (colour, key) of parent ranks 0 .. n-1; the parent ranks of colour go to
 * ranks[], sorted by key, then by parent rank. Returns how many, -1 when
 * out of memory. */
int bmpi_split_members(const int *vals, int n, int color, int *ranks);
/* MPI_Comm_split of an intercommunicator (runtime/intercomm.c): the
 * intercommunicator between the processes of each colour in both groups;
 * *out NULL for MPI_UNDEFINED or a colour with no member in the other group. */
int bmpi_intercomm_split(struct bmpi_comm *inter, int color, int key, struct bmpi_comm **out);

/* Everything of a communicator that comm_api/attr/topo/info own: delete
 * callbacks of the attributes, topology, info, context id. Called by
 * bmpi_comm_release just before the object goes. */
void bmpi_comm_teardown(struct bmpi_comm *c);

#endif
