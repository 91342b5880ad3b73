/* Python's random.Random in C: MT19937 with CPython's integer seeding (init_by_array over
 * the 32-bit words of |seed|), and the methods reasoning_gym's generators use, each drawing
 * exactly the bits CPython 3.11 draws, so a C generator reproduces the package's items. */
#ifndef SAPO_TASKS_PYRANDOM_H
#define SAPO_TASKS_PYRANDOM_H

#include <stddef.h>
#include <stdint.h>

typedef struct {
    uint32_t mt[624];
    int index;
} PyRandom;

/* random.Random(seed) for an integer seed of any sign (Python uses |seed|). */
void pyrandom_seed(PyRandom* r, int64_t seed);
/* Seeds > 2^63: the magnitude as little-endian 32-bit words. */
void pyrandom_seed_words(PyRandom* r, const uint32_t* words, size_t n_words);

uint32_t pyrandom_u32(PyRandom* r);                 /* genrand_uint32 */
double pyrandom_random(PyRandom* r);                /* random() in [0, 1) */
uint64_t pyrandom_getrandbits(PyRandom* r, int k);  /* 0 <= k <= 64 */
uint64_t pyrandom_below(PyRandom* r, uint64_t n);   /* _randbelow(n), n >= 1 */
int64_t pyrandom_randrange(PyRandom* r, int64_t start, int64_t stop); /* step 1, start < stop */
int64_t pyrandom_randint(PyRandom* r, int64_t a, int64_t b);         /* a <= b, inclusive */
double pyrandom_uniform(PyRandom* r, double a, double b);
size_t pyrandom_choice_index(PyRandom* r, size_t n);                 /* index choice() picks */
/* shuffle(x) for an array of n elements of `size` bytes each. */
void pyrandom_shuffle(PyRandom* r, void* base, size_t n, size_t size);

#endif
