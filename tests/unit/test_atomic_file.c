/* Atomic files (io/atomic_file.h) are durable: the file is fsync'ed before the rename and
 * its directory after it, so neither the content nor the rename itself is lost on a power
 * cut. This test stands in for fsync (the executable's definition wins over libc's, for
 * the library's calls too), records what was synced in which order, then syncs for real. */
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "io/atomic_file.h"
#include "../test_assert.h"

static int synced_files, synced_dirs, dir_before_file;
static char target[4096];

int fsync(int fd) {
    struct stat st;
    if (fstat(fd, &st) == 0) {
        if (S_ISDIR(st.st_mode)) {
            synced_dirs++;
            if (!synced_files) dir_before_file = 1;
            /* the directory is synced after the rename: the new name is there */
            EXPECT(access(target, F_OK) == 0, "directory synced before %s was renamed into place", target);
        } else if (S_ISREG(st.st_mode)) {
            synced_files++;
        }
    }
    return (int)syscall(SYS_fsync, fd);
}

int main(void) {
    char dir[] = "/tmp/atomic_file.XXXXXX";
    EXPECT(mkdtemp(dir) != NULL, "mkdtemp");
    snprintf(target, sizeof target, "%s/DONE", dir);
    char err[256] = "";
    EXPECT(atomic_file_write(target, "done\n", err, sizeof err) == 0, "atomic_file_write: %s", err);
    EXPECT(synced_files == 1, "file synced %d times, want 1", synced_files);
    EXPECT(synced_dirs == 1, "directory synced %d times, want 1 (after the rename)", synced_dirs);
    EXPECT(!dir_before_file, "directory synced before the file's content");
    FILE* f = fopen(target, "r");
    char line[16] = "";
    EXPECT(f && fgets(line, sizeof line, f) && strcmp(line, "done\n") == 0, "content: \"%s\"", line);
    if (f) fclose(f);
    char tmp[4200];
    snprintf(tmp, sizeof tmp, "%s.tmp", target);
    EXPECT(access(tmp, F_OK) != 0, "%s left behind", tmp);

    /* a bare file name: its directory is the working directory */
    synced_dirs = synced_files = 0;
    EXPECT(chdir(dir) == 0, "chdir %s", dir);
    snprintf(target, sizeof target, "LATEST");
    EXPECT(atomic_file_write("LATEST", "3\n", err, sizeof err) == 0, "atomic_file_write LATEST: %s", err);
    EXPECT(synced_dirs == 1, "bare name: directory synced %d times, want 1", synced_dirs);

    /* a failed rename (the target's directory is gone) fails the commit and leaves no .tmp */
    synced_dirs = 0;
    FILE* g = atomic_file_begin("LATEST", err, sizeof err);
    EXPECT(g != NULL, "atomic_file_begin: %s", err);
    fputs("4\n", g);
    EXPECT(rename("LATEST", "kept") == 0 && mkdir("LATEST", 0700) == 0 && mkdir("LATEST/x", 0700) == 0,
           "set-up: a non-empty directory named LATEST");
    EXPECT(atomic_file_commit(g, "LATEST", err, sizeof err) != 0, "rename over a non-empty directory succeeded");
    EXPECT(strstr(err, "cannot write LATEST") != NULL, "error: %s", err);
    EXPECT(access("LATEST.tmp", F_OK) != 0, "LATEST.tmp left behind after a failed rename");
    EXPECT(synced_dirs == 0, "directory synced after a failed rename");
    rmdir("LATEST/x");
    rmdir("LATEST");
    unlink("kept");
    unlink(target);
    snprintf(tmp, sizeof tmp, "%s/DONE", dir);
    unlink(tmp);
    EXPECT(chdir("/") == 0 && rmdir(dir) == 0, "cleanup %s", dir);
    return test_finish("atomic file");
}
