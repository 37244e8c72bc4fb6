/* outpath.h - expands the placeholders of KTIME_OUTPUT into the report's file name, and
 * reads the rank and size of a multi-process job from its launcher's variables. */
#ifndef KTIME_OUTPATH_H
#define KTIME_OUTPATH_H

#include <stdbool.h>
#include <stddef.h>

/* The name %h gives when the host name cannot be read. */
#define OUTPATH_UNKNOWN_HOST "unknown-host"

/* What %r and %l give when no launcher's variable holds a rank: a word, so that a process
 * outside the job (the launcher itself, a helper it starts) is never named as rank 0. */
#define OUTPATH_NO_RANK "norank"

/* Expands tmpl into out (outsz bytes, terminating NUL included):
 *   %p        pid
 *   %h        host (OUTPATH_UNKNOWN_HOST when host is NULL)
 *   %q{NAME}  getenv_fn(NAME); an unset NAME gives "" and one "ktime:" warning naming it
 *   %r        the rank (outpath_rank), OUTPATH_NO_RANK when none is found
 *   %l        the local rank (outpath_local_rank), OUTPATH_NO_RANK when none is found
 *   %%        a single %
 * Anything else after a % (or a % at the end), an unterminated or empty %q{, or a NAME
 * longer than 255 bytes is kept as written, with one warning per call for the first one
 * (naming KTIME_OUTPUT; outpath_resolve names the setting it is given).
 * Returns 0, or -1 when the result needs more than outsz bytes; out then holds as much
 * as fits, terminated when outsz > 0. Never allocates; safe from any thread that may
 * call getenv_fn. */
int outpath_expand(const char *tmpl, long pid, const char *host, char *out, size_t outsz,
                   const char *(*getenv_fn)(const char *name));

/* Whether tmpl names a file per process: it holds %p, %r, %l or a well-formed %q{NAME} (the
 * placeholders whose value may differ between the processes of one job; %h and %% do not
 * count). Never allocates. */
bool outpath_per_process(const char *tmpl);

/* The template tmpl anchored in directory dir: tmpl itself when it is absolute or dir is NULL
 * or empty, else dir (each '%' in it doubled, so that it expands to itself), '/', tmpl.
 * Writes it into out (outsz bytes). Returns 0, or -1 when it does not fit (out then holds
 * as much as fits, terminated when outsz > 0). Never allocates. */
int outpath_in_dir(const char *tmpl, const char *dir, char *out, size_t outsz);

/* An output file's template tmpl, the value of the setting var (KTIME_OUTPUT, KTIME_TRACE,
 * KTIME_DUMP_SAMPLES ..., named in its warnings), anchored in dir when relative
 * (outpath_in_dir), then expanded as outpath_expand does into out. Returns 0, or -1 when
 * either does not fit. Never allocates. */
int outpath_resolve(const char *var, const char *tmpl, const char *dir, long pid,
                    const char *host, char *out, size_t outsz,
                    const char *(*getenv_fn)(const char *name));

/* The process's rank in a multi-process job, from the first of RANK (torchrun),
 * OMPI_COMM_WORLD_RANK, PMI_RANK, PMIX_RANK, SLURM_PROCID, MV2_COMM_WORLD_RANK that holds a
 * decimal number of 1 to 9 digits (anything else in one is passed over); NULL when none. */
const char *outpath_rank(const char *(*getenv_fn)(const char *name));

/* Likewise its rank on this node: LOCAL_RANK, OMPI_COMM_WORLD_LOCAL_RANK, MPI_LOCALRANKID,
 * SLURM_LOCALID, MV2_COMM_WORLD_LOCAL_RANK. */
const char *outpath_local_rank(const char *(*getenv_fn)(const char *name));

/* The number of processes of the job, from WORLD_SIZE, OMPI_COMM_WORLD_SIZE, PMI_SIZE,
 * SLURM_NTASKS, MV2_COMM_WORLD_SIZE (the first that is a number as above); 0 when none. */
long outpath_world_size(const char *(*getenv_fn)(const char *name));

/* The job's id from its launcher's variables: TORCHELASTIC_RUN_ID (torchrun), SLURM_JOB_ID
 * (".SLURM_STEP_ID" added when set: each srun of a job is a job of its own), PMIX_NAMESPACE
 * (Open MPI 5 and other PMIx launchers), OMPI_MCA_ess_base_jobid (Open MPI 4); the first
 * that is set and not empty, written into buf (size bytes, cut short when longer). NULL when
 * none is. Never allocates. */
const char *outpath_job(char *buf, size_t size, const char *(*getenv_fn)(const char *name));

/* Whether tmpl holds the placeholder %r (not %%r). Never allocates. */
bool outpath_names_rank(const char *tmpl);

/* tmpl with each %r replaced by rank as written (a '%' in it doubled), the other placeholders
 * kept, into out (outsz bytes). Returns 0, or -1 when it does not fit. Never allocates. */
int outpath_with_rank(const char *tmpl, const char *rank, char *out, size_t outsz);

/* A glob(3) pattern of the names tmpl gives any process: its text with glob's special
 * characters escaped, each placeholder whose value varies between processes (%p, %h, %l,
 * %q{NAME} and %r) as '*', %% as '%'. Returns 0, or -1 when it does not fit in outsz bytes.
 * Never allocates. */
int outpath_glob(const char *tmpl, char *out, size_t outsz);

/* Writes this machine's host name into buf (n bytes), or OUTPATH_UNKNOWN_HOST when
 * gethostname fails or the name is empty; always terminated. Returns buf, or the
 * constant OUTPATH_UNKNOWN_HOST when n is 0. */
const char *outpath_hostname(char *buf, size_t n);

#endif
