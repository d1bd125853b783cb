/*
 * A thin Node-API binding over libpocketsphinx (Debian's 0.8+5prealpha). It keeps one decoder per
 * handle and runs in continuous mode: audio goes in as it arrives, the decoder's own voice activity
 * detector says when speech starts and ends, and the caller ends an utterance to read its words.
 * The segmentation policy lives in TypeScript (src/recognition/pocketsphinx/); this file only does
 * what has to touch the C API. Built by scripts/build-pocketsphinx.mjs with the system compiler.
 *
 * Threads: createAsync loads a decoder (ps_init, ~250 ms of file reading and table building) on a
 * libuv worker thread while the main thread decodes with other decoders. That is safe only because
 * nothing here touches sphinxbase's process-wide state after module load: logging goes to one
 * callback set once (no -logfn, which reopens a global FILE* on every ps_init), and dither is off
 * (-dither yes seeds and draws from one global random generator, so concurrent streams would change
 * each other's features; the TypeScript side adds dither per stream instead).
 */
#include <node_api.h>
#include <pocketsphinx.h>
#include <sphinxbase/ckd_alloc.h>
#include <sphinxbase/cmn.h>
#include <sphinxbase/err.h>
#include <sphinxbase/fe.h>
#include <sphinxbase/feat.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_ARGS 64
#define MAX_CEP 64
#define PRIME_FRAMES 128
#define ERROR_TEXT 256

typedef struct {
  ps_decoder_t *ps;
  /* The argument strings cmd_ln_parse_r was given. Its contract (cmd_ln.h) is that they stay valid as
     long as the configuration, which ps_init keeps until ps_free: they live and die with the decoder.
     (Debian's 0.8+5prealpha happens to copy them, but nothing promises that.) */
  char **args;
  uint32_t nargs;
  int in_utt;      /* ps_start_utt called and not ended */
  int frate;       /* frames per second */
  int veclen;
  /* Cepstral mean after the last utterance that held words: an utterance of pure noise (often the
     first, before the detector learned the floor) would otherwise drag the mean toward silence and
     spoil the next real utterance. */
  mfcc_t good_cmn[MAX_CEP];
  mfcc_t initial_cmn[MAX_CEP];
} decoder_t;

/* Why the last load failed on this thread: the first error pocketsphinx logged while loading. */
static _Thread_local char load_error[ERROR_TEXT];
static _Thread_local int capturing = 0;

/* The one log sink: silent, except that the first error of a load is kept for the exception. */
static void on_log(void *user_data, err_lvl_t level, const char *format, ...) {
  (void)user_data;
  if (!capturing || level < ERR_ERROR || load_error[0] != '\0') return;
  va_list ap;
  va_start(ap, format);
  vsnprintf(load_error, sizeof load_error, format, ap);
  va_end(ap);
  size_t n = strlen(load_error);
  while (n > 0 && (load_error[n - 1] == '\n' || load_error[n - 1] == '\r' || load_error[n - 1] == ' ')) load_error[--n] = '\0';
}

#define CHECK(call)                                                   \
  do {                                                                \
    if ((call) != napi_ok) {                                          \
      napi_throw_error(env, "POCKETSPHINX_NAPI", "Node-API call failed: " #call); \
      return NULL;                                                    \
    }                                                                 \
  } while (0)

static void free_args(char **args, uint32_t n) {
  if (args == NULL) return;
  for (uint32_t i = 0; i < n; i++) free(args[i]);
  free(args);
}

/* Frees the decoder and what it owns; the struct itself stays (a handle may still point at it). */
static void unload(decoder_t *d) {
  if (d->ps != NULL) ps_free(d->ps);
  d->ps = NULL;
  free_args(d->args, d->nargs);
  d->args = NULL;
  d->nargs = 0;
}

static void finalize(napi_env env, void *data, void *hint) {
  (void)env;
  (void)hint;
  decoder_t *d = (decoder_t *)data;
  unload(d);
  free(d);
}

static cmn_t *cmn_of(decoder_t *d) {
  feat_t *feat = ps_get_feat(d->ps);
  return feat == NULL ? NULL : feat->cmn_struct;
}

typedef enum { LOAD_OK, LOAD_NO_MEMORY, LOAD_CONFIG, LOAD_INIT } load_status_t;

/*
 * Parses the arguments and loads a decoder, on whatever thread calls it (no Node-API here). Takes
 * ownership of args: they end up in the decoder, or are freed. On failure *status says why and
 * load_error (this thread's) may hold pocketsphinx's own words.
 */
static decoder_t *load(char **args, uint32_t n, load_status_t *status) {
  load_error[0] = '\0';
  decoder_t *d = calloc(1, sizeof(decoder_t));
  if (d == NULL) {
    free_args(args, n);
    *status = LOAD_NO_MEMORY;
    return NULL;
  }
  d->args = args;
  d->nargs = n;
  capturing = 1;
  cmd_ln_t *config = cmd_ln_parse_r(NULL, ps_args(), (int32)n, args, FALSE);
  d->ps = config == NULL ? NULL : ps_init(config);
  capturing = 0;
  /* ps_init keeps its own reference to the configuration. */
  if (config != NULL) cmd_ln_free_r(config);
  if (d->ps == NULL) {
    *status = config == NULL ? LOAD_CONFIG : LOAD_INIT;
    unload(d);
    free(d);
    return NULL;
  }
  d->frate = cmd_ln_int32_r(ps_get_config(d->ps), "-frate");
  if (d->frate <= 0) d->frate = 100;
  cmn_t *cmn = cmn_of(d);
  d->veclen = cmn == NULL ? 0 : cmn->veclen;
  if (d->veclen > MAX_CEP) d->veclen = 0;
  if (d->veclen > 0) {
    cmn_live_get(cmn, d->initial_cmn);
    memcpy(d->good_cmn, d->initial_cmn, sizeof(mfcc_t) * d->veclen);
  }
  ps_start_stream(d->ps);
  ps_start_utt(d->ps);
  d->in_utt = 1;
  *status = LOAD_OK;
  return d;
}

/* The error a failed load throws or rejects with (code and message). */
static napi_value load_failure(napi_env env, load_status_t status, const char *detail) {
  const char *code = status == LOAD_NO_MEMORY ? "POCKETSPHINX_NO_MEMORY" : status == LOAD_CONFIG ? "POCKETSPHINX_CONFIG" : "POCKETSPHINX_INIT";
  const char *what = status == LOAD_NO_MEMORY ? "out of memory while loading a decoder"
                     : status == LOAD_CONFIG  ? "pocketsphinx refused the configuration"
                                              : "pocketsphinx could not load the model (see the -hmm, -lm and -dict paths)";
  char text[ERROR_TEXT + 128];
  if (detail != NULL && detail[0] != '\0') snprintf(text, sizeof text, "%s: %s", what, detail);
  else snprintf(text, sizeof text, "%s", what);
  napi_value code_value, message, error;
  if (napi_create_string_utf8(env, code, NAPI_AUTO_LENGTH, &code_value) != napi_ok) return NULL;
  if (napi_create_string_utf8(env, text, NAPI_AUTO_LENGTH, &message) != napi_ok) return NULL;
  if (napi_create_error(env, code_value, message, &error) != napi_ok) return NULL;
  return error;
}

/* A handle owning d; on failure d is freed and an exception is pending. */
static napi_value wrap(napi_env env, decoder_t *d) {
  napi_value handle;
  if (napi_create_external(env, d, finalize, NULL, &handle) != napi_ok) {
    unload(d);
    free(d);
    napi_throw_error(env, "POCKETSPHINX_NAPI", "Node-API call failed: napi_create_external");
    return NULL;
  }
  return handle;
}

/* Copies create's string array into malloc'd strings; NULL with an exception pending. */
static char **read_args(napi_env env, napi_callback_info info, uint32_t *count) {
  size_t argc = 1;
  napi_value argv[1];
  uint32_t n = 0;
  if (napi_get_cb_info(env, info, &argc, argv, NULL, NULL) != napi_ok || argc < 1 || napi_get_array_length(env, argv[0], &n) != napi_ok || n > MAX_ARGS) {
    napi_throw_type_error(env, "POCKETSPHINX_ARGS", "create takes an array of at most 64 strings");
    return NULL;
  }
  /* One spare slot so an empty array still allocates. */
  char **args = calloc(n + 1, sizeof(char *));
  if (args == NULL) {
    napi_throw_error(env, "POCKETSPHINX_NO_MEMORY", "out of memory while reading the decoder arguments");
    return NULL;
  }
  for (uint32_t i = 0; i < n; i++) {
    napi_value item;
    size_t len = 0;
    if (napi_get_element(env, argv[0], i, &item) != napi_ok || napi_get_value_string_utf8(env, item, NULL, 0, &len) != napi_ok) {
      free_args(args, i);
      napi_throw_type_error(env, "POCKETSPHINX_ARGS", "create takes an array of strings");
      return NULL;
    }
    args[i] = malloc(len + 1);
    if (args[i] == NULL || napi_get_value_string_utf8(env, item, args[i], len + 1, &len) != napi_ok) {
      free_args(args, i + 1);
      napi_throw_error(env, "POCKETSPHINX_NO_MEMORY", "out of memory while reading the decoder arguments");
      return NULL;
    }
  }
  *count = n;
  return args;
}

/* create(args: string[]): handle. args are pocketsphinx command-line pairs (-hmm DIR -lm FILE ...). */
static napi_value create(napi_env env, napi_callback_info info) {
  uint32_t n = 0;
  char **args = read_args(env, info, &n);
  if (args == NULL) return NULL;
  load_status_t status;
  decoder_t *d = load(args, n, &status);
  if (d == NULL) {
    napi_value error = load_failure(env, status, load_error);
    if (error != NULL) napi_throw(env, error);
    else napi_throw_error(env, "POCKETSPHINX_INIT", "pocketsphinx could not load a decoder");
    return NULL;
  }
  return wrap(env, d);
}

typedef struct {
  napi_async_work work;
  napi_deferred deferred;
  char **args;
  uint32_t nargs;
  decoder_t *decoder;
  load_status_t status;
  char error[ERROR_TEXT];
} load_job_t;

static void load_execute(napi_env env, void *data) {
  (void)env;
  load_job_t *job = (load_job_t *)data;
  job->decoder = load(job->args, job->nargs, &job->status);
  job->args = NULL;
  memcpy(job->error, load_error, sizeof job->error);
}

static void load_complete(napi_env env, napi_status status, void *data) {
  load_job_t *job = (load_job_t *)data;
  napi_value result = NULL;
  if (status == napi_ok && job->decoder != NULL && napi_create_external(env, job->decoder, finalize, NULL, &result) == napi_ok) {
    napi_resolve_deferred(env, job->deferred, result);
  } else {
    /* The load failed, or it worked and the handle could not be made: nothing may stay behind. */
    napi_value error = NULL;
    if (job->decoder != NULL) {
      unload(job->decoder);
      free(job->decoder);
      error = load_failure(env, LOAD_INIT, "Node-API could not wrap the loaded decoder");
    } else if (status == napi_ok) {
      error = load_failure(env, job->status, job->error);
    } else {
      error = load_failure(env, LOAD_INIT, "the worker was cancelled");
    }
    if (error == NULL) napi_get_undefined(env, &error);
    napi_reject_deferred(env, job->deferred, error);
  }
  free_args(job->args, job->nargs);
  napi_delete_async_work(env, job->work);
  free(job);
}

/* createAsync(args: string[]): Promise<handle>. The same as create, loaded on a worker thread. */
static napi_value create_async(napi_env env, napi_callback_info info) {
  uint32_t n = 0;
  char **args = read_args(env, info, &n);
  if (args == NULL) return NULL;
  load_job_t *job = calloc(1, sizeof(load_job_t));
  if (job == NULL) {
    free_args(args, n);
    napi_throw_error(env, "POCKETSPHINX_NO_MEMORY", "out of memory while starting a decoder load");
    return NULL;
  }
  job->args = args;
  job->nargs = n;
  napi_value promise, name;
  if (napi_create_promise(env, &job->deferred, &promise) != napi_ok) {
    free_args(args, n);
    free(job);
    napi_throw_error(env, "POCKETSPHINX_NAPI", "Node-API call failed: napi_create_promise");
    return NULL;
  }
  if (napi_create_string_utf8(env, "pocketsphinx:load", NAPI_AUTO_LENGTH, &name) != napi_ok ||
      napi_create_async_work(env, NULL, name, load_execute, load_complete, job, &job->work) != napi_ok) {
    napi_value error = load_failure(env, LOAD_INIT, "could not start the worker");
    if (error == NULL) napi_get_undefined(env, &error);
    napi_reject_deferred(env, job->deferred, error);
    free_args(args, n);
    free(job);
    return promise;
  }
  if (napi_queue_async_work(env, job->work) != napi_ok) {
    napi_value error = load_failure(env, LOAD_INIT, "could not queue the worker");
    if (error == NULL) napi_get_undefined(env, &error);
    napi_reject_deferred(env, job->deferred, error);
    napi_delete_async_work(env, job->work);
    free_args(args, n);
    free(job);
  }
  return promise;
}

/* The decoder of a handle argument; NULL with an exception pending. */
static decoder_t *unwrap(napi_env env, size_t argc, napi_value value) {
  void *data = NULL;
  if (argc < 1 || napi_get_value_external(env, value, &data) != napi_ok || data == NULL) {
    napi_throw_type_error(env, "POCKETSPHINX_HANDLE", "not a decoder handle");
    return NULL;
  }
  decoder_t *d = (decoder_t *)data;
  if (d->ps == NULL) {
    napi_throw_error(env, "POCKETSPHINX_FREED", "the decoder was freed");
    return NULL;
  }
  return d;
}

/* The (handle) argument of reset, hypothesis and endUtterance; NULL with an exception pending. */
static decoder_t *decoder_arg(napi_env env, napi_callback_info info) {
  size_t argc = 1;
  napi_value argv[1];
  CHECK(napi_get_cb_info(env, info, &argc, argv, NULL, NULL));
  return unwrap(env, argc, argv[0]);
}

/* The (handle, Int16Array) arguments of primeCmn and process; NULL with a JS exception pending. */
static decoder_t *decoder_and_samples(napi_env env, napi_callback_info info, const char *message, const int16 **samples, size_t *length) {
  size_t argc = 2;
  napi_value argv[2];
  CHECK(napi_get_cb_info(env, info, &argc, argv, NULL, NULL));
  decoder_t *d = unwrap(env, argc, argv[0]);
  if (d == NULL) return NULL;
  napi_typedarray_type type;
  void *data = NULL;
  if (argc < 2 || napi_get_typedarray_info(env, argv[1], &type, length, &data, NULL, NULL) != napi_ok || type != napi_int16_array) {
    napi_throw_type_error(env, "POCKETSPHINX_SAMPLES", message);
    return NULL;
  }
  *samples = (const int16 *)data;
  return d;
}

/* reset(handle): a fresh stream on the same decoder (frame numbers and cepstral mean start over). */
static napi_value reset(napi_env env, napi_callback_info info) {
  decoder_t *d = decoder_arg(env, info);
  if (d == NULL) return NULL;
  if (d->in_utt) ps_end_utt(d->ps);
  if (d->veclen > 0) {
    cmn_live_set(cmn_of(d), d->initial_cmn);
    memcpy(d->good_cmn, d->initial_cmn, sizeof(mfcc_t) * d->veclen);
  }
  ps_start_stream(d->ps);
  ps_start_utt(d->ps);
  d->in_utt = 1;
  return NULL;
}

/*
 * primeCmn(handle, Int16Array): boolean. Batch only, where the whole recording is known: sets the
 * cepstral mean to the mean over the recording's speech frames, computed by a separate front end with
 * the decoder's settings. Live normalisation starts from the model's generic mean and needs about five
 * seconds of speech to adapt, which short recordings never give it. False when there was no speech.
 */
static napi_value prime_cmn(napi_env env, napi_callback_info info) {
  const int16 *data = NULL;
  size_t length = 0;
  decoder_t *d = decoder_and_samples(env, info, "primeCmn takes an Int16Array of 16 kHz samples", &data, &length);
  if (d == NULL) return NULL;
  fe_t *fe = fe_init_auto_r(ps_get_config(d->ps));
  int primed = 0;
  if (fe != NULL && d->veclen > 0 && fe_get_output_size(fe) == d->veclen) {
    mfcc_t **cep = (mfcc_t **)ckd_calloc_2d(PRIME_FRAMES, d->veclen, sizeof(mfcc_t));
    double sum[MAX_CEP] = {0};
    long frames = 0;
    const int16 *at = data;
    size_t left = length;
    fe_start_utt(fe);
    while (left > 0) {
      int32 n = PRIME_FRAMES;
      size_t before = left;
      if (fe_process_frames(fe, &at, &left, cep, &n, NULL) < 0) break;
      for (int32 f = 0; f < n; f++)
        for (int k = 0; k < d->veclen; k++) sum[k] += cep[f][k];
      frames += n;
      if (n == 0 && left == before) break;
    }
    int32 last = 0;
    fe_end_utt(fe, cep[0], &last);
    for (int32 f = 0; f < last; f++)
      for (int k = 0; k < d->veclen; k++) sum[k] += cep[0][k];
    frames += last;
    if (frames > 0) {
      mfcc_t mean[MAX_CEP];
      for (int k = 0; k < d->veclen; k++) mean[k] = (mfcc_t)(sum[k] / frames);
      cmn_live_set(cmn_of(d), mean);
      memcpy(d->good_cmn, mean, sizeof(mfcc_t) * d->veclen);
      primed = 1;
    }
    ckd_free_2d(cep);
  }
  if (fe != NULL) fe_free(fe);
  napi_value result;
  CHECK(napi_get_boolean(env, primed ? true : false, &result));
  return result;
}

/* process(handle, Int16Array): boolean, whether the detector says speech is going on now. */
static napi_value process(napi_env env, napi_callback_info info) {
  const int16 *data = NULL;
  size_t length = 0;
  decoder_t *d = decoder_and_samples(env, info, "process takes an Int16Array of 16 kHz samples", &data, &length);
  if (d == NULL) return NULL;
  if (!d->in_utt) {
    ps_start_utt(d->ps);
    d->in_utt = 1;
  }
  if (length > 0 && ps_process_raw(d->ps, data, length, FALSE, FALSE) < 0) {
    napi_throw_error(env, "POCKETSPHINX_DECODE", "pocketsphinx failed to process audio");
    return NULL;
  }
  napi_value result;
  CHECK(napi_get_boolean(env, ps_get_in_speech(d->ps) ? true : false, &result));
  return result;
}

/* hypothesis(handle): string, the best text of the open utterance so far. */
static napi_value hypothesis(napi_env env, napi_callback_info info) {
  decoder_t *d = decoder_arg(env, info);
  if (d == NULL) return NULL;
  int32 score = 0;
  const char *hyp = d->in_utt ? ps_get_hyp(d->ps, &score) : NULL;
  napi_value result;
  CHECK(napi_create_string_utf8(env, hyp == NULL ? "" : hyp, NAPI_AUTO_LENGTH, &result));
  return result;
}

/* One [word, startMs, endMs, posterior] entry of endUtterance. */
static napi_status segment_entry(napi_env env, decoder_t *d, logmath_t *lmath, ps_seg_t *seg, napi_value *entry) {
  const char *word = ps_seg_word(seg);
  int sf = 0, ef = 0;
  int32 ascr = 0, lscr = 0, lback = 0;
  ps_seg_frames(seg, &sf, &ef);
  int32 prob = ps_seg_prob(seg, &ascr, &lscr, &lback);
  napi_value text, start, end, posterior;
  napi_status s;
  if ((s = napi_create_array_with_length(env, 4, entry)) != napi_ok) return s;
  if ((s = napi_create_string_utf8(env, word == NULL ? "" : word, NAPI_AUTO_LENGTH, &text)) != napi_ok) return s;
  if ((s = napi_create_double(env, (double)sf * 1000.0 / d->frate, &start)) != napi_ok) return s;
  if ((s = napi_create_double(env, (double)(ef + 1) * 1000.0 / d->frate, &end)) != napi_ok) return s;
  if ((s = napi_create_double(env, logmath_exp(lmath, prob), &posterior)) != napi_ok) return s;
  if ((s = napi_set_element(env, *entry, 0, text)) != napi_ok) return s;
  if ((s = napi_set_element(env, *entry, 1, start)) != napi_ok) return s;
  if ((s = napi_set_element(env, *entry, 2, end)) != napi_ok) return s;
  return napi_set_element(env, *entry, 3, posterior);
}

/*
 * endUtterance(handle): Array<[word, startMs, endMs, posterior]> of the utterance, fillers included
 * (the caller decides what they mean). The next utterance starts at once, whatever happens on the way.
 */
static napi_value end_utterance(napi_env env, napi_callback_info info) {
  decoder_t *d = decoder_arg(env, info);
  if (d == NULL) return NULL;
  napi_value out;
  CHECK(napi_create_array(env, &out));
  if (!d->in_utt) return out;
  ps_end_utt(d->ps);
  d->in_utt = 0;
  logmath_t *lmath = ps_get_logmath(d->ps);
  uint32_t count = 0;
  int spoken = 0;
  napi_status failed = napi_ok;
  ps_seg_t *seg = ps_seg_iter(d->ps);
  while (seg != NULL) {
    const char *word = ps_seg_word(seg);
    if (word != NULL && word[0] != '<' && word[0] != '[' && word[0] != '+') spoken = 1;
    napi_value entry;
    if ((failed = segment_entry(env, d, lmath, seg, &entry)) != napi_ok || (failed = napi_set_element(env, out, count++, entry)) != napi_ok) {
      /* The iterator is ours until it runs out: stopping early means freeing it. */
      ps_seg_free(seg);
      break;
    }
    seg = ps_seg_next(seg);
  }
  if (d->veclen > 0) {
    if (spoken) cmn_live_get(cmn_of(d), d->good_cmn);
    else cmn_live_set(cmn_of(d), d->good_cmn);
  }
  ps_start_utt(d->ps);
  d->in_utt = 1;
  if (failed != napi_ok) {
    napi_throw_error(env, "POCKETSPHINX_NAPI", "Node-API call failed while reading the utterance");
    return NULL;
  }
  return out;
}

/* free(handle): releases the decoder now rather than at garbage collection. Idempotent. */
static napi_value release(napi_env env, napi_callback_info info) {
  size_t argc = 1;
  napi_value argv[1];
  CHECK(napi_get_cb_info(env, info, &argc, argv, NULL, NULL));
  void *data = NULL;
  if (argc < 1 || napi_get_value_external(env, argv[0], &data) != napi_ok || data == NULL) {
    napi_throw_type_error(env, "POCKETSPHINX_HANDLE", "not a decoder handle");
    return NULL;
  }
  unload((decoder_t *)data);
  return NULL;
}

static napi_value init(napi_env env, napi_value exports) {
  /* Before any decoder exists, and the same values every time: safe however often the module loads.
     The callback takes every log line; no log file means ps_init prints its configuration nowhere. */
  err_set_callback(on_log, NULL);
  err_set_logfp(NULL);
  napi_property_descriptor props[] = {
    {"create", NULL, create, NULL, NULL, NULL, napi_default, NULL},
    {"createAsync", NULL, create_async, NULL, NULL, NULL, napi_default, NULL},
    {"reset", NULL, reset, NULL, NULL, NULL, napi_default, NULL},
    {"primeCmn", NULL, prime_cmn, NULL, NULL, NULL, napi_default, NULL},
    {"process", NULL, process, NULL, NULL, NULL, napi_default, NULL},
    {"hypothesis", NULL, hypothesis, NULL, NULL, NULL, napi_default, NULL},
    {"endUtterance", NULL, end_utterance, NULL, NULL, NULL, napi_default, NULL},
    {"free", NULL, release, NULL, NULL, NULL, napi_default, NULL},
  };
  CHECK(napi_define_properties(env, exports, sizeof(props) / sizeof(props[0]), props));
  return exports;
}

NAPI_MODULE(NODE_GYP_MODULE_NAME, init)
