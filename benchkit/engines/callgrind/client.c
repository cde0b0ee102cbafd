/* Callgrind client requests for benchkit's child process, loaded with ctypes.
 * Outside valgrind every request is a no-op costing a few instructions. */
#include <valgrind/callgrind.h>

int bk_running_on_valgrind(void) { return RUNNING_ON_VALGRIND; }
void bk_start_instrumentation(void) { CALLGRIND_START_INSTRUMENTATION; }
void bk_stop_instrumentation(void) { CALLGRIND_STOP_INSTRUMENTATION; }
void bk_zero_stats(void) { CALLGRIND_ZERO_STATS; }
/* Returns a double so it can stand in for the loop's clock: toggling collection on
 * and off exactly where the timer would be read. */
double bk_toggle_collect(void) { CALLGRIND_TOGGLE_COLLECT; return 0.0; }
void bk_dump_stats_at(const char *name) { CALLGRIND_DUMP_STATS_AT(name); }
