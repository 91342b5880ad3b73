/* This process's private memory as the kernel counts it, sampled where a rank's memory peaks
 * and kept as a running maximum (sapo run reports it per node in summary.json beside
 * node_memory_estimate). Private means anonymous pages (heap, malloc's mmaps, stacks): shared
 * library text and the page cache, which every rank of a host shares, are left out. */
#ifndef SAPO_CORE_MEM_USAGE_H
#define SAPO_CORE_MEM_USAGE_H

/* The private bytes now: RssAnon of /proc/self/status; 0 where there is no /proc. */
double mem_private_now(void);
/* Reads the private bytes now and raises the running peak; also raises it to the high-water
 * mark of the resident set less its file and shared-memory pages (VmHWM - RssFile -
 * RssShmem), so a buffer allocated and freed between two samples still counts. */
void mem_private_sample(void);
/* The largest private bytes mem_private_sample has seen (0 before the first sample). */
double mem_private_peak(void);

#endif
