/* Helpers every task port shares: reasoning_gym's default scorer, code-point lengths, and
 * safe access to the fields of an entry object. */
#ifndef SAPO_TASKS_TASK_COMMON_H
#define SAPO_TASKS_TASK_COMMON_H

#include <cjson/cJSON.h>
#include <stddef.h>

/* Number of Unicode code points in a UTF-8 string, counted as Python's len(str) would for
 * valid UTF-8; each byte of an invalid sequence counts as one (as surrogateescape would). */
size_t utf8_codepoints(const char* s);

/* ProceduralDataset.score_answer's default: answer NULL or "" -> 0; answer == oracle -> 1;
 * oracle a substring of answer -> len(oracle)/len(answer) in code points; else 0.
 * The oracle may be NULL (None), which scores 0. */
double task_default_score(const char* answer, const char* oracle);

/* entry["answer"] as a string, or NULL when absent / null / not a string. */
const char* task_entry_answer(const cJSON* entry);
/* entry["question"] as a string, or NULL. */
const char* task_entry_question(const cJSON* entry);
/* entry["metadata"] as an object, or NULL. */
const cJSON* task_entry_metadata(const cJSON* entry);

#endif
