/*
 * host_scan.cu - pscan_scan_host on CUDA: a scan of host memory larger than the GPU, piece by piece.
 *
 * Idea. The array is cut into pieces of C bytes (pscan_context_set_host_chunk_bytes, 64 MiB by default), taken
 * in scan order (from the end for a reverse scan). Piece k goes through device buffer k mod 3 in three steps,
 * each on its own stream, so that piece k uploads while piece k-1 scans and piece k-2 downloads:
 *
 *   upload stream    [up k  ][up k+1][up k+2]            waits: buffer k mod 3 downloaded (piece k-3)
 *   context stream           [scan k][scan k+1]          waits: piece k uploaded; previous scan (same stream)
 *   download stream                  [down k][down k+1]  waits: piece k scanned
 *
 * The carry never visits the host: piece k's scan reads its initial value from a device slot that piece k-1's
 * scan wrote (ps_request.init_device / total_out: the last tile of the single-pass scan writes init (+) the
 * whole piece; two slots alternate, since the scans are ordered on one stream). So the host only enqueues, and
 * the link stays busy in both directions: every byte crosses it twice, and the scan itself (2C bytes of device
 * traffic per piece) hides behind the copies.
 *
 * Pinned user buffers (cudaMallocHost, cudaHostRegister, managed) are copied from and to directly. Pageable ones
 * are staged through three pinned buffers of C bytes the context keeps (allocated on first use, freed with the
 * context): the host thread copies piece k in while the GPU works on the pieces before it, and copies piece k-3
 * out once its download has finished; the host's copies (split over several threads) are then the limit.
 *
 * Work O(n); host-device traffic 2n bytes (the floor); device memory 3C plus the scan's temp for one piece.
 * Depth: n / C pieces through a 3-stage pipeline. Limits: those of the device scan per piece (C at most 2^31 - 1
 * tiles), none on n beyond the 2^48-byte range of the core.
 */
#include <pthread.h>
#include <stdint.h>
#include <string.h>
#include <unistd.h>

#include "cuda_backend.h"

#define PS_HOST_BUFFERS 3
#define PS_HOST_ALIGN ((size_t)256)

/* How a host pointer's memory can be copied: straight (pinned or managed), through staging, or not at all. */
typedef enum host_kind { HOST_PAGEABLE, HOST_DIRECT, HOST_DEVICE } host_kind;

static host_kind kind_of_byte(const void *p) {
    cudaPointerAttributes a;
    if (cudaPointerGetAttributes(&a, p) != cudaSuccess) {
        cudaGetLastError(); /* older runtimes fail on unregistered memory: that is pageable */
        return HOST_PAGEABLE;
    }
    switch (a.type) {
    case cudaMemoryTypeHost:
    case cudaMemoryTypeManaged:
        return HOST_DIRECT;
    case cudaMemoryTypeDevice:
        return HOST_DEVICE;
    default:
        return HOST_PAGEABLE;
    }
}

/* A range is direct only if both ends are (a pinned block that ends inside the range is staged instead). */
static host_kind kind_of(const void *p, uint64_t bytes) {
    const host_kind first = kind_of_byte(p), last = kind_of_byte((const char *)p + bytes - 1);
    if (first == HOST_DEVICE || last == HOST_DEVICE) return HOST_DEVICE;
    return first == HOST_DIRECT && last == HOST_DIRECT ? HOST_DIRECT : HOST_PAGEABLE;
}

/* The streams and events of one call, created and destroyed with it (microseconds against pieces of MiBs). */
typedef struct pipeline {
    cudaStream_t up, down;
    cudaEvent_t start, uploaded[PS_HOST_BUFFERS], scanned[PS_HOST_BUFFERS], downloaded[PS_HOST_BUFFERS];
} pipeline;

static cudaError_t pipeline_create(pipeline *p) {
    memset(p, 0, sizeof *p);
    cudaError_t err = cudaStreamCreateWithFlags(&p->up, cudaStreamNonBlocking);
    if (err == cudaSuccess) err = cudaStreamCreateWithFlags(&p->down, cudaStreamNonBlocking);
    if (err == cudaSuccess) err = cudaEventCreateWithFlags(&p->start, cudaEventDisableTiming);
    for (int j = 0; j < PS_HOST_BUFFERS && err == cudaSuccess; j++) {
        err = cudaEventCreateWithFlags(&p->uploaded[j], cudaEventDisableTiming);
        if (err == cudaSuccess) err = cudaEventCreateWithFlags(&p->scanned[j], cudaEventDisableTiming);
        if (err == cudaSuccess) err = cudaEventCreateWithFlags(&p->downloaded[j], cudaEventDisableTiming);
    }
    return err;
}

/* Waits for both copy streams (the context's stream is the caller's to wait for) and frees everything. */
static cudaError_t pipeline_destroy(pipeline *p, cudaStream_t compute) {
    cudaError_t first = cudaSuccess, err;
    cudaStream_t streams[3] = {p->up, p->down, compute};
    for (int i = 0; i < 3; i++) {
        if (!streams[i] && i < 2) continue;
        err = cudaStreamSynchronize(streams[i]);
        if (first == cudaSuccess) first = err;
    }
    cudaEvent_t *events[4] = {&p->start, p->uploaded, p->scanned, p->downloaded};
    for (int g = 0; g < 4; g++)
        for (int j = 0; j < (g == 0 ? 1 : PS_HOST_BUFFERS); j++)
            if (events[g][j]) cudaEventDestroy(events[g][j]);
    if (p->up) cudaStreamDestroy(p->up);
    if (p->down) cudaStreamDestroy(p->down);
    return first;
}

/* ---- the host's copies of a staged piece, on several threads ----
 * One thread's memcpy moved 2.8 GB/s each way on the 2 x H200 host (226 GB, pageable, in place), a twentieth of
 * the link; a piece's copy is split over up to PS_HOST_COPY_THREADS threads (made per copy: about 50 us against
 * the milliseconds a large piece takes). Small pieces are copied on the calling thread. */
#define PS_HOST_COPY_THREADS 8
#define PS_HOST_COPY_SPLIT ((size_t)4 << 20) /* below this, one memcpy */

struct host_copy_part {
    char *dst;
    const char *src;
    size_t bytes;
};

static void *host_copy_run(void *arg) {
    host_copy_part *p = (host_copy_part *)arg;
    memcpy(p->dst, p->src, p->bytes);
    return NULL;
}

static void host_copy(void *dst, const void *src, size_t bytes) {
    const long cores = bytes < PS_HOST_COPY_SPLIT ? 1 : sysconf(_SC_NPROCESSORS_ONLN);
    const int parts = cores < 2 ? 1 : cores > PS_HOST_COPY_THREADS ? PS_HOST_COPY_THREADS : (int)cores;
    if (parts == 1) {
        memcpy(dst, src, bytes);
        return;
    }
    host_copy_part part[PS_HOST_COPY_THREADS];
    pthread_t tid[PS_HOST_COPY_THREADS];
    int started[PS_HOST_COPY_THREADS];
    const size_t each = (bytes / (size_t)parts + 63) / 64 * 64;
    for (int t = 0; t < parts; t++) {
        const size_t at = (size_t)t * each < bytes ? (size_t)t * each : bytes;
        part[t] = {(char *)dst + at, (const char *)src + at, at + each < bytes ? each : bytes - at};
        /* part 0 runs here; a thread that cannot start runs here too */
        started[t] = t > 0 && pthread_create(&tid[t], NULL, host_copy_run, &part[t]) == 0;
    }
    host_copy_run(&part[0]);
    for (int t = 1; t < parts; t++) {
        if (started[t]) pthread_join(tid[t], NULL);
        else host_copy_run(&part[t]);
    }
}

/* Piece k of `pieces` in scan order: its first physical element and its length. */
static void piece_range(const ps_request *req, uint64_t chunk, uint64_t k, uint64_t *first, uint64_t *len) {
    const uint64_t lo = k * chunk, hi = lo + chunk < req->n ? lo + chunk : req->n;
    *len = hi - lo;
    *first = req->reverse ? req->n - hi : lo;
}

pscan_status ps_cuda_scan_host(pscan_context *ctx, ps_request *req, const ps_cuda_device *dev,
                               ps_cuda_host_staging *staging) {
    /* ---- plan: the single-pass scan, on one piece ---- */
    if (req->algo == PSCAN_ALGO_AUTO) req->algo = PSCAN_ALGO_DECOUPLED_LOOKBACK;
    if (req->algo != PSCAN_ALGO_DECOUPLED_LOOKBACK) return PSCAN_ERROR_UNSUPPORTED_ALGORITHM;
    const size_t chunk_bytes = ps_core_host_piece_bytes(ctx); /* a multiple of 256 = PS_HOST_ALIGN */
    const uint64_t chunk = chunk_bytes / req->elem_bytes; /* elements per piece: 256 bytes divide evenly */
    ps_request piece = *req;
    piece.n = req->n < chunk ? req->n : chunk;
    if (piece.n == 0) piece.n = 1; /* still refuse what the plan refuses at n == 0 */
    size_t scan_temp = 0;
    pscan_status s = ps_cuda_decoupled_lookback.plan(&piece, dev, &scan_temp);
    if (s != PSCAN_SUCCESS || req->n == 0) return s;
    const uint64_t bytes = req->n * req->elem_bytes;
    const host_kind in_kind = kind_of(req->in, bytes), out_kind = kind_of(req->out, bytes);
    if (in_kind == HOST_DEVICE || out_kind == HOST_DEVICE) return PSCAN_ERROR_INVALID_VALUE;
    const int staged = in_kind == HOST_PAGEABLE || out_kind == HOST_PAGEABLE;

    /* ---- memory: two carry slots, the scan's temp, three pieces (the workspace); pinned staging if needed ---- */
    const size_t temp_round = (scan_temp + PS_HOST_ALIGN - 1) / PS_HOST_ALIGN * PS_HOST_ALIGN;
    const size_t buffers_at = PS_HOST_ALIGN + temp_round;
    s = pscan_context_reserve(ctx, buffers_at + PS_HOST_BUFFERS * chunk_bytes);
    if (s != PSCAN_SUCCESS) return s;
    char *const base = (char *)ctx->workspace; /* from cudaMalloc(Async): 256-byte aligned */
    void *const slots[2] = {base, base + 16};
    char *buffers[PS_HOST_BUFFERS];
    for (int j = 0; j < PS_HOST_BUFFERS; j++) buffers[j] = base + buffers_at + j * chunk_bytes;
    if (staged && staging->bytes < PS_HOST_BUFFERS * chunk_bytes) {
        if (staging->pinned) cudaFreeHost(staging->pinned);
        staging->pinned = NULL;
        staging->bytes = 0;
        cudaError_t err = cudaHostAlloc(&staging->pinned, PS_HOST_BUFFERS * chunk_bytes, cudaHostAllocDefault);
        if (err != cudaSuccess) {
            staging->pinned = NULL;
            cudaGetLastError();
            ctx->native_error = (long long)err;
            return PSCAN_ERROR_OUT_OF_MEMORY;
        }
        staging->bytes = PS_HOST_BUFFERS * chunk_bytes;
    }
    char *pinned[PS_HOST_BUFFERS];
    for (int j = 0; j < PS_HOST_BUFFERS; j++) pinned[j] = staged ? (char *)staging->pinned + j * chunk_bytes : NULL;

    pipeline p;
    cudaError_t err = pipeline_create(&p);
    /* the copy streams start after what the context's stream already holds (the workspace's allocation too) */
    if (err == cudaSuccess) err = cudaEventRecord(p.start, dev->stream);
    if (err == cudaSuccess) err = cudaStreamWaitEvent(p.up, p.start, 0);
    if (err == cudaSuccess) err = cudaStreamWaitEvent(p.down, p.start, 0);

    const size_t eb = req->elem_bytes;
    const char *const in = (const char *)req->in;
    char *const out = (char *)req->out;
    const uint64_t pieces = (req->n + chunk - 1) / chunk;
    uint64_t first = 0, len = 0, done_first = 0, done_len = 0;
    for (uint64_t k = 0; k < pieces && err == cudaSuccess; k++) {
        const int j = (int)(k % PS_HOST_BUFFERS);
        piece_range(req, chunk, k, &first, &len);

        /* ---- stage in: buffer j is free once piece k-3 has come back (and, staged, been copied out) ---- */
        const void *src = in + first * eb;
        if (staged) {
            if (k >= PS_HOST_BUFFERS) {
                err = cudaEventSynchronize(p.downloaded[j]);
                if (err != cudaSuccess) break;
                piece_range(req, chunk, k - PS_HOST_BUFFERS, &done_first, &done_len);
                host_copy(out + done_first * eb, pinned[j], done_len * eb);
            }
            host_copy(pinned[j], src, len * eb);
            src = pinned[j];
        }

        /* ---- upload ---- */
        if (k >= PS_HOST_BUFFERS) err = cudaStreamWaitEvent(p.up, p.downloaded[j], 0);
        if (err == cudaSuccess) err = cudaMemcpyAsync(buffers[j], src, len * eb, cudaMemcpyHostToDevice, p.up);
        if (err == cudaSuccess) err = cudaEventRecord(p.uploaded[j], p.up);

        /* ---- scan, in place, the carry from the previous piece's slot ---- */
        if (err == cudaSuccess) err = cudaStreamWaitEvent(dev->stream, p.uploaded[j], 0);
        if (err == cudaSuccess) {
            piece = *req;
            piece.in = buffers[j];
            piece.out = buffers[j];
            piece.n = len;
            piece.temp = base + PS_HOST_ALIGN;
            piece.temp_bytes = temp_round;
            piece.init_device = k > 0 ? slots[(k - 1) % 2] : NULL;
            piece.total_out = k + 1 < pieces ? slots[k % 2] : NULL;
            err = ps_cuda_decoupled_lookback.scan(&piece, dev);
        }
        if (err == cudaSuccess) err = cudaEventRecord(p.scanned[j], dev->stream);

        /* ---- download ---- */
        if (err == cudaSuccess) err = cudaStreamWaitEvent(p.down, p.scanned[j], 0);
        if (err == cudaSuccess)
            err = cudaMemcpyAsync(staged ? (void *)pinned[j] : (void *)(out + first * eb), buffers[j], len * eb,
                                  cudaMemcpyDeviceToHost, p.down);
        if (err == cudaSuccess) err = cudaEventRecord(p.downloaded[j], p.down);
    }

    /* ---- drain: the last pieces still in the staging buffers ---- */
    if (staged && err == cudaSuccess) {
        const uint64_t from = pieces > PS_HOST_BUFFERS ? pieces - PS_HOST_BUFFERS : 0;
        for (uint64_t k = from; k < pieces && err == cudaSuccess; k++) {
            const int j = (int)(k % PS_HOST_BUFFERS);
            err = cudaEventSynchronize(p.downloaded[j]);
            if (err != cudaSuccess) break;
            piece_range(req, chunk, k, &done_first, &done_len);
            host_copy(out + done_first * eb, pinned[j], done_len * eb);
        }
    }
    const cudaError_t end = pipeline_destroy(&p, dev->stream);
    if (err == cudaSuccess) err = end;
    if (err == cudaSuccess) return PSCAN_SUCCESS;
    ctx->native_error = (long long)err;
    return err == cudaErrorMemoryAllocation ? PSCAN_ERROR_OUT_OF_MEMORY : PSCAN_ERROR_BACKEND;
}
