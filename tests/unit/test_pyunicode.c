/* Python str semantics helpers (src/tasks/pyunicode): int() acceptance and values, strip()
 * over Unicode whitespace, decimal digits of other scripts, and UTF-8 decoding of invalid
 * bytes. The expected values are CPython 3.11's (int("..."), "...".strip()). */
#include <stdio.h>
#include <string.h>

#include "tasks/pyemu/pyunicode.h"

static int failures = 0;

static void expect_int(const char* s, int ok, long long value) {
    PyInt v;
    int rc = pyu_parse_int(s, strlen(s), &v);
    int good = ok ? (rc == 0 && !v.big && v.value == value) : rc != 0;
    if (!good) {
        failures++;
        fprintf(stderr, "int(\"%s\"): expected %s %lld, got rc %d value %lld big %d\n", s, ok ? "ok" : "error", value,
                rc, (long long)v.value, v.big);
    }
}

static void expect_strip(const char* s, const char* want) {
    size_t b, e;
    pyu_strip(s, strlen(s), &b, &e);
    if (e - b != strlen(want) || memcmp(s + b, want, e - b)) {
        failures++;
        fprintf(stderr, "strip(\"%s\"): expected \"%s\", got \"%.*s\"\n", s, want, (int)(e - b), s + b);
    }
}

int main(void) {
    expect_int("0", 1, 0);
    expect_int("-0", 1, 0);
    expect_int("+17", 1, 17);
    expect_int("  42\n", 1, 42);
    expect_int("007", 1, 7);
    expect_int("1_000", 1, 1000);
    expect_int("1__0", 0, 0);
    expect_int("_1", 0, 0);
    expect_int("1_", 0, 0);
    expect_int("- 1", 0, 0);
    expect_int("1.0", 0, 0);
    expect_int("", 0, 0);
    expect_int(" ", 0, 0);
    expect_int("0x10", 0, 0);
    expect_int("\xD9\xA3", 1, 3);                 /* ARABIC-INDIC DIGIT THREE */
    expect_int("\xEF\xBC\x91\xEF\xBC\x92", 1, 12); /* FULLWIDTH 1 2 */
    expect_int("\xC2\xA0" "5\xE3\x80\x80", 1, 5);  /* NBSP 5 IDEOGRAPHIC SPACE */
    expect_int("\x1c" "5", 0, 0);                   /* \x1c is str whitespace but not int()'s */
    expect_int("5\xC2\xB2", 0, 0);                  /* superscript two is a digit, not decimal */
    expect_int("9223372036854775807", 1, 9223372036854775807LL);
    expect_int("-9223372036854775808", 1, (-9223372036854775807LL - 1));
    expect_int("\xFF" "1", 0, 0);
    PyInt v;
    if (pyu_parse_int("99999999999999999999", 20, &v) || !v.big) failures++, fprintf(stderr, "big int not flagged\n");
    char many[4400];
    memset(many, '1', 4300);
    many[4300] = '\0';
    if (pyu_parse_int(many, 4300, &v) || !v.big) failures++, fprintf(stderr, "4300 digits must parse\n");
    memset(many, '1', 4301);
    many[4301] = '\0';
    if (!pyu_parse_int(many, 4301, &v)) failures++, fprintf(stderr, "4301 digits must fail\n");
    if (!pyu_parse_int("5\0" "1", 3, &v)) failures++, fprintf(stderr, "embedded NUL must fail\n");

    expect_strip("  a b \t\n", "a b");
    expect_strip("\xE2\x80\x83x\xC2\x85", "x");
    expect_strip("\x1f" "x" "\x1c", "x");
    expect_strip(" \xE2\x80\x8B ", "\xE2\x80\x8B"); /* ZERO WIDTH SPACE is not whitespace */
    expect_strip("   ", "");
    expect_strip("", "");

    if (pyu_decimal(0x0660) != 0 || pyu_decimal(0x0669) != 9 || pyu_decimal(0x066A) != -1 ||
        pyu_decimal(0x1D7FF) != 9 || pyu_decimal(0x1FBF9) != 9 || pyu_decimal('a') != -1) {
        failures++;
        fprintf(stderr, "pyu_decimal table wrong\n");
    }
    size_t i = 0;
    if (pyu_next("\xC0\x80", 2, &i) != 0xDCC0 || i != 1) failures++, fprintf(stderr, "overlong UTF-8 accepted\n");
    i = 0;
    if (pyu_next("\xE2\x82", 2, &i) != 0xDCE2 || i != 1) failures++, fprintf(stderr, "truncated UTF-8 accepted\n");
    if (failures) return 1;
    printf("test_pyunicode: ok\n");
    return 0;
}
