/* This process's private memory from /proc/self/status (see mem_usage.h). */
#include "core/mem_usage.h"

#include <stdio.h>
#include <string.h>

static double peak_private_bytes;

/* The kB fields of /proc/self/status that the estimate needs, in bytes (0 when absent). */
typedef struct {
    double anon, file, shmem, hwm;
} ProcStatus;

static ProcStatus proc_status(void) {
    ProcStatus s = {0};
    FILE* f = fopen("/proc/self/status", "r");
    if (!f) return s;
    char line[256];
    double kb;
    while (fgets(line, sizeof line, f)) {
        if (sscanf(line, "RssAnon: %lf", &kb) == 1) s.anon = kb * 1024.0;
        else if (sscanf(line, "RssFile: %lf", &kb) == 1) s.file = kb * 1024.0;
        else if (sscanf(line, "RssShmem: %lf", &kb) == 1) s.shmem = kb * 1024.0;
        else if (sscanf(line, "VmHWM: %lf", &kb) == 1) s.hwm = kb * 1024.0;
    }
    fclose(f);
    return s;
}

double mem_private_now(void) { return proc_status().anon; }

void mem_private_sample(void) {
    ProcStatus s = proc_status();
    double high_water = s.hwm - s.file - s.shmem;
    if (s.anon > peak_private_bytes) peak_private_bytes = s.anon;
    if (high_water > peak_private_bytes) peak_private_bytes = high_water;
}

double mem_private_peak(void) { return peak_private_bytes; }
