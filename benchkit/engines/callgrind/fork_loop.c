/* The collector server's fork loop (see server.py), loaded with ctypes.
 *
 * The server calls bk_fork_loop once, after its imports, and the parent never returns to
 * Python until it is told to quit: requests are read, children forked, reaped and reported
 * here, in C, with no heap allocation. So no Python object (nor malloc chunk) is allocated,
 * freed or moved between one fork and the next, and every child starts from the very same
 * memory, whichever jobs were served before it and however many run beside it.
 *
 * Requests: fixed-size records "run PARALLEL LAST JOBFILE" (space-padded to BK_RECORD bytes)
 * or "quit". Replies, one line each: {"job": ..., "pid": ..., "started": 1} per child forked
 * (so the parent can time each job and kill one that hangs), {"job": ..., "pid": ...,
 * "status": ...} per finished child (status as os.waitstatus_to_exitcode gives it), then
 * {"finished": true} after the record with LAST = 1.
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#define BK_RECORD 128
#define BK_MAX_RUNNING 256

/* The one definition of the record size: the server and the collector ask for it. */
int bk_record_size(void) { return BK_RECORD; }

static pid_t running_pid[BK_MAX_RUNNING];
static char running_job[BK_MAX_RUNNING][BK_RECORD];
static int n_running;

static int read_record(int fd, char *record) {
    size_t got = 0;
    while (got < BK_RECORD) {
        ssize_t n = read(fd, record + got, BK_RECORD - got);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            return 0;
        got += (size_t)n;
    }
    return 1;
}

static void write_line(int fd, const char *line) {
    size_t len = strlen(line), done = 0;
    while (done < len) {
        ssize_t n = write(fd, line + done, len - done);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            return;
        done += (size_t)n;
    }
}

static void report(int fd, const char *job, pid_t pid, int status) {
    char line[BK_RECORD + 96];
    snprintf(line, sizeof line, "{\"job\": \"%s\", \"pid\": %d, \"status\": %d}\n",
             job, (int)pid, status);
    write_line(fd, line);
}

static void report_started(int fd, const char *job, pid_t pid) {
    char line[BK_RECORD + 96];
    snprintf(line, sizeof line, "{\"job\": \"%s\", \"pid\": %d, \"started\": 1}\n",
             job, (int)pid);
    write_line(fd, line);
}

/* Wait for one child of ours to end and report it. */
static void reap_one(int out_fd) {
    int status, i;
    pid_t pid;
    do
        pid = waitpid(-1, &status, 0);
    while (pid < 0 && errno == EINTR);
    if (pid < 0) {  /* no child left: nothing to wait for */
        n_running = 0;
        return;
    }
    for (i = 0; i < n_running; i++) {
        if (running_pid[i] != pid)
            continue;
        report(out_fd, running_job[i], pid,
               WIFEXITED(status) ? WEXITSTATUS(status) : -WTERMSIG(status));
        n_running--;
        running_pid[i] = running_pid[n_running];
        memcpy(running_job[i], running_job[n_running], BK_RECORD);
        return;
    }
}

/* Serve requests from in_fd until "quit" or its end (returns 0), or a malformed record
 * (returns -1). In a forked child, returns 1 with the job file's name in `job`. */
int bk_fork_loop(int in_fd, int out_fd, char *job, int job_size) {
    char record[BK_RECORD + 1], name[BK_RECORD];
    int parallel, last;
    pid_t server = getpid(), pid;
    for (;;) {
        if (!read_record(in_fd, record))
            return 0;
        record[BK_RECORD] = '\0';
        if (strncmp(record, "quit", 4) == 0)
            return 0;
        if (sscanf(record, "run %d %d %127s", &parallel, &last, name) != 3)
            return -1;
        if (parallel < 1)
            parallel = 1;
        if (parallel > BK_MAX_RUNNING)
            parallel = BK_MAX_RUNNING;
        pid = fork();
        if (pid == 0) {
            prctl(PR_SET_PDEATHSIG, SIGKILL);  /* die with the server */
            if (getppid() != server)
                _exit(9);
            snprintf(job, (size_t)job_size, "%s", name);
            return 1;
        }
        if (pid < 0) {
            report(out_fd, name, 0, 255);
        } else {
            running_pid[n_running] = pid;
            memcpy(running_job[n_running], name, BK_RECORD);
            n_running++;
            report_started(out_fd, name, pid);
        }
        if (last) {
            while (n_running > 0)
                reap_one(out_fd);
            write_line(out_fd, "{\"finished\": true}\n");
        } else {
            while (n_running >= parallel)
                reap_one(out_fd);
        }
    }
}
