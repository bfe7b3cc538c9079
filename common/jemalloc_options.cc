// jemalloc's options for the binaries that link it (TOLLGATE_JEMALLOC, CMakeLists.txt). jemalloc
// reads `malloc_conf` once, at its start-up; MALLOC_CONF in the environment is read after it and
// wins, so an operator can change or undo any of these without rebuilding.
//
// tcache_gc_incr_bytes: how many bytes a thread allocates between two steps of its thread
// cache's garbage collection (64 KiB by default). A step trims one size class's cache of what
// went unused since that class's last step and makes its next refill from the arena smaller. A
// scheduling cycle allocates in bursts (statuses, assignments, texts, a topology placement's
// names), so with steps inside the bursts the cycle refills its size classes a few objects at a
// time, each refill through the allocator's slow path. 16 MiB is more than a cycle admitting a
// thousand heads allocates: in engine_bench's such cycle the slow path costs half what it does
// at 1 MiB, and topology_bench's backlog takes a fifth of the slow paths it takes at 64 KiB
// (docs/performance.md, section 9.14). The cache's size limits (tcache_max, tcache_nslots_*) are
// unchanged: only how soon unused objects return to the arena.
extern "C" {
const char* malloc_conf = "tcache_gc_incr_bytes:16777216";
}
