/* The file toolbox: a whole file read into memory, dir/leaf joined, a tree removed. The one
 * definition of each; callers word their own errors (errno says why a call failed). */
#ifndef SAPO_IO_FILES_H
#define SAPO_IO_FILES_H

#include <stddef.h>

/* The whole of path, read to its end, as a heap buffer with a '\0' after the last byte (so a
 * text file is a C string; the buffer may hold other '\0's). *len (when len is not NULL)
 * gets the byte count. max > 0 caps the size: a file of max bytes or more is refused.
 * NULL on failure with errno set: fopen's errno when it cannot be opened, EFBIG when it
 * reaches max, EIO on a read error. Runs out of memory fatally. */
char* file_read_all(const char* path, size_t max, size_t* len);
/* dir/leaf as a heap string. */
char* path_join(const char* dir, const char* leaf);
/* Removes path and, when it is a directory, everything under it (links are removed, never
 * followed). 0, or -1 with errno from the first thing that could not be removed (the rest
 * is still tried); a path that does not exist is -1 with ENOENT. */
int remove_tree(const char* path);

#endif
