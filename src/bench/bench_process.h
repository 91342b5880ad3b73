/* What the benchmarks ask of their own process and its surroundings: the path of this sapo
 * binary, the Python that runs their PyTorch side, and a field of /proc/self/status (peak
 * and current resident memory). */
#ifndef SAPO_BENCH_BENCH_PROCESS_H
#define SAPO_BENCH_BENCH_PROCESS_H

/* This binary's path (/proc/self/exe); dies when it cannot be read. */
const char* bench_self_path(void);

/* The Python of the PyTorch sides: $SAPO_PYTHON when set, else the venv next to this binary
 * (BUILD/venv/bin/python, what scripts/install-deps.sh makes), else /usr/bin/python3. */
const char* bench_python(void);

/* A field of /proc/self/status in kB (VmHWM, VmRSS), or -1. */
long bench_status_kb(const char* field);

#endif
