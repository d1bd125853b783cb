/*
 * A thin Node-API binding over libpocketsphinx (Debian's 0.8+5prealpha). It keeps one decoder per
 * handle and runs in continuous mode: audio goes in as it arrives, the decoder's own voice activity
 * detector says when speech starts and ends, and the caller ends an utterance to read its words.
 * The segmentation policy lives in TypeScript (src/recognition/pocketsphinx/); this file only does
 * what has to touch the C API. Built by scripts/build-pocketsphinx.mjs with the system compiler.
 */
#include <node_api.h>
#include <pocketsphinx.h>
#include <sphinxbase/ckd_alloc.h>
#include <sphinxbase/cmn.h>
#include <sphinxbase/fe.h>
#include <sphinxbase/feat.h>
#include <sphinxbase/genrand.h>
#include <stdlib.h>
#include <string.h>

#define MAX_ARGS 64
#define MAX_CEP 64
#define PRIME_FRAMES 128
/* The -seed the decoder is made with: dither noise restarts from it on every stream. */
#define DITHER_SEED 1

typedef struct {
  ps_decoder_t *ps;
  int in_utt;      /* ps_start_utt called and not ended */
  int frate;       /* frames per second */
  int veclen;
  /* Cepstral mean after the last utterance that held words: an utterance of pure noise (often the
     first, before the detector learned the floor) would otherwise drag the mean toward silence and
     spoil the next real utterance. */
  mfcc_t good_cmn[MAX_CEP];
  mfcc_t initial_cmn[MAX_CEP];
} decoder_t;

#define CHECK(call)                                                   \
  do {                                                                \
    if ((call) != napi_ok) {                                          \
      napi_throw_error(env, "POCKETSPHINX_NAPI", "Node-API call failed: " #call); \
      return NULL;                                                    \
    }                                                                 \
  } while (0)

static void finalize(napi_env env, void *data, void *hint) {
  (void)env;
  (void)hint;
  decoder_t *d = (decoder_t *)data;
  if (d->ps != NULL) ps_free(d->ps);
  free(d);
}

static decoder_t *unwrap(napi_env env, napi_value value) {
  void *data = NULL;
  if (napi_get_value_external(env, value, &data) != napi_ok || data == NULL) {
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

static cmn_t *cmn_of(decoder_t *d) {
  feat_t *feat = ps_get_feat(d->ps);
  return feat == NULL ? NULL : feat->cmn_struct;
}

/* The (handle, Int16Array) arguments of primeCmn and process; NULL with a JS exception pending. */
static decoder_t *decoder_and_samples(napi_env env, napi_callback_info info, const char *message, const int16 **samples, size_t *length) {
  size_t argc = 2;
  napi_value argv[2];
  CHECK(napi_get_cb_info(env, info, &argc, argv, NULL, NULL));
  decoder_t *d = argc < 2 ? NULL : unwrap(env, argv[0]);
  if (d == NULL) return NULL;
  napi_typedarray_type type;
  void *data = NULL;
  if (napi_get_typedarray_info(env, argv[1], &type, length, &data, NULL, NULL) != napi_ok || type != napi_int16_array) {
    napi_throw_type_error(env, "POCKETSPHINX_SAMPLES", message);
    return NULL;
  }
  *samples = (const int16 *)data;
  return d;
}

/* create(args: string[]): handle. args are pocketsphinx command-line pairs (-hmm DIR -lm FILE ...). */
static napi_value create(napi_env env, napi_callback_info info) {
  size_t argc = 1;
  napi_value argv[1];
  CHECK(napi_get_cb_info(env, info, &argc, argv, NULL, NULL));
  uint32_t n = 0;
  if (argc < 1 || napi_get_array_length(env, argv[0], &n) != napi_ok || n > MAX_ARGS) {
    napi_throw_type_error(env, "POCKETSPHINX_ARGS", "create takes an array of at most 64 strings");
    return NULL;
  }
  char *args[MAX_ARGS];
  uint32_t made = 0;
  int ok = 1;
  for (uint32_t i = 0; i < n && ok; i++) {
    napi_value item;
    size_t len = 0;
    if (napi_get_element(env, argv[0], i, &item) != napi_ok || napi_get_value_string_utf8(env, item, NULL, 0, &len) != napi_ok) {
      ok = 0;
      break;
    }
    args[i] = malloc(len + 1);
    made++;
    napi_get_value_string_utf8(env, item, args[i], len + 1, &len);
  }
  cmd_ln_t *config = ok ? cmd_ln_parse_r(NULL, ps_args(), (int32)n, args, FALSE) : NULL;
  for (uint32_t i = 0; i < made; i++) free(args[i]);
  if (!ok) {
    napi_throw_type_error(env, "POCKETSPHINX_ARGS", "create takes an array of strings");
    return NULL;
  }
  if (config == NULL) {
    napi_throw_error(env, "POCKETSPHINX_CONFIG", "pocketsphinx refused the configuration");
    return NULL;
  }
  ps_decoder_t *ps = ps_init(config);
  cmd_ln_free_r(config);
  if (ps == NULL) {
    napi_throw_error(env, "POCKETSPHINX_INIT", "pocketsphinx could not load the model (see the -hmm, -lm and -dict paths)");
    return NULL;
  }
  decoder_t *d = calloc(1, sizeof(decoder_t));
  d->ps = ps;
  d->frate = cmd_ln_int32_r(ps_get_config(ps), "-frate");
  if (d->frate <= 0) d->frate = 100;
  cmn_t *cmn = cmn_of(d);
  d->veclen = cmn == NULL ? 0 : cmn->veclen;
  if (d->veclen > MAX_CEP) d->veclen = 0;
  if (d->veclen > 0) {
    cmn_live_get(cmn, d->initial_cmn);
    memcpy(d->good_cmn, d->initial_cmn, sizeof(mfcc_t) * d->veclen);
  }
  ps_start_stream(ps);
  ps_start_utt(ps);
  d->in_utt = 1;
  napi_value handle;
  CHECK(napi_create_external(env, d, finalize, NULL, &handle));
  return handle;
}

/* reset(handle): a fresh stream on the same decoder (frame numbers and cepstral mean start over). */
static napi_value reset(napi_env env, napi_callback_info info) {
  size_t argc = 1;
  napi_value argv[1];
  CHECK(napi_get_cb_info(env, info, &argc, argv, NULL, NULL));
  decoder_t *d = argc < 1 ? NULL : unwrap(env, argv[0]);
  if (d == NULL) return NULL;
  if (d->in_utt) ps_end_utt(d->ps);
  genrand_seed(DITHER_SEED);
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
  /* The separate front end seeded the shared dither generator; the decoder's stream starts over. */
  genrand_seed(DITHER_SEED);
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
  size_t argc = 1;
  napi_value argv[1];
  CHECK(napi_get_cb_info(env, info, &argc, argv, NULL, NULL));
  decoder_t *d = argc < 1 ? NULL : unwrap(env, argv[0]);
  if (d == NULL) return NULL;
  int32 score = 0;
  const char *hyp = d->in_utt ? ps_get_hyp(d->ps, &score) : NULL;
  napi_value result;
  CHECK(napi_create_string_utf8(env, hyp == NULL ? "" : hyp, NAPI_AUTO_LENGTH, &result));
  return result;
}

/*
 * endUtterance(handle): Array<[word, startMs, endMs, posterior]> of the utterance, fillers included
 * (the caller decides what they mean). The next utterance starts at once.
 */
static napi_value end_utterance(napi_env env, napi_callback_info info) {
  size_t argc = 1;
  napi_value argv[1];
  CHECK(napi_get_cb_info(env, info, &argc, argv, NULL, NULL));
  decoder_t *d = argc < 1 ? NULL : unwrap(env, argv[0]);
  if (d == NULL) return NULL;
  napi_value out;
  CHECK(napi_create_array(env, &out));
  if (!d->in_utt) return out;
  ps_end_utt(d->ps);
  d->in_utt = 0;
  logmath_t *lmath = ps_get_logmath(d->ps);
  uint32_t count = 0;
  int spoken = 0;
  for (ps_seg_t *seg = ps_seg_iter(d->ps); seg != NULL; seg = ps_seg_next(seg)) {
    const char *word = ps_seg_word(seg);
    int sf = 0, ef = 0;
    int32 ascr = 0, lscr = 0, lback = 0;
    ps_seg_frames(seg, &sf, &ef);
    int32 prob = ps_seg_prob(seg, &ascr, &lscr, &lback);
    if (word[0] != '<' && word[0] != '[' && word[0] != '+') spoken = 1;
    napi_value entry, text, start, end, posterior;
    CHECK(napi_create_array_with_length(env, 4, &entry));
    CHECK(napi_create_string_utf8(env, word, NAPI_AUTO_LENGTH, &text));
    CHECK(napi_create_double(env, (double)sf * 1000.0 / d->frate, &start));
    CHECK(napi_create_double(env, (double)(ef + 1) * 1000.0 / d->frate, &end));
    CHECK(napi_create_double(env, logmath_exp(lmath, prob), &posterior));
    CHECK(napi_set_element(env, entry, 0, text));
    CHECK(napi_set_element(env, entry, 1, start));
    CHECK(napi_set_element(env, entry, 2, end));
    CHECK(napi_set_element(env, entry, 3, posterior));
    CHECK(napi_set_element(env, out, count++, entry));
  }
  if (d->veclen > 0) {
    if (spoken) cmn_live_get(cmn_of(d), d->good_cmn);
    else cmn_live_set(cmn_of(d), d->good_cmn);
  }
  ps_start_utt(d->ps);
  d->in_utt = 1;
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
  decoder_t *d = (decoder_t *)data;
  if (d->ps != NULL) ps_free(d->ps);
  d->ps = NULL;
  return NULL;
}

static napi_value init(napi_env env, napi_value exports) {
  napi_property_descriptor props[] = {
    {"create", NULL, create, NULL, NULL, NULL, napi_default, NULL},
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
