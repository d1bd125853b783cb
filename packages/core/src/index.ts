export { SoundCloneError, isSoundCloneError } from './errors/base.js';
export { DspError, isDspError, type DspErrorCode } from './errors/dsp-error.js';

export { SUPPORTED_RATES, isSupportedRate, reduceRatio, type SupportedRate, type RateRatio } from './dsp/rates.js';
export { QUALITY_PRESETS, designPolyphase, type PolyphaseFilter, type ResamplerQuality } from './dsp/filter-design.js';
export { Resampler, type ResamplerOptions, type ResamplerKernel, type NonFinitePolicy } from './dsp/resampler.js';
export { encodePcm16, encodePcm16Into, decodePcm16, type Pcm16Options } from './dsp/pcm16.js';
export {
  SampleRing, RingSegments, type SampleKind, type SampleRingOptions, type SampleRingHandle, type RingViews,
} from './dsp/sample-ring.js';
export { EncodePipeline, type EncodePipelineOptions, type EncodedFrame } from './dsp/encode-pipeline.js';
export { sine, fitTone, fitTones, snrAgainstSine, toDb, aliasOf, type ToneFit } from './dsp/measure.js';

