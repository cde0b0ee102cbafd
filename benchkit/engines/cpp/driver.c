/* Runs a C++ snippet's library (source.py) under valgrind: loads it and calls its
 * bk_callgrind_main. One driver serves every snippet, so a snippet compiles once, into the
 * library its wall-time measurements use too.
 *
 *   driver LIBRARY NUMBER REPEATS BASELINE THREADS LAYOUT
 */
#include <dlfcn.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

typedef int (*bk_main_fn)(int64_t, int, int, int, int);

int main(int argc, char **argv) {
    if (argc != 7) {
        fprintf(stderr, "usage: %s LIBRARY NUMBER REPEATS BASELINE THREADS LAYOUT\n", argv[0]);
        return 2;
    }
    void *library = dlopen(argv[1], RTLD_NOW | RTLD_GLOBAL);
    if (library == NULL) {
        fprintf(stderr, "benchkit driver: %s\n", dlerror());
        return 3;
    }
    bk_main_fn run = (bk_main_fn)dlsym(library, "bk_callgrind_main");
    if (run == NULL) {
        fprintf(stderr, "benchkit driver: %s was built without valgrind's callgrind.h\n",
                argv[1]);
        return 4;
    }
    return run(atoll(argv[2]), atoi(argv[3]), atoi(argv[4]), atoi(argv[5]), atoi(argv[6]));
}
