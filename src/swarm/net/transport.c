/* The transport table and its one chooser (see transport.h). Each entry adapts one
 * exchange (exchange_allgather.c, nccl_allgather.cu, exchange_p2p.c) to the table. */
#include "swarm/net/transport.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/check.h"
#include "swarm/net/exchange_p2p.h"
#ifdef SAPO_HAVE_NCCL
#include "swarm/net/nccl_allgather.h"
#endif

/* ---- all-gather over MPI ---- */

typedef struct {
    MPI_Comm comm;
} AllgatherMpi;

static void* allgather_mpi_create(MPI_Comm comm, const Netem* ne, int rank, TransportNcclOpen nccl_open, char* why,
                                  size_t whylen) {
    (void)ne, (void)rank, (void)nccl_open, (void)why, (void)whylen;
    AllgatherMpi* a = callocCheck(1, sizeof *a);
    a->comm = comm;
    return a;
}

/* Every peer gets the message: n - 1 sends of len bytes, none dropped or late. */
static void allgather_stats(MPI_Comm comm, size_t len, ExchangeStats* st) {
    int size;
    mpiCheck(MPI_Comm_size(comm, &size));
    *st = (ExchangeStats){.sent = size - 1, .bytes_sent = (double)len * (size - 1)};
}

static void allgather_mpi_exchange(void* state, int round, const uint8_t* buf, size_t len, Inbox* inbox,
                                   ExchangeStats* st) {
    (void)round;
    AllgatherMpi* a = state;
    exchange_allgather(a->comm, buf, len, inbox);
    allgather_stats(a->comm, len, st);
}

static const TransportOps ALLGATHER_MPI = {
    .name = "allgather-mpi", .create = allgather_mpi_create, .exchange = allgather_mpi_exchange, .free = free};

/* ---- all-gather over NCCL ---- */

#ifdef SAPO_HAVE_NCCL
typedef struct {
    MPI_Comm comm;
    NcclExchange* x;
} AllgatherNccl;

static void* allgather_nccl_create(MPI_Comm comm, const Netem* ne, int rank, TransportNcclOpen nccl_open, char* why,
                                   size_t whylen) {
    (void)ne, (void)rank;
    if (!nccl_open) return NULL; /* why keeps "this build has no NCCL" */
    NcclExchange* x = nccl_open(comm, why, whylen); /* every rank on a GPU of its own */
    if (!x) return NULL;
    AllgatherNccl* a = callocCheck(1, sizeof *a);
    a->comm = comm;
    a->x = x;
    return a;
}

static void allgather_nccl_exchange(void* state, int round, const uint8_t* buf, size_t len, Inbox* inbox,
                                    ExchangeStats* st) {
    (void)round;
    AllgatherNccl* a = state;
    exchange_allgather_nccl(a->x, a->comm, buf, len, inbox);
    allgather_stats(a->comm, len, st);
}

static void allgather_nccl_free(void* state) {
    AllgatherNccl* a = state;
    if (a) nccl_exchange_free(a->x);
    free(a);
}

static const TransportOps ALLGATHER_NCCL = {.name = "allgather-nccl",
                                            .create = allgather_nccl_create,
                                            .exchange = allgather_nccl_exchange,
                                            .free = allgather_nccl_free};
#endif

/* ---- point to point over MPI, through netem ---- */

static void* p2p_state_create(MPI_Comm comm, const Netem* ne, int rank, TransportNcclOpen nccl_open, char* why,
                              size_t whylen) {
    (void)nccl_open, (void)why, (void)whylen;
    return p2p_create(comm, ne, rank);
}

static void p2p_state_exchange(void* state, int round, const uint8_t* buf, size_t len, Inbox* inbox,
                               ExchangeStats* st) {
    P2PSendStats ss = p2p_send(state, round, buf, len);
    *st = (ExchangeStats){.sent = ss.sent, .dropped = ss.dropped, .bytes_sent = ss.bytes_sent};
    p2p_receive(state, round, inbox, &st->late, &st->offline);
}

static void p2p_state_finish(void* state, int end_round) { p2p_drain(state, end_round); }
static int p2p_state_save(void* state, int round, FILE* f) { return p2p_save_in_flight(state, round, f); }
static int p2p_state_load(void* state, int round, FILE* f) { return p2p_load_in_flight(state, round, f); }
static void p2p_state_free(void* state) { p2p_free(state); }

static const TransportOps P2P_MPI = {.name = "p2p",
                                     .create = p2p_state_create,
                                     .exchange = p2p_state_exchange,
                                     .finish = p2p_state_finish,
                                     .save_in_flight = p2p_state_save,
                                     .load_in_flight = p2p_state_load,
                                     .free = p2p_state_free};

/* ---- the chooser and the calls through the table ---- */

static Transport* transport_from(const TransportOps* ops, void* state) {
    Transport* t = callocCheck(1, sizeof *t);
    t->ops = ops;
    t->state = state;
    return t;
}

Transport* transport_select(NetTransport transport, MPI_Comm comm, const Netem* ne, int rank,
                            TransportNcclOpen nccl_open, char* info, size_t infolen) {
    char why[160] = "this build has no NCCL";
    if (transport == NET_TRANSPORT_P2P) {
        snprintf(info, infolen, "p2p over MPI");
        return transport_from(&P2P_MPI, P2P_MPI.create(comm, ne, rank, nccl_open, why, sizeof why));
    }
#ifdef SAPO_HAVE_NCCL
    void* nccl = ALLGATHER_NCCL.create(comm, ne, rank, nccl_open, why, sizeof why);
    if (nccl) {
        snprintf(info, infolen, "all-gather over NCCL (%s)", why);
        return transport_from(&ALLGATHER_NCCL, nccl);
    }
#endif
    snprintf(info, infolen, "all-gather over MPI (%s)", why);
    return transport_from(&ALLGATHER_MPI, ALLGATHER_MPI.create(comm, ne, rank, nccl_open, why, sizeof why));
}

void transport_exchange(Transport* t, int round, const uint8_t* buf, size_t len, Inbox* inbox, ExchangeStats* st) {
    t->ops->exchange(t->state, round, buf, len, inbox, st);
}

void transport_finish(Transport* t, int end_round) {
    if (t->ops->finish) t->ops->finish(t->state, end_round);
}

int transport_save_in_flight(Transport* t, int round, FILE* f) {
    return t->ops->save_in_flight ? t->ops->save_in_flight(t->state, round, f) : 0;
}

int transport_load_in_flight(Transport* t, int round, FILE* f) {
    return t->ops->load_in_flight ? t->ops->load_in_flight(t->state, round, f) : 0;
}

P2P* transport_p2p(Transport* t) { return t->ops == &P2P_MPI ? t->state : NULL; }

void transport_free(Transport* t) {
    if (!t) return;
    t->ops->free(t->state);
    free(t);
}
