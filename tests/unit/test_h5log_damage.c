/* A log whose chunk index a full disk left damaged (here: one byte of an extensible-array
 * header flipped, so its checksum fails) is refused by h5log_open_append at once, with a
 * line naming the dataset. Without that check the next append, in SWMR mode, re-reads the
 * block with doubling sleeps for good: the alarm below turns such a stall into a failure. */
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "io/h5log.h"
#include "../test_assert.h"

static const H5LogColumn COLUMNS[2] = {{"loss", H5LOG_F64, 0, NULL, NULL}, {"tokens", H5LOG_I64, 0, NULL, NULL}};

static void stalled(int sig) {
    (void)sig;
    static const char msg[] = "FAIL: a damaged log stalled h5log for 20 s\n";
    if (write(1, msg, sizeof msg - 1) < 0) _exit(2);
    _exit(1);
}

/* Flips one byte of the first extensible-array header ("EAHD") of the file; 0 when found. */
static int damage_chunk_index(const char* path) {
    FILE* f = fopen(path, "r+b");
    if (!f) return -1;
    static unsigned char buf[1 << 20];
    size_t n = fread(buf, 1, sizeof buf, f);
    int rc = -1;
    for (size_t i = 0; i + 8 < n; i++)
        if (!memcmp(buf + i, "EAHD", 4)) {
            buf[i + 6] ^= 0xFF; /* inside the header, so its checksum no longer matches */
            rc = fseek(f, (long)(i + 6), SEEK_SET) || fwrite(buf + i + 6, 1, 1, f) != 1 ? -1 : 0;
            break;
        }
    fclose(f);
    return rc;
}

int main(void) {
    h5log_library_init();
    signal(SIGALRM, stalled);
    alarm(20);
    char dir[] = "/tmp/sapo_h5log_damage_XXXXXX", path[64], err[1024] = "";
    if (!mkdtemp(dir)) return 1;
    snprintf(path, sizeof path, "%s/node_0000.h5", dir);
    H5Log* log = h5log_create(path, COLUMNS, 2, err, sizeof err);
    EXPECT(log != NULL, "create: %s", err);
    for (int64_t r = 0; log && r < 3; r++) {
        H5LogValue v[2] = {{.f = (double)r}, {.i = r}};
        EXPECT(h5log_append(log, r, v, err, sizeof err) == 0, "append %lld: %s", (long long)r, err);
    }
    h5log_close(log);
    EXPECT(damage_chunk_index(path) == 0, "no extensible-array header found in %s", path);
    int64_t last = -1;
    log = h5log_open_append(path, COLUMNS, 2, INT64_MAX, &last, err, sizeof err);
    EXPECT(log == NULL, "a log with a damaged chunk index was reopened");
    if (log) { /* what the damage would do: the next append stalls (the alarm ends it) */
        H5LogValue v[2] = {{.f = 3.0}, {.i = 3}};
        h5log_append(log, 3, v, err, sizeof err);
        h5log_close(log);
    } else {
        EXPECT_MSG(err, "is damaged");
        EXPECT_MSG(err, path);
        printf("damaged log -> %s\n", err);
    }
    unlink(path);
    rmdir(dir);
    return test_finish("test_h5log_damage");
}
