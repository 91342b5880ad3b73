/* core/mem_usage.c: the private memory counts a buffer once it is written (not when it is
 * only allocated), and the peak keeps a buffer that was freed between two samples. */
#include <stdlib.h>
#include <string.h>

#include "../test_assert.h"
#include "core/mem_usage.h"

#define MB (1024.0 * 1024.0)

int main(void) {
    mem_private_sample();
    double before = mem_private_now(), peak0 = mem_private_peak();
    if (before <= 0) { /* Linux always has it: its absence is a failure, never a skip */
        EXPECT(0, "no /proc/self/status here: private memory cannot be measured");
        return test_finish("test_mem_usage");
    }
    EXPECT(peak0 >= before, "the first sample's peak %.1f MB is under the private memory %.1f MB", peak0 / MB,
           before / MB);
    size_t n = 64u << 20;
    volatile char* buf = malloc(n);
    EXPECT(mem_private_now() < before + 8 * MB, "an allocation never written counts %.1f MB",
           (mem_private_now() - before) / MB);
    memset((char*)buf, 1, n);
    EXPECT(mem_private_now() > before + 60 * MB, "64 MB written count %.1f MB", (mem_private_now() - before) / MB);
    free((char*)buf);
    /* freed before any sample: the high-water mark less file and shared pages still has it */
    mem_private_sample();
    EXPECT(mem_private_peak() > before + 60 * MB, "the peak %.1f MB lost the freed 64 MB (private before %.1f MB)",
           mem_private_peak() / MB, before / MB);
    return test_finish("test_mem_usage");
}
