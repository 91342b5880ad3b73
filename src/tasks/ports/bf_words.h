/* The word list of reasoning_gym's bf task (difficulty 1 prints one of these words). */
#ifndef SAPO_TASKS_BF_WORDS_H
#define SAPO_TASKS_BF_WORDS_H

extern const int BF_WORD_COUNT; /* 2315 */
extern const char BF_WORDS[];   /* word i = BF_WORDS[5*i .. 5*i+4] */

#endif
