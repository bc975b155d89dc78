/* fatal.c -- fatal run-time errors, at the bottom of the runtime's layers.
 *
 * Any module stops the program with cll_fatal_: the message goes to stderr and the program
 * exits with status 70. Writing the trace measured so far is the job of lifecycle.c, at the
 * top: it hands its writer to cll_on_fatal_ at start-up, so no lower module calls up.
 */
#include "cll_internal.h"
#include <stdio.h>
#include <stdlib.h>

static void (*on_fatal)(const char *status);

void cll_on_fatal_(void (*handler)(const char *status)) { on_fatal = handler; }

void cll_fatal_(const char *msg, const char *status)
{
    fprintf(stderr, "%s\n", msg);
    if (on_fatal)
        on_fatal(status);
    exit(CLL_EXIT_ERROR);
}
