/* Helpers every task port shares: reasoning_gym's default scorer, code-point lengths, and
 * safe access to the fields of an entry object. */
#ifndef SAPO_TASKS_TASK_COMMON_H
#define SAPO_TASKS_TASK_COMMON_H

#include <cjson/cJSON.h>
#include <stddef.h>

/* Number of Unicode code points in s[0..len), counted as Python's len(str) would for valid
 * UTF-8; each byte of an invalid sequence counts as one (as surrogateescape would). */
size_t utf8_codepoints(const char* s, size_t len);

/* First occurrence of needle[0..m) in s[0..n), or NULL (also for m == 0). */
const char* task_find_bytes(const char* s, size_t n, const char* needle, size_t m);

/* ProceduralDataset.score_answer's default: answer NULL or "" -> 0; answer == oracle -> 1;
 * oracle a substring of answer (code point for code point) -> len(oracle)/len(answer) in
 * code points; else 0. The oracle may be NULL (None), which scores 0. */
double task_default_score(const char* answer, size_t answer_len, const char* oracle, size_t oracle_len);

/* The same against entry["answer"]: the TaskSpec.score of every task that keeps the
 * package's default score_answer. */
double task_default_score_answer(const char* answer, size_t len, const cJSON* entry);

/* entry["answer"] as a string, or NULL when absent / null / not a string; *len (may be
 * NULL) receives its byte length, U+0000 included (pyjson_string). */
const char* task_entry_answer(const cJSON* entry, size_t* len);
/* entry["question"] as a string, or NULL; *len as for task_entry_answer. */
const char* task_entry_question(const cJSON* entry, size_t* len);
/* entry["metadata"] as an object, or NULL. */
const cJSON* task_entry_metadata(const cJSON* entry);

#endif
