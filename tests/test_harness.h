/*
 * test_harness.h - the failure report and the EXPECT checks shared by the primitives' test programs
 * (test_select, test_sort, test_histogram, test_segscan, test_expand). Include it after the program's harness
 * type, which has `test_options opt` (test_common.h) and `unsigned long passed, failed, reports`, then write
 * TEST_HARNESS_CHECKS(harness) once. MAX_REPORTS (default 20) bounds the failures printed.
 */
#ifndef PSCAN_TEST_HARNESS_H
#define PSCAN_TEST_HARNESS_H

#include <inttypes.h>
#include <stdio.h>

#ifndef MAX_REPORTS
#define MAX_REPORTS 20
#endif

/* fail_report(h, what): counts a failure and prints it (the first MAX_REPORTS) with the backend, algorithm and
 * seed that rerun it; check(h, ok, file, line, what): counts a pass, or reports file:line: what. */
#define TEST_HARNESS_CHECKS(harness_type)                                                                    \
    static void fail_report(harness_type *h, const char *what) {                                             \
        h->failed++;                                                                                         \
        if (h->reports++ >= MAX_REPORTS) return;                                                             \
        fprintf(stderr, "FAIL: backend=%s algo=%s seed=%" PRIu64 ": %s\n", pscan_backend_name(h->opt.backend), \
                pscan_algo_name(h->opt.algo), h->opt.seed, what);                                            \
    }                                                                                                        \
    static void check(harness_type *h, int ok, const char *file, int line, const char *what) {               \
        if (ok) {                                                                                            \
            h->passed++;                                                                                     \
            return;                                                                                          \
        }                                                                                                    \
        char where[700];                                                                                     \
        snprintf(where, sizeof where, "%s:%d: %s", file, line, what);                                        \
        fail_report(h, where);                                                                               \
    }                                                                                                        \
    /* whether a case's call returned PSCAN_SUCCESS; else a failure report "desc: returned STATUS" */         \
    static inline int call_ok(harness_type *h, const char *desc, pscan_status s) {                           \
        if (s == PSCAN_SUCCESS) return 1;                                                                    \
        char what[600];                                                                                      \
        snprintf(what, sizeof what, "%s: returned %s", desc, pscan_status_name(s));                          \
        fail_report(h, what);                                                                                \
        return 0;                                                                                            \
    }

/* For harnesses with `pscan_context *ctx`, `void *d_temp` and `size_t d_temp_bytes`; write once after
 * TEST_HARNESS_CHECKS. case_temp(h, desc, query, s, need, &temp, &temp_bytes): the caller temp of a case whose
 * temp-bytes call (named query) returned s and need: one byte into d_temp (test_caller_temp); 0 after a failure
 * report (the query's status, or the allocation). */
#define TEST_HARNESS_TEMP(harness_type)                                                                      \
    static int case_temp(harness_type *h, const char *desc, const char *query, pscan_status s,               \
                         size_t need, void **temp, size_t *temp_bytes) {                              \
        char what[600];                                                                                      \
        if (s != PSCAN_SUCCESS) {                                                                            \
            snprintf(what, sizeof what, "%s: %s returned %s", desc, query, pscan_status_name(s));            \
            fail_report(h, what);                                                                            \
            return 0;                                                                                        \
        }                                                                                                    \
        if (!(*temp = test_caller_temp(h->ctx, &h->d_temp, &h->d_temp_bytes, need))) {                       \
            snprintf(what, sizeof what, "%s: temp allocation of %zu bytes failed", desc, need);              \
            fail_report(h, what);                                                                            \
            return 0;                                                                                        \
        }                                                                                                    \
        *temp_bytes = need;                                                                                  \
        return 1;                                                                                            \
    }

/* For harnesses with `pscan_context *ctx` (and test_types.h included); write once after TEST_HARNESS_CHECKS.
 * check_output(h, desc, label, d_buf, got, want, from, count, bytes, end_bytes): downloads the first end_bytes
 * bytes of d_buf into got; its items [from, from + count), of `bytes` each, must equal want's, and every other
 * byte must still hold TEST_POISON. 0 after a failure report. */
#define TEST_HARNESS_OUTPUTS(harness_type)                                                                   \
    static int check_output(harness_type *h, const char *desc, const char *label, const void *d_buf,         \
                            unsigned char *got, const unsigned char *want, size_t from, size_t count,        \
                            size_t bytes, size_t end_bytes) {                                                \
        char what[600];                                                                                      \
        if (pscan_memory_download(h->ctx, got, d_buf, end_bytes) != PSCAN_SUCCESS ||                         \
            pscan_context_synchronize(h->ctx) != PSCAN_SUCCESS) {                                            \
            fail_report(h, "download failed");                                                               \
            return 0;                                                                                        \
        }                                                                                                    \
        for (size_t i = from; i < from + count; i++)                                                         \
            if (memcmp(got + i * bytes, want + i * bytes, bytes) != 0) {                                     \
                snprintf(what, sizeof what, "%s: %s[%zu] = 0x%" PRIx64 ", expected 0x%" PRIx64, desc, label, \
                         i - from, load_raw(got, i, bytes), load_raw(want, i, bytes));                       \
                fail_report(h, what);                                                                        \
                return 0;                                                                                    \
            }                                                                                                \
        if (!test_poisoned(got, 0, from * bytes) || !test_poisoned(got, (from + count) * bytes, end_bytes)) { \
            snprintf(what, sizeof what, "%s: %s written outside [%zu, %zu)", desc, label, from, from + count);  \
            fail_report(h, what);                                                                            \
            return 0;                                                                                        \
        }                                                                                                    \
        return 1;                                                                                            \
    }

#define EXPECT_STATUS(h, expected, call)                                                                     \
    do {                                                                                                     \
        pscan_status got_ = (call);                                                                          \
        char what_[600];                                                                                     \
        snprintf(what_, sizeof what_, "%s returned %s, expected %s", #call, pscan_status_name(got_),         \
                 pscan_status_name(expected));                                                               \
        check((h), got_ == (expected), __FILE__, __LINE__, what_);                                           \
    } while (0)
#define EXPECT(h, cond) check((h), (cond) != 0, __FILE__, __LINE__, #cond)

#endif /* PSCAN_TEST_HARNESS_H */
