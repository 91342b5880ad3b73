/* The file toolbox (io/files.h): a whole file read (text, binary, empty, past its cap,
 * missing), dir/leaf joined, and a tree with subfolders and a link removed without the link
 * being followed. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "io/files.h"
#include "../test_assert.h"

static void put(const char* path, const void* data, size_t n) {
    FILE* f = fopen(path, "wb");
    EXPECT(f && fwrite(data, 1, n, f) == n && fclose(f) == 0, "write %s", path);
}

int main(void) {
    const char* base = getenv("TMPDIR");
    char dir[512], keep[512];
    snprintf(dir, sizeof dir, "%s/sapo_test_files.XXXXXX", base && *base ? base : "/tmp");
    snprintf(keep, sizeof keep, "%s/sapo_test_files_keep.XXXXXX", base && *base ? base : "/tmp");
    if (!mkdtemp(dir) || !mkdtemp(keep)) {
        printf("mkdtemp: %s\n", strerror(errno));
        return 1;
    }

    char* p = path_join(dir, "text.txt");
    EXPECT(strlen(p) == strlen(dir) + 9 && !strncmp(p, dir, strlen(dir)) && !strcmp(p + strlen(dir), "/text.txt"),
           "path_join: %s", p);
    put(p, "hello\nworld", 11);
    size_t len = 99;
    char* s = file_read_all(p, 0, &len);
    EXPECT(s && len == 11 && !strcmp(s, "hello\nworld"), "text read back: %zu", len);
    free(s);
    /* the cap: a file of max bytes or more is refused with EFBIG, a shorter one read */
    errno = 0;
    EXPECT(!file_read_all(p, 11, NULL) && errno == EFBIG, "11 bytes at max 11: refused (errno %d)", errno);
    s = file_read_all(p, 12, &len);
    EXPECT(s && len == 11, "11 bytes at max 12: read");
    free(s);
    free(p);

    /* binary, larger than the first buffer, '\0's inside, terminated after the end */
    size_t n = (1u << 17) + 3;
    unsigned char* big = malloc(n);
    for (size_t i = 0; i < n; i++) big[i] = (unsigned char)(i * 7);
    p = path_join(dir, "big.bin");
    put(p, big, n);
    s = file_read_all(p, 0, &len);
    EXPECT(s && len == n && !memcmp(s, big, n) && s[n] == '\0', "binary read back: %zu of %zu", len, n);
    free(s);
    free(big);
    free(p);

    p = path_join(dir, "empty");
    put(p, "", 0);
    s = file_read_all(p, 0, &len);
    EXPECT(s && len == 0 && s[0] == '\0', "empty file");
    free(s);
    free(p);

    p = path_join(dir, "absent");
    errno = 0;
    EXPECT(!file_read_all(p, 0, &len) && errno == ENOENT, "missing file: errno %d", errno);
    free(p);

    /* a tree: dir/a/b/c.txt, dir/a/empty/, and a link dir/a/out -> keep (not followed) */
    char path[1024];
    snprintf(path, sizeof path, "%s/a", dir);
    EXPECT(mkdir(path, 0755) == 0, "mkdir a");
    snprintf(path, sizeof path, "%s/a/b", dir);
    EXPECT(mkdir(path, 0755) == 0, "mkdir b");
    snprintf(path, sizeof path, "%s/a/empty", dir);
    EXPECT(mkdir(path, 0755) == 0, "mkdir empty");
    snprintf(path, sizeof path, "%s/a/b/c.txt", dir);
    put(path, "c", 1);
    char kept[600];
    snprintf(kept, sizeof kept, "%s/stays", keep);
    put(kept, "x", 1);
    snprintf(path, sizeof path, "%s/a/out", dir);
    EXPECT(symlink(keep, path) == 0, "symlink");
    EXPECT(remove_tree(dir) == 0, "remove_tree: %s", strerror(errno));
    EXPECT(access(dir, F_OK) != 0, "%s still exists", dir);
    EXPECT(access(kept, F_OK) == 0, "the link was followed: %s is gone", kept);
    errno = 0;
    EXPECT(remove_tree(dir) == -1 && errno == ENOENT, "removing it again: ENOENT");
    EXPECT(remove_tree(keep) == 0, "remove_tree %s", keep);
    return test_finish("test_files");
}
