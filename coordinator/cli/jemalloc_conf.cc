// jemalloc's options for the coordinator, read by jemalloc at start (it looks this symbol up).
// A coordinator runs for weeks: with jemalloc's defaults the pages freed after a large read (a
// restart's replay, a report over 100,000 trials) stayed mapped, and its RSS doubled over a
// million reports with a live heap of half that (bench/coordinator/README.md, the soak).
// A background thread gives freed pages back after a second, off the report path.
// MALLOC_CONF in the environment still overrides these.
extern "C" {
extern const char* malloc_conf;
const char* malloc_conf = "background_thread:true,dirty_decay_ms:1000,muzzy_decay_ms:1000";
}
