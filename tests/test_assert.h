/* Assertions for the C test programs: EXPECT records a failure with file, line and a
 * message and keeps going; test_finish prints the verdict and gives the exit status. */
#ifndef SAPO_TESTS_TEST_ASSERT_H
#define SAPO_TESTS_TEST_ASSERT_H

#include <stdio.h>
#include <string.h>

static int test_failures = 0;

#define EXPECT(cond, ...)                                         \
    do {                                                          \
        if (!(cond)) {                                            \
            printf("FAIL %s:%d: ", __FILE__, __LINE__);           \
            printf(__VA_ARGS__);                                  \
            printf("\n");                                         \
            test_failures++;                                      \
        }                                                         \
    } while (0)

/* The error message err must contain every fragment given. */
#define EXPECT_MSG(err, fragment) \
    EXPECT(strstr((err), (fragment)) != NULL, "message \"%s\" lacks \"%s\"", (err), (fragment))

static inline int test_finish(const char* name) {
    if (test_failures) {
        printf("%s: %d failures\n", name, test_failures);
        return 1;
    }
    printf("%s: all checks passed\n", name);
    return 0;
}

#endif
