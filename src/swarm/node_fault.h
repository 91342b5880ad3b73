/* Faults a node injects on purpose, for tests and experiments: net.fault (a lying or
 * corrupting sender) and net.slowdown with clock = wall (a straggler that really sleeps).
 * The round calls these at the points where a real faulty node would misbehave. */
#ifndef SAPO_SWARM_NODE_FAULT_H
#define SAPO_SWARM_NODE_FAULT_H

#include <stddef.h>
#include <stdint.h>

#include "core/config_enums.h" /* NodeFault: net.fault, read by config_node_enum */
#include "swarm/net/message.h"

/* lie: a false ground truth; lie_logprobs: every shipped byte claimed nearly impossible.
 * Acts on a group about to be encoded (its log-prob arrays are written in place). */
void node_fault_corrupt_group(NodeFault f, RolloutGroup* g);
/* garbage: random bytes from the (seed, rank, round, RNG_NETEM) stream; truncate: half the
 * length. Acts on an encoded message. */
void node_fault_corrupt_bytes(NodeFault f, uint64_t seed, int rank, int round, uint8_t* buf, size_t* len);
/* A straggler (slowdown > 1) with the wall clock sleeps (slowdown - 1) x work seconds,
 * work being the round's seconds so far without its waits for peers. */
void node_fault_straggle(double slowdown, int wall_clock, double work);

#endif
