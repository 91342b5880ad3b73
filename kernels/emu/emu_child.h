/* The emulation's error tests (test_cuda_check_emu, test_cuda_emu_checks) run each case in a
 * child process, since an error ends the process: run_child runs body with one environment
 * variable set (or unset) and returns its exit status, its stderr and what body wrote into
 * out. */
#ifndef SAPO_KERNELS_EMU_EMU_CHILD_H
#define SAPO_KERNELS_EMU_EMU_CHILD_H

#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>

typedef struct {
    int status;      /* exit status, or -1 when killed */
    char err[2048];  /* what it wrote to stderr */
    char out[256];   /* what the body wrote into it */
} Child;

/* Runs body in a child with the environment variable name = value (value NULL: unset). */
static Child run_child(const char* name, const char* value, void (*body)(char* out)) {
    Child c;
    memset(&c, 0, sizeof c);
    int errp[2], outp[2];
    if (pipe(errp) || pipe(outp)) abort();
    fflush(stdout);
    pid_t pid = fork();
    if (pid == 0) {
        close(errp[0]);
        close(outp[0]);
        dup2(errp[1], 2);
        if (value) setenv(name, value, 1);
        else unsetenv(name);
        char out[256] = "";
        body(out);
        if (write(outp[1], out, strlen(out)) < 0) _exit(3);
        _exit(0);
    }
    close(errp[1]);
    close(outp[1]);
    size_t n = 0;
    ssize_t r;
    while (n < sizeof c.err - 1 && (r = read(errp[0], c.err + n, sizeof c.err - 1 - n)) > 0) n += (size_t)r;
    n = 0;
    while (n < sizeof c.out - 1 && (r = read(outp[0], c.out + n, sizeof c.out - 1 - n)) > 0) n += (size_t)r;
    close(errp[0]);
    close(outp[0]);
    int st;
    waitpid(pid, &st, 0);
    c.status = WIFEXITED(st) ? WEXITSTATUS(st) : -1;
    return c;
}

#endif
