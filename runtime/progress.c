#include "config.h"

#include <sched.h>
#include <time.h>

#include "collectives/coll.h"
#include "runtime/p2p.h"
#include "runtime/progress.h"
#include "runtime/tl_select.h"
#include "runtime/world.h"

/* Idle rounds before a waiting rank yields the core, and before it naps. */
#define SPIN_ROUNDS 2000u
#define YIELD_ROUNDS 20000u

int bmpi_progress(void)
{
    return bmpi_tl_progress() + bmpi_p2p_progress() + bmpi_coll_progress();
}

void bmpi_progress_idle(unsigned *idle_rounds)
{
    unsigned n = ++*idle_rounds;
    if (!bmpi_world.oversubscribed && n < SPIN_ROUNDS)
        return;
    if (n < YIELD_ROUNDS || !bmpi_world.oversubscribed) {
        sched_yield();
        return;
    }
    /* Long idle on a crowded node: a short nap lets the rank we wait for run. */
    struct timespec nap = {0, 20000};
    nanosleep(&nap, NULL);
}

void bmpi_progress_wait(volatile bool *flag)
{
    unsigned idle = 0;
    while (!*flag) {
        if (bmpi_progress())
            idle = 0;
        else
            bmpi_progress_idle(&idle);
    }
}
