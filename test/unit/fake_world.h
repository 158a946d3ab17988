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

#endif
