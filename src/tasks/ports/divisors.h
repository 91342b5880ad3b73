/* All divisors of an integer below 2^127, in ascending order. basic_arithmetic picks a
 * divisor by index from lists that reasoning_gym builds with a trial loop up to sqrt(n)
 * (its find_common_divisors) or over a range; those loops take Python minutes when the
 * gcd nears 10^19, so the port factors n instead (trial division, Miller-Rabin, Pollard-
 * Brent rho in Montgomery arithmetic) and rebuilds the same list in the same order. */
#ifndef SAPO_TASKS_DIVISORS_H
#define SAPO_TASKS_DIVISORS_H

#include <stddef.h>

/* Largest n accepted: the Montgomery reduction needs n < 2^127. */
#define DIVISORS_MAX_BITS 127

/* The divisors of n (1 <= n < 2^127) ascending, in a heap array (*out, *count).
 * Returns 0, or -1 when n is out of range. */
int divisors_all(unsigned __int128 n, unsigned __int128** out, size_t* count);

/* Deterministic for n < 3.3e24 (Miller-Rabin with the primes up to 41 as bases); beyond
 * that 24 prime bases, with no known composite passing them. */
int divisors_is_prime(unsigned __int128 n);

#endif
