#include "config.h"

#include <sched.h>
#include <time.h>

#include "collectives/coll.h"
#include "io/io.h"
#include "runtime/context.h"
#include "runtime/p2p.h"
#include "runtime/progress.h"
#include "runtime/tl_select.h"
#include "runtime/win.h"
#include "runtime/world.h"

/* A rank that should have a core to itself spins, yielding every few
 * dozen idle rounds: when the scheduler puts the rank it waits for on the
 * same core (other load on the node, a launcher or cpuset confining the
 * job to fewer cores than ranks), that rank runs after a yield instead of
 * after the spinner's time slice (docs/architecture.md, "Progress"). On
 * an oversubscribed node a waiting rank yields at once, and after a long
 * idle stretch naps, so the rank it waits for gets the CPU. */
#define DEDICATED_YIELD_EVERY 64u
#define OVERSUBSCRIBED_NAP_AFTER 20000u

int bmpi_progress(void)
{
    return bmpi_tl_progress() + bmpi_p2p_progress() + bmpi_coll_progress() + bmpi_ctx_progress() +
           bmpi_rma_progress() + bmpi_io_progress();
}

void bmpi_progress_missed(int events)
{
    if (!events && bmpi_world.oversubscribed)
        sched_yield();
}

int bmpi_progress_poll(void)
{
    int events = bmpi_progress();
    bmpi_progress_missed(events);
    return events;
}

void bmpi_progress_idle(unsigned *idle_rounds)
{
    unsigned n = ++*idle_rounds;
    if (!bmpi_world.oversubscribed) {
        if (n % DEDICATED_YIELD_EVERY == 0)
            sched_yield();
        return;
    }
    if (n < OVERSUBSCRIBED_NAP_AFTER) {
        sched_yield();
        return;
    }
    struct timespec nap = {0, 20000};
    nanosleep(&nap, NULL);
}

/* Poll only the transports up to this many times in a row while they
 * report nothing: what completes a wait arrives through them, and every
 * trip through the runtime's own queues in between delays seeing it. */
#define TL_POLLS_PER_PASS 16

void bmpi_progress_wait(volatile bool *flag)
{
    unsigned idle = 0;
    while (!*flag) {
        int events = 0;
        for (int k = 0; k < TL_POLLS_PER_PASS && !events; k++)
            events = bmpi_tl_progress();
        events += bmpi_p2p_progress() + bmpi_coll_progress() + bmpi_ctx_progress() + bmpi_rma_progress() +
                  bmpi_io_progress();
        if (events)
            idle = 0;
        else
            bmpi_progress_idle(&idle);
    }
}
