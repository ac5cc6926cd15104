/*
 * operator.c - user operators: pscan_operator_create / pscan_operator_destroy.
 *
 * The core checks the desc once, copies it (strings included, so the caller may free its own), computes the
 * hash the CUDA module cache is keyed by, and asks the context's backend to build it: the CPU checks for a host
 * function, CUDA and OpenCL compile the source (or find the module or program built from the same one). Names
 * are checked to be C identifiers because they are pasted into the generated device source (OpenCL: -D options).
 */
#include <stdlib.h>
#include <string.h>

#include "pscan_internal.h"

static int is_power_of_two(size_t x) { return x != 0 && (x & (x - 1)) == 0; }

static int is_identifier(const char *s) {
    if (!((*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z') || *s == '_')) return 0;
    for (s++; *s; s++)
        if (!((*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z') || (*s >= '0' && *s <= '9') || *s == '_'))
            return 0;
    return 1;
}

static char *copy_string(const char *s, int *failed) {
    if (!s) return NULL;
    size_t len = strlen(s);
    char *c = (char *)malloc(len + 1);
    if (!c) {
        *failed = 1;
        return NULL;
    }
    memcpy(c, s, len + 1);
    return c;
}

/* FNV-1a, 64 bits, continued over several pieces; a piece's length goes in too, so "ab"+"c" != "a"+"bc". */
static uint64_t hash_bytes(uint64_t h, const void *data, size_t bytes) {
    const unsigned char *p = (const unsigned char *)data;
    for (size_t i = 0; i < bytes; i++) h = (h ^ p[i]) * 0x100000001b3ull;
    for (size_t i = 0; i < sizeof bytes; i++) h = (h ^ (unsigned char)(bytes >> (8 * i))) * 0x100000001b3ull;
    return h;
}

static uint64_t operator_hash(const pscan_operator *op) {
    uint64_t h = 0xcbf29ce484222325ull;
    const char *strings[3] = {op->source, op->type_name, op->combine_name};
    for (int i = 0; i < 3; i++) h = hash_bytes(h, strings[i] ? strings[i] : "", strings[i] ? strlen(strings[i]) : 0);
    const uint64_t sizes[2] = {op->elem_bytes, op->elem_align};
    h = hash_bytes(h, sizes, sizeof sizes);
    return hash_bytes(h, op->identity.bytes, op->elem_bytes);
}

pscan_status pscan_operator_destroy(pscan_operator *op) {
    if (!op) return PSCAN_SUCCESS;
    free(op->source);
    free(op->type_name);
    free(op->combine_name);
    free(op);
    return PSCAN_SUCCESS;
}

pscan_status pscan_operator_create(pscan_context *ctx, const pscan_user_op_desc *desc, pscan_operator **out) {
    if (!out) return PSCAN_ERROR_NULL_POINTER;
    *out = NULL;
    if (!ctx || !desc || !desc->identity) return PSCAN_ERROR_NULL_POINTER;
    if (desc->source && (!desc->type_name || !desc->combine_name)) return PSCAN_ERROR_NULL_POINTER;
    if (desc->elem_bytes == 0 || desc->elem_bytes > PSCAN_USER_OP_MAX_BYTES || !is_power_of_two(desc->elem_align) ||
        desc->elem_align > 16 || desc->elem_bytes % desc->elem_align != 0)
        return PSCAN_ERROR_INVALID_VALUE;
    if (desc->source && (!is_identifier(desc->type_name) || !is_identifier(desc->combine_name)))
        return PSCAN_ERROR_INVALID_VALUE;
    if (!ctx->ops->operator_build) return PSCAN_ERROR_UNSUPPORTED_OPERATOR;

    pscan_operator *op = (pscan_operator *)calloc(1, sizeof *op);
    if (!op) return PSCAN_ERROR_OUT_OF_MEMORY;
    int failed = 0;
    op->ctx = ctx;
    op->elem_bytes = desc->elem_bytes;
    op->elem_align = desc->elem_align;
    memcpy(op->identity.bytes, desc->identity, desc->elem_bytes);
    if (desc->source) {
        op->source = copy_string(desc->source, &failed);
        op->type_name = copy_string(desc->type_name, &failed);
        op->combine_name = copy_string(desc->combine_name, &failed);
    }
    op->host_combine = desc->host_combine;
    op->user = desc->user;
    if (failed) {
        pscan_operator_destroy(op);
        return PSCAN_ERROR_OUT_OF_MEMORY;
    }
    op->hash = operator_hash(op);
    pscan_status s = ctx->ops->operator_build(ctx, op);
    if (s != PSCAN_SUCCESS) {
        pscan_operator_destroy(op);
        return s;
    }
    *out = op;
    return PSCAN_SUCCESS;
}
