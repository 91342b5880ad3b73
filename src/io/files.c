/* The file toolbox (see files.h). */
#include "io/files.h"

#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/check.h"

char* file_read_all(const char* path, size_t max, size_t* len) {
    FILE* f = fopen(path, "rb");
    if (!f) return NULL;
    size_t cap = 1 << 16, n = 0;
    if (max && cap > max) cap = max;
    char* buf = mallocCheck(cap + 1);
    for (;;) {
        if (n == cap) {
            if (max && cap >= max) {
                free(buf);
                fclose(f);
                errno = EFBIG;
                return NULL;
            }
            cap *= 2;
            if (max && cap > max) cap = max;
            char* grown = realloc(buf, cap + 1);
            if (!grown) sapo_die("out of memory reading %s", path);
            buf = grown;
        }
        size_t got = fread(buf + n, 1, cap - n, f);
        n += got;
        if (!got) break;
    }
    int bad = ferror(f);
    fclose(f);
    if (bad) {
        free(buf);
        errno = EIO;
        return NULL;
    }
    buf[n] = '\0';
    if (len) *len = n;
    return buf;
}

char* path_join(const char* dir, const char* leaf) {
    size_t n = strlen(dir) + strlen(leaf) + 2;
    char* s = mallocCheck(n);
    snprintf(s, n, "%s/%s", dir, leaf);
    return s;
}

int remove_tree(const char* path) {
    struct stat st;
    if (lstat(path, &st) != 0) return -1;
    int first = 0;
    if (S_ISDIR(st.st_mode)) {
        DIR* d = opendir(path);
        if (!d) return -1;
        struct dirent* e;
        while ((e = readdir(d))) {
            if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, "..")) continue;
            char* child = path_join(path, e->d_name);
            if (remove_tree(child) != 0 && !first) first = errno;
            free(child);
        }
        closedir(d);
    }
    if (remove(path) != 0 && !first) first = errno;
    if (first) errno = first;
    return first ? -1 : 0;
}
