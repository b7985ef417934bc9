// Sanitizer defaults, linked into every executable that links oplab_lib when OPLAB_SANITIZE=ON
// (cli/CMakeLists.txt; README, "Sanitizers"). Built in rather than set in the environment, so
// they hold wherever the executables run: under ctest, in gtest's test discovery at build time,
// for the `oplab` children the tests start, and by hand. ASAN_OPTIONS, UBSAN_OPTIONS and
// LSAN_OPTIONS in the environment still override them.

extern "C" {

// The fuzz harness evaluates cases in forked children and reports a crash by its signal
// (fuzz/isolate.h; tests/test_fuzz_properties.cpp crashes one on purpose): with ASan's SEGV
// handler the child prints a report and exits 1 instead, too late for the 0.5 s hang timeout.
// A real SIGSEGV/SIGBUS still ends the test, as a signal, without ASan's stack trace.
//
// intercept_tls_get_addr=0: the runtime stops tracking dynamic TLS (the blocks of dlopen'd
// libraries' thread-locals). With it on, after an OpenCL test (pocl dlopens LLVM, whose
// thread-locals live there) LeakSanitizer's end-of-run scan read a block recorded as
// [0x40b, 0x4000150d) and its tracer died ("Tracer caught signal 11 ... LeakSanitizer has
// encountered a fatal error"), failing a passing test. Leak checking stays on; dynamic TLS is
// just no longer a root, which can only add reports (a pointer held only there), never hide one.
__attribute__((visibility("default"), used)) const char* __asan_default_options() {
  return "handle_segv=0:handle_sigbus=0:intercept_tls_get_addr=0";
}

// UBSan is fatal (-fno-sanitize-recover=undefined); say where it stopped.
__attribute__((visibility("default"), used)) const char* __ubsan_default_options() {
  return "print_stacktrace=1";
}

// Leaks LeakSanitizer reports that are not oplab's (one per line, `leak:<frame substring>`).
__attribute__((visibility("default"), used)) const char* __lsan_default_suppressions() {
  return "";
}

}  // extern "C"
