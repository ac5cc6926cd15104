/*
 * explain.h - `pscan explain ALGO v0 v1 ...`: a step-by-step CPU simulation of a GPU scan on a small array.
 */
#ifndef PSCAN_EXPLAIN_H
#define PSCAN_EXPLAIN_H

/* argv[0] is "explain". Returns 0 (PS_CLI_OK), or 2 (PS_CLI_USAGE) after a message on stderr. */
int ps_cli_explain(int argc, char **argv);

#endif /* PSCAN_EXPLAIN_H */
