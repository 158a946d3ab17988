/*
 * The summary of the stubs, from the generated table (api_status.h).
 */
#include "config.h"

#include <stdio.h>
#include <string.h>

#include "runtime/api_status.h"

const char *bmpi_api_chapter_name(const struct bmpi_api_chapter *ch)
{
    const char *dot = strstr(ch->title, ". ");
    return dot ? dot + 2 : ch->title;
}

size_t bmpi_api_missing(char *buf, size_t len)
{
    size_t n = strnlen(buf, len);
    const char *sep = "; stubs (MPI_ERR_UNSUPPORTED_OPERATION): ";
    for (const struct bmpi_api_chapter *ch = bmpi_api_chapters; ch->title; ch++) {
        if (!ch->nstubs)
            continue;
        /* snprintf into the rest, or nowhere once the buffer is full */
        size_t room = n < len ? len - n : 0;
        n += (size_t)snprintf(room ? buf + n : NULL, room, "%s%s %d/%d", sep,
                              bmpi_api_chapter_name(ch), ch->nstubs, ch->declared);
        sep = ", ";
    }
    return n;
}
