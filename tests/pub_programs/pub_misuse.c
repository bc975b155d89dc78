/* Misuse of a `parallel PUB` program under call (tests/test_pub_trace.py): argument
 * "nobegin" never calls bsp_begin; "open" ends the sync experiment inside a partition. */
#include "pub.h"
#include <string.h>

#pragma cll parallel PUB machine

int main(int argc, char **argv)
{
    t_bsp machine, sub;
    int begin = argc < 2 || strcmp(argv[1], "nobegin") != 0, Y[1] = {0};
    if (begin) {
        bsp_begin(&machine, &argc, &argv);
        Y[0] = bsp_nprocs(&machine);
    }
    #pragma cll sync f f[0]
    if (begin)
        bsp_partition(&machine, &sub, 1, Y);
    #pragma cll end f
    if (begin)
        bsp_done(&sub);
    #pragma cll report all
    if (begin)
        bsp_end(&machine);
    return 0;
}
