/* Atomic small-file writes (see atomic_file.h). */
#include "io/atomic_file.h"

#include <cjson/cJSON.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/check.h"

static char* temp_path(const char* path) {
    size_t n = strlen(path) + 5;
    char* tmp = mallocCheck(n);
    snprintf(tmp, n, "%s.tmp", path);
    return tmp;
}

/* The directory that holds path: what precedes its last '/', or "." without one. */
static int open_parent_dir(const char* path) {
    const char* slash = strrchr(path, '/');
    if (!slash) return open(".", O_RDONLY | O_DIRECTORY);
    size_t n = slash == path ? 1 : (size_t)(slash - path);
    char* dir = mallocCheck(n + 1);
    memcpy(dir, path, n);
    dir[n] = 0;
    int fd = open(dir, O_RDONLY | O_DIRECTORY);
    free(dir);
    return fd;
}

int atomic_rename(const char* tmp, const char* path) {
    if (rename(tmp, path) != 0) return errno;
    /* The rename is an entry of the directory: durable only once the directory is synced.
     * EINVAL: a file system that cannot sync directories; nothing to wait for. */
    int fd = open_parent_dir(path), e = 0;
    if (fd < 0) return errno;
    if (fsync(fd) != 0 && errno != EINVAL) e = errno;
    close(fd);
    return e;
}

FILE* atomic_file_begin(const char* path, char* err, size_t errlen) {
    char* tmp = temp_path(path);
    FILE* f = fopen(tmp, "wb");
    if (!f) set_error(err, errlen, "cannot create %s: %s", tmp, strerror(errno));
    free(tmp);
    return f;
}

int atomic_file_commit(FILE* f, const char* path, char* err, size_t errlen) {
    char* tmp = temp_path(path);
    int e = 0;
    if (ferror(f)) e = errno ? errno : EIO; /* a write already failed (errno is still its reason) */
    if (fflush(f) != 0 && !e) e = errno;
    /* Durable before it is visible. EINVAL: the file cannot be synced (a device): nothing to wait for. */
    if (!e && fsync(fileno(f)) != 0 && errno != EINVAL) e = errno;
    if (fclose(f) != 0 && !e) e = errno;
    if (!e) e = atomic_rename(tmp, path);
    if (e) unlink(tmp); /* a no-op when the rename was done and the directory sync failed */
    free(tmp);
    return e ? set_error(err, errlen, "cannot write %s: %s", path, strerror(e)) : 0;
}

void atomic_file_abort(FILE* f, const char* path) {
    char* tmp = temp_path(path);
    fclose(f);
    unlink(tmp);
    free(tmp);
}

int atomic_file_write(const char* path, const char* text, char* err, size_t errlen) {
    FILE* f = atomic_file_begin(path, err, errlen);
    if (!f) return -1;
    fputs(text, f);
    return atomic_file_commit(f, path, err, errlen);
}

int atomic_file_write_json(const char* path, const cJSON* root, char* err, size_t errlen) {
    char* text = cJSON_Print(root);
    if (!text) {
        snprintf(err, errlen, "cannot write %s: out of memory", path);
        return -1;
    }
    FILE* f = atomic_file_begin(path, err, errlen);
    if (f) fprintf(f, "%s\n", text);
    cJSON_free(text);
    return f ? atomic_file_commit(f, path, err, errlen) : -1;
}
