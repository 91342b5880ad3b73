/* Python's json.loads(line.decode("utf-8")) over one line of bytes, into a cJSON tree, so
 * that `sapo tasks score` accepts exactly the lines Python does and hands the verifiers the
 * same strings. cJSON's own parser is laxer (raw invalid UTF-8, control characters in
 * strings, "01", vertical tab as space) and cuts a string at an escaped U+0000.
 *
 * The rules (CPython 3.11's json module, strict=True):
 *   - the line must be valid UTF-8 (bytes.decode() with errors="strict");
 *   - whitespace is " \t\n\r" only; literals null, true, false, NaN, Infinity, -Infinity;
 *   - numbers -?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][-+]?[0-9]+)? in ASCII digits; an integer
 *     of more than 4300 digits is refused (Python's int() limit); values are doubles;
 *   - strings: no raw character below U+0020; escapes \" \\ \/ \b \f \n \r \t \uXXXX, a
 *     \uD800-\uDBFF escape followed by a \uDC00-\uDFFF one is one code point;
 *   - the last of duplicate keys wins (its value, at the first one's place);
 *   - at most PYJSON_MAX_DEPTH nested arrays and objects.
 * Where a C string cannot hold what Python's str does:
 *   - U+0000 inside a string is kept: the text is NUL-terminated at its full length and
 *     pyjson_string() returns that length;
 *   - a key holding U+0000 drops its member (no lookup of ours can name it, nor can
 *     any of the package's: the verifiers read fixed keys);
 *   - a lone surrogate \uDC80-\uDCFF is the byte 0x80-0xFF it stands for under Python's
 *     surrogateescape, which the verifiers read back as that very code point
 *     (pyunicode.h); a run of them that would read as UTF-8 text ("\udcc3\udca9" is the
 *     bytes of "é"), and any other lone surrogate, make the line an error. */
#ifndef SAPO_TASKS_PYJSON_H
#define SAPO_TASKS_PYJSON_H

#include <cjson/cJSON.h>
#include <stddef.h>

/* json.loads raises RecursionError at 996 nested arrays or objects when called from a
 * script's top level (deeper callers hit it sooner). */
#define PYJSON_MAX_DEPTH 995

/* The value on text[0..len) (no terminator needed), or NULL with a one-line reason in err:
 * "not valid UTF-8 (...)", "not valid JSON (...)", "text after the JSON value at column N"
 * or "... lone surrogate ...". Columns count bytes from 1. Free with cJSON_Delete. */
cJSON* pyjson_parse(const char* text, size_t len, char* err, size_t errlen);

/* A string node's text and byte length (U+0000 included, for nodes pyjson_parse made; any
 * other string node reads up to its first NUL), or NULL when item is not a string. len
 * may be NULL. */
const char* pyjson_string(const cJSON* item, size_t* len);

#endif
